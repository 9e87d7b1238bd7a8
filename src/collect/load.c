// SPDX-License-Identifier: GPL-2.0-only
/*
 * Opening the BPF session (collect_open): the skeleton opened, its maps sized
 * and its read-only configuration set from the options, loaded with the newer
 * kernels' features or without them, then its rings and first targets.
 * libbpf's messages pass through here.
 */
#include "src/collect/priv.h"

#include <sys/epoll.h>

#include <limits.h>
#include <sched.h>

#include "src/btfcache.h"
#include "src/syshooks.h"

/* While set, libbpf's warnings are for -v only: a load that may fall back. */
static bool libbpf_quiet;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && log_level < LOG_LEVEL_TRACE)
		return 0;
	if ((level == LIBBPF_INFO || libbpf_quiet) && log_level < LOG_LEVEL_DEBUG)
		return 0;
	if (log_level < LOG_LEVEL_WARN)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* enum lp_req_cat of syscall @nr. */
static uint8_t req_cat(int nr)
{
	switch (syscall_category(nr)) {
	case SYSCALL_CATEGORY_NETWORK:
		return LP_REQ_CAT_NETWORK;
	case SYSCALL_CATEGORY_FILE:
		return LP_REQ_CAT_FILE;
	case SYSCALL_CATEGORY_SYNC:
		return LP_REQ_CAT_SYNC;
	case SYSCALL_CATEGORY_SLEEP:
		return LP_REQ_CAT_SLEEP;
	default:
		return LP_REQ_CAT_OTHER;
	}
}

/*
 * @n, or less when the hidden LATPROF_DEBUG_MAX_ENTRIES=N caps it: the
 * reliability tests shrink the sample, stack, syscall and process maps so that
 * they overflow, to check that drops are counted and reported, never fatal.
 */
#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif

static uint32_t debug_max_entries(uint32_t n)
{
	const char *v = getenv("LATPROF_DEBUG_MAX_ENTRIES");
	uint64_t cap;

	if (v && !parse_u64(v, 1, UINT32_MAX, &cap) && cap < n)
		return cap;
	return n;
}

/* Request, file and peer tracking: configuration and map sizes. */
static int configure_track(struct collect *c, const struct collect_opts *o)
{
	struct latprof_bpf *s = c->skel;
	bool fds = o->cli.files || o->cli.net;
	int nr, err;

	s->rodata->cfg_track = o->cli.requests || fds;
	s->rodata->cfg_requests = o->cli.requests;
	s->rodata->cfg_files = o->cli.files;
	s->rodata->cfg_net = o->cli.net;
	for (nr = 0; nr < LP_MAX_SYSCALL_NR; nr++)
		s->rodata->cfg_sys_cat[nr] = req_cat(nr);
	err = bpf_map__set_max_entries(s->maps.conns, o->cli.requests ? 65536 : 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.proc_times,
					       !o->cli.requests ? 1 :
					       collect_debug_lose("proc_times") ? 1 :
					       debug_max_entries(o->max_procs));
	if (!err)
		err = bpf_map__set_max_entries(s->maps.fdstats, fds ? 65536 : 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.track,
					       o->cli.requests || fds ? 4 << 20 : 4096);
	return err;
}

/*
 * What the running kernel has that older ones lack and a program needs to
 * load at all (docs/kernels.md). Found by loading: the programs that use
 * them first, their fallbacks if the kernel refuses (see load()). Reading
 * the kernel's BTF to decide cost a second parse of it (libbpf's load makes
 * one): 15-18 ms of start-up. All arrived by 6.1 and are tried together;
 * the in-flight iterator loaded at stop (5.18: it copies stacks with
 * bpf_copy_from_user_task) follows c->features, the try that loaded.
 */
struct kernel_features {
	bool switch_prev_state;		/* 5.18: sched_switch's prev_state argument */
	bool bpf_loop;			/* 5.17: the Python thread search as a loop */
	bool alloc_on_use;		/* 6.1: perf_event programs may use a hash map
					 * that is not preallocated (the stacks map) */
};

/*
 * Which programs load: only those of the chosen collectors, as the kernel has
 * them. The in-flight iterator is loaded apart, at stop (in_flight_open).
 */
