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

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "src/profile.h"
#include "src/sysstats.h"

/* Write @p's metrics to @out. 0 or -errno. */
int export_prom(FILE *out, const struct profile *p);

/*
 * The pieces the export is written with, shared with `serve`'s /metrics so
 * both speak the same families, buckets and escaping. None of them fails;
 * check ferror(@out) at the end.
 */
#define PROM_MAX_LABELS 4

/* A label set: names and values (escaped when written), in this order. */
struct prom_labels {
	const char *keys[PROM_MAX_LABELS];
	const char *vals[PROM_MAX_LABELS];
	size_t nr;
};

/* "# HELP NAME HELP" and "# TYPE NAME TYPE". */
void prom_write_family(FILE *out, const char *name, const char *type, const char *help);

/* k1="v1",k2="v2" without braces. */
void prom_write_labels(FILE *out, const struct prom_labels *l);

/* Nanoseconds as exact decimal seconds ("1.500000000"). */
void prom_write_seconds(FILE *out, uint64_t ns);

/* "NAME{LABELS} V". */
void prom_write_value(FILE *out, const char *name, const struct prom_labels *l, uint64_t v);

/*
 * The series of histogram @name for @s: cumulative _bucket lines with the
 * kernel's log2 bounds as `le` (2^slot microseconds, then +Inf), _sum in
 * seconds and _count.
 */
void prom_write_histogram(FILE *out, const char *name, const struct prom_labels *l,
			  const struct sys_stat *s);

#endif
