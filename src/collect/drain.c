// SPDX-License-Identifier: GPL-2.0-only
/*
 * serve's long-running session: the in-kernel aggregation read and emptied
 * periodically (collect_drain), so the maps never fill. Also, for every
 * session, the syscall statistics of exited processes taken out of the
 * hash as they exit (or by the sweep, their exit event lost), and the
 * stacks map, read by id for the profile or emptied.
 */
#include "src/collect/priv.h"

typedef void (*drain_entry_fn)(struct collect *c, const struct collect_drain_ops *ops,
			       const void *key, const void *val);

struct drain_take {
	struct collect *c;
	const struct collect_drain_ops *ops;
	drain_entry_fn fn;
};

static int drain_one(void *arg, const void *key, const void *val)
{
	struct drain_take *t = arg;

	t->fn(t->c, t->ops, key, val);
	return 0;
}

/* Take out every entry of @map (collect_map_take), handing each to @fn. */
static int drain_map(struct collect *c, struct bpf_map *map, const struct collect_drain_ops *ops,
		     drain_entry_fn fn)
{
	struct drain_take t = { .c = c, .ops = ops, .fn = fn };

	return collect_map_take(map, drain_one, &t);
}

static void drain_sys(struct collect *c, const struct collect_drain_ops *ops, const void *k,
		      const void *v)
{
	const struct lp_sys_key *key = k;
	struct sys_stat st = { .pid = key->tgid };

	sys_stat_name(key->nr, st.name, sizeof(st.name));
	collect_sys_sum(&st, v);
	if (st.count && ops->sys)
		ops->sys(ops->arg, &st);
}

/* Calls of no known process: pid 0 */
static int drain_spilled(void *arg, int nr, const struct sys_stat *st)
{
	(void)nr;
	const struct collect_drain_ops *ops = arg;

	ops->sys(ops->arg, st);
	return 0;
}

/*
 * Take entry @key out of the hash into @out (its number and statistics
 * summed over CPUs), counting its time in the timeline's totals of exited
 * processes. false: it was not there, or could not be read.
 */
static bool exited_take(struct collect *c, const struct lp_sys_key *key,
			struct sys_exited_stat *out)
{
	int fd = bpf_map__fd(c->skel->maps.sys_stats), ncpu = libbpf_num_possible_cpus();

	if (!c->sys_vals)
		c->sys_vals = calloc(ncpu > 0 ? ncpu : 1, sizeof(*c->sys_vals));
	if (!c->sys_vals)
		return false;
	if (bpf_map_lookup_and_delete_elem(fd, key, c->sys_vals)) {
		/* kernels before 5.14: lookup, then delete */
		if (errno == ENOENT || bpf_map_lookup_elem(fd, key, c->sys_vals))
			return false;
		bpf_map_delete_elem(fd, key);
	}
	memset(out, 0, sizeof(*out));
	out->nr = key->nr;
	out->st.pid = key->tgid;
	sys_stat_name(key->nr, out->st.name, sizeof(out->st.name));
	collect_sys_sum(&out->st, c->sys_vals);
	c->exited_ns[collect_sys_series(out->st.name)] += out->st.total_ns;
	if (collect_sys_opens_file(out->st.name))
		c->exited_opens += out->st.count;
	return true;
}

void collect_sys_exited(struct collect *c, uint32_t tgid, const char *comm, const __u64 *used)
{
	struct lp_sys_key key = { .tgid = tgid };
	struct sys_exited_stat *stats = NULL, one;
	size_t n = 0, max = 0;
	int w;

	for (key.nr = 0; key.nr < LP_MAX_SYSCALL_NR; key.nr++) {
		w = key.nr / 64;
		if (!used[w]) {
			key.nr += 63;	/* the whole word is clear */
			continue;
		}
		if (!(used[w] & (1ULL << (key.nr % 64))))
			continue;
		max++;
	}
	if (!max)
		return;
	stats = calloc(max, sizeof(*stats));
	for (key.nr = 0; key.nr < LP_MAX_SYSCALL_NR && n < max; key.nr++) {
		if (!(used[key.nr / 64] & (1ULL << (key.nr % 64))) || !exited_take(c, &key, &one))
			continue;
		if (stats)
			stats[n++] = one;
		else	/* no room for it apart: straight into its name's */
			sys_exited_fold(&c->exited, comm, &one);
	}
	if (stats && n)
		sys_exited_add(&c->exited, tgid, comm, stats, n);
	else
		free(stats);
}

