// SPDX-License-Identifier: GPL-2.0-only
/*
 * The end of a record session: the in-kernel aggregation (CPU samples,
 * timed samples, syscall statistics), the DWARF-unwound samples, requests
 * and files, symbolized into a struct profile; and the timeline counters
 * read while recording.
 */
#include "src/collect_priv.h"

#include <malloc.h>

/* Draining: kernel keys + stack ids -> symbolized profile samples. */
struct builder {
	struct collect *c;
	struct profile *p;
	uint64_t period_ns;
	uint64_t vanished_samples;	/* user frames of processes never snapshotted */
	uint64_t kstack_missing;	/* stacks whose kernel stack id was not in the map */
	uint64_t ustack_missing;	/* ... whose user stack id was not */
	struct hashmap mappings;	/* sym mapping -> profile mapping id */
	uint64_t py_mapping;		/* the "[python]" mapping, 0 until used */
	struct { uint64_t *items; size_t nr, alloc; } locs;
	struct sys_stats sys;		/* per (process, syscall), from both maps */
	struct hashmap sys_idx;		/* (tgid, nr) -> index + 1 in sys */
};

/* The profile mapping of a symbolizer mapping, added on first use; 0 = none. */
static uint64_t builder_mapping(struct builder *b, const struct sym_mapping *m)
{
	struct profile_mapping pm = { 0 };
	char *file = NULL;
	uint64_t id;

	if (!m)
		return 0;
	id = HASHMAP_TO_NUM(hashmap_get(&b->mappings, m, 0, 0));
	if (id)
		return id;
	pm.start = m->start;
	pm.limit = m->limit;
	pm.offset = m->offset;
	pm.file = m->path;
	pm.build_id = m->build_id;
	pm.has_functions = pm.has_filenames = pm.has_line_numbers = true;
	/* the symbolizer names modules "[mod]"; the profile "[kernel.kallsyms]/mod" */
	if (m->kernel && strcmp(m->path, PROFILE_KERNEL_MAPPING)) {
		if (asprintf(&file, "%s/%.*s", PROFILE_KERNEL_MAPPING,
			     (int)strcspn(m->path + 1, "]"), m->path + 1) < 0)
			return 0;
		pm.file = file;
	}
	id = profile_add_mapping(b->p, &pm);
	free(file);
	if (!id || hashmap_put(&b->mappings, m, 0, 0, HASHMAP_NUM(id)))
		return 0;
	return id;
}

static uint64_t builder_location(struct builder *b, const struct sym_location *loc)
{
	struct profile_line lines[32];
	uint64_t map = builder_mapping(b, loc->map), id;
	size_t i, n = loc->nr_frames < ARRAY_SIZE(lines) ? loc->nr_frames : ARRAY_SIZE(lines);
	char name[512];

	id = profile_find_location(b->p, map, loc->address);
	if (id)
		return id;
	for (i = 0; i < n; i++) {
		const struct sym_frame *f = &loc->frames[i];
		const char *fn = f->function;

		if (!fn) {
			sym_location_fallback_name(loc, name, sizeof(name));
			fn = name;
		}
		/* pprof keeps the mangled name as system_name */
		lines[i].function_id = profile_function_id(b->p, fn,
							   f->function && f->system_name ?
							   f->system_name : fn, f->file, 0);
		lines[i].line = f->line;
		if (!lines[i].function_id)
			return 0;
	}
	return profile_add_location(b->p, map, loc->address, lines, n);
}

static int builder_unknown_location(struct builder *b, uint64_t addr, uint64_t *id)
{
	struct profile_line line = { 0 };

	*id = profile_find_location(b->p, 0, addr);
	if (*id)
		return 0;
	line.function_id = profile_function_id(b->p, "[unknown]", NULL, NULL, 0);
	*id = line.function_id ? profile_add_location(b->p, 0, addr, &line, 1) : 0;
	return *id ? 0 : -ENOMEM;
}

/*
 * The location of Python frame @pc (PYSTACKS_PC): in the "[python]" mapping,
 * at the frame's id, so each (function, line) is one location.
 */
