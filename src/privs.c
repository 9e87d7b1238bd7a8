// SPDX-License-Identifier: GPL-2.0-only
/* Dropping and checking capabilities (see privs.h), with raw prctl/capset: no libcap. */
#include "src/privs.h"

#include <errno.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/securebits.h>

#include "src/lib/util.h"

/* Past any capability the kernel knows (PR_CAPBSET_DROP says EINVAL beyond its last). */
#define PRIVS_MAX_CAP 63

static int drop_bounding_set(void)
{
	int cap;

	for (cap = 0; cap <= PRIVS_MAX_CAP; cap++) {
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 1)
			continue;	/* not in the set, or not a capability */
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0))
			return -errno;
	}
	return 0;
}

static int clear_capsets(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };

	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

static bool has_capability(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };
	int i;

	if (syscall(SYS_capget, &hdr, data))
		return true;	/* cannot tell: assume the worst */
	for (i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		if (data[i].effective || data[i].permitted || data[i].inheritable)
			return true;
	return false;
}

int privs_drop_all(void)
{
	int err = 0;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (!has_capability())
		return 0;	/* an ordinary user: nothing to give up */
	/*
	 * uid 0 would get every capability back from an execve: make that
	 * (and keeping them across setuid) impossible, then drop the lot.
	 * Ambient capabilities go with the permitted set.
	 */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
		  SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED,
		  0, 0, 0) && errno != EPERM)
		return -errno;
	err = drop_bounding_set();
	if (err && err != -EPERM)
		return err;
	err = clear_capsets();
	if (!err && has_capability())
		err = -EPERM;
	return err;
}

int privs_check_bpf(const char *verb)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };
	bool bpf, perfmon, admin;

	if (geteuid() == 0)
		return 0;
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
#define HAS_CAP(c) (data[(c) / 32].effective & (1U << ((c) % 32)))
	admin = HAS_CAP(CAP_SYS_ADMIN);
	bpf = admin || HAS_CAP(CAP_BPF);
	perfmon = admin || HAS_CAP(CAP_PERFMON);
#undef HAS_CAP
	if (bpf && perfmon)
		return 0;
	pr_err("%s needs root or CAP_BPF and CAP_PERFMON; missing: %s%s%s", verb,
	       bpf ? "" : "CAP_BPF", !bpf && !perfmon ? ", " : "", perfmon ? "" : "CAP_PERFMON");
	return -EPERM;
}
