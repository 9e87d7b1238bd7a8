// SPDX-License-Identifier: GPL-2.0-only
/*
 * Targets and attachment: the processes to follow (collect_add_pid), the
 * programs attached (perf events on every online CPU, the tp_btf syscall
 * hooks) and detached at the stop, the kernel's counters read, and the
 * session freed.
 */
#include "src/collect/priv.h"

#include "src/btfcache.h"
#include "src/syshooks.h"
#include "src/command.h"

int collect_add_command(struct collect *c, pid_t pid, const char *file)
{
	char path[4096];

	if (c->py && command_path(file, path, sizeof(path)))
		pystacks_prepare(c->py, path);
	c->command_pid = pid;
	return collect_add_pid(c, pid);
}

int collect_add_pid(struct collect *c, pid_t pid)
{
	/* its block of the syscall array comes at its first syscall (targets.bpf.h) */
	struct lp_proc zero = { 0 };
	struct proc_image *img;
	struct proc_info *pi;
	uint32_t key = pid;

	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.procs), &key, &zero, BPF_ANY))
		return -errno;
	/* the programs' first check (latprof.h): in the mmap'ed .bss they read */
	__atomic_fetch_or(&c->skel->bss->lp_target_bits[(key / 64) & (LP_TARGET_WORDS - 1)],
			  1ULL << (key & 63), __ATOMIC_RELAXED);
	/*
	 * The held command is latprof's own fork until its exec (generation
	 * 0, whose samples are dropped): reading its maps and opening its
	 * libraries here took 5-8 ms of every start-up, for nothing.
	 */
	if (pid != c->command_pid) {
		proc_images_snapshot(&c->images, pid, 0);
		/* before recording starts: the interpreter's DWARF is read now */
		collect_python_probe(c, pid, 0, true);
	}
	img = proc_images_find(&c->images, pid, 0);
	pi = proc_tree_start(&c->procs, pid, collect_proc_read_ppid(pid), now_ns(),
			     img ? img->comm : NULL);
	/* the held command's name and arguments come with its exec */
	if (pi && pid != c->command_pid)
		collect_proc_read_cmdline(pi);
	return 0;
}

static int target_add(void *arg, const void *key, const void *value)
{
	struct pid_list *out = arg;
	int err = array_grow(out, out->nr + 1);

	(void)value;
	if (!err)
		out->items[out->nr++] = *(const uint32_t *)key;
	return err;
}

int collect_targets(struct collect *c, struct pid_list *out)
{
	return collect_map_each(c->skel->maps.procs, target_add, out);
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
		.sample_freq = c->o.cli.freq_hz,
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

/* The syscall hooks' tp_btf builds, which the skeleton does not attach. */
static int attach_typed(struct collect *c)
{
	struct bpf_program *progs[] = { c->skel->progs.on_sys_enter_btf, c->skel->progs.on_sys_exit_btf };
	struct bpf_link *link;
	size_t i;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		if (array_grow(&c->links, c->links.nr + 1))
			return -ENOMEM;
		link = syshooks_attach(progs[i]);
		if (!link && errno == ESRCH) {
			pr_err("the cached kernel BTF ids put %s on another tracepoint: %s removed, the next run makes it again",
			       bpf_program__name(progs[i]), c->btf_path);
			btfcache_drop(c->btf_path);
			/* nothing was recorded; the iterator would load with the file gone */
			c->in_flight_done = true;
			return -ESTALE;
		}
		if (!link)
			return -errno;
		c->links.items[c->links.nr++] = link;
	}
	return 0;
}

int collect_attach(struct collect *c)
{
	bool *online = NULL;
	int nr = 0, cpu, err;

	/* lifecycle tracking first, so no fork between the two is missed */
	err = latprof_bpf__attach(c->skel);
	if (!err && c->sys_typed)
		err = attach_typed(c);
	if (!err && c->o.cli.modes.cpu) {
		err = online_cpus(&online, &nr);
		for (cpu = 0; !err && cpu < nr; cpu++)
			if (online[cpu])
				err = attach_cpu(c, cpu);
		free(online);
	}
	/* threads asleep in a syscall since before now count from here */
	if (!err && c->skel->bss)
		c->skel->bss->attach_ns = now_ns();
	return err;
}

