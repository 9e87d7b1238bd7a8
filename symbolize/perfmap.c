// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf-PID.map reading. JITs append to the file while they run and may
 * reuse an address range for new code, so when two symbols start at the same
 * address the one written last wins.
 */
#include "symbolize/perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/lib/strtab.h"
#include "src/lib/util.h"
#include "symbolize/procroot.h"

/* A perf map larger than this is refused: the target writes it, we read it. */
#define PERFMAP_MAX_BYTES (256u << 20)
/* Beside O_RDONLY: a symlink is not followed, a FIFO does not block the open. */
#define PERFMAP_OPEN_FLAGS (O_NOFOLLOW | O_NONBLOCK)

struct perfmap_sym {
	uint64_t start;
	uint64_t size;
	const char *name;
	size_t seq;		/* line number, for "last wins" */
};

struct perfmap {
	struct { struct perfmap_sym *items; size_t nr, alloc; } syms;	/* by start */
};

static int perfmap_parse_line(struct perfmap *m, char *line, size_t seq, struct strtab *strs)
{
	struct perfmap_sym *sym;
	uint64_t start, size;
	char *end;

	start = strtoull(line, &end, 16);
	if (end == line || *end != ' ')
		return 0;
	line = end + 1;
	size = strtoull(line, &end, 16);
	if (end == line || *end != ' ' || !size || !end[1])
		return 0;
	if (array_grow(&m->syms, m->syms.nr + 1))
		return -ENOMEM;
	sym = &m->syms.items[m->syms.nr];
	sym->start = start;
	sym->size = size;
	sym->seq = seq;
	sym->name = strtab_intern(strs, end + 1);
	if (!sym->name)
		return -ENOMEM;
	m->syms.nr++;
	return 0;
}

static int perfmap_sym_cmp(const void *a, const void *b)
{
	const struct perfmap_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? 1 : -1;	/* newest first */
}

static int perfmap_parse_syms(struct perfmap *m, char *buf, struct strtab *strs)
{
	char *line, *nl;
	size_t seq = 0, i, n = 0;
	int err;

	for (line = buf; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		err = perfmap_parse_line(m, line, seq++, strs);
		if (err)
			return err;
	}
	if (m->syms.nr > 1)
		array_sort(m->syms.items, m->syms.nr, sizeof(*m->syms.items), perfmap_sym_cmp);
	for (i = 0; i < m->syms.nr; i++) {
		if (n && m->syms.items[n - 1].start == m->syms.items[i].start)
			continue;
		m->syms.items[n++] = m->syms.items[i];
	}
	m->syms.nr = n;
	return n ? 0 : -ENOENT;
}

/*
 * Any user can create /tmp/perf-PID.map for a pid not theirs, and we read it
 * as root: trust only a regular file (not a FIFO to block on, not a device)
 * owned by the process's user or root. perf checks the owner too, against
 * the user running it, so as root it reads root's maps only. In a
 * container's root the rule is the same and as easy: fstat() gives the
 * file's owner and /proc/PID/status the process's uid both as our user
 * namespace maps them.
 */
static int perfmap_check(int fd, uid_t uid)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_uid != uid && st.st_uid != 0)
		return -EPERM;
	return 0;
}

/*
 * The JIT writes /tmp/perf-PID.map in its own root with its own pid, which
 * in a container is not ours for it. Read it there, never following a
 * symlink out of that root; the host's /tmp only when the process is gone
 * and its root was the host's (node under `unshare --pid` wrote
 * /tmp/perf-1.map, which the host pid's name never found).
 */
static int read_perfmap_file(int pid, const struct proc_ids *ids, char **buf, size_t *len)
{
	char path[64];
	int fd, err;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", ids->ns_pid);
	fd = proc_root_open(pid, path, PERFMAP_OPEN_FLAGS);
	if (fd == -ESRCH && ids->root_ours) {
		fd = open(path, O_RDONLY | O_CLOEXEC | PERFMAP_OPEN_FLAGS);
		fd = fd < 0 ? -errno : fd;
	}
	if (fd < 0)
		return fd;
	err = perfmap_check(fd, ids->uid);
	if (err) {
		close(fd);
		return err;
	}
	return read_fd(fd, PERFMAP_MAX_BYTES, buf, len);
}

struct perfmap *perfmap_load_text(char *text, struct strtab *strs)
{
	struct perfmap *m = calloc(1, sizeof(*m));
	int err;

	if (!m)
		return NULL;
	err = perfmap_parse_syms(m, text, strs);
	if (err) {
		perfmap_free(m);
		errno = -err;
		return NULL;
	}
	return m;
}

struct perfmap *perfmap_load(int pid, const struct proc_ids *ids, struct strtab *strs)
{
	struct perfmap *m;
	char *buf = NULL;
	size_t len = 0, i;
	int err;

	err = read_perfmap_file(pid, ids, &buf, &len);
	if (err) {
		errno = -err;
		return NULL;
	}
	/* a NUL (a damaged or half-written map) ends its line, not the whole file */
	for (i = 0; i < len; i++)
		if (!buf[i])
			buf[i] = '\n';
	m = perfmap_load_text(buf, strs);
	err = errno;
	free(buf);
	errno = err;
	return m;
}

void perfmap_free(struct perfmap *m)
{
	if (!m)
		return;
	free(m->syms.items);
	free(m);
}

bool perfmap_lookup(const struct perfmap *m, uint64_t addr, const char **name,
		    uint64_t *start)
{
	const struct perfmap_sym *sym;
	size_t lo = 0, hi = m->syms.nr, mid;

	while (lo < hi) {	/* first symbol starting above addr */
		mid = lo + (hi - lo) / 2;
		if (m->syms.items[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	sym = &m->syms.items[lo - 1];
	if (addr - sym->start >= sym->size)
		return false;
	*name = sym->name;
	*start = sym->start;
	return true;
}
