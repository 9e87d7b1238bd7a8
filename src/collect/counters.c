// SPDX-License-Identifier: GPL-2.0-only
/*
 * The timeline's live counters, read while recording: CPU time from the
 * sample count, syscall time by series and file opens from the statistics
 * maps and what exited processes left; and the process tree.
 */
#include "src/collect/priv.h"

/* The timeline series of syscall @name. */
enum timeline_series collect_sys_series(const char *name)
{
	int nr = syscall_number(name);

	switch (nr < 0 ? SYSCALL_CATEGORY_OTHER : syscall_category(nr)) {
	case SYSCALL_CATEGORY_FILE:
		return TIMELINE_SERIES_FILE;
	case SYSCALL_CATEGORY_NETWORK:
		return TIMELINE_SERIES_NETWORK;
	case SYSCALL_CATEGORY_SYNC:
		return TIMELINE_SERIES_SYNC;
	case SYSCALL_CATEGORY_SLEEP:
		return TIMELINE_SERIES_SLEEP;
	default:
		return TIMELINE_SERIES_OTHER;
	}
}

bool collect_sys_opens_file(const char *name)
{
	return !strcmp(name, "openat") || !strcmp(name, "open") || !strcmp(name, "openat2") ||
	       !strcmp(name, "creat");
}

/* Add the calls of @st to the counters @out. */
static void counters_sys_add(struct timeline_counters *out, const struct sys_stat *st)
{
	out->ns[collect_sys_series(st->name)] += st->total_ns;
	if (collect_sys_opens_file(st->name))
		out->opens += st->count;
}

/* An entry of the hash into the counters, as it is read (no copy kept). */
static int counters_sys_entry(void *arg, const void *key, const void *value)
{
	const struct lp_sys_key *k = key;
	struct sys_stat st = { 0 };

	sys_stat_name(k->nr, st.name, sizeof(st.name));
	collect_sys_sum(&st, value);
	counters_sys_add(arg, &st);
	return 0;
}

static int counters_sys_spilled(void *arg, int nr, const struct sys_stat *st)
{
	(void)nr;
	counters_sys_add(arg, st);
	return 0;
}

static int counters_gil_entry(void *arg, const void *key, const void *value)
{
	const struct lp_gil_thread *g = value;

	(void)key;
	*(uint64_t *)arg += g->wait_ns;
	return 0;
}

/*
 * The Python threads' GIL waits so far (bpf/gil.bpf.h), which the futex
 * statistics count in sync, as their own series: the map keeps every
 * thread's for the whole recording, exited or not.
 */
static int counters_gil(struct collect *c, struct timeline_counters *out)
{
	uint64_t ns = 0;
	int err;

	if (!c->py)
		return 0;
	err = collect_map_each(c->skel->maps.gil_threads, counters_gil_entry, &ns);
	if (ns > out->ns[TIMELINE_SERIES_SYNC])
		ns = out->ns[TIMELINE_SERIES_SYNC];
	out->ns[TIMELINE_SERIES_SYNC] -= ns;
	out->ns[TIMELINE_SERIES_GIL] = ns;
	return err;
}

int collect_counters(struct collect *c, struct timeline_counters *out)
{
	struct collect_stats st;
	struct builder b = { .c = c };
	size_t i;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (c->o.cli.modes.cpu) {
		collect_get_stats(c, &st);
		out->ns[TIMELINE_SERIES_CPU] = st.stat[LP_STAT_SAMPLES] *
					       (NSEC_PER_SEC / c->o.cli.freq_hz);
	}
	/* the kernel's maps hold the live processes; exited ones are summed */
	if (c->o.cli.modes.syscall)
		err = builder_sys_fast(&b);
	if (!err && c->o.cli.modes.syscall)
		err = collect_map_each(c->skel->maps.sys_stats, counters_sys_entry, out);
	if (!err)
		err = collect_sys_spill(c, false, counters_sys_spilled, out);
	for (i = 0; !err && i < b.sys.nr; i++)
		counters_sys_add(out, &b.sys.items[i]);
	for (i = 0; i < TIMELINE_SERIES_NR; i++)
		out->ns[i] += c->exited_ns[i];
	out->opens += c->exited_opens;
	if (!err)
		err = counters_gil(c, out);
	hashmap_release(&b.sys_idx);
	free(b.sys.items);
	return err;
}

struct proc_tree *collect_procs(struct collect *c)
{
	return &c->procs;
}
