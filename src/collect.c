// SPDX-License-Identifier: GPL-2.0-only
/*
 * BPF session for `record`: skeleton lifecycle, perf events on every online
 * CPU, lifecycle events from the ring buffer (snapshots for the symbolizer),
 * and the final drain of the in-kernel aggregation into a struct profile.
 */
#include "src/collect.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "latprof.skel.h"
#include "src/hashmap.h"
#include "src/procimg.h"
#include "src/stackagg.h"
#include "src/util.h"

_Static_assert(sizeof(struct lp_sample_key) == 32, "lp_sample_key layout");
_Static_assert(sizeof(struct lp_event) == 40, "lp_event layout");
_Static_assert(sizeof(struct lp_proc) == 8, "lp_proc layout");
_Static_assert(PROC_IMAGE_COMM_LEN == LP_COMM_LEN, "comm length");

/* Names of enum lp_stat, as they appear in metadata ("lost.NAME"). */
static const char *const stat_names[LP_STAT_NR] = {
	[LP_STAT_SAMPLES] = "samples",
	[LP_STAT_USTACK_EEXIST] = "ustack_collision",
	[LP_STAT_USTACK_EFAULT] = "ustack_fault",
	[LP_STAT_USTACK_OTHER] = "ustack_error",
	[LP_STAT_KSTACK_EEXIST] = "kstack_collision",
	[LP_STAT_KSTACK_EFAULT] = "kstack_fault",
	[LP_STAT_KSTACK_OTHER] = "kstack_error",
	[LP_STAT_SAMPLES_DROPPED] = "samples_dropped_map_full",
	[LP_STAT_PROCS_DROPPED] = "procs_dropped_map_full",
	[LP_STAT_EVENTS] = "events",
	[LP_STAT_EVENTS_LOST] = "events_lost",
	[LP_STAT_USTACKS_LOST] = "ustacks_lost",
};

/* Names of enum sym_unwind_status in metadata ("proc.PID.NAME"). */
static const char *const unwind_names[SYM_UNWIND_NR] = {
	[SYM_UNWIND_COMPLETE] = "stacks_complete",
	[SYM_UNWIND_TRUNCATED_COPY] = "truncated_copy",
	[SYM_UNWIND_TRUNCATED_DEPTH] = "truncated_depth",
	[SYM_UNWIND_NO_UNWIND_INFO] = "truncated_no_unwind_info",
	[SYM_UNWIND_BAD_READ] = "truncated_bad_read",
};

struct collect {
	struct latprof_bpf *skel;
	struct symbolizer *sym;
	struct ring_buffer *rb;
	struct { struct bpf_link **items; size_t nr, alloc; } links;
	struct { int *items; size_t nr, alloc; } perf_fds;
	struct proc_images images;
	struct stackagg *ustacks;	/* DWARF-unwound samples */
	bool unwind_dwarf;
	unsigned int freq_hz;
	bool verbose;
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && log_level < LOG_LEVEL_TRACE)
		return 0;
	if (level == LIBBPF_INFO && log_level < LOG_LEVEL_DEBUG)
		return 0;
	if (log_level < LOG_LEVEL_WARN)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct collect *c = ctx;
	const struct lp_event *e = data;
	struct proc_image *img;

	if (size < sizeof(*e))
		return 0;
	switch (e->type) {
	case LP_EVENT_NEW:
	case LP_EVENT_EXEC:
		pr_debug("%s pid %u gen %u (%.16s)", e->type == LP_EVENT_NEW ? "new" : "exec",
			 e->pid, e->gen, e->comm);
		proc_images_snapshot(&c->images, e->pid, e->gen);
		img = proc_images_find(&c->images, e->pid, e->gen);
		/* at fork the event runs in the parent, whose name the child has */
		if (img && !img->comm[0])
			memcpy(img->comm, e->comm, LP_COMM_LEN);
		break;
	case LP_EVENT_EXIT:
		pr_debug("exit pid %u", e->pid);
		proc_images_stop_refresh(&c->images, e->pid);
		break;
	}
	return 0;
}

