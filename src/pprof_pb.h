/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Private to src/pprof_write.c and src/pprof_read.c: the protobuf-c message
 * types under short names, and the prefix of latprof's metadata comments.
 */
#ifndef LATPROF_PPROF_PB_H
#define LATPROF_PPROF_PB_H

#include "profile.pb-c.h"

#define META_PREFIX "latprof:"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;
typedef Perftools__Profiles__ValueType PbValueType;

#endif