/* The name @tgid had, as the process tree knows it ("" when it does not). */
static void tree_comm(struct collect *c, uint32_t tgid, char comm[LP_COMM_LEN])
{
	const struct proc_info *pi = proc_tree_find(&c->procs, tgid);

	memset(comm, 0, LP_COMM_LEN);
	if (pi)
		memcpy(comm, pi->comm, strnlen(pi->comm, LP_COMM_LEN));
}

struct sweep {
	struct collect *c;
	struct hashmap live;		/* (NULL, tgid, 0): targets now */
	struct hashmap gone_tgids;	/* (NULL, tgid, 0): not, with entries */
	struct { struct lp_sys_key *items; size_t nr, alloc; } gone;
	int err;
};

static int sweep_live(void *arg, const void *key, const void *value)
{
	struct sweep *w = arg;

	return hashmap_put(&w->live, NULL, *(const uint32_t *)key, 0, HASHMAP_NUM(1));
}

/* An entry of a process that is not a target any more: fold it now. */
static int sweep_entry(void *arg, const void *key, const void *value)
{
	struct sweep *w = arg;
	const struct lp_sys_key *k = key;
	struct sys_exited_stat one = { .nr = k->nr, .st = { .pid = k->tgid } };
	char comm[LP_COMM_LEN];

	if (hashmap_get(&w->live, NULL, k->tgid, 0))
		return 0;
	if (hashmap_put(&w->gone_tgids, NULL, k->tgid, 0, HASHMAP_NUM(1)))
		return -ENOMEM;
	/* gone at the last sweep too: its exit event, read since, would have taken them */
	if (!hashmap_get(&w->c->sweep_suspects, NULL, k->tgid, 0))
		return 0;
	if (array_grow(&w->gone, w->gone.nr + 1))
		return -ENOMEM;
	sys_stat_name(k->nr, one.st.name, sizeof(one.st.name));
	collect_sys_sum(&one.st, value);
	tree_comm(w->c, k->tgid, comm);
	if (sys_exited_fold(&w->c->exited, comm, &one))
		return -ENOMEM;
	w->c->exited_ns[collect_sys_series(one.st.name)] += one.st.total_ns;
	if (collect_sys_opens_file(one.st.name))
		w->c->exited_opens += one.st.count;
	w->gone.items[w->gone.nr++] = *k;
	return 0;
}

void collect_sys_sweep(struct collect *c)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	int fd = bpf_map__fd(c->skel->maps.sys_stats);
	struct sweep w = { .c = c };
	uint32_t count;
	size_t i;

	/* the live targets first, then the entries of every other tgid (batches) */
	if (!collect_map_each(c->skel->maps.procs, sweep_live, &w))
		collect_map_each(c->skel->maps.sys_stats, sweep_entry, &w);
	/* read, then deleted: a dead process's entries change no more */
	count = w.gone.nr;
	if (count && !bpf_map_delete_batch(fd, w.gone.items, &count, &opts))
		c->exited_swept += count;
	else	/* no batches (before 5.6), or a key gone meanwhile */
		for (i = 0; i < w.gone.nr; i++)
			if (!bpf_map_delete_elem(fd, &w.gone.items[i]))
				c->exited_swept++;
	hashmap_release(&w.live);
	free(w.gone.items);
	hashmap_release(&c->sweep_suspects);
	c->sweep_suspects = w.gone_tgids;
}

