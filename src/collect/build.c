// SPDX-License-Identifier: GPL-2.0-only
/*
 * The end of a record session: the in-kernel aggregation (CPU samples,
 * timed samples, syscall statistics), the DWARF-unwound samples, requests
 * and files, symbolized into a struct profile.
 */
#include "src/collect/priv.h"

#include <malloc.h>

/* One aggregated stack and what was measured on it, from any source. */
struct sample_in {
	uint32_t tgid, gen;
	const char *comm;		/* LP_COMM_LEN bytes, maybe unterminated */
	int32_t kstack_id, ustack_id;	/* stack map ids, or -errno */
	const uint64_t *upcs;		/* DWARF-unwound user pcs, or NULL */
	size_t nr_upcs;
	int32_t nr;			/* syscall number, -1 for none */
	uint32_t wait;			/* enum lp_wait */
	bool gil;			/* a syscall that waited for the GIL */
	uint64_t cpu_samples;
	uint64_t slow_syscalls, latency_ns, max_ns;
	uint64_t blocked_ns, preempted_ns;
	uint64_t stall_ns;		/* of event-loop stalls */
	uint64_t await_ns;		/* asyncio tasks suspended (awaits.h) */
	const struct sys_stat *hist;	/* the slow syscalls' durations, or NULL */
};

static int builder_emit(struct builder *b, const struct builder_cols *cols,
			const struct sample_in *in)
{
	char comm[LP_COMM_LEN + 1] = { 0 }, sys[SYS_NAME_LEN], hist[SYS_HIST_TEXT_MAX];
	struct profile_label labels[9] = {
		{ .key = PROFILE_LABEL_PID, .num = in->tgid },
		{ .key = PROFILE_LABEL_COMM, .str = comm },
	};
	int64_t values[7] = { 0 };
	size_t nl = 2, base;
	int err = 0;

	memcpy(comm, in->comm, LP_COMM_LEN);
	/* an entry is of one kind: its stall time goes with its first sample */
	if (cols->stall >= 0)
		values[cols->stall] = in->stall_ns;
	if (in->cpu_samples && cols->samples >= 0) {
		values[cols->samples] = in->cpu_samples;
		values[cols->cpu] = in->cpu_samples * b->period_ns;
		err = profile_add_sample(b->p, b->locs.items, b->locs.nr, values, labels, nl);
		memset(values, 0, sizeof(values));
	}
	if (in->nr >= 0) {
		sys_stat_name(in->nr, sys, sizeof(sys));
		labels[nl++] = (struct profile_label){ .key = PROFILE_LABEL_SYSCALL, .str = sys };
		/* the same futex, classed by what it waited for (src/gil.h) */
		labels[nl++] = (struct profile_label){
			.key = PROFILE_LABEL_CATEGORY,
			.str = syscall_category_name(in->gil ? SYSCALL_CATEGORY_GIL :
						     syscall_category(in->nr))
		};
		labels[nl++] = (struct profile_label){
			.key = SYSCALL_WAIT_LABEL,
			.str = syscall_wait_label(in->nr, in->wait)
		};
	}
	if (!err && in->await_ns && cols->await >= 0) {
		values[cols->await] = (int64_t)in->await_ns;
		err = profile_add_sample(b->p, b->locs.items, b->locs.nr, values, labels, nl);
		memset(values, 0, sizeof(values));
	}
	base = nl;
	if (!err && ((in->slow_syscalls && cols->syscalls >= 0) ||
		     (in->blocked_ns && cols->offcpu >= 0))) {
		if (cols->syscalls >= 0) {
			values[cols->syscalls] = in->slow_syscalls;
			values[cols->latency] = in->latency_ns;
			if (in->max_ns)
				labels[nl++] = (struct profile_label){
					.key = PROFILE_LABEL_MAX_NS, .num = in->max_ns,
					.num_unit = "nanoseconds"
				};
			if (in->hist && in->slow_syscalls) {
				sys_hist_format(in->hist, hist, sizeof(hist));
				labels[nl++] = (struct profile_label){
					.key = PROFILE_LABEL_LATENCY_HIST, .str = hist
				};
			}
		}
		if (cols->offcpu >= 0 && in->blocked_ns) {
			values[cols->offcpu] = in->blocked_ns;
			labels[nl++] = (struct profile_label){
				.key = PROFILE_LABEL_OFFCPU, .str = PROFILE_OFFCPU_BLOCKED
			};
		}
		err = profile_add_sample(b->p, b->locs.items, b->locs.nr, values, labels, nl);
		memset(values, 0, sizeof(values));
	}
	if (!err && in->preempted_ns && cols->offcpu >= 0) {
		nl = base;
		values[cols->offcpu] = in->preempted_ns;
		labels[nl++] = (struct profile_label){
			.key = PROFILE_LABEL_OFFCPU, .str = PROFILE_OFFCPU_PREEMPTED
		};
		err = profile_add_sample(b->p, b->locs.items, b->locs.nr, values, labels, nl);
	}
	return err;
}

