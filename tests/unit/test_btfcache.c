// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/btfcache: the cache file's name and directory, the tracepoint ids
 * beside it (btfcache_attach_id), and what drop removes. Making the file needs
 * bpftool and root's BPF (tests/e2e/test_btf_cache.sh); the name needs only
 * the kernel's BTF, which is world-readable (skipped without it).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "src/btfcache.h"
#include "tests/unit/check.h"

int main(void)
{
	char dir[] = "/tmp/latprof-btfcache.XXXXXX", path[PATH_MAX], other[PATH_MAX];
	char prefix[PATH_MAX + 100];
	static const char obj_a[] = "object a", obj_b[] = "object b";
	struct utsname u;
	FILE *f;

	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		printf("SKIP: no kernel BTF\n");
		return 0;
	}
	CHECK(mkdtemp(dir) != NULL);
	CHECK(uname(&u) == 0);
	setenv("LATPROF_CACHE_DIR", dir, 1);

	/* DIR/btf-RELEASE-KERNELHASH-OBJECTHASH.btf, absent at first */
	CHECK(!btfcache_lookup(obj_a, sizeof(obj_a), path, sizeof(path)));
	snprintf(prefix, sizeof(prefix), "%s/btf-%s-", dir, u.release);
	CHECK(strncmp(path, prefix, strlen(prefix)) == 0);
	CHECK(strlen(path) == strlen(prefix) + 8 + 1 + 8 + 4);
	CHECK(strcmp(path + strlen(path) - 4, ".btf") == 0);

	/* the same object: the same name, found once it exists */
	CHECK(!btfcache_lookup(obj_a, sizeof(obj_a), other, sizeof(other)));
	CHECK(strcmp(path, other) == 0);
	f = fopen(path, "w");
	CHECK(f != NULL);
	fclose(f);
	CHECK(btfcache_lookup(obj_a, sizeof(obj_a), other, sizeof(other)));

	/* another object (a new build): another name, same kernel part */
	CHECK(!btfcache_lookup(obj_b, sizeof(obj_b), other, sizeof(other)));
	CHECK(strcmp(path, other) != 0);
	CHECK(strncmp(path, other, strlen(prefix) + 8) == 0);

	/* a path that does not fit: nothing, not a cut name */
	CHECK(!btfcache_lookup(obj_a, sizeof(obj_a), other, strlen(prefix)));
	CHECK(other[0] == '\0');

	/* the ids beside it: exact names only, 0 for anything else */
	snprintf(prefix, sizeof(prefix), "%s.ids", path);
	CHECK(btfcache_attach_id(path, "btf_trace_sys_enter") == 0);	/* no file */
	f = fopen(prefix, "w");
	CHECK(f != NULL);
	fprintf(f, "btf_trace_sys_enter 11324\nbtf_trace_sys_exit 11328\njunk\n"
		"btf_trace_sys_enter_x 7\n");
	fclose(f);
	CHECK(btfcache_attach_id(path, "btf_trace_sys_enter") == 11324);
	CHECK(btfcache_attach_id(path, "btf_trace_sys_exit") == 11328);
	CHECK(btfcache_attach_id(path, "btf_trace_sys") == 0);
	CHECK(btfcache_attach_id(path, "btf_trace_sched_switch") == 0);
	CHECK(btfcache_attach_id("", "btf_trace_sys_enter") == 0);

	/* drop_ids leaves the BTF; drop removes both */
	btfcache_drop_ids(path);
	CHECK(access(prefix, F_OK) != 0);
	CHECK(access(path, F_OK) == 0);
	f = fopen(prefix, "w");
	CHECK(f != NULL);
	fclose(f);
	btfcache_drop(path);
	CHECK(access(path, F_OK) != 0);
	CHECK(access(prefix, F_OK) != 0);
	btfcache_drop("");

	/* set and empty: off */
	setenv("LATPROF_CACHE_DIR", "", 1);
	CHECK(!btfcache_lookup(obj_a, sizeof(obj_a), other, sizeof(other)));
	CHECK(other[0] == '\0');
	CHECK(btfcache_build(obj_a, sizeof(obj_a), other) < 0);

	CHECK(rmdir(dir) == 0);
	return check_exit();
}
