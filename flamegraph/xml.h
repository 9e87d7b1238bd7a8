/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Writing text into XML documents (the SVGs of flamegraph/): escaping, and
 * replacing what XML cannot hold (malformed UTF-8, control characters) so
 * that any name a profile carries gives a well-formed document. Cannot fail;
 * write errors show in ferror() of the stream.
 */
#ifndef LATPROF_XML_H
#define LATPROF_XML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Characters of @s, counting each byte XML cannot hold as one. */
size_t xml_strlen(const char *s);

/*
 * Write at most @max characters of @s (SIZE_MAX: all), escaped for text and
 * attribute values; bytes XML cannot hold become '?'.
 */
void xml_put(FILE *out, const char *s, size_t max);

/*
 * @v in @unit for people: "1,234 samples", "1,234" (unit "count"), and for
 * "nanoseconds" three significant digits: "12.3 ms". Always terminated.
 */
void xml_format_value(char *buf, size_t size, const char *unit, uint64_t v);

#endif