static void select_programs(struct collect *c, const struct kernel_features *f)
{
	struct latprof_bpf *s = c->skel;

	bpf_program__set_autoload(s->progs.on_cpu_sample, c->o.cli.modes.cpu);
	bpf_program__set_autoload(s->progs.on_sys_enter, c->sys_hooks && !c->sys_typed);
	bpf_program__set_autoload(s->progs.on_sys_exit, c->sys_hooks && !c->sys_typed);
	bpf_program__set_autoload(s->progs.on_sys_enter_btf, c->sys_hooks && c->sys_typed);
	bpf_program__set_autoload(s->progs.on_sys_exit_btf, c->sys_hooks && c->sys_typed);
	bpf_program__set_autoload(s->progs.on_sched_switch,
				  c->o.cli.modes.offcpu && f->switch_prev_state);
	bpf_program__set_autoload(s->progs.on_sched_switch_nostate,
				  c->o.cli.modes.offcpu && !f->switch_prev_state);
	bpf_program__set_autoload(s->progs.on_iter_task, false);
	bpf_program__set_autoload(s->progs.on_iter_task_nocopy, false);
}

static int configure(struct collect *c, const struct collect_opts *o,
		     const struct kernel_features *f)
{
	struct latprof_bpf *s = c->skel;
	int ncpu = libbpf_num_possible_cpus();
	size_t i;
	int err;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	select_programs(c, f);
	err = configure_track(c, o);
	if (err)
		return err;
	s->rodata->cfg_syscalls = o->cli.modes.syscall;
	s->rodata->cfg_waits = c->sys_hooks && !o->no_waits;
	s->rodata->cfg_offcpu = o->cli.modes.offcpu;
	s->rodata->cfg_syscall_min_ns = o->cli.min_duration_us * 1000;
	s->rodata->cfg_offcpu_min_ns = o->cli.min_block_us * 1000;
	/* the syscall hooks time the stretches between an event loop's waits */
	s->rodata->cfg_stall_min_ns = o->cli.modes.syscall ? o->cli.stall_min_us * 1000 : 0;
	s->rodata->cfg_sys_filter_on = o->cli.syscalls.nr > 0;
	s->rodata->cfg_debug_lose_switch_in = collect_debug_lose("switch_in");
	for (i = 0; i < o->cli.syscalls.nr; i++)
		if (o->cli.syscalls.items[i] >= 0 && o->cli.syscalls.items[i] < LP_MAX_SYSCALL_NR)
			s->rodata->cfg_sys_filter[o->cli.syscalls.items[i]] = 1;
	/* scratch records: sampler, tracepoints (per CPU each), iterator */
	s->rodata->cfg_nr_cpus = ncpu;
	/* per-CPU stats blocks for the first processes, within the session's bytes */
	c->fast_slots = o->sys_fast_bytes /
			((size_t)ncpu * LP_MAX_SYSCALL_NR * sizeof(struct lp_sys_stat));
	if (c->fast_slots > LP_SYS_FAST_SLOTS)
		c->fast_slots = LP_SYS_FAST_SLOTS;
	if (!o->cli.modes.syscall)
		c->fast_slots = 0;
	c->fast_drain = o->sys_fast_drain && c->fast_slots;
	pr_debug("syscall stats: %u blocks of the per-CPU array%s", c->fast_slots,
		 c->fast_drain ? ", handed back" : "");
	s->rodata->cfg_sys_fast_slots = c->fast_slots;
	s->rodata->cfg_sys_fast_drain = c->fast_drain;
	s->rodata->cfg_task_counts = o->task_counts;
	s->rodata->cfg_all = o->cli.all;
	/* with -a, unwinding our own samples would feed on itself */
	s->rodata->cfg_self_tgid = getpid();
	s->rodata->cfg_nr_comms = o->cli.comms.nr;
	for (i = 0; i < o->cli.comms.nr && i < LP_MAX_COMMS; i++)
		strncpy((char *)s->rodata->cfg_comms[i], o->cli.comms.items[i], LP_COMM_LEN - 1);
	s->rodata->cfg_unwind_dwarf = o->cli.unwind_dwarf;
	s->rodata->cfg_python = c->py != NULL;
	/* GIL waits and the held time ride on Python's walk (bpf/gil.bpf.h) */
	s->rodata->cfg_gil = c->py != NULL;
	s->rodata->cfg_bpf_loop = f->bpf_loop;
	s->rodata->cfg_stack_size = o->cli.stack_size;
	/*
	 * Stacks are allocated as they come where the kernel allows it, so
	 * the cap costs nothing until used (about 1 KiB a stack); otherwise
	 * all are allocated at creation, and the cap is what it was with
	 * bpf_get_stackid's map: 4096 kernel stacks with DWARF (user stacks
	 * are copied), 16,384 kernel and user stacks with frame pointers.
	 */
	s->rodata->cfg_max_stacks = debug_max_entries(f->alloc_on_use ? o->max_stacks :
		MIN(o->max_stacks, o->cli.unwind_dwarf ? 4096 : 16384));
	err = bpf_map__set_max_entries(s->maps.stacks, s->rodata->cfg_max_stacks);
	if (!err)
		err = bpf_map__set_map_flags(s->maps.stacks, f->alloc_on_use ? BPF_F_NO_PREALLOC : 0);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.ustack_scratch, 2 * ncpu + 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.ustacks, o->ustack_ring_bytes);
	/*
	 * Lifecycle events: 1 MiB holds a busy machine's second (-a, --comm:
	 * every process). A command and its children are read as they come:
	 * `xargs -P 4` running 3,000 /bin/true (190 processes a second) lost
	 * none in 256 KiB, beside two spinning loops too. Each ring's pages
	 * count twice in the resident set (mapped twice, for records that wrap).
	 */
	if (!err)
		err = bpf_map__set_max_entries(s->maps.events, o->cli.all || o->cli.comms.nr ?
					       1024 * 1024 : 256 * 1024);
	/*
	 * The in-kernel aggregates, preallocated (the CPU sampler may not
	 * allocate), are sized to what the mode sends them: with DWARF stacks
	 * only kernel threads' CPU samples, and off-CPU intervals outside
	 * syscalls; without off-CPU, timed samples are frame-pointer stacks of
	 * slow syscalls only. Each 65,536-entry map took 2-3 ms to create.
	 */
	if (!err)
		err = bpf_map__set_max_entries(s->maps.cpu_samples, debug_max_entries(
			o->cli.unwind_dwarf ? MIN(o->max_samples, 4096) : o->max_samples));
	/*
	 * From 6.1 the maps the sampler adds to are allocated on use too:
	 * creating cpu_samples (65,536 entries with frame pointers) and procs
	 * (32,768) whole took 2.2 and 1.4 ms of every start-up.
	 */
	if (!err && f->alloc_on_use)
		err = bpf_map__set_map_flags(s->maps.cpu_samples, BPF_F_NO_PREALLOC);
	if (!err && f->alloc_on_use)
		err = bpf_map__set_map_flags(s->maps.procs, BPF_F_NO_PREALLOC);
	/* maps of collectors that are off: as small as the kernel takes */
	if (!err && !c->py)
		err = bpf_map__set_max_entries(s->maps.py_procs, 1);
	if (!err && !c->py)
		err = bpf_map__set_max_entries(s->maps.py_tstates, ncpu);
	/*
	 * An entry per Python thread of a GIL build, for the whole recording;
	 * the CPU sampler adds to it, so allocated as they come only from 6.1
	 */
	if (!err)
		err = bpf_map__set_max_entries(s->maps.gil_threads, c->py ?
					       debug_max_entries(COLLECT_GIL_THREADS) : 1);
	if (!err && f->alloc_on_use)
		err = bpf_map__set_map_flags(s->maps.gil_threads, BPF_F_NO_PREALLOC);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.timed_samples, debug_max_entries(
			o->cli.modes.offcpu || (!o->cli.unwind_dwarf && o->cli.modes.syscall) ?
			o->max_samples : 1));
	/* drained every second: the (process, thread name) pairs of a busy second */
	if (!err)
		err = bpf_map__set_max_entries(s->maps.task_counts, o->task_counts ?
					       debug_max_entries(COLLECT_TASK_COUNTS) : 1);
	if (!err && f->alloc_on_use)
		err = bpf_map__set_map_flags(s->maps.task_counts, BPF_F_NO_PREALLOC);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.sys_stats, o->cli.modes.syscall ?
					       debug_max_entries(o->max_sys_stats) : 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.sys_fast, c->fast_slots ?
					       c->fast_slots * LP_MAX_SYSCALL_NR : 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.procs, debug_max_entries(o->max_procs));
	/* waits.bpf.h's conversations, where the wait rule runs: 1.4 MiB, always whole */
	if (!err)
		err = bpf_map__set_max_entries(s->maps.convs, s->rodata->cfg_waits ?
					       debug_max_entries(COLLECT_CONVS) : 1);
	return err;
}