/* Unwind @in with image @img, re-reading the maps once if a pc had no module. */
static void unwind_sample(struct collect *c, struct proc_image *img,
			  const struct sym_unwind_input *in, uint64_t *pcs, size_t *nr,
			  enum sym_unwind_status *st)
{
	struct sym_process *before = img->sym;
	uint64_t now;

	symbolizer_unwind(c->sym, img->sym, in, pcs, LP_MAX_STACK_DEPTH, nr, st);
	if (*st != SYM_UNWIND_NO_UNWIND_INFO)
		return;
	/* a library dlopen'ed since the last snapshot: look again, at most 10/s */
	now = now_ns();
	if (now - img->forced_refresh_ns < NSEC_PER_SEC / 10)
		return;
	img->forced_refresh_ns = now;
	if (proc_images_snapshot(&c->images, img->pid, img->gen) || img->sym == before)
		return;
	symbolizer_unwind(c->sym, img->sym, in, pcs, LP_MAX_STACK_DEPTH, nr, st);
}

static int on_ustack(void *ctx, void *data, size_t size)
{
	struct collect *c = ctx;
	const struct lp_ustack_sample *e = data;
	struct sym_unwind_input in = { .stack = e->stack };
	struct stackagg_key key = { 0 };
	uint64_t pcs[LP_MAX_STACK_DEPTH];
	enum sym_unwind_status st = SYM_UNWIND_NO_UNWIND_INFO;
	struct proc_image *img;
	size_t nr = 0;

	if (size < LP_USTACK_HDR_SIZE || e->stack_len > size - LP_USTACK_HDR_SIZE)
		return 0;
	in.stack_len = e->stack_len;
	memcpy(in.regs, e->regs, sizeof(in.regs));
	img = proc_images_find(&c->images, e->tgid, e->gen);
	if (!img || !img->sym) {
		proc_images_snapshot(&c->images, e->tgid, e->gen);
		img = proc_images_find(&c->images, e->tgid, e->gen);
	}
	if (img && img->sym)
		unwind_sample(c, img, &in, pcs, &nr, &st);
	if (img) {
		img->unwind[st]++;
		if (!img->comm[0])
			memcpy(img->comm, e->comm, LP_COMM_LEN);
	}
	key.tgid = e->tgid;
	key.gen = e->gen;
	key.kstack_id = e->kstack_id;
	key.kind = e->kind;
	memcpy(key.comm, e->comm, sizeof(key.comm));
	return stackagg_add(c->ustacks, &key, pcs, nr, e->value) ? -ENOMEM : 0;
}

static int configure(struct collect *c, const struct collect_opts *o)
{
	struct latprof_bpf *s = c->skel;
	size_t i;
	int err;

	s->rodata->cfg_all = o->all;
	/* with -a, unwinding our own samples would feed on itself */
	s->rodata->cfg_self_tgid = getpid();
	s->rodata->cfg_nr_comms = o->nr_comms;
	for (i = 0; i < o->nr_comms && i < LP_MAX_COMMS; i++)
		strncpy((char *)s->rodata->cfg_comms[i], o->comms[i], LP_COMM_LEN - 1);
	s->rodata->cfg_unwind_dwarf = o->unwind_dwarf;
	s->rodata->cfg_stack_size = o->stack_size;
	err = bpf_map__set_max_entries(s->maps.stacks, o->max_stacks);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.ustack_scratch,
					       libbpf_num_possible_cpus());
	if (!err)
		err = bpf_map__set_max_entries(s->maps.ustacks, o->ustack_ring_bytes);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.cpu_samples, o->max_samples);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.procs, o->max_procs);
	return err;
}