/*
 * Add the samples of one stack: the kernel stack @kstack_id, then the user
 * stack, from the stack map (ustack_id >= 0) or unwound pcs (upcs).
 */
static int builder_sample(struct builder *b, const struct builder_cols *cols,
			  const struct sample_in *in)
{
	struct sym_process *proc;
	int err;

	if (in->tgid == (uint32_t)b->c->command_pid && in->gen == 0)
		return 0;	/* the held child before exec: latprof's own */
	if (b->keep && !b->keep(b->keep_arg, in->tgid))
		return 0;
	proc = builder_process(b, in->tgid, in->gen);
	if (!proc && (in->ustack_id >= 0 || in->nr_upcs))
		b->vanished_samples += in->cpu_samples;
	b->locs.nr = 0;
	/* CPU samples interrupt whatever runs: BPF programs there are real cost */
	err = builder_stack(b, in->kstack_id, NULL, true, !in->cpu_samples);
	if (!err && in->upcs)
		err = builder_frames(b, in->upcs, in->nr_upcs, proc, false);
	else if (!err)
		err = builder_stack(b, in->ustack_id, proc, false, false);
	return err ? err : builder_emit(b, cols, in);
}

/* Called for each entry of a map being drained; the value is per CPU for per-CPU maps. */
typedef int (*builder_entry_fn)(struct builder *b, const struct builder_cols *cols,
				const void *key, const void *value);

/* Call @fn for every entry of @map (read from user space, after detach). */
struct builder_each_arg {
	struct builder *b;
	const struct builder_cols *cols;
	builder_entry_fn fn;
};

static int builder_each_one(void *arg, const void *key, const void *value)
{
	struct builder_each_arg *a = arg;

	return a->fn(a->b, a->cols, key, value);
}

static int builder_each(struct builder *b, const struct builder_cols *cols,
			const struct bpf_map *map, builder_entry_fn fn)
{
	struct builder_each_arg a = { .b = b, .cols = cols, .fn = fn };

	return collect_map_each(map, builder_each_one, &a);
}

/* The same, each entry taken out of @map as it is read (a window's cut). */
static int builder_take(struct builder *b, const struct builder_cols *cols,
			struct bpf_map *map, builder_entry_fn fn)
{
	struct builder_each_arg a = { .b = b, .cols = cols, .fn = fn };

	return collect_map_take(map, builder_each_one, &a);
}

/* What a sample's key says in every map: its process, image and stacks. */
#define SAMPLE_IN_KEY(key) \
	.tgid = (key)->tgid, .gen = (key)->gen, .comm = (key)->comm, \
	.kstack_id = (key)->kstack_id, .ustack_id = (key)->ustack_id

static int builder_cpu_sample(struct builder *b, const struct builder_cols *cols,
			      const void *k, const void *v)
{
	const struct lp_sample_key *key = k;
	struct sample_in in = {
		SAMPLE_IN_KEY(key),
		.nr = -1,
		.cpu_samples = *(const uint64_t *)v,
	};

	return builder_sample(b, cols, &in);
}