/*
 * The hidden LATPROF_DEBUG_VERIFIER=1: each program's verification time and
 * instructions processed (the kernel's BPF_LOG_STATS), printed after load
 * (@after) to stderr. Load time is start-up time; bench/README.md shows how
 * to read these.
 */
static void verifier_stats(struct bpf_object *obj, bool after)
{
	static char logs[16][512];
	const char *env = getenv("LATPROF_DEBUG_VERIFIER");
	struct bpf_program *prog;
	size_t i = 0;
	char *nl;

	if (!env || strcmp(env, "1"))
		return;
	bpf_object__for_each_program(prog, obj) {
		if (i >= ARRAY_SIZE(logs))
			break;
		if (!after) {
			logs[i][0] = '\0';
			bpf_program__set_log_level(prog, 4);	/* BPF_LOG_STATS */
			bpf_program__set_log_buf(prog, logs[i], sizeof(logs[i]));
		} else if (bpf_program__autoload(prog)) {
			while ((nl = strchr(logs[i], '\n')))
				*nl = ' ';
			fprintf(stderr, "latprof: verifier: %s: %s\n", bpf_program__name(prog), logs[i]);
		}
		i++;
	}
}

/*
 * A hash map allocated on use takes its elements from a per-CPU cache that
 * starts with one element (for elements this size) and is refilled from an
 * irq_work, after the program that emptied it returns. A sample's first
 * kernel and user stacks on a CPU are two (seen: 1-2 -ENOMEM per run, at
 * the start): one element taken here, from a syscall on each CPU, has the
 * kernel refill each cache before the programs run. Best effort.
 */
