/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-(process, syscall) statistics: count, errors, total, max, calls still
 * in flight at stop, and a log2 latency histogram in microseconds, as the
 * kernel collected them. Stored in a profile as metadata
 * "syscall.PID.NAME" = "count=N errors=N total_ns=N max_ns=N in_flight=N
 * hist=SLOT:COUNT:SUM_NS,..." (docs/formats.md). A percentile is the mean of
 * the bucket that holds it (each bucket keeps the sum of its calls).
 */
#ifndef LATPROF_SYSSTATS_H
#define LATPROF_SYSSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "src/profile.h"
#include "src/lib/hashmap.h"
#include "src/lib/strtab.h"

/* hist[0]: under 1 us; hist[i]: [2^(i-1), 2^i) us; the last slot is open-ended. */
#define SYS_HIST_SLOTS 32
#define SYS_NAME_LEN 32

struct sys_stat {
	uint32_t pid;
	char name[SYS_NAME_LEN];	/* "read", or "syscall_NNN" when unnamed */
	uint64_t count, errors, total_ns, max_ns, in_flight;
	uint64_t hist[SYS_HIST_SLOTS];
	uint64_t hist_ns[SYS_HIST_SLOTS];	/* summed duration of each bucket */
};

struct sys_stats {
	struct sys_stat *items;
	size_t nr, alloc;
};

/* The name of syscall @nr as stored ("read", "syscall_451"). */
void sys_stat_name(int nr, char *buf, size_t size);

/* Store @s in @p's metadata. 0 or -ENOMEM. */
int sys_stat_store(struct profile *p, const struct sys_stat *s);

/*
 * Read every "syscall.*" metadata entry of @p into @out (appended; free
 * out->items). Malformed entries are skipped. 0 or -ENOMEM.
 */
int sys_stats_load(const struct profile *p, struct sys_stats *out);

/*
 * The histogram of @s as "SLOT:COUNT:SUM_NS,..." (the metadata's hist=,
 * nonzero slots only) into @buf, cut to @size; and such a text back into
 * s->hist and s->hist_ns (other fields untouched): 0 or -EINVAL.
 */
#define SYS_HIST_TEXT_MAX (SYS_HIST_SLOTS * 48)
void sys_hist_format(const struct sys_stat *s, char *buf, size_t size);
int sys_hist_parse(const char *v, struct sys_stat *s);

/* Add @from's counts into @into (for totals over processes). */
void sys_stat_merge(struct sys_stat *into, const struct sys_stat *from);
/*
 * Take @from's counts out of @into (an older look of the same statistics:
 * what happened between the two), each at least 0; max_ns stays @into's.
 */
void sys_stat_sub(struct sys_stat *into, const struct sys_stat *from);
/* Count one duration of @ns in @s, in the kernel's buckets (lp_hist_slot). */
void sys_stat_add(struct sys_stat *s, uint64_t ns);

/*
 * Statistics summed by (pid, name) as they come: serve's windows from its
 * drains, a history query from its windows. Zero-initialized is empty.
 */
struct sys_sum {
	struct sys_stats st;
	struct hashmap idx;		/* (interned name, pid, 0) -> index in st + 1 */
	struct strtab *names;
};

/* Add @s to its (pid, name)'s sum. 0 or -ENOMEM (then not added). */
int sys_sum_add(struct sys_sum *sum, const struct sys_stat *s);
/* Store every sum in @p's metadata. 0 or -ENOMEM. */
int sys_sum_store(const struct sys_sum *sum, struct profile *p);
/* Free it; it is empty again. */
void sys_sum_release(struct sys_sum *sum);

/* Bounds of histogram slot @slot in microseconds: [*low, *high). */
void sys_hist_bucket_us(unsigned int slot, uint64_t *low, uint64_t *high);

/*
 * The @q quantile (0 < q <= 1) in nanoseconds: the mean of the bucket that
 * holds rank q x count (interpolated inside the bucket when its sum is
 * unknown), within the bucket's bounds and at most max_ns; 0 when there are
 * no calls.
 */
uint64_t sys_stat_quantile_ns(const struct sys_stat *s, double q);

#endif