/* Frame-pointer timed samples: slow syscalls, off-CPU outside syscalls. */
static int builder_timed_sample(struct builder *b, const struct builder_cols *cols,
				const void *k, const void *v)
{
	const struct lp_timed_key *key = k;
	const struct lp_timed_value *val = v;
	struct sample_in in = {
		SAMPLE_IN_KEY(key),
		.nr = key->nr,
		.wait = key->wait,
		.slow_syscalls = val->count,
		.latency_ns = val->latency_ns,
		.max_ns = val->max_ns,
		.blocked_ns = val->blocked_ns,
		.preempted_ns = val->preempted_ns,
	};

	return builder_sample(b, cols, &in);
}

static int builder_ustacks(struct builder *b, const struct builder_cols *cols)
{
	size_t i, n = stackagg_nr(b->c->ustacks);
	int err = 0;

	for (i = 0; !err && i < n; i++) {
		const struct stackagg_entry *e = stackagg_get(b->c->ustacks, i);
		struct sample_in in = {
			.tgid = e->key.tgid,
			.gen = e->key.gen,
			.comm = e->key.comm,
			.kstack_id = e->key.kstack_id,
			.ustack_id = -1,
			.upcs = e->pcs,
			.nr_upcs = e->nr_pcs,
			.nr = e->key.nr,
			.wait = e->key.wait,
			.gil = e->key.gil,
			.blocked_ns = e->sum.blocked_ns,
			.preempted_ns = e->sum.preempted_ns,
			.stall_ns = e->sum.stall_ns,
			.await_ns = e->sum.await_ns,
			.hist = e->hist,
		};

		if (e->key.kind == LP_SAMPLE_AWAIT) {
			/* its time is await_ns: neither samples nor a syscall */
		} else if (e->key.kind == LP_SAMPLE_CPU) {
			in.cpu_samples = e->sum.value;
		} else {
			in.slow_syscalls = e->count;
			in.latency_ns = e->sum.value;
			in.max_ns = e->max_value;
		}
		err = builder_sample(b, cols, &in);
	}
	return err;
}

/*
 * The statistics being built of (@tgid, @nr), made empty if new: the array
 * and the hash can both hold a pair (a block handed out twice in a race,
 * the in-flight iterator), and an exited process's are stored apart. NULL:
 * out of memory.
 */
static struct sys_stat *builder_sys_entry(struct builder *b, uint32_t tgid, int32_t nr)
{
	uint64_t i = HASHMAP_TO_NUM(hashmap_get(&b->sys_idx, NULL, tgid, (uint32_t)nr));
	struct sys_stat *st;

	if (i)
		return &b->sys.items[i - 1];
	if (array_grow(&b->sys, b->sys.nr + 1) ||
	    hashmap_put(&b->sys_idx, NULL, tgid, (uint32_t)nr, HASHMAP_NUM(b->sys.nr + 1)))
		return NULL;
	st = &b->sys.items[b->sys.nr++];
	memset(st, 0, sizeof(*st));
	st->pid = tgid;
	sys_stat_name(nr, st->name, sizeof(st->name));
	return st;
}

/* Add the per-CPU values @vals of (@tgid, @nr). 0 or -ENOMEM. */
static int builder_sys_add(struct builder *b, uint32_t tgid, int32_t nr,
			   const struct lp_sys_stat *vals)
{
	struct sys_stat *st = builder_sys_entry(b, tgid, nr);

	if (!st)
		return -ENOMEM;
	collect_sys_sum(st, vals);
	return 0;
}

static int builder_sys_stat(struct builder *b, const struct builder_cols *cols,
			    const void *k, const void *v)
{
	const struct lp_sys_key *key = k;

	(void)cols;
	return builder_sys_add(b, key->tgid, key->nr, v);
}

/* Whether per-CPU values @vals of one entry hold a call. */
static bool sys_vals_used(const struct lp_sys_stat *vals, int ncpu)
{
	int cpu, j;

	for (cpu = 0; cpu < ncpu; cpu++)
		for (j = 0; j < LP_HIST_SLOTS; j++)
			if (vals[cpu].hist[j].count)
				return true;
	return false;
}