static void warm_stacks(struct collect *c)
{
	int fd = bpf_map__fd(c->skel->maps.stacks), cpu;
	struct lp_stack st = { 0 };
	cpu_set_t old, one;
	uint64_t key = UINT64_MAX;

	if (sched_getaffinity(0, sizeof(old), &old))
		return;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &old))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			continue;
		if (!bpf_map_update_elem(fd, &key, &st, BPF_NOEXIST))
			bpf_map_delete_elem(fd, &key);
	}
	sched_setaffinity(0, sizeof(old), &old);
}

/*
 * Open, configure and load the skeleton, with the newer kernels' features
 * (kernel_features) or without them, CO-RE against the minimized kernel BTF
 * c->btf_path when it is set (btfcache.h). 0 or -errno; on failure no
 * skeleton is left. @refuse makes the kernel refuse it.
 */
static int load_one(struct collect *c, const struct collect_opts *o, bool features, bool refuse,
		    const char **why)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = c->btf_path);
	struct kernel_features f = {
		.switch_prev_state = features,
		.bpf_loop = features,
		.alloc_on_use = features,
	};
	int err;

	*why = "cannot open BPF object";
	c->skel = latprof_bpf__open_opts(&opts);
	if (!c->skel)
		return -errno;
	syshooks_no_autoattach(c->skel->obj);
	*why = "cannot configure BPF maps";
	err = configure(c, o, &f);
	/* a map of no entries: the kernel refuses to create it */
	if (!err && refuse)
		err = bpf_map__set_max_entries(c->skel->maps.stacks, 0);
	if (!err) {
		*why = "cannot load BPF programs (see docs/troubleshooting.md)";
		verifier_stats(c->skel->obj, false);
		err = latprof_bpf__load(c->skel);
		verifier_stats(c->skel->obj, true);
	}
	if (err) {
		latprof_bpf__destroy(c->skel);
		c->skel = NULL;
	}
	c->features = features;
	return err;
}

