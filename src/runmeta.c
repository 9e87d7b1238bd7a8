// SPDX-License-Identifier: GPL-2.0-only
/* A profile's run metadata (runmeta.h). */
#include "src/runmeta.h"

/* A string value; absent or empty ones are left out. */
static int store_str(struct profile *p, const char *key, const char *value, int err)
{
	return err || !value || !*value ? err : profile_set_meta(p, key, value);
}

static int store_u64(struct profile *p, const char *key, bool has, uint64_t value, int err)
{
	return err || !has ? err : profile_set_meta_u64(p, key, value);
}

int run_meta_store(const struct run_meta *m, struct profile *p)
{
	int err = 0;

	err = store_str(p, RUN_META_VERSION, m->version, err);
	err = store_str(p, RUN_META_COMMAND_LINE, m->command_line, err);
	err = store_str(p, RUN_META_KERNEL, m->kernel, err);
	err = store_u64(p, RUN_META_FREQ_HZ, true, m->freq_hz, err);
	err = store_str(p, RUN_META_UNWIND, m->unwind, err);
	err = store_str(p, RUN_META_MODE, m->mode, err);
	err = store_str(p, RUN_META_SYSCALL_HOOKS, m->syscall_hooks, err);
	err = store_str(p, RUN_META_KERNEL_BTF, m->kernel_btf, err);
	err = store_u64(p, RUN_META_MIN_DURATION_US, m->has_min_duration, m->min_duration_us,
			err);
	err = store_u64(p, RUN_META_MIN_BLOCK_US, m->has_min_block, m->min_block_us, err);
	err = store_str(p, RUN_META_SYSCALLS, m->syscalls, err);
	err = store_str(p, RUN_META_TRACK, m->track, err);
	err = store_str(p, RUN_META_WAIT_RULE, m->wait_rule, err);
	err = store_u64(p, RUN_META_STARTUP_NS, true, m->startup_ns, err);
	return store_u64(p, RUN_META_EXIT_STATUS, m->has_exit_status, m->exit_status, err);
}