void collect_sys_exited_free(struct collect *c)
{
	sys_exited_release(&c->exited);
	hashmap_release(&c->sweep_suspects);
	free(c->sys_vals);
	c->sys_vals = NULL;
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

static void drain_task(struct collect *c, const struct collect_drain_ops *ops, const void *k,
		       const void *v)
{
	const struct lp_task_count_key *key = k;
	const struct lp_task_count *val = v;
	char comm[LP_COMM_LEN + 1] = { 0 };

	memcpy(comm, key->comm, LP_COMM_LEN);
	if (ops->cpu && val->samples)
		ops->cpu(ops->arg, key->tgid, comm, val->samples);
	if (ops->offcpu && (val->blocked_ns || val->preempted_ns))
		ops->offcpu(ops->arg, key->tgid, comm, val->blocked_ns, val->preempted_ns);
}

/*
 * What collect_drain last read of block i of sys_fast (serve): its owner,
 * whether it was seen gone, and the sums read of each number, so the next
 * drain passes on only what was counted since. Counts are never zeroed
 * under a live process: a per-CPU value written by user space while its
 * CPU adds to it would lose the add.
 */
struct fast_block {
	uint32_t owner;
	uint64_t gone_ns;		/* when its process was first seen gone, 0: not */
	struct sys_stat *prev[LP_MAX_SYSCALL_NR];
};

static void fast_block_reset(struct fast_block *fb)
{
	uint32_t nr;

	for (nr = 0; nr < LP_MAX_SYSCALL_NR; nr++)
		free(fb->prev[nr]);
	memset(fb, 0, sizeof(*fb));
}

/* @a - @b, 0 when @a is smaller: a block half zeroed by a hand-back that failed */
static uint64_t since(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/*
 * @cur minus @prev (NULL: nothing before) into @out. The block keeps a
 * running max: bounded by the slowest bucket of the difference, so a
 * window's max is not a call from long before it.
 */
static void sys_stat_delta(const struct sys_stat *cur, const struct sys_stat *prev,
			   struct sys_stat *out)
{
	uint64_t low, high;
	int j;

	*out = *cur;
	if (!prev)
		return;
	out->count = since(cur->count, prev->count);
	out->errors = since(cur->errors, prev->errors);
	out->total_ns = since(cur->total_ns, prev->total_ns);
	out->in_flight = since(cur->in_flight, prev->in_flight);
	for (j = 0; j < SYS_HIST_SLOTS; j++) {
		out->hist[j] = since(cur->hist[j], prev->hist[j]);
		out->hist_ns[j] = since(cur->hist_ns[j], prev->hist_ns[j]);
	}
	for (j = SYS_HIST_SLOTS - 1; j >= 0 && !out->hist[j]; j--)
		;
	if (j < 0) {
		out->max_ns = 0;
		return;
	}
	sys_hist_bucket_us(j, &low, &high);
	if (j < SYS_HIST_SLOTS - 1 && out->max_ns > high * 1000)
		out->max_ns = high * 1000;
}

/*
 * Pass on what block @i counted since the last drain, and hand it back
 * (zeroed) once its process has been gone for a second: the programs count
 * a process's calls only while it lives, so what this drain read of a
 * process gone since an earlier one is all there is; and a block's owner
 * is set a moment before its process's procs entry names it
 * (bpf/targets.bpf.h, proc_fast_base), which two drains a scrape apart
 * could both see.
 */
static int drain_fast_block(struct collect *c, const struct collect_drain_ops *ops, uint32_t i,
			    struct lp_sys_stat *vals)
{
	struct fast_block *fb = &c->fast_blocks[i];
	int fd = bpf_map__fd(c->skel->maps.sys_fast), ncpu = libbpf_num_possible_cpus();
	uint32_t key = i + 1, owner, nr;
	struct lp_sys_used used;
	struct lp_proc proc;
	struct sys_stat cur, delta;
	bool live;

	/* free (a thread that lost the claim gives it back): forget what was seen */
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.fast_slots), &key, &owner) || !owner) {
		if (fb->owner)
			fast_block_reset(fb);
		return 0;
	}
	if (fb->owner != owner)
		fast_block_reset(fb);
	fb->owner = owner;
	key = i;
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.fast_used), &key, &used))
		return -errno;
	for (nr = 0; nr < LP_MAX_SYSCALL_NR; nr++) {
		if (!(used.words[nr / 64] & (1ULL << (nr % 64))))
			continue;
		key = i * LP_MAX_SYSCALL_NR + nr;
		if (bpf_map_lookup_elem(fd, &key, vals))
			return -errno;
		memset(&cur, 0, sizeof(cur));
		cur.pid = owner;
		sys_stat_name(nr, cur.name, sizeof(cur.name));
		collect_sys_sum(&cur, vals);
		sys_stat_delta(&cur, fb->prev[nr], &delta);
		if (!fb->prev[nr] && !(fb->prev[nr] = malloc(sizeof(cur))))
			return -ENOMEM;
		*fb->prev[nr] = cur;
		if (delta.count && ops->sys)
			ops->sys(ops->arg, &delta);
	}
	key = owner;
	live = !bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.procs), &key, &proc) &&
	       proc.fast_slot == i + 1;
	if (live) {
		fb->gone_ns = 0;
		return 0;
	}
	if (!fb->gone_ns)
		fb->gone_ns = now_ns();
	if (now_ns() - fb->gone_ns < NSEC_PER_SEC)
		return 0;
	/* gone since an earlier drain, and this one read what it counted: zero, hand back */
	memset(vals, 0, (size_t)ncpu * sizeof(*vals));
	for (nr = 0; nr < LP_MAX_SYSCALL_NR; nr++) {
		key = i * LP_MAX_SYSCALL_NR + nr;
		if ((used.words[nr / 64] & (1ULL << (nr % 64))) &&
		    bpf_map_update_elem(fd, &key, vals, BPF_ANY))
			return -errno;
	}
	memset(&used, 0, sizeof(used));
	key = i;
	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.fast_used), &key, &used, BPF_ANY))
		return -errno;
	key = i + 1;
	owner = 0;
	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.fast_slots), &key, &owner, BPF_ANY))
		return -errno;
	pr_debug("syscall block %u of pid %u handed back", i, fb->owner);
	fast_block_reset(fb);
	return 0;
}