struct collect *collect_open(const struct collect_opts *o, struct symbolizer *sym, int *err,
			     const char **why)
{
	struct collect *c = calloc(1, sizeof(*c));
	size_t i;

	*why = "cannot allocate";
	*err = -ENOMEM;
	if (!c)
		return NULL;
	c->sym = sym;
	c->images.sym = sym;
	c->freq_hz = o->freq_hz;
	c->verbose = o->verbose;
	c->unwind_dwarf = o->unwind_dwarf;
	c->ustacks = stackagg_new();
	if (!c->ustacks)
		goto fail;
	libbpf_set_print(libbpf_print);
	*why = "cannot open BPF object";
	c->skel = latprof_bpf__open();
	if (!c->skel) {
		*err = -errno;
		goto fail;
	}
	*why = "cannot configure BPF maps";
	*err = configure(c, o);
	if (*err)
		goto fail;
	*why = "cannot load BPF programs (see docs/troubleshooting.md)";
	*err = latprof_bpf__load(c->skel);
	if (*err)
		goto fail;
	*why = "cannot create ring buffer";
	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.events), on_event, c, NULL);
	if (!c->rb) {
		*err = -errno;
		goto fail;
	}
	if (o->unwind_dwarf) {
		*err = ring_buffer__add(c->rb, bpf_map__fd(c->skel->maps.ustacks), on_ustack, c);
		if (*err)
			goto fail;
	}
	*why = "cannot add target";
	for (i = 0; i < o->nr_pids; i++) {
		*err = collect_add_pid(c, o->pids[i]);
		if (*err)
			goto fail;
	}
	*err = 0;
	*why = NULL;
	return c;
fail:
	collect_free(c);
	return NULL;
}

int collect_add_pid(struct collect *c, pid_t pid)
{
	struct lp_proc zero = { 0 };
	uint32_t key = pid;

	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.procs), &key, &zero, BPF_ANY))
		return -errno;
	proc_images_snapshot(&c->images, pid, 0);
	return 0;
}

/* CPUs listed in /sys/devices/system/cpu/online, e.g. "0-3,5". */
static int online_cpus(bool **online, int *nr)
{
	int n = libbpf_num_possible_cpus(), a, b, i, err;
	char *buf = NULL, *p;

	if (n <= 0)
		return n ? n : -EINVAL;
	*online = calloc(n, sizeof(**online));
	if (!*online)
		return -ENOMEM;
	*nr = n;
	err = read_file("/sys/devices/system/cpu/online", &buf, NULL);
	if (err)
		return err;
	for (p = buf; *p && *p != '\n';) {
		if (sscanf(p, "%d", &a) != 1)
			break;
		b = a;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p == '-' && sscanf(++p, "%d", &b) == 1)
			while (*p >= '0' && *p <= '9')
				p++;
		for (i = a; i <= b && i < n; i++)
			(*online)[i] = true;
		if (*p == ',')
			p++;
	}
	free(buf);
	return 0;
}

static int attach_cpu(struct collect *c, int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = c->freq_hz,
		.freq = 1,
	};
	struct bpf_link *link;
	int fd;

	fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno == ENODEV ? 0 : -errno;	/* CPU went offline */
	if (array_grow(&c->perf_fds, c->perf_fds.nr + 1) ||
	    array_grow(&c->links, c->links.nr + 1)) {
		close(fd);
		return -ENOMEM;
	}
	c->perf_fds.items[c->perf_fds.nr++] = fd;
	link = bpf_program__attach_perf_event(c->skel->progs.on_cpu_sample, fd);
	if (!link)
		return -errno;
	c->links.items[c->links.nr++] = link;
	return 0;
}

int collect_attach(struct collect *c)
{
	bool *online = NULL;
	int nr = 0, cpu, err;

	/* lifecycle tracking first, so no fork between the two is missed */
	err = latprof_bpf__attach(c->skel);
	if (err)
		return err;
	err = online_cpus(&online, &nr);
	for (cpu = 0; !err && cpu < nr; cpu++)
		if (online[cpu])
			err = attach_cpu(c, cpu);
	free(online);
	return err;
}

int collect_poll(struct collect *c, int timeout_ms)
{
	int n = ring_buffer__poll(c->rb, proc_images_refresh(&c->images, timeout_ms));

	return n < 0 && n != -EINTR ? n : 0;
}

