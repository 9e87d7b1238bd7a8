// SPDX-License-Identifier: GPL-2.0-only
/* A cache of minimized kernel BTF, made by bpftool (see btfcache.h). */
#include "src/btfcache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zlib.h>

#include "src/lib/util.h"

#define BTFCACHE_VMLINUX "/sys/kernel/btf/vmlinux"
#define BTFCACHE_END_BYTES (64 * 1024)	/* hashed from each end of the kernel's BTF */

/*
 * Fold @len bytes of @fd at @off into @crc; false when they cannot be read
 * (sysfs hands out a page per read). The two ends of the BTF, with the
 * release, version and size, tell kernel builds apart without reading all
 * 5 MB of it at every start.
 */
static bool crc_file_range(int fd, off_t off, size_t len, uLong *crc)
{
	unsigned char buf[4096];
	ssize_t n;

	while (len) {
		n = pread(fd, buf, len < sizeof(buf) ? len : sizeof(buf), off);
		if (n <= 0)
			return false;
		*crc = crc32(*crc, buf, n);
		off += n;
		len -= n;
	}
	return true;
}

/* A hash of the running kernel's identity and BTF; false without BTF. */
static bool kernel_crc(uLong *crc)
{
	struct utsname u;
	struct stat st;
	size_t end;
	bool ok;
	int fd;

	if (uname(&u))
		return false;
	fd = open(BTFCACHE_VMLINUX, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) || st.st_size <= 0) {
		close(fd);
		return false;
	}
	*crc = crc32(0, (const Bytef *)u.release, strlen(u.release));
	*crc = crc32(*crc, (const Bytef *)u.version, strlen(u.version));
	*crc = crc32(*crc, (const Bytef *)u.machine, strlen(u.machine));
	*crc = crc32(*crc, (const Bytef *)&st.st_size, sizeof(st.st_size));
	end = st.st_size < BTFCACHE_END_BYTES ? st.st_size : BTFCACHE_END_BYTES;
	ok = crc_file_range(fd, 0, end, crc) && crc_file_range(fd, st.st_size - end, end, crc);
	close(fd);
	return ok;
}

bool btfcache_lookup(const void *obj, size_t len, char *path, size_t size)
{
	const char *dir = cache_dir();
	struct utsname u;
	uLong kcrc, ocrc;
	int n;

	*path = '\0';
	if (!dir || uname(&u) || !kernel_crc(&kcrc))
		return false;
	ocrc = crc32(0, obj, len);
	n = snprintf(path, size, "%s/btf-%s-%08lx-%08lx.btf", dir, u.release, kcrc, ocrc);
	if (n < 0 || (size_t)n >= size) {
		*path = '\0';
		return false;
	}
	return access(path, R_OK) == 0;
}

/* bpftool's path: on PATH, or in the sbin directories a user's PATH may lack. */
static bool find_bpftool(char *out, size_t size)
{
	const char *env = getenv("PATH");
	char dirs[4096], *dir, *save = NULL;

	snprintf(dirs, sizeof(dirs), "%s:/usr/sbin:/sbin:/usr/local/sbin", env ? env : "");
	for (dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		if (*dir && snprintf(out, size, "%s/bpftool", dir) < (int)size &&
		    access(out, X_OK) == 0)
			return true;
	}
	return false;
}

/* Write @obj to a new file @path. 0 or -errno. */
static int write_object(const char *path, const void *obj, size_t len)
{
	FILE *f = fopen(path, "wxe");
	int err = 0;

	if (!f)
		return -errno;
	if (fwrite(obj, 1, len, f) != len)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	if (err)
		unlink(path);
	return err;
}

/*
 * Run @argv detached: a child forks the worker and exits at once (reaped
 * here), so the worker is nobody's zombie and outlives a short recording.
 * Only async-signal-safe calls between fork and exec.
 */
static int spawn_detached(char *const argv[], const char *cleanup)
{
	pid_t child = fork(), worker;
	int status, fd;

	if (child < 0)
		return -errno;
	if (child == 0) {
		worker = fork();
		if (worker == 0) {
			setsid();
			if (nice(19) == -1) {
				/* best effort */
			}
			fd = open("/dev/null", O_RDWR);
			if (fd >= 0) {
				dup2(fd, 0);
				dup2(fd, 1);
				dup2(fd, 2);
			}
			/* no BPF, perf or pipe descriptor of ours in the worker */
			close_range(3, ~0U, 0);
			execv(argv[0], argv);
			unlink(cleanup);
			_exit(127);
		}
		_exit(worker < 0 ? 1 : 0);
	}
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		return -ECHILD;
	return 0;
}

int btfcache_build(const void *obj, size_t len, const char *path)
{
	const char *dir = cache_dir();
	char bpftool[4096], objpath[4200];
	int err;

	if (!dir || !*path)
		return -ENOENT;
	if (!find_bpftool(bpftool, sizeof(bpftool)))
		return -ENOENT;
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	snprintf(objpath, sizeof(objpath), "%s.%d.o", path, (int)getpid());
	err = write_object(objpath, obj, len);
	if (err)
		return err;
	/*
	 * The outputs appear under their final names only when whole, the ids
	 * (btfcache_attach_id) before the BTF: a BTF file has its ids if any.
	 */
	char *const argv[] = {
		"/bin/sh", "-c",
		"\"$1\" btf dump file " BTFCACHE_VMLINUX " | awk -v q=\"'\" '"
		"$2 == \"TYPEDEF\" && ($3 == q \"btf_trace_sys_enter\" q || "
		"$3 == q \"btf_trace_sys_exit\" q) { "
		"gsub(/[][]/, \"\", $1); gsub(q, \"\", $3); print $3, $1; n++ } "
		"END { exit n != 2 }' "
		">\"$2.ids.tmp$$\" && mv -f \"$2.ids.tmp$$\" \"$2.ids\"; "
		"\"$1\" gen min_core_btf " BTFCACHE_VMLINUX " \"$2.tmp$$\" \"$3\" && "
		"mv -f \"$2.tmp$$\" \"$2\"; rm -f \"$3\" \"$2.tmp$$\" \"$2.ids.tmp$$\"",
		"sh", bpftool, (char *)path, objpath, NULL,
	};
	err = spawn_detached(argv, objpath);
	if (err)
		unlink(objpath);
	return err;
}

/* @path's ids file, in @out; false when the name does not fit. */
static bool ids_path(const char *path, char *out, size_t size)
{
	int n = snprintf(out, size, "%s.ids", path);

	return n > 0 && (size_t)n < size;
}

unsigned int btfcache_attach_id(const char *path, const char *name)
{
	char ids[4200], line[256], key[128];
	unsigned int id = 0, v;
	FILE *f;

	if (!*path || !ids_path(path, ids, sizeof(ids)))
		return 0;
	f = fopen(ids, "re");
	if (!f)
		return 0;
	while (!id && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s %u", key, &v) == 2 && !strcmp(key, name))
			id = v;
	}
	fclose(f);
	return id;
}

void btfcache_drop_ids(const char *path)
{
	char ids[4200];

	if (*path && ids_path(path, ids, sizeof(ids)))
		unlink(ids);
}

void btfcache_drop(const char *path)
{
	if (!*path)
		return;
	unlink(path);
	btfcache_drop_ids(path);
}