static int drain_fast(struct collect *c, const struct collect_drain_ops *ops)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	struct lp_sys_stat *vals;
	uint32_t i;

	if (!c->fast_drain)
		return 0;
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	if (!c->fast_blocks)
		c->fast_blocks = calloc(c->fast_slots, sizeof(*c->fast_blocks));
	vals = calloc(ncpu, sizeof(*vals));
	if (!c->fast_blocks || !vals)
		err = -ENOMEM;
	for (i = 0; !err && i < c->fast_slots; i++)
		err = drain_fast_block(c, ops, i, vals);
	free(vals);
	return err;
}

void collect_fast_free(struct collect *c)
{
	uint32_t i;

	for (i = 0; c->fast_blocks && i < c->fast_slots; i++)
		fast_block_reset(&c->fast_blocks[i]);
	free(c->fast_blocks);
	c->fast_blocks = NULL;
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
	/* ids above the cap were never stored (bpf/stacks.bpf.h, stack_get) */
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
	int err = 0, fast_err = 0;

	if (c->o.cli.modes.syscall)
		err = drain_map(c, c->skel->maps.sys_stats, ops, drain_sys);
	/* the array is never emptied: a failure there stops no other drain */
	if (c->o.cli.modes.syscall)
		fast_err = drain_fast(c, ops);
	if (!err && ops->sys)
		err = collect_sys_spill(c, true, drain_spilled, (void *)ops);
	if (c->o.task_counts) {	/* the samples and stacks are the cut's */
		if (!err && (c->o.cli.modes.cpu || c->o.cli.modes.offcpu))
			err = drain_map(c, c->skel->maps.task_counts, ops, drain_task);
		return err ? err : fast_err;
	}
	if (!err && c->o.cli.modes.cpu)
		err = drain_map(c, c->skel->maps.cpu_samples, ops, drain_cpu);
	if (!err && (c->sys_hooks || c->o.cli.modes.offcpu))
		err = drain_map(c, c->skel->maps.timed_samples, ops, drain_timed);
	if (!err)
		collect_drain_stacks(c);
	return err ? err : fast_err;
}

struct forget_arg {
	collect_keep_fn keep;
	void *arg;
};

static bool forget_keeps(void *arg, const struct stackagg_entry *e)
{
	const struct forget_arg *f = arg;

	return f->keep(f->arg, e->key.tgid);
}

size_t collect_forget(struct collect *c, collect_keep_fn keep, void *arg)
{
	struct forget_arg f = { keep, arg };

	return stackagg_keep(c->ustacks, forget_keeps, &f);
}