void collect_detach(struct collect *c)
{
	size_t i;

	for (i = 0; i < c->links.nr; i++)
		bpf_link__destroy(c->links.items[i]);
	c->links.nr = 0;
	for (i = 0; i < c->perf_fds.nr; i++)
		close(c->perf_fds.items[i]);
	c->perf_fds.nr = 0;
	if (c->skel)
		latprof_bpf__detach(c->skel);
	/* events already in the ring buffer still count */
	if (c->rb)
		ring_buffer__consume(c->rb);
}

void collect_get_stats(struct collect *c, struct collect_stats *st)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(c->skel->maps.stats);
	uint64_t *vals = calloc(ncpu > 0 ? ncpu : 1, sizeof(*vals));
	uint32_t k;
	int i;

	memset(st, 0, sizeof(*st));
	for (k = 0; vals && k < LP_STAT_NR; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (i = 0; i < ncpu; i++)
			st->stat[k] += vals[i];
	}
	free(vals);
	st->procs_seen = proc_images_nr_processes(&c->images);
	st->snapshot_failed = c->images.snapshot_failed;
}

void collect_free(struct collect *c)
{
	if (!c)
		return;
	collect_detach(c);
	ring_buffer__free(c->rb);
	latprof_bpf__destroy(c->skel);
	free(c->links.items);
	free(c->perf_fds.items);
	proc_images_release(&c->images);
	stackagg_free(c->ustacks);
	free(c);
}

/* Draining: kernel keys + stack ids -> symbolized profile samples. */
struct builder {
	struct collect *c;
	struct profile *p;
	uint64_t period_ns;
	uint64_t vanished_samples;	/* user frames of processes never snapshotted */
	struct hashmap mappings;	/* sym mapping -> profile mapping id */
	struct { uint64_t *items; size_t nr, alloc; } locs;
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
		lines[i].function_id = profile_function_id(b->p, fn, fn, f->file, 0);
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

/* The location of one frame; user pcs may carry SYM_PC_EXACT. */
static int builder_frame(struct builder *b, uint64_t pc, bool is_return,
			 struct sym_process *proc, bool kernel, uint64_t *lid)
{
	const struct sym_location *loc;