/*
 * Block @i of the array into @vals (LP_MAX_SYSCALL_NR entries of @ncpu
 * values): one batch where the kernel has them (5.6), else one by one.
 */
static int sys_fast_block(int fd, uint32_t i, struct lp_sys_stat *vals, int ncpu)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t keys[LP_MAX_SYSCALL_NR], in = i * LP_MAX_SYSCALL_NR, out, count = LP_MAX_SYSCALL_NR;
	uint32_t nr, key, prev = in - 1;

	/* a batch starts after the key it is given */
	if (!bpf_map_lookup_batch(fd, in ? &prev : NULL, &out, keys, vals, &count, &opts) ||
	    errno == ENOENT) {
		if (count == LP_MAX_SYSCALL_NR && keys[0] == in)
			return 0;
	}
	for (nr = 0; nr < LP_MAX_SYSCALL_NR; nr++) {
		key = i * LP_MAX_SYSCALL_NR + nr;
		if (bpf_map_lookup_elem(fd, &key, &vals[(size_t)nr * ncpu]))
			memset(&vals[(size_t)nr * ncpu], 0, ncpu * sizeof(*vals));
	}
	return 0;
}

/* The per-CPU array: block i belongs to the tgid in fast_slots[1 + i] (0: free). */
int builder_sys_fast(struct builder *b)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	int slots_fd = bpf_map__fd(b->c->skel->maps.fast_slots);
	int fd = bpf_map__fd(b->c->skel->maps.sys_fast);
	struct lp_sys_stat *vals;
	uint32_t i, nr, key, tgid;

	if (!b->c->fast_slots)
		return 0;
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc((size_t)ncpu * LP_MAX_SYSCALL_NR, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (i = 0; !err && i < b->c->fast_slots; i++) {
		key = i + 1;
		if (bpf_map_lookup_elem(slots_fd, &key, &tgid) || !tgid)
			continue;
		err = sys_fast_block(fd, i, vals, ncpu);
		for (nr = 0; !err && nr < LP_MAX_SYSCALL_NR; nr++)
			if (sys_vals_used(&vals[(size_t)nr * ncpu], ncpu))
				err = builder_sys_add(b, tgid, nr, &vals[(size_t)nr * ncpu]);
	}
	free(vals);
	return err;
}

/* A pid of an exited process that a live one reused: one row for both. */
static int builder_sys_exited_merge(void *arg, const struct sys_exited_stat *e)
{
	struct builder *b = arg;
	uint64_t i = HASHMAP_TO_NUM(hashmap_get(&b->sys_idx, NULL, e->st.pid, (uint32_t)e->nr));

	if (i)
		sys_stat_merge(&b->sys.items[i - 1], &e->st);
	return 0;
}

/* Statistics @st into the profile's metadata, or b->sys_out when a look asked for them. */
static int builder_sys_put(struct builder *b, const struct sys_stat *st)
{
	if (!b->sys_out)
		return sys_stat_store(b->p, st);
	if (array_grow(b->sys_out, b->sys_out->nr + 1))
		return -ENOMEM;
	b->sys_out->items[b->sys_out->nr++] = *st;
	return 0;
}

/* The others are stored as they are (copied to b->sys, they would be twice). */
static int builder_sys_exited_store(void *arg, const struct sys_exited_stat *e)
{
	struct builder *b = arg;

	if (!e->st.count || hashmap_get(&b->sys_idx, NULL, e->st.pid, (uint32_t)e->nr))
		return 0;
	return builder_sys_put(b, &e->st);
}

/* Calls counted under no process (sys_spill), into b->sys. */
static int builder_sys_spilled(void *arg, int nr, const struct sys_stat *st)
{
	struct builder *b = arg;
	ssize_t name = sys_exited_name(&b->c->exited, COLLECT_UNATTRIBUTED);
	struct sys_stat *into = name < 0 ? NULL : builder_sys_entry(b, sys_exited_name_pid(name), nr);

	if (!into)
		return -ENOMEM;
	sys_stat_merge(into, st);
	return 0;
}

