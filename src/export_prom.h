/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `export --format prometheus`: a profile's numbers in the Prometheus text
 * exposition format (version 0.0.4), for a textfile collector or a push
 * gateway. Stacks are not exported; what is (docs/formats.md):
 *   latprof_syscall_duration_seconds   histogram per (pid, comm, syscall),
 *                                      the kernel's log2 buckets as `le`
 *   latprof_syscall_errors_total, latprof_syscalls_in_flight
 *   latprof_cpu_samples_total, latprof_cpu_seconds_total     per (pid, comm)
 *   latprof_offcpu_seconds_total       per (pid, comm, state)
 *   latprof_lost_events_total          per reason (the lost.* metadata)
 *   latprof_recording_duration_seconds, latprof_sampling_frequency_hertz,
 *   latprof_build_info
 * No timestamps: the file describes one recording.
 */
#ifndef LATPROF_EXPORT_PROM_H
#define LATPROF_EXPORT_PROM_H

#include <stdio.h>

#include "src/profile.h"

/* Write @p's metrics to @out. 0 or -errno. */
int export_prom(FILE *out, const struct profile *p);

#endif