static int builder_python_frame(struct builder *b, uint64_t pc, uint64_t *lid)
{
	const struct pyframe *f = pystacks_frame(b->c->py, pc);
	struct profile_mapping pm = { .file = PROFILE_PYTHON_MAPPING, .build_id = "" };
	struct profile_line line = { 0 };
	uint64_t addr = (pc & ~PYSTACKS_PC) + 1;

	if (!f)
		return builder_unknown_location(b, pc & ~PYSTACKS_PC, lid);
	if (!b->py_mapping) {
		pm.has_functions = pm.has_filenames = pm.has_line_numbers = true;
		b->py_mapping = profile_add_mapping(b->p, &pm);
		if (!b->py_mapping)
			return -ENOMEM;
	}
	*lid = profile_find_location(b->p, b->py_mapping, addr);
	if (*lid)
		return 0;
	line.function_id = profile_function_id(b->p, f->name, f->name, f->file, f->first_line);
	line.line = f->line;
	*lid = line.function_id ? profile_add_location(b->p, b->py_mapping, addr, &line, 1) : 0;
	return *lid ? 0 : -ENOMEM;
}

/* The location of one frame; user pcs may carry SYM_PC_EXACT. */
static int builder_frame(struct builder *b, uint64_t pc, bool is_return,
			 struct sym_process *proc, bool kernel, uint64_t *lid)
{
	const struct sym_location *loc;

	if (kernel) {
		loc = symbolizer_kernel(b->c->sym, pc, is_return);
	} else {
		if ((pc & PYSTACKS_PC) && b->c->py)
			return builder_python_frame(b, pc, lid);
		if (pc & SYM_PC_EXACT)
			is_return = false;	/* a signal interrupted this frame */
		pc &= ~SYM_PC_EXACT;
		if (!proc)
			return builder_unknown_location(b, pc, lid);
		loc = symbolizer_user(b->c->sym, proc, pc, is_return);
	}
	*lid = loc ? builder_location(b, loc) : 0;
	return *lid ? 0 : -ENOMEM;
}

/* Append locations for @pcs (leaf first) to b->locs. */
static int builder_frames(struct builder *b, const uint64_t *pcs, size_t nr,
			  struct sym_process *proc, bool kernel)
{
	size_t i;
	int err;

	for (i = 0; i < nr && pcs[i]; i++) {
		if (array_grow(&b->locs, b->locs.nr + 1))
			return -ENOMEM;
		err = builder_frame(b, pcs[i], i > 0, proc, kernel, &b->locs.items[b->locs.nr]);
		if (err)
			return err;
		b->locs.nr++;
	}
	return 0;
}

/*
 * Is kernel @pc in the path that runs latprof's own tracepoint program
 * (bpf_prog_*, bpf_trace_run*, __traceiter_*, __bpf_trace_*)? How many such
 * frames a stack taken in sched_switch has depends on what else is attached.
 */