/*
 * Per (process, syscall) statistics from the maps, summed over CPUs, into
 * b->sys; calls of no known process under the pseudo pid of name
 * COLLECT_UNATTRIBUTED (src/sysexited.h).
 */
static int builder_sys_read(struct builder *b)
{
	int err = builder_sys_fast(b);

	if (!err)
		err = builder_each(b, NULL, b->c->skel->maps.sys_stats, builder_sys_stat);
	if (!err)
		err = collect_sys_spill(b->c, false, builder_sys_spilled, b);
	return err;
}

/* Per (process, syscall) statistics, summed over CPUs, into metadata. */
static int builder_sys_stats(struct builder *b, const struct builder_cols *cols)
{
	size_t i;
	int err = builder_sys_read(b);

	/* and those of exited processes (sysexited.h) */
	if (!err)
		err = sys_exited_each(&b->c->exited, builder_sys_exited_merge, b);
	for (i = 0; !err && i < b->sys.nr; i++)
		if (b->sys.items[i].count)
			err = builder_sys_put(b, &b->sys.items[i]);
	if (!err)
		err = sys_exited_each(&b->c->exited, builder_sys_exited_store, b);
	return err;
}

/* Did the recording see an event-loop stall, or a sample inside one? */
static bool builder_saw_stalls(const struct collect *c)
{
	size_t i, n = stackagg_nr(c->ustacks);

	if (c->stalls.nr)
		return true;
	for (i = 0; i < n; i++)
		if (stackagg_get(c->ustacks, i)->sum.stall_ns)
			return true;
	return false;
}

/* Did the walk of asyncio tasks charge any time? */
static bool builder_saw_awaits(const struct collect *c)
{
	size_t i, n = stackagg_nr(c->ustacks);

	for (i = 0; c->awaits && i < n; i++)
		if (stackagg_get(c->ustacks, i)->sum.await_ns)
			return true;
	return false;
}

