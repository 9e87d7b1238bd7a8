// SPDX-License-Identifier: GPL-2.0-only
/*
 * serve's long-running session: the in-kernel aggregation read and emptied
 * periodically (collect_drain), so the maps never fill.
 */
#include "src/collect_priv.h"

const char *collect_stat_name(int stat)
{
	return stat >= 0 && stat < LP_STAT_NR && collect_stat_names[stat] ? collect_stat_names[stat] : "unknown";
}

typedef void (*drain_entry_fn)(struct collect *c, const struct collect_drain_ops *ops,
			       const void *key, const void *val);

/*
 * Take out every entry of @map, one at a time, at most max_entries of them
 * so programs adding entries as fast as we delete cannot keep us here.
 */
static int drain_map(struct collect *c, struct bpf_map *map, const struct collect_drain_ops *ops,
		     drain_entry_fn fn)
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
			fn(c, ops, key, val);
		} else if (errno != ENOENT) {
			/* kernels before 5.14: lookup, then delete */
			if (!bpf_map_lookup_elem(fd, key, val))
				fn(c, ops, key, val);
			if (bpf_map_delete_elem(fd, key) && errno != ENOENT)
				err = -errno;
		}
	}
	free(key);
	free(val);
	return err;
}

static void drain_sys(struct collect *c, const struct collect_drain_ops *ops, const void *k,
		      const void *v)
{
	const struct lp_sys_key *key = k;
	const struct lp_sys_stat *vals = v;
	struct sys_stat st = { .pid = key->tgid };
	int cpu, j, ncpu = libbpf_num_possible_cpus();

	sys_stat_name(key->nr, st.name, sizeof(st.name));
	for (cpu = 0; cpu < ncpu; cpu++) {
		st.errors += vals[cpu].errors;
		st.in_flight += vals[cpu].in_flight;
		if (vals[cpu].max_ns > st.max_ns)
			st.max_ns = vals[cpu].max_ns;
		for (j = 0; j < LP_HIST_SLOTS; j++) {
			st.hist[j] += vals[cpu].hist[j].count;
			st.hist_ns[j] += vals[cpu].hist[j].sum_ns;
			st.count += vals[cpu].hist[j].count;
			st.total_ns += vals[cpu].hist[j].sum_ns;
		}
	}
	if (st.count && ops->sys)
		ops->sys(ops->arg, &st);
}

static void drain_cpu(struct collect *c, const struct collect_drain_ops *ops, const void *k,
		      const void *v)
{
	const struct lp_sample_key *key = k;
	char comm[LP_COMM_LEN + 1] = { 0 };

	memcpy(comm, key->comm, LP_COMM_LEN);
	if (ops->cpu)
		ops->cpu(ops->arg, key->tgid, comm, *(const uint64_t *)v);
}

static void drain_timed(struct collect *c, const struct collect_drain_ops *ops, const void *k,
			const void *v)
{
	const struct lp_timed_key *key = k;
	const struct lp_timed_value *val = v;
	char comm[LP_COMM_LEN + 1] = { 0 };

	memcpy(comm, key->comm, LP_COMM_LEN);
	if (ops->offcpu && (val->blocked_ns || val->preempted_ns))
		ops->offcpu(ops->arg, key->tgid, comm, val->blocked_ns, val->preempted_ns);
}

/*
 * Ids are only meaningful with the samples just taken out. A program that
 * adds a stack while this runs may leave an id that is handed out again:
 * the metrics session that drains throws stack ids away.
 */
void collect_drain_stacks(struct collect *c)
{
	int fd = bpf_map__fd(c->skel->maps.stacks);
	size_t n, max = bpf_map__max_entries(c->skel->maps.stacks);
	uint64_t key;

	for (n = 0; n < max && !bpf_map_get_next_key(fd, NULL, &key); n++)
		if (bpf_map_delete_elem(fd, &key))
			break;
	c->skel->bss->stack_next_id = 0;
}

void collect_free_stacks(struct collect *c)
{
	size_t i;

	for (i = 0; i < c->stacks.nr; i++)
		free(c->stacks.items[i].ips);
	free(c->stacks.items);
	c->stacks.items = NULL;
	c->stacks.nr = 0;
}

int collect_load_stacks(struct collect *c)
{
	int fd = bpf_map__fd(c->skel->maps.stacks);
	/* ids above the cap were never stored (common.bpf.h, stack_get) */
	size_t nr = c->skel->bss->stack_next_id;
	struct lp_stack st;
	uint64_t key, next;
	bool first = true;

	collect_free_stacks(c);
	if (nr > c->skel->rodata->cfg_max_stacks)
		nr = c->skel->rodata->cfg_max_stacks;
	if (!nr)
		return 0;
	c->stacks.items = calloc(nr, sizeof(*c->stacks.items));
	if (!c->stacks.items)
		return -ENOMEM;
	c->stacks.nr = nr;
	while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		struct collect_stack *cs;

		first = false;
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &st) || st.id >= nr ||
		    st.nr > LP_STACK_FRAMES || !st.nr)
			continue;
		cs = &c->stacks.items[st.id];
		free(cs->ips);
		cs->ips = malloc(st.nr * sizeof(*cs->ips));
		if (!cs->ips)
			return -ENOMEM;
		memcpy(cs->ips, st.ips, st.nr * sizeof(*cs->ips));
		cs->nr = st.nr;
	}
	return 0;
}

int collect_drain(struct collect *c, const struct collect_drain_ops *ops)
{
	int err = 0;

	if (c->mode_syscall)
		err = drain_map(c, c->skel->maps.sys_stats, ops, drain_sys);
	if (!err && c->mode_cpu)
		err = drain_map(c, c->skel->maps.cpu_samples, ops, drain_cpu);
	if (!err && (c->sys_hooks || c->mode_offcpu))
		err = drain_map(c, c->skel->maps.timed_samples, ops, drain_timed);
	if (!err)
		collect_drain_stacks(c);
	return err;
}
