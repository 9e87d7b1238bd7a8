// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading the BPF maps from user space: every entry of a map, in batches
 * where the kernel has them (collect_map_each), and the per-CPU values of
 * the syscall statistics summed, those of the calls spilled under no
 * process (sys_spill) too.
 */
#include "src/collect/priv.h"

/* One key at a time: kernels without batch lookups (before 5.6). */
static int map_each_slow(int fd, size_t ksize, size_t vsize, collect_map_fn fn, void *arg)
{
	void *key = malloc(ksize), *next = malloc(ksize), *value = malloc(vsize);
	bool first = true;
	int err = key && next && value ? 0 : -ENOMEM;

	while (!err && !bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		first = false;
		memcpy(key, next, ksize);
		if (!bpf_map_lookup_elem(fd, key, value))
			err = fn(arg, key, value);
	}
	free(key);
	free(next);
	free(value);
	return err;
}

#define MAP_BATCH 1024		/* entries per batch lookup, at most */
#define MAP_BATCH_BYTES (4 << 20)	/* and their values at most (many CPUs) */

int collect_map_each(const struct bpf_map *map, collect_map_fn fn, void *arg)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	enum bpf_map_type t = bpf_map__type(map);
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(map), err = 0, r;
	size_t ksize = bpf_map__key_size(map), vsize = bpf_map__value_size(map), i;
	size_t tsize = ksize > 8 ? ksize : 8, chunk = MAP_BATCH;
	char *keys = NULL, *vals = NULL, *in = calloc(1, tsize), *out = calloc(1, tsize);
	bool first = true;
	uint32_t count;

	if (t == BPF_MAP_TYPE_PERCPU_HASH || t == BPF_MAP_TYPE_PERCPU_ARRAY) {
		if (ncpu <= 0)
			err = ncpu ? ncpu : -EINVAL;
		vsize = ((vsize + 7) & ~(size_t)7) * (ncpu > 0 ? ncpu : 1);
	}
	if (chunk * vsize > MAP_BATCH_BYTES)
		chunk = MAP_BATCH_BYTES / vsize > 16 ? MAP_BATCH_BYTES / vsize : 16;
	while (!err) {
		if (!keys) {
			keys = malloc(chunk * ksize);
			vals = malloc(chunk * vsize);
		}
		if (!keys || !vals || !in || !out) {
			err = -ENOMEM;
			break;
		}
		count = chunk;
		r = bpf_map_lookup_batch(fd, first ? NULL : in, out, keys, vals, &count, &opts);
		if (r && errno == ENOSPC && chunk < 65536) {
			chunk *= 4;	/* a hash bucket longer than the batch */
			free(keys);
			free(vals);
			keys = vals = NULL;
			continue;
		}
		if (r && errno != ENOENT) {
			/* no batches here: one at a time, from the start */
			if (first)
				err = map_each_slow(fd, ksize, vsize, fn, arg);
			else
				err = -errno;
			break;
		}
		for (i = 0; !err && i < count; i++)
			err = fn(arg, keys + i * ksize, vals + i * vsize);
		if (r)
			break;	/* ENOENT: that was the last batch */
		memcpy(in, out, tsize);
		first = false;
	}
	free(keys);
	free(vals);
	free(in);
	free(out);
	return err;
}

int collect_map_take(struct bpf_map *map, collect_map_fn fn, void *arg)
{
	int fd = bpf_map__fd(map), ncpu = libbpf_num_possible_cpus(), err = 0;
	bool percpu = bpf_map__type(map) == BPF_MAP_TYPE_PERCPU_HASH;
	size_t vsize = bpf_map__value_size(map), n, max = bpf_map__max_entries(map);
	void *key = calloc(1, bpf_map__key_size(map));
	void *val = calloc(percpu ? (size_t)(ncpu > 0 ? ncpu : 1) : 1, (vsize + 7) & ~7UL);

	if (!key || !val)
		err = -ENOMEM;
	for (n = 0; !err && n < max && !bpf_map_get_next_key(fd, NULL, key); n++) {
		if (!bpf_map_lookup_and_delete_elem(fd, key, val)) {
			err = fn(arg, key, val);
		} else if (errno != ENOENT) {
			/* kernels before 5.14: lookup, then delete */
			if (!bpf_map_lookup_elem(fd, key, val))
				err = fn(arg, key, val);
			if (bpf_map_delete_elem(fd, key) && errno != ENOENT && !err)
				err = -errno;
		}
	}
	free(key);
	free(val);
	return err;
}

/* Add the @ncpu values @vals of one entry to @st. */
static void sys_add(struct sys_stat *st, const struct lp_sys_stat *vals, int ncpu)
{
	int cpu, j;

	for (cpu = 0; cpu < ncpu; cpu++) {
		st->errors += vals[cpu].errors;
		st->in_flight += vals[cpu].in_flight;
		if (vals[cpu].max_ns > st->max_ns)
			st->max_ns = vals[cpu].max_ns;
		for (j = 0; j < LP_HIST_SLOTS; j++) {
			st->hist[j] += vals[cpu].hist[j].count;
			st->hist_ns[j] += vals[cpu].hist[j].sum_ns;
			st->count += vals[cpu].hist[j].count;
			st->total_ns += vals[cpu].hist[j].sum_ns;
		}
	}
}

void collect_sys_sum(struct sys_stat *st, const struct lp_sys_stat *vals)
{
	sys_add(st, vals, libbpf_num_possible_cpus());
}

struct spill_walk {
	int (*fn)(void *arg, int nr, const struct sys_stat *st);
	void *arg;
	int fd;			/* >= 0: zero each entry read */
};

static int spill_entry(void *arg, const void *key, const void *value)
{
	static const struct lp_sys_stat zero;
	struct spill_walk *w = arg;
	struct sys_stat st = { 0 };

	sys_add(&st, value, 1);
	if (!st.count)
		return 0;
	sys_stat_name(*(const uint32_t *)key, st.name, sizeof(st.name));
	if (w->fd >= 0)
		bpf_map_update_elem(w->fd, key, &zero, BPF_ANY);
	return w->fn(w->arg, *(const uint32_t *)key, &st);
}

int collect_sys_spill(struct collect *c, bool drain,
		      int (*fn)(void *arg, int nr, const struct sys_stat *st), void *arg)
{
	struct spill_walk w = {
		.fn = fn, .arg = arg,
		.fd = drain ? bpf_map__fd(c->skel->maps.sys_spill) : -1,
	};

	if (!c->o.cli.modes.syscall)
		return 0;
	return collect_map_each(c->skel->maps.sys_spill, spill_entry, &w);
}