/* The value columns of the chosen modes, in a fixed order. */
static int builder_columns(struct builder *b, struct builder_cols *cols)
{
	struct profile *p = b->p;

	*cols = (struct builder_cols){ -1, -1, -1, -1, -1, -1, -1 };
	if (b->c->o.cli.modes.cpu) {
		cols->samples = profile_add_type(p, PROFILE_TYPE_SAMPLES, "count");
		cols->cpu = profile_add_type(p, PROFILE_TYPE_CPU, "nanoseconds");
		if (cols->samples < 0 || cols->cpu < 0)
			return -ENOMEM;
		p->period_type.type = profile_str(p, PROFILE_TYPE_CPU);
		p->default_type = p->period_type.type;
		p->period_type.unit = profile_str(p, "nanoseconds");
		p->period = b->period_ns;
	}
	if (b->c->o.cli.modes.syscall) {
		cols->syscalls = profile_add_type(p, PROFILE_TYPE_SYSCALLS, "count");
		cols->latency = profile_add_type(p, PROFILE_TYPE_LATENCY, "nanoseconds");
		if (cols->syscalls < 0 || cols->latency < 0)
			return -ENOMEM;
		if (!p->default_type)
			p->default_type = profile_str(p, PROFILE_TYPE_LATENCY);
	}
	if (b->c->o.cli.modes.offcpu) {
		cols->offcpu = profile_add_type(p, PROFILE_TYPE_OFFCPU, "nanoseconds");
		if (cols->offcpu < 0)
			return -ENOMEM;
	}
	/* so with tasks seen suspended (src/awaits.h) */
	if (builder_saw_awaits(b->c)) {
		cols->await = profile_add_type(p, PROFILE_TYPE_AWAIT, "nanoseconds");
		if (cols->await < 0)
			return -ENOMEM;
	}
	/* only a recording that saw a stall has the column: others stay as they were */
	if (builder_saw_stalls(b->c)) {
		cols->stall = profile_add_type(p, PROFILE_TYPE_STALL, "nanoseconds");
		if (cols->stall < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Requests, files and peers into metadata. */
static int builder_track(struct builder *b)
{
	struct collect *c = b->c;
	struct requests reqs = { 0 };
	int err;

	if (!c->o.cli.requests && !c->o.cli.files && !c->o.cli.net)
		return 0;
	err = collect_track_flush(c);
	if (!err && c->o.cli.requests)
		err = requests_compute(c->reqs.items, c->reqs.nr, &reqs);
	if (!err && c->o.cli.requests) {
		requests_sort_by_start(&reqs);
		err = requests_store(b->p, &reqs, c->reqs_dropped, c->reqs_unanswered);
	}
	if (!err && (c->o.cli.files || c->o.cli.net))
		err = iotrack_store(&c->io, b->p);
	free(reqs.items);
	return err;
}

struct builder_gil_arg {
	struct gil_threads threads;
	uint64_t period_ns;
};

static int builder_gil_one(void *arg, const void *key, const void *value)
{
	const struct lp_gil_key *k = key;
	const struct lp_gil_thread *v = value;
	struct builder_gil_arg *a = arg;
	struct gil_thread t = {
		.pid = k->tgid, .tid = k->tid, .waits = v->waits, .wait_ns = v->wait_ns,
		.cpu_ns = v->samples * a->period_ns, .held_ns = v->held * a->period_ns,
	};

	return gil_threads_add(&a->threads, &t);
}

/* The Python threads' GIL waits and held time (bpf/gil.bpf.h) into metadata. */
static int builder_gil(struct builder *b)
{
	struct builder_gil_arg a = { .period_ns = b->c->o.cli.modes.cpu ? b->period_ns : 0 };
	struct collect_stats st;
	int err;

	if (!b->c->py)
		return 0;
	collect_get_stats(b->c, &st);
	err = collect_map_each(b->c->skel->maps.gil_threads, builder_gil_one, &a);
	if (!err)
		err = gil_store(b->p, &a.threads, st.stat[LP_STAT_GIL_DROPPED]);
	gil_threads_release(&a.threads);
	return err;
}

/* The event-loop stalls into metadata, when the recording looked for them. */
static int builder_stalls(struct builder *b)
{
	struct collect *c = b->c;

	if (!c->o.cli.modes.syscall || !c->o.cli.stall_min_us)
		return 0;
	return stalls_store(b->p, &c->stalls, c->o.cli.stall_min_us * 1000, c->stalls_dropped);
}

bool collect_btf_cached(const struct collect *c)
{
	return c->btf_path != NULL;
}

bool collect_sys_typed(const struct collect *c)
{
	return c->sys_typed;
}

/* What building held: the stacks read by id, the builder's tables. */
static void builder_release(struct builder *b)
{
	collect_free_stacks(b->c);
	hashmap_release(&b->mappings);
	hashmap_release(&b->sys_idx);
	free(b->locs.items);
	free(b->sys.items);
}

/*
 * What both a profile and a look at one hold: the samples of every map,
 * symbolized, the syscall statistics and the loss counters.
 */
static int builder_samples(struct builder *b, struct builder_cols *cols)
{
	struct collect *c = b->c;
	int err = 0;

	if (c->o.cli.modes.cpu)
		err = builder_each(b, cols, c->skel->maps.cpu_samples, builder_cpu_sample);
	if (!err && (c->sys_hooks || c->o.cli.modes.offcpu))
		err = builder_each(b, cols, c->skel->maps.timed_samples, builder_timed_sample);
	if (!err)
		err = builder_ustacks(b, cols);
	if (!err && c->o.cli.modes.syscall)
		err = builder_sys_stats(b, cols);
	if (!err)
		err = builder_meta(b);
	return err;
}

int collect_peek_profile(struct collect *c, struct profile *p, collect_keep_fn keep, void *arg,
			 struct sys_stats *sys)
{
	struct builder b = { .c = c, .p = p, .period_ns = NSEC_PER_SEC / c->o.cli.freq_hz,
			     .keep = keep, .keep_arg = arg, .sys_out = sys };
	struct builder_cols cols;
	int err = builder_columns(&b, &cols);

	/* the kernel's symbols stay loaded: the next look needs them again */
	if (!err)
		err = collect_load_stacks(c);
	if (!err)
		err = builder_samples(&b, &cols);
	builder_release(&b);
	return err;
}

int collect_build_profile(struct collect *c, struct profile *p)
{
	struct builder b = { .c = c, .p = p, .period_ns = NSEC_PER_SEC / c->o.cli.freq_hz };
	struct builder_cols cols;
	int err = builder_columns(&b, &cols);

	/*
	 * Every copied stack is unwound: the unwinders go, and with what the
	 * recording freed (exited processes' snapshots) back to the system
	 * before symbolizing takes its share: the peak is the sum otherwise.
	 */
	symbolizer_trim_unwinders(c->sym);
	malloc_trim(0);
	if (collect_debug_lose("stacks"))
		collect_drain_stacks(c);
	if (!err)
		err = collect_load_stacks(c);
	if (!err)
		builder_kernel_first(&b);
	if (!err)
		err = builder_samples(&b, &cols);
	if (!err)
		err = builder_proc_meta(&b);
	if (!err && c->py)
		err = pystacks_store(c->py, p);
	if (!err && c->awaits)
		err = awaits_store(c->awaits, p);
	else if (!err && c->py)		/* --await-hz 0: say the walk was off */
		err = profile_set_meta_u64(p, "awaits.hz", 0);
	if (!err)
		err = builder_track(&b);
	if (!err)
		err = builder_stalls(&b);
	if (!err)
		err = builder_gil(&b);
	if (!err)
		err = builder_jit_meta(&b, &cols);
	builder_release(&b);
	return err;
}

/*
 * The samples of a window: the maps' entries taken out as they are read,
 * the stacks they name read first and emptied last, the unwound stacks
 * emptied once built. A sample added between the read of the stacks and
 * their emptying may lose its stack (the metrics session's drain has the
 * same race); the kernel's symbols stay loaded for the next window.
 */
static int builder_cut_samples(struct builder *b, const struct builder_cols *cols)
{
	struct collect *c = b->c;
	int err = collect_load_stacks(c);

	if (!err && c->o.cli.modes.cpu)
		err = builder_take(b, cols, c->skel->maps.cpu_samples, builder_cpu_sample);
	if (!err && (c->sys_hooks || c->o.cli.modes.offcpu))
		err = builder_take(b, cols, c->skel->maps.timed_samples, builder_timed_sample);
	if (!err)
		err = builder_ustacks(b, cols);
	stackagg_clear(c->ustacks);
	collect_drain_stacks(c);
	return err;
}

/*
 * The requests that ended in the window (--requests): how many, and their
 * p99 (window.requests, window.requests_p99_ns), for serve's triggers.
 */
static int builder_window_requests(struct builder *b)
{
	const struct collect *c = b->c;
	uint64_t *d = calloc(c->reqs.nr + 1, sizeof(*d));
	size_t i;
	int err;

	if (!d)
		return -ENOMEM;
	for (i = 0; i < c->reqs.nr; i++)
		d[i] = c->reqs.items[i].end_ns - c->reqs.items[i].start_ns;
	array_sort(d, c->reqs.nr, sizeof(*d), array_cmp_u64);
	err = profile_set_meta_u64(b->p, "window.requests", c->reqs.nr);
	if (!err)
		err = profile_set_meta_u64(b->p, "window.requests_p99_ns",
					   requests_quantile_ns(d, c->reqs.nr, 0.99));
	free(d);
	return err;
}

int collect_cut_profile(struct collect *c, struct profile *p)
{
	struct builder b = { .c = c, .p = p, .period_ns = NSEC_PER_SEC / c->o.cli.freq_hz };
	struct builder_cols cols;
	int err = builder_columns(&b, &cols);

	if (!err)
		err = builder_cut_samples(&b, &cols);
	if (!err)
		err = builder_meta(&b);
	if (!err)
		err = builder_proc_meta(&b);
	if (!err)
		err = builder_jit_meta(&b, &cols);
	if (!err && c->o.cli.requests)
		err = builder_window_requests(&b);
	/* what only a whole recording stores: kept no longer than a window */
	c->reqs.nr = 0;
	stalls_release(&c->stalls);
	builder_release(&b);
	return err;
}