static bool tracing_frame(struct builder *b, uint64_t pc, bool is_return)
{
	static const char *const prefixes[] = { "bpf_prog_", "bpf_trace_run", "__traceiter_",
						"__bpf_trace_" };
	const struct sym_location *loc = symbolizer_kernel(b->c->sym, pc, is_return);
	const char *fn;
	size_t i;

	if (!loc || !loc->nr_frames || !(fn = loc->frames[loc->nr_frames - 1].function))
		return false;
	for (i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(fn, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/*
 * Append the frames of stack map entry @id (leaf first) to b->locs; @trim:
 * a kernel stack taken by a tracepoint program, whose own frames go.
 */
static int builder_stack(struct builder *b, int32_t id, struct sym_process *proc, bool kernel,
			 bool trim)
{
	const struct collect_stack *st = (size_t)id < b->c->stacks.nr ? &b->c->stacks.items[id] : NULL;
	size_t skip = 0;

	if (id < 0)
		return 0;	/* none taken, or stack_get failed: counted in the kernel */
	if (!st || !st->ips) {
		/* the sample is kept without these frames: say so */
		if (kernel)
			b->kstack_missing++;
		else
			b->ustack_missing++;
		return 0;
	}
	while (trim && kernel && skip < st->nr && tracing_frame(b, st->ips[skip], skip > 0))
		skip++;
	return builder_frames(b, st->ips + skip, st->nr - skip, proc, kernel);
}

/*
 * Look up every kernel frame of the stacks map the way builder_stack() will
 * (untrimmed, and the first frame a trim keeps), then free the kernel's
 * symbol table: the DWARF that user frames load does not come on top of it
 * (6 MB of kallsyms beside libc's 11 MB of DWARF made the peak). Kernel
 * stacks are the ones in the upper half of the address space. A lookup that
 * fails here fails again, and is reported, when the samples are built.
 */
static void builder_kernel_first(struct builder *b)
{
	const struct collect_stack *st;
	size_t i, j, skip;

	for (i = 0; i < b->c->stacks.nr; i++) {
		st = &b->c->stacks.items[i];
		if (!st->ips || !st->nr || (int64_t)st->ips[0] >= 0)
			continue;
		for (j = 0; j < st->nr && st->ips[j]; j++)
			symbolizer_kernel(b->c->sym, st->ips[j], j > 0);
		skip = 0;
		while (skip < st->nr && tracing_frame(b, st->ips[skip], skip > 0))
			skip++;
		if (skip && skip < st->nr && st->ips[skip])
			symbolizer_kernel(b->c->sym, st->ips[skip], false);
	}
	symbolizer_kernel_unload(b->c->sym);
}

static struct sym_process *builder_process(struct builder *b, pid_t pid, uint32_t gen)
{
	struct proc_image *img = proc_images_find(&b->c->images, pid, gen);

	/* an event may have been lost: a live process can still be read now */
	if (!img && !proc_images_snapshot(&b->c->images, pid, gen))
		img = proc_images_find(&b->c->images, pid, gen);
	return img ? img->sym : NULL;
}

/* One aggregated stack and what was measured on it, from any source. */
struct sample_in {
	uint32_t tgid, gen;
	const char *comm;		/* LP_COMM_LEN bytes, maybe unterminated */
	int32_t kstack_id, ustack_id;	/* stack map ids, or -errno */
	const uint64_t *upcs;		/* DWARF-unwound user pcs, or NULL */
	size_t nr_upcs;
	int32_t nr;			/* syscall number, -1 for none */
	uint32_t wait;			/* enum lp_wait */
	uint64_t cpu_samples;
	uint64_t slow_syscalls, latency_ns, max_ns;
	uint64_t blocked_ns, preempted_ns;
};

/* Column indexes of the profile being built; -1 when the mode is off. */
struct builder_cols {
	int samples, cpu, syscalls, latency, offcpu;
};

static int builder_emit(struct builder *b, const struct builder_cols *cols,
			const struct sample_in *in)
{
	char comm[LP_COMM_LEN + 1] = { 0 }, sys[SYS_NAME_LEN];
	struct profile_label labels[8] = {
		{ .key = "pid", .num = in->tgid },
		{ .key = "comm", .str = comm },
	};
	int64_t values[5] = { 0 };
	size_t nl = 2, base;
	int err = 0;

	memcpy(comm, in->comm, LP_COMM_LEN);
	if (in->cpu_samples && cols->samples >= 0) {
		values[cols->samples] = in->cpu_samples;
		values[cols->cpu] = in->cpu_samples * b->period_ns;
		err = profile_add_sample(b->p, b->locs.items, b->locs.nr, values, labels, nl);
		values[cols->samples] = values[cols->cpu] = 0;
	}
	if (in->nr >= 0) {
		sys_stat_name(in->nr, sys, sizeof(sys));
		labels[nl++] = (struct profile_label){ .key = "syscall", .str = sys };
		labels[nl++] = (struct profile_label){
			.key = "category", .str = syscall_category_name(syscall_category(in->nr))
		};
		labels[nl++] = (struct profile_label){
			.key = SYSCALL_WAIT_LABEL,
			.str = syscall_wait_label(in->nr, in->wait)
		};
	}
	base = nl;
	if (!err && ((in->slow_syscalls && cols->syscalls >= 0) ||
		     (in->blocked_ns && cols->offcpu >= 0))) {
		if (cols->syscalls >= 0) {
			values[cols->syscalls] = in->slow_syscalls;
			values[cols->latency] = in->latency_ns;
			if (in->max_ns)
				labels[nl++] = (struct profile_label){
					.key = "max_ns", .num = in->max_ns, .num_unit = "nanoseconds"
				};
		}
		if (cols->offcpu >= 0 && in->blocked_ns) {
			values[cols->offcpu] = in->blocked_ns;
			labels[nl++] = (struct profile_label){ .key = "offcpu", .str = "blocked" };
		}
		err = profile_add_sample(b->p, b->locs.items, b->locs.nr, values, labels, nl);
		memset(values, 0, sizeof(values));
	}
	if (!err && in->preempted_ns && cols->offcpu >= 0) {
		nl = base;
		values[cols->offcpu] = in->preempted_ns;
		labels[nl++] = (struct profile_label){ .key = "offcpu", .str = "preempted" };
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

static int builder_cpu_sample(struct builder *b, const struct builder_cols *cols,
			      const void *k, const void *v)
{
	const struct lp_sample_key *key = k;
	struct sample_in in = {
		.tgid = key->tgid,
		.gen = key->gen,
		.comm = key->comm,
		.kstack_id = key->kstack_id,
		.ustack_id = key->ustack_id,
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
		.tgid = key->tgid,
		.gen = key->gen,
		.comm = key->comm,
		.kstack_id = key->kstack_id,
		.ustack_id = key->ustack_id,
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
			.blocked_ns = e->sum.blocked_ns,
			.preempted_ns = e->sum.preempted_ns,
		};

		if (e->key.kind == LP_SAMPLE_CPU) {
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
static int builder_sys_fast(struct builder *b)
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

/* The others are stored as they are (copied to b->sys, they would be twice). */
static int builder_sys_exited_store(void *arg, const struct sys_exited_stat *e)
{
	struct builder *b = arg;

	if (!e->st.count || hashmap_get(&b->sys_idx, NULL, e->st.pid, (uint32_t)e->nr))
		return 0;
	return sys_stat_store(b->p, &e->st);
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

int collect_counters(struct collect *c, struct timeline_counters *out)
{
	struct collect_stats st;
	struct builder b = { .c = c };
	size_t i;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (c->mode_cpu) {
		collect_get_stats(c, &st);
		out->ns[TIMELINE_SERIES_CPU] = st.stat[LP_STAT_SAMPLES] * (NSEC_PER_SEC / c->freq_hz);
	}
	/* the kernel's maps hold the live processes; exited ones are summed */
	if (c->mode_syscall)
		err = builder_sys_fast(&b);
	if (!err && c->mode_syscall)
		err = collect_map_each(c->skel->maps.sys_stats, counters_sys_entry, out);
	if (!err)
		err = collect_sys_spill(c, false, counters_sys_spilled, out);
	for (i = 0; !err && i < b.sys.nr; i++)
		counters_sys_add(out, &b.sys.items[i]);
	for (i = 0; i < TIMELINE_SERIES_NR; i++)
		out->ns[i] += c->exited_ns[i];
	out->opens += c->exited_opens;
	hashmap_release(&b.sys_idx);
	free(b.sys.items);
	return err;
}

struct proc_tree *collect_procs(struct collect *c)
{
	return &c->procs;
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
			err = sys_stat_store(b->p, &b->sys.items[i]);
	if (!err)
		err = sys_exited_each(&b->c->exited, builder_sys_exited_store, b);
	return err;
}

/*
 * Files libdwfl refused in @img. Not in the command's generation 0: that is
 * latprof's own fork (its samples are dropped), and a re-read of it racing
 * with the exec event sees the new program's files, counted in generation 1.
 */
static uint64_t builder_modules_refused(struct builder *b, const struct proc_image *img)
{
	if (img->pid == b->c->command_pid && img->gen == 0)
		return 0;
	return proc_image_modules_refused(img);
}

/*
 * Why the perf map of @img was not trusted (its JIT frames stay
 * [anon]+0x...), said once per image with -v. With its name: the image of
 * an exec generation can refuse a map the next one reads (setpriv, still
 * root, refuses the map of the program it runs as nobody).
 */
static void builder_perfmap_refused(const struct proc_image *img)
{
	int why = img->sym ? sym_process_perfmap_refused(img->sym) : 0;

	if (!why)
		return;
	pr_debug("pid %d (%.16s): perf map refused: %s", img->pid, img->comm,
		 why == -EPERM ? "owned by neither the process's user nor root" :
		 why == -ELOOP ? "a symbolic link" :
		 why == -EINVAL ? "not a regular file" : strerror(-why));
}

/* proc.PID.* metadata: unwinding mode and stack quality of each process. */
/*
 * How the stacks of an exited process past the first COLLECT_UNWIND_KEPT
 * sampled ones were unwound: added to its name's, under the pseudo pid of
 * src/sysexited.h, so a busy machine's thousands of short processes are not
 * six keys each. 0 or -ENOMEM.
 */
static int builder_unwind_fold(struct builder *b, const struct proc_image *img,
			       uint64_t **folded, size_t *nr)
{
	ssize_t n = sys_exited_name(&b->c->exited, img->comm);
	size_t j;
	uint64_t *p;

	if (n < 0)
		return -ENOMEM;
	if ((size_t)n >= *nr) {
		p = realloc(*folded, (n + 1) * SYM_UNWIND_NR * sizeof(*p));
		if (!p)
			return -ENOMEM;
		memset(p + *nr * SYM_UNWIND_NR, 0, (n + 1 - *nr) * SYM_UNWIND_NR * sizeof(*p));
		*folded = p;
		*nr = n + 1;
	}
	for (j = 0; j < SYM_UNWIND_NR; j++)
		(*folded)[n * SYM_UNWIND_NR + j] += img->unwind[j];
	return 0;
}

static int builder_proc_meta(struct builder *b)
{
	uint64_t *folded = NULL;
	size_t i, j, nr_folded = 0, sampled = 0;
	char key[96];
	int err = 0;

	for (i = 0; !err && i < b->c->images.list.nr; i++) {
		const struct proc_image *img = &b->c->images.list.items[i];
		uint64_t v, refused = builder_modules_refused(b, img);

		for (v = 0, j = 0; j < SYM_UNWIND_NR; j++)
			v += img->unwind[j];
		sampled += v != 0;
		if (v && img->ended && b->c->unwind_dwarf && sampled > COLLECT_UNWIND_KEPT) {
			err = builder_unwind_fold(b, img, &folded, &nr_folded);
			v = 0;	/* its keys are its name's */
		}
		/* with DWARF, one never sampled has nothing to say (most of -a's) */
		snprintf(key, sizeof(key), "proc.%d.unwind", img->pid);
		if (v || !b->c->unwind_dwarf)
			err = profile_set_meta(b->p, key, b->c->unwind_dwarf ? "dwarf" : "fp");
		if (!err && img->comm[0]) {
			snprintf(key, sizeof(key), "proc.%d.comm", img->pid);
			err = profile_set_meta(b->p, key, img->comm);
		}
		builder_perfmap_refused(img);
		snprintf(key, sizeof(key), "proc.%d.modules_refused", img->pid);
		if (!err && refused)
			err = profile_set_meta_u64(b->p, key, profile_get_meta_u64(b->p, key) +
						   refused);
		for (j = 0; !err && v && b->c->unwind_dwarf && j < SYM_UNWIND_NR; j++) {
			/* images of one pid (exec generations) add up */
			snprintf(key, sizeof(key), "proc.%d.%s", img->pid, collect_unwind_names[j]);
			err = profile_set_meta_u64(b->p, key, profile_get_meta_u64(b->p, key) +
						   img->unwind[j]);
		}
	}
	/* the names exited processes were folded into, under their pseudo pids */
	for (i = 0; !err && i < b->c->exited.names.nr; i++) {
		const struct sys_exited_name *n = &b->c->exited.names.items[i];
		uint32_t pid = sys_exited_name_pid(i);

		snprintf(key, sizeof(key), "proc.%" PRIu32 ".comm", pid);
		err = profile_set_meta(b->p, key, n->comm[0] ? n->comm : "[other]");
		snprintf(key, sizeof(key), "proc.%" PRIu32 ".processes_folded", pid);
		if (!err && n->processes)
			err = profile_set_meta_u64(b->p, key, n->processes);
		if (!err && i < nr_folded) {
			snprintf(key, sizeof(key), "proc.%" PRIu32 ".unwind", pid);
			err = profile_set_meta(b->p, key, "dwarf");
		}
		for (j = 0; !err && i < nr_folded && j < SYM_UNWIND_NR; j++) {
			snprintf(key, sizeof(key), "proc.%" PRIu32 ".%s", pid, collect_unwind_names[j]);
			err = profile_set_meta_u64(b->p, key, folded[i * SYM_UNWIND_NR + j]);
		}
	}
	free(folded);
	return err;
}

/* The metadata key of counter @stat of enum lp_stat: "count.NAME" or "lost.NAME". */
static void stat_meta_key(int stat, char *key, size_t size)
{
	snprintf(key, size, "%s.%s",
		 stat == LP_STAT_SAMPLES || stat == LP_STAT_EVENTS ? "count" : "lost",
		 collect_stat_names[stat]);
}

/*
 * stats_unreadable: the keys of the counters in @unread (a bit per enum
 * lp_stat), whose 0 means "not known", not "nothing lost".
 */
static int builder_unreadable_meta(struct builder *b, uint32_t unread)
{
	char key[64], *list = NULL;
	size_t len = 0;
	bool first = true;
	FILE *f;
	int i, err;

	if (!unread)
		return 0;
	pr_warn("cannot read %d of the kernel's %d loss counters: reported as unknown",
		__builtin_popcount(unread), LP_STAT_NR);
	f = open_memstream(&list, &len);
	if (!f)
		return -ENOMEM;
	for (i = 0; i < LP_STAT_NR; i++) {
		if (!(unread & (1U << i)))
			continue;
		stat_meta_key(i, key, sizeof(key));
		fprintf(f, "%s%s", first ? "" : ",", key);
		first = false;
	}
	err = fclose(f) ? -ENOMEM : profile_set_meta(b->p, "stats_unreadable", list);
	free(list);
	return err;
}

/* lost.modules_refused: executable files libdwfl refused, over every image. */
static int builder_refused_meta(struct builder *b)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < b->c->images.list.nr; i++)
		n += builder_modules_refused(b, &b->c->images.list.items[i]);
	return profile_set_meta_u64(b->p, "lost.modules_refused", n);
}

static int builder_meta(struct builder *b)
{
	struct collect_stats st;
	uint32_t unread = collect_read_stats(b->c, &st);
	uint64_t nstacks = 0;
	char key[64];
	int err = 0, i;

	for (i = 0; !err && i < LP_STAT_NR; i++) {
		stat_meta_key(i, key, sizeof(key));
		err = profile_set_meta_u64(b->p, key, st.stat[i]);
	}
	if (!err)
		err = builder_unreadable_meta(b, unread);
	if (!err)
		err = profile_set_meta_u64(b->p, "lost.samples_process_vanished",
					   b->vanished_samples);
	if (!err)
		err = profile_set_meta_u64(b->p, "lost.kstack_missing", b->kstack_missing);
	if (!err)
		err = profile_set_meta_u64(b->p, "lost.ustack_missing", b->ustack_missing);
	if (!err)
		err = profile_set_meta_u64(b->p, "lost.events_unread", b->c->events_unread);
	if (!err)
		err = profile_set_meta_u64(b->p, "lost.ustacks_unread", b->c->ustacks_unread);
	if (!err)
		err = builder_refused_meta(b);
	if (!err)
		err = profile_set_meta_u64(b->p, "count.processes", st.procs_seen);
	for (i = 0; i < (int)b->c->stacks.nr; i++)
		nstacks += b->c->stacks.items[i].ips != NULL;
	if (!err)
		err = profile_set_meta_u64(b->p, "count.stacks", nstacks);
	if (!err)
		err = profile_set_meta_u64(b->p, "count.stacks_max", b->c->skel->rodata->cfg_max_stacks);
	if (!err && (b->c->sys_hooks || b->c->mode_offcpu))
		err = profile_set_meta_u64(b->p, "count.in_flight_at_stop",
					   b->c->in_flight_reported);
	return err;
}

/*
 * Frames in anonymous executable memory, JIT-compiled code: those a perf
 * map named, and those left "[anon]+0x..." (no map, or none found: a
 * runtime without --perf-basic-prof, a map gone with its container). Each
 * CPU sample's frames count once per sample; without CPU samples, each
 * stack's once. Not a lost.* counter: the frames are in the profile, only
 * unnamed (the report says so apart).
 */
static int builder_jit_meta(struct builder *b, const struct builder_cols *cols)
{
	const struct profile *p = b->p;
	uint64_t all = 0, unnamed = 0, w;
	size_t i, j;
	int err;

	for (i = 0; i < p->samples.nr; i++) {
		const struct profile_sample *s = &p->samples.items[i];

		w = cols->samples >= 0 ? (uint64_t)s->values[cols->samples] : 1;
		for (j = 0; w && j < s->nr_locs; j++) {
			const struct profile_location *l = profile_location(p, s->locs[j]);
			const struct profile_mapping *m = l ? profile_mapping(p, l->mapping_id) : NULL;
			const struct profile_function *f;

			if (!m || strcmp(m->file, "[anon]") || !l->nr_lines)
				continue;
			f = profile_function(p, l->lines[0].function_id);
			all += w;
			if (!f || !strncmp(f->name, "[anon]+0x", 9))
				unnamed += w;
		}
	}
	if (!all)
		return 0;
	err = profile_set_meta_u64(b->p, "count.jit_frames", all);
	return err ? err : profile_set_meta_u64(b->p, "count.jit_frames_unnamed", unnamed);
}

/* The value columns of the chosen modes, in a fixed order. */
static int builder_columns(struct builder *b, struct builder_cols *cols)
{
	struct profile *p = b->p;

	*cols = (struct builder_cols){ -1, -1, -1, -1, -1 };
	if (b->c->mode_cpu) {
		cols->samples = profile_add_type(p, PROFILE_TYPE_SAMPLES, "count");
		cols->cpu = profile_add_type(p, PROFILE_TYPE_CPU, "nanoseconds");
		if (cols->samples < 0 || cols->cpu < 0)
			return -ENOMEM;
		p->period_type.type = profile_str(p, PROFILE_TYPE_CPU);
		p->default_type = p->period_type.type;
		p->period_type.unit = profile_str(p, "nanoseconds");
		p->period = b->period_ns;
	}
	if (b->c->mode_syscall) {
		cols->syscalls = profile_add_type(p, PROFILE_TYPE_SYSCALLS, "count");
		cols->latency = profile_add_type(p, PROFILE_TYPE_LATENCY, "nanoseconds");
		if (cols->syscalls < 0 || cols->latency < 0)
			return -ENOMEM;
		if (!p->default_type)
			p->default_type = profile_str(p, PROFILE_TYPE_LATENCY);
	}
	if (b->c->mode_offcpu) {
		cols->offcpu = profile_add_type(p, PROFILE_TYPE_OFFCPU, "nanoseconds");
		if (cols->offcpu < 0)
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

	if (!c->requests && !c->files && !c->net)
		return 0;
	err = collect_track_flush(c);
	if (!err && c->requests)
		err = requests_compute(c->reqs.items, c->reqs.nr, &reqs);
	if (!err && c->requests) {
		requests_sort_by_start(&reqs);
		err = requests_store(b->p, &reqs, c->reqs_dropped, c->reqs_unanswered);
	}
	if (!err && (c->files || c->net))
		err = iotrack_store(&c->io, b->p);
	free(reqs.items);
	return err;
}

bool collect_btf_cached(const struct collect *c)
{
	return c->btf_path != NULL;
}

bool collect_sys_typed(const struct collect *c)
{
	return c->sys_typed;
}

int collect_build_profile(struct collect *c, struct profile *p)
{
	struct builder b = { .c = c, .p = p, .period_ns = NSEC_PER_SEC / c->freq_hz };
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
	if (!err && c->mode_cpu)
		err = builder_each(&b, &cols, c->skel->maps.cpu_samples, builder_cpu_sample);
	if (!err && (c->sys_hooks || c->mode_offcpu))
		err = builder_each(&b, &cols, c->skel->maps.timed_samples, builder_timed_sample);
	if (!err)
		err = builder_ustacks(&b, &cols);
	if (!err && c->mode_syscall)
		err = builder_sys_stats(&b, &cols);
	if (!err)
		err = builder_meta(&b);
	if (!err)
		err = builder_proc_meta(&b);
	if (!err && c->py)
		err = pystacks_store(c->py, p);
	if (!err)
		err = builder_track(&b);
	if (!err)
		err = builder_jit_meta(&b, &cols);
	collect_free_stacks(c);
	hashmap_release(&b.mappings);
	hashmap_release(&b.sys_idx);
	free(b.locs.items);
	free(b.sys.items);
	return err;
}

/* serve: the in-kernel aggregation read and emptied while collecting. */
