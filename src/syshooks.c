// SPDX-License-Identifier: GPL-2.0-only
/* The syscall hooks' tp_btf builds, attached without the kernel's whole BTF (see syshooks.h). */
#include "src/syshooks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <bpf/bpf.h>

#include "src/btfcache.h"

#define SYSHOOKS_SEC "lp_tp_btf/"

/* The tracepoints of the tp_btf builds, and their kernel BTF ids once known. */
static struct {
	const char *name;	/* the section's NAME */
	unsigned int id;
} hooks[] = {
	{ "sys_enter", 0 },
	{ "sys_exit", 0 },
};

/*
 * Loading a program of our section: libbpf opened it as raw_tp, so it did
 * not read the kernel's BTF for it; the kernel gets it as tp_btf at the id
 * syshooks_typed_usable found. libbpf takes the type after this callback.
 */
static int prepare_load(struct bpf_program *prog, struct bpf_prog_load_opts *opts, long cookie)
{
	const char *sec = bpf_program__section_name(prog);
	size_t i;
	int err;

	(void)cookie;
	for (i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		if (strcmp(sec + strlen(SYSHOOKS_SEC), hooks[i].name))
			continue;
		if (!hooks[i].id)
			return -ENOENT;
		/*
		 * libbpf 1.1 only stores the type; from 1.2 it also forgets the
		 * section's handler, which the load no longer needs (the
		 * skeleton does not attach these: syshooks_attach does).
		 */
		err = bpf_program__set_type(prog, BPF_PROG_TYPE_TRACING);
		if (err)
			return err;
		opts->expected_attach_type = BPF_TRACE_RAW_TP;
		opts->attach_btf_id = hooks[i].id;
		return 0;
	}
	return -ENOENT;
}

int syshooks_register(void)
{
	static int done;
	LIBBPF_OPTS(libbpf_prog_handler_opts, opts, .prog_prepare_load_fn = prepare_load);
	int id;

	if (done)
		return done < 0 ? done : 0;
	id = libbpf_register_prog_handler(SYSHOOKS_SEC, BPF_PROG_TYPE_RAW_TRACEPOINT,
					  BPF_TRACE_RAW_TP, &opts);
	done = id < 0 ? id : 1;
	return id < 0 ? id : 0;
}

void syshooks_no_autoattach(struct bpf_object *obj)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
		if (!strncmp(bpf_program__section_name(prog), SYSHOOKS_SEC, strlen(SYSHOOKS_SEC)))
			bpf_program__set_autoattach(prog, false);
}

/* Whether the running kernel is @major.@minor or later. */
static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma, mi;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

bool syshooks_typed_usable(const char *btf_path)
{
	const char *raw = getenv("LATPROF_DEBUG_RAW_TP");
	char name[64];
	size_t i;

	if (!btf_path || (raw && *raw && strcmp(raw, "0")) || !kernel_at_least(6, 10))
		return false;
	for (i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		snprintf(name, sizeof(name), "btf_trace_%s", hooks[i].name);
		hooks[i].id = btfcache_attach_id(btf_path, name);
		if (!hooks[i].id)
			return false;
	}
	return true;
}

struct bpf_link *syshooks_attach(struct bpf_program *prog)
{
	const char *want = bpf_program__section_name(prog) + strlen(SYSHOOKS_SEC);
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	char name[64] = "";
	struct bpf_link *link;

	/* libbpf tries bpf_link_create, which takes tp_btf from 6.10, then BPF_RAW_TRACEPOINT_OPEN */
	link = bpf_program__attach_trace(prog);
	if (!link)
		return NULL;
	/*
	 * The kernel attached it where the id says: sys_enter's and sys_exit's
	 * programs take the same arguments, so swapped ids would load and
	 * count every call the wrong way round. The link names its tracepoint.
	 */
	memset(&info, 0, sizeof(info));
	info.raw_tracepoint.tp_name = (__u64)(unsigned long)name;
	info.raw_tracepoint.tp_name_len = sizeof(name);
	if (bpf_obj_get_info_by_fd(bpf_link__fd(link), &info, &len)) {
		int err = errno;

		bpf_link__destroy(link);
		errno = err;
		return NULL;
	}
	if (strcmp(name, want)) {
		bpf_link__destroy(link);
		errno = ESRCH;
		return NULL;
	}
	return link;
}