	if (kernel) {
		loc = symbolizer_kernel(b->c->sym, pc, is_return);
	} else {
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

/* Append the frames of stack map entry @id (leaf first) to b->locs. */
static int builder_stack(struct builder *b, int32_t id, struct sym_process *proc, bool kernel)
{
	uint64_t ips[LP_MAX_STACK_DEPTH] = { 0 };
	int fd = bpf_map__fd(b->c->skel->maps.stacks);

	if (id < 0 || bpf_map_lookup_elem(fd, &id, ips))
		return 0;
	return builder_frames(b, ips, LP_MAX_STACK_DEPTH, proc, kernel);
}

static struct sym_process *builder_process(struct builder *b, pid_t pid, uint32_t gen)
{
	struct proc_image *img = proc_images_find(&b->c->images, pid, gen);

	/* an event may have been lost: a live process can still be read now */
	if (!img && !proc_images_snapshot(&b->c->images, pid, gen))
		img = proc_images_find(&b->c->images, pid, gen);
	return img ? img->sym : NULL;
}

/*
 * Add a sample of @count events: the kernel stack @kstack_id, then the user
 * stack, from the stack map (@ustack_id >= 0) or unwound pcs (@upcs).
 */
static int builder_sample(struct builder *b, const struct lp_sample_key *k, uint64_t count,
			  const uint64_t *upcs, size_t nr_upcs)
{
	struct sym_process *proc = builder_process(b, k->tgid, k->gen);
	int64_t values[2] = { count, count * b->period_ns };
	char comm[LP_COMM_LEN + 1] = { 0 };
	struct profile_label labels[2] = {
		{ .key = "pid", .num = k->tgid },
		{ .key = "comm", .str = comm },
	};
	int err;

	memcpy(comm, k->comm, LP_COMM_LEN);
	if (!proc && (k->ustack_id >= 0 || nr_upcs))
		b->vanished_samples += count;
	b->locs.nr = 0;
	err = builder_stack(b, k->kstack_id, NULL, true);
	if (!err && upcs)
		err = builder_frames(b, upcs, nr_upcs, proc, false);
	else if (!err)
		err = builder_stack(b, k->ustack_id, proc, false);
	if (!err)
		err = profile_add_sample(b->p, b->locs.items, b->locs.nr, values, labels,
					 ARRAY_SIZE(labels));
	return err;
}

static int builder_ustacks(struct builder *b)
{
	size_t i, n = stackagg_nr(b->c->ustacks);
	int err = 0;

	for (i = 0; !err && i < n; i++) {
		const struct stackagg_entry *e = stackagg_get(b->c->ustacks, i);
		struct lp_sample_key k = {
			.tgid = e->key.tgid,
			.gen = e->key.gen,
			.kstack_id = e->key.kstack_id,
			.ustack_id = -1,
		};

		memcpy(k.comm, e->key.comm, sizeof(k.comm));
		err = builder_sample(b, &k, e->value, e->pcs, e->nr_pcs);
	}
	return err;
}

/* proc.PID.* metadata: unwinding mode and stack quality of each process. */
static int builder_proc_meta(struct builder *b)
{
	char key[96];
	size_t i, j;
	int err = 0;

	for (i = 0; !err && i < b->c->images.list.nr; i++) {
		const struct proc_image *img = &b->c->images.list.items[i];
		uint64_t v;

		snprintf(key, sizeof(key), "proc.%d.unwind", img->pid);
		err = profile_set_meta(b->p, key, b->c->unwind_dwarf ? "dwarf" : "fp");
		if (!err && img->comm[0]) {
			snprintf(key, sizeof(key), "proc.%d.comm", img->pid);
			err = profile_set_meta(b->p, key, img->comm);
		}
		for (j = 0; !err && b->c->unwind_dwarf && j < SYM_UNWIND_NR; j++) {
			/* images of one pid (exec generations) add up */
			snprintf(key, sizeof(key), "proc.%d.%s", img->pid, unwind_names[j]);
			v = profile_get_meta_u64(b->p, key);
			err = profile_set_meta_u64(b->p, key, v + img->unwind[j]);
		}
	}
	return err;
}

static int builder_meta(struct builder *b)
{
	struct collect_stats st;
	char key[64];
	int err = 0, i;

	collect_get_stats(b->c, &st);
	for (i = 0; !err && i < LP_STAT_NR; i++) {
		snprintf(key, sizeof(key), "%s.%s",
			 i == LP_STAT_SAMPLES || i == LP_STAT_EVENTS ? "count" : "lost",
			 stat_names[i]);
		err = profile_set_meta_u64(b->p, key, st.stat[i]);
	}
	if (!err)
		err = profile_set_meta_u64(b->p, "lost.samples_process_vanished",
					   b->vanished_samples);
	if (!err)
		err = profile_set_meta_u64(b->p, "count.processes", st.procs_seen);
	return err;
}

int collect_build_profile(struct collect *c, struct profile *p)
{
	struct builder b = { .c = c, .p = p, .period_ns = NSEC_PER_SEC / c->freq_hz };
	int fd = bpf_map__fd(c->skel->maps.cpu_samples);
	struct lp_sample_key key, next, *prev = NULL;
	uint64_t count;
	int err = 0;

	if (profile_add_type(p, PROFILE_TYPE_SAMPLES, "count") < 0 ||
	    profile_add_type(p, PROFILE_TYPE_CPU, "nanoseconds") < 0)
		return -ENOMEM;
	p->period_type.type = profile_str(p, PROFILE_TYPE_CPU);
	p->period_type.unit = profile_str(p, "nanoseconds");
	p->period = b.period_ns;
	while (!err && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &count))
			continue;
		err = builder_sample(&b, &key, count, NULL, 0);
	}
	if (!err)
		err = builder_ustacks(&b);
	if (!err)
		err = builder_meta(&b);
	if (!err)
		err = builder_proc_meta(&b);
	hashmap_release(&b.mappings);
	free(b.locs.items);
	return err;
}
