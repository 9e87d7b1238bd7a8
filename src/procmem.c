// SPDX-License-Identifier: GPL-2.0-only
/* RSS and PSS of a process from /proc (procmem.h). */
#include "src/procmem.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/lib/util.h"

/* The value of the line "NAME:  N kB" in @text. */
static bool kb_line(const char *text, const char *name, uint64_t *kb)
{
	size_t n = strlen(name);
	const char *q;

	for (q = text; q; q = strchr(q, '\n'), q = q ? q + 1 : NULL) {
		if (!strncmp(q, name, n) && q[n] == ':')
			return sscanf(q + n + 1, "%" SCNu64, kb) == 1;
	}
	return false;
}

int procmem_parse_smaps_rollup(const char *text, uint64_t *rss_kb, uint64_t *pss_kb)
{
	if (!kb_line(text, "Rss", rss_kb) || !kb_line(text, "Pss", pss_kb))
		return -EINVAL;
	return 0;
}

int procmem_parse_statm(const char *text, unsigned int page_kb, uint64_t *rss_kb)
{
	uint64_t size, resident;

	if (sscanf(text, "%" SCNu64 " %" SCNu64, &size, &resident) != 2)
		return -EINVAL;
	*rss_kb = resident * page_kb;
	return 0;
}

/* Read /proc/@pid/@name into @buf (at most @size - 1 bytes, terminated). */
static int read_proc(pid_t pid, const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t n = 0;
	size_t len = 0;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	if (n < 0)
		err = -errno;
	close(fd);
	buf[len] = '\0';
	return err ? err : len ? 0 : -ESRCH;	/* empty: the process is a zombie */
}

int procmem_read_rss(pid_t pid, uint64_t *rss_kb)
{
	char buf[128];
	long page = sysconf(_SC_PAGESIZE);
	int err = read_proc(pid, "statm", buf, sizeof(buf));

	if (err)
		return err;
	return procmem_parse_statm(buf, page > 0 ? page / 1024 : 4, rss_kb);
}

int procmem_read_pss(pid_t pid, uint64_t *rss_kb, uint64_t *pss_kb, uint64_t *cost_ns)
{
	char buf[2048];
	uint64_t t0 = now_ns();
	int err = read_proc(pid, "smaps_rollup", buf, sizeof(buf));

	*cost_ns = now_ns() - t0;
	if (err)
		return err;
	return procmem_parse_smaps_rollup(buf, rss_kb, pss_kb);
}