/*
 * Load with the features, then without them, until the kernel takes one (the
 * first only when @features). 0 or -errno of the last. Only the last try's
 * failure is reported, and not even that one with a cached BTF (a second
 * pass without it follows); the others' libbpf warnings show with -v.
 */
static int load_tries(struct collect *c, const struct collect_opts *o, bool features, bool refuse,
		      const char **why)
{
	bool typed, refused = false;
	int err = -EINVAL;

	if (features) {
		libbpf_quiet = true;
		/* the tp_btf syscall hooks first, where they can load (syshooks.h) */
		typed = c->sys_hooks && !refuse && syshooks_typed_usable(c->btf_path);
		c->sys_typed = typed;
		if (typed) {
			err = load_one(c, o, true, false, why);
			if (err) {
				pr_debug("BPF load with the tp_btf syscall hooks failed (%s): trying raw_tp",
					 strerror(-err));
				c->sys_typed = false;
				/* the kernel refused them, not a moment's lack of memory */
				refused = err == -EINVAL || err == -EACCES || err == -ENOENT;
			}
		}
		if (!c->sys_typed)
			err = load_one(c, o, true, refuse, why);
		libbpf_quiet = false;
		/* tp_btf refused where raw_tp loads: later runs go to raw_tp at once */
		if (!err && refused) {
			btfcache_drop_ids(c->btf_path);
			pr_debug("%s.ids removed", c->btf_path);
		}
		if (!err)
			return 0;
		pr_debug("BPF load with the newer kernels' features failed (%s): trying without them",
			 strerror(-err));
	}
	libbpf_quiet = c->btf_path != NULL;
	err = load_one(c, o, false, refuse && !features, why);
	libbpf_quiet = false;
	return err;
}

/*
 * Open, configure and load the skeleton, without the newer kernels' features
 * (kernel_features: 5.17, 5.18, 6.1; every mode uses the stacks map's) when
 * the kernel refuses them. The hidden LATPROF_DEBUG_OLD_KERNEL=1 starts
 * without them, so that their fallbacks are tested on new kernels too
 * (=refuse: the first try is made one that the kernel refuses, to test the
 * fallback itself).
 *
 * No program loaded here needs the kernel's whole BTF to attach (raw_tp,
 * perf_event; the in-flight iterator is loaded at stop), so with a cached
 * minimized BTF for CO-RE (btfcache.h) libbpf never reads the 5 MB file.
 * Without one it does, and the cache file is made in the background for the
 * next run. Should loading fail with the cached file, it is tried again
 * without it, and the file goes if that works.
 */
