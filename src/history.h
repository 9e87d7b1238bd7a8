/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * serve's flight recorder: the last minutes of profiles as fixed windows,
 * each kept as the bytes `record -o` writes (gzip pprof), so a window costs
 * what its file would, the byte cap is exact, and a spilled window is a
 * profile file like any other. A query merges the windows it overlaps
 * (profile_merge.h) into one profile. Windows go oldest first when they are
 * older than the look-back, or when the memory cap would be passed; with a
 * spill directory, a window leaving memory is written there and stays
 * readable until the directory's own cap or the look-back removes it.
 * Thread-safe: the agent adds while requests query.
 */
#ifndef LATPROF_HISTORY_H
#define LATPROF_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "src/profile.h"
#include "src/profile_merge.h"

/*
 * Ten minutes unless asked otherwise (--history 0: none); the windows are
 * cut from the agent's one session, whose hooks the metrics read too
 * (serve.h), so keeping them costs memory, not hooks.
 */
#define HISTORY_DEFAULT_MINUTES 10
#define HISTORY_DEFAULT_WINDOW_S 10
#define HISTORY_DEFAULT_MAX_BYTES (64ULL << 20)
#define HISTORY_DEFAULT_DIR_MAX_BYTES (1024ULL << 20)

struct history_opts {
	uint64_t keep_ns;		/* look-back: windows ending earlier are dropped */
	uint64_t max_bytes;		/* in memory, at most */
	const char *spill_dir;		/* NULL: none; borrowed */
	uint64_t spill_max_bytes;	/* the directory's windows, at most */
};

struct history_stats {
	uint64_t windows, bytes;	/* in memory */
	uint64_t spilled_windows, spilled_bytes;
	uint64_t dropped;		/* windows dropped for the caps or the look-back */
	uint64_t oldest_ns, newest_ns;	/* wall clock, 0 when empty */
};

struct history;

/*
 * A new empty history, or NULL with errno set. With a spill directory,
 * windows a previous run left there (window-*.pb.gz) are removed.
 */
struct history *history_new(const struct history_opts *o);
/* NULL is a no-op. */
void history_free(struct history *h);

/*
 * Keep @p (its time_ns and duration_ns, wall clock, are the window's) as
 * the newest window, then drop what the look-back and the caps say, at
 * @now_wall_ns. 0 or -errno (-ENOMEM; a spill that fails drops the window).
 */
int history_add(struct history *h, const struct profile *p, uint64_t now_wall_ns);

/*
 * Merge the windows overlapping [@start_ns, @end_ns) (wall clock) into a
 * new profile *@out (owned by the caller) with the samples @f lets through
 * (NULL: all); its time and duration are those of the windows taken, and
 * history.start_ns, history.end_ns and history.windows metadata say which.
 * 0, -ENOENT when no window overlaps, -EINVAL when a stored window cannot
 * be read back (said through *@why), or -errno.
 */
int history_query(struct history *h, uint64_t start_ns, uint64_t end_ns,
		  const struct profile_merge_filter *f, struct profile **out, const char **why);

/* The counters. Cannot fail. */
void history_get_stats(struct history *h, struct history_stats *st);

#endif
