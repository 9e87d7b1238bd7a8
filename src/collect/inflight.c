// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the kernel still holds at the stop, after detach: the connections
 * and descriptors left in its maps (collect_track_flush), and the calls in
 * flight, reported by an iterator loaded only then.
 */
#include "src/collect/priv.h"

/*
 * At stop, what the kernel still holds: connections (a request answered but
 * not yet followed by another read or a close is complete) and descriptors
 * still open. Runs after detach.
 */
int collect_track_flush(struct collect *c)
{
	struct lp_fd_key key, next;
	struct lp_conn conn;
	struct lp_fdstat st;
	int fd, err = 0;
	bool first = true;

	fd = bpf_map__fd(c->skel->maps.conns);
	while (!err && c->o.cli.requests && !bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (!bpf_map_lookup_elem(fd, &key, &conn))
			err = collect_track_request(c, key.tgid, key.fd, &conn);
	}
	first = true;
	fd = bpf_map__fd(c->skel->maps.fdstats);
	while (!err && (c->o.cli.files || c->o.cli.net) &&
	       !bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (!bpf_map_lookup_elem(fd, &key, &st))
			iotrack_io(&c->io, st.id, st.bytes_in, st.bytes_out, st.io_ns, st.ops);
	}
	return err;
}

/*
 * The in-flight iterator, loaded at stop into a second instance of the BPF
 * object whose maps are the recording's (reused by name): an iterator needs
 * the kernel's whole BTF to attach, which libbpf 1.1 reads and copies (20 ms
 * and 10 MB, docs/performance.md), so the start-up and the recording do not
 * pay for it. The one that copies user stacks (5.18) when the recording's
 * load had the newer features. NULL when it does not load.
 */
static struct latprof_bpf *in_flight_open(struct collect *c, struct bpf_program **prog)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = c->btf_path);
	struct latprof_bpf *it = latprof_bpf__open_opts(&opts);
	struct bpf_program *p;
	struct bpf_map *m, *ours;
	int err = 0;

	if (!it)
		return NULL;
	*prog = c->features ? it->progs.on_iter_task : it->progs.on_iter_task_nocopy;
	bpf_object__for_each_program(p, it->obj)
		bpf_program__set_autoload(p, p == *prog);
	bpf_object__for_each_map(m, it->obj) {
		ours = bpf_object__find_map_by_name(c->skel->obj, bpf_map__name(m));
		if (ours && bpf_map__fd(ours) >= 0)
			err = bpf_map__reuse_fd(m, bpf_map__fd(ours));
		else
			err = bpf_map__set_autocreate(m, false);
		if (err)
			break;
	}
	if (!err)
		err = latprof_bpf__load(it);
	if (err) {
		latprof_bpf__destroy(it);
		errno = -err;
		return NULL;
	}
	return it;
}

/*
 * Run the in-flight iterator once: every target thread still in a syscall or
 * off CPU at stop_ns reports its time so far. Needs the other programs
 * detached, or a syscall ending now would be counted twice.
 */
void collect_report_in_flight(struct collect *c)
{
	struct latprof_bpf *it;
	struct bpf_program *prog;
	struct bpf_link *link;
	char buf[64];
	int fd;

	if (c->in_flight_done || !(c->sys_hooks || c->o.cli.modes.offcpu))
		return;
	c->in_flight_done = true;
	it = in_flight_open(c, &prog);
	link = it ? bpf_program__attach_iter(prog, NULL) : NULL;
	if (!link) {
		pr_warn("cannot report syscalls in flight: %s", strerror(errno));
		latprof_bpf__destroy(it);
		return;
	}
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		pr_warn("cannot report syscalls in flight: %s", strerror(errno));
	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		;
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	latprof_bpf__destroy(it);
}