void collect_detach(struct collect *c)
{
	size_t i;

	/* what is open at this instant is in flight; later starts are not */
	if (c->skel && c->skel->bss && !c->in_flight_done)
		c->skel->bss->stop_ns = now_ns();
	for (i = 0; i < c->links.nr; i++)
		bpf_link__destroy(c->links.items[i]);
	c->links.nr = 0;
	for (i = 0; i < c->perf_fds.nr; i++)
		close(c->perf_fds.items[i]);
	c->perf_fds.nr = 0;
	if (c->skel) {
		latprof_bpf__detach(c->skel);
		collect_report_in_flight(c);
	}
	/*
	 * Records already in the rings still count, those read within
	 * COLLECT_STOP_READ_MS; the rest of a backlog a busy machine left is
	 * counted as unread (lost.*_unread), so the stop comes on time.
	 */
	if (c->nr_rings && !c->skip_records) {
		if (collect_consume_rings(c, (c->stop_read_all ? 3600 * 1000ULL : COLLECT_STOP_READ_MS) *
				  1000000ULL) == 1) {
			c->skip_records = true;
			collect_consume_rings(c, 0);
		}
		if (c->events_unread || c->ustacks_unread)
			pr_warn("the stop left %" PRIu64 " process events and %" PRIu64
				" stacks unread: the machine made them faster than they were read",
				c->events_unread, c->ustacks_unread);
	}
	/* nothing more comes: the rings' pages go before the profile is built */
	collect_free_rings(c);
}

_Static_assert(LP_STAT_NR <= 32, "a bit per counter in collect_read_stats");

/* The kernel's loss counters into @st (zeroed first); a bit set per counter unread. */
static uint32_t read_losses(struct collect *c, struct collect_stats *st)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(c->skel->maps.stats);
	uint64_t *vals = ncpu > 0 ? calloc(ncpu, sizeof(*vals)) : NULL;
	bool fail = collect_debug_lose("stats");
	uint32_t k, unread = 0;
	int i;

	memset(st, 0, sizeof(*st));
	for (k = 0; k < LP_STAT_NR; k++) {
		if (!vals || fail || bpf_map_lookup_elem(fd, &k, vals)) {
			unread |= 1U << k;
			continue;
		}
		for (i = 0; i < ncpu; i++)
			st->stat[k] += vals[i];
	}
	free(vals);
	return unread;
}

uint32_t collect_read_stats(struct collect *c, struct collect_stats *st)
{
	uint32_t unread = read_losses(c, st);

	st->procs_seen = proc_images_nr_processes(&c->images);
	st->images_ended = proc_images_nr_ended(&c->images);
	st->snapshot_failed = c->images.snapshot_failed;
	return unread;
}

void collect_get_stats(struct collect *c, struct collect_stats *st)
{
	collect_read_stats(c, st);
}

void collect_get_losses(struct collect *c, struct collect_stats *st)
{
	read_losses(c, st);
}

void collect_free(struct collect *c)
{
	if (!c)
		return;
	collect_detach(c);
	collect_free_rings(c);
	if (c->epfd >= 0)
		close(c->epfd);
	latprof_bpf__destroy(c->skel);
	free(c->btf_path);
	free(c->links.items);
	free(c->perf_fds.items);
	proc_images_release(&c->images);
	proc_tree_release(&c->procs);
	stackagg_free(c->ustacks);
	awaits_free(c->awaits);
	pystacks_free(c->py);
	iotrack_release(&c->io);
	collect_free_stacks(c);
	collect_sys_exited_free(c);
	collect_fast_free(c);
	free(c->reqs.items);
	stalls_release(&c->stalls);
	free(c);
}