static int load(struct collect *c, const struct collect_opts *o, const char **why)
{
	const char *old = getenv("LATPROF_DEBUG_OLD_KERNEL");
	/* "refuse": the kernel refuses the first try (tests/e2e/test_syscall_sleep.sh) */
	bool refuse = old && !strcmp(old, "refuse");
	bool features = !(old && *old && strcmp(old, "0") && !refuse);
	char btf[PATH_MAX];
	size_t len;
	const void *obj = latprof_bpf__elf_bytes(&len);
	int err;

	err = syshooks_register();
	if (err) {
		pr_warn("cannot register the syscall hooks' BPF section with libbpf: %s",
			strerror(-err));
		return err;
	}
	if (btfcache_lookup(obj, len, btf, sizeof(btf))) {
		pr_debug("kernel BTF for CO-RE: %s", btf);
		c->btf_path = strdup(btf);
	}
	err = load_tries(c, o, features, refuse, why);
	if (err && c->btf_path) {
		pr_debug("BPF load failed with %s: again with the kernel's whole BTF", btf);
		free(c->btf_path);
		c->btf_path = NULL;
		err = load_tries(c, o, features, refuse, why);
		if (!err)
			btfcache_drop(btf);
	}
	if (err)
		return err;
	if (!c->btf_path && *btf && btfcache_build(obj, len, btf) == 0)
		pr_debug("making %s in the background (bpftool gen min_core_btf)", btf);
	if (c->features)
		warm_stacks(c);
	else
		pr_debug("kernel without bpf_copy_from_user_task or sched_switch's prev_state (5.18), or stack maps allocated on use (6.1): calls in flight at stop keep only their innermost user frame, off-CPU reads the task's state; the Python thread search is unrolled (slower to load); the stack map is allocated whole, for fewer stacks");
	return 0;
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
	c->epfd = -1;
	c->sym = sym;
	c->images.sym = sym;
	c->o = *o;
	/* off-CPU time inside a syscall waits for sys_exit to copy the stack */
	c->sys_hooks = o->cli.modes.syscall || (o->cli.modes.offcpu && o->cli.unwind_dwarf) ||
		       o->cli.requests || o->cli.files || o->cli.net;
	proc_tree_init(&c->procs, COLLECT_MAX_PROCS, COLLECT_MAX_MEM_SAMPLES);
	c->ustacks = stackagg_new();
	if (!c->ustacks || iotrack_init(&c->io, "/proc"))
		goto fail;
	/* Python frames ride on copied stacks; serve's metrics session has none */
	if (o->cli.unwind_dwarf && !o->cli.no_python && !o->proc_events_only) {
		c->py = pystacks_new((const char *const *)o->cli.debug_dirs.items,
				     o->cli.debug_dirs.nr);
		if (!c->py)
			goto fail;
		c->images.refreshed = collect_python_refreshed;
		c->images.refreshed_arg = c;
		if (o->cli.await_hz) {
			c->awaits = awaits_new(c->py, c->ustacks, o->cli.await_hz);
			if (!c->awaits)
				goto fail;
		}
	}
	libbpf_set_print(libbpf_print);
	*err = load(c, o, why);
	if (*err)
		goto fail;
	c->images.current = collect_image_current;
	c->images.current_arg = c;
	if (c->py)
		pystacks_set_current(c->py, collect_image_current, c);
	*why = "cannot create ring buffer";
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	*err = c->epfd < 0 ? -errno : collect_add_ring(c, c->skel->maps.events, collect_on_event);
	/* in-flight syscalls send copied stacks even with --unwind fp */
	if (!*err && (o->cli.unwind_dwarf || c->sys_hooks || c->o.cli.modes.offcpu))
		*err = collect_add_ring(c, c->skel->maps.ustacks, collect_on_ustack);
	if (!*err && (o->cli.requests || o->cli.files || o->cli.net))
		*err = collect_add_ring(c, c->skel->maps.track, collect_on_track);
	if (*err)
		goto fail;
	*why = "cannot add target";
	for (i = 0; i < o->cli.pids.nr; i++) {
		*err = collect_add_pid(c, o->cli.pids.items[i]);
		if (*err)
			goto fail;
	}
	/* the caller's lists: not kept past the open */
	c->o.cli.syscalls = (struct syscall_list){ 0 };
	c->o.cli.comms = (struct comm_list){ 0 };
	c->o.cli.pids = (struct pid_list){ 0 };
	c->o.cli.debug_dirs = (struct debug_dir_list){ 0 };
	c->o.cli.syscalls_arg = NULL;
	*err = 0;
	*why = NULL;
	return c;
fail:
	collect_free(c);
	return NULL;
}

/*
 * The hidden LATPROF_DEBUG_LOSE=WHAT[,WHAT...] makes a loss that cannot be
 * provoked from outside happen, for the tests that check it is counted:
 * "stats" (the kernel's counters cannot be read), "stacks" (the stack map
 * loses its entries before the profile is built), "switch_in" (sched_switch
 * never ends an off-CPU interval: each is lost, lost.offcpu_unmatched),
 * "proc_times" (--requests keeps one process's times: the others' are
 * lost, lost.process_times_dropped_map_full).
 */
bool collect_debug_lose(const char *what)
{
	const char *v = getenv("LATPROF_DEBUG_LOSE");
	size_t n = strlen(what);

	for (; v && *v; v = strchr(v, ',') ? strchr(v, ',') + 1 : NULL)
		if (!strncmp(v, what, n) && (v[n] == ',' || !v[n]))
			return true;
	return false;
}
