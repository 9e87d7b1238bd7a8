// SPDX-License-Identifier: GPL-2.0-only
/* Files and network peers: naming, per-name sums, metadata (see iotrack.h). */
#include "src/iotrack.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "src/lib/strtab.h"
#include "src/lib/util.h"

#define AT_CWD_FD -100

static const char *const kind_names[IO_KIND_NR] = {
	[IO_KIND_FILE] = "file",
	[IO_KIND_CONNECT] = "connect",
	[IO_KIND_ACCEPT] = "accept",
};

const char *io_kind_name(enum io_kind k)
{
	return k < IO_KIND_NR ? kind_names[k] : "file";
}

int iotrack_init(struct iotrack *t, const char *proc_root)
{
	memset(t, 0, sizeof(*t));
	t->proc_root = proc_root;
	t->names = strtab_new();
	return t->names ? 0 : -ENOMEM;
}

void iotrack_release(struct iotrack *t)
{
	size_t i;

	for (i = 0; i < t->fd_paths.nr_slots; i++)
		if (t->fd_paths.slots[i].value)
			free(t->fd_paths.slots[i].value);
	hashmap_release(&t->fd_paths);
	hashmap_release(&t->by_name);
	hashmap_release(&t->by_id);
	free(t->entries.items);
	strtab_free(t->names);
	memset(t, 0, sizeof(*t));
}

/* Append one component of @len bytes to @out (length *n), handling . and .. */
static int path_push(char *out, size_t size, size_t *n, const char *c, size_t len)
{
	if (len == 0 || (len == 1 && c[0] == '.'))
		return 0;
	if (len == 2 && c[0] == '.' && c[1] == '.') {
		while (*n > 0 && out[*n - 1] != '/')
			(*n)--;
		if (*n > 0)
			(*n)--;		/* the slash before the dropped component */
		out[*n] = 0;
		return 0;
	}
	if (*n + 1 + len + 1 > size)
		return -ENAMETOOLONG;
	out[(*n)++] = '/';
	memcpy(out + *n, c, len);
	*n += len;
	out[*n] = 0;
	return 0;
}

static int path_push_all(char *out, size_t size, size_t *n, const char *s)
{
	size_t len;
	int err = 0;

	while (!err && *s) {
		s += strspn(s, "/");
		len = strcspn(s, "/");
		err = path_push(out, size, n, s, len);
		s += len;
	}
	return err;
}

int path_resolve(const char *base, const char *path, char *out, size_t size)
{
	size_t n = 0;
	int err = 0;

	if (size < 2)
		return -ENAMETOOLONG;
	out[0] = 0;
	if (path[0] != '/' && base)
		err = path_push_all(out, size, &n, base);
	if (!err)
		err = path_push_all(out, size, &n, path);
	if (!err && n == 0)
		strcpy(out, "/");
	return err;
}

/* The index + 1 of the entry (kind, name), added if new; 0 on ENOMEM. */
static size_t entry_get(struct iotrack *t, enum io_kind kind, const char *name)
{
	const char *s = strtab_intern(t->names, name);
	size_t i;

	if (!s)
		return 0;
	i = HASHMAP_TO_NUM(hashmap_get(&t->by_name, s, kind, 0));
	if (i)
		return i;
	if (array_grow(&t->entries, t->entries.nr + 1))
		return 0;
	i = ++t->entries.nr;
	if (hashmap_put(&t->by_name, s, kind, 0, HASHMAP_NUM(i))) {
		t->entries.nr--;
		return 0;
	}
	memset(&t->entries.items[i - 1], 0, sizeof(t->entries.items[0]));
	t->entries.items[i - 1].kind = kind;
	t->entries.items[i - 1].name = s;
	return i;
}

static int entry_opened(struct iotrack *t, enum io_kind kind, const char *name, uint32_t pid,
			uint64_t id)
{
	size_t i = entry_get(t, kind, name);
	struct io_entry *e;

	if (!i || hashmap_put(&t->by_id, NULL, id, 0, HASHMAP_NUM(i)))
		return -ENOMEM;
	e = &t->entries.items[i - 1];
	e->opens++;
	if (e->last_pid != pid) {
		e->last_pid = pid;
		e->pids++;
	}
	return 0;
}

/* The directory an open of @pid relative to @dirfd starts from, in @buf. */
static int open_base(struct iotrack *t, uint32_t pid, int dirfd, char *buf, size_t size)
{
	const char *known = dirfd == AT_CWD_FD ? NULL :
			    hashmap_get(&t->fd_paths, NULL, pid, (uint32_t)dirfd);
	char link[64];
	ssize_t n;

	if (known) {
		snprintf(buf, size, "%s", known);
		return 0;
	}
	if (dirfd == AT_CWD_FD)
		snprintf(link, sizeof(link), "%s/%u/cwd", t->proc_root, pid);
	else
		snprintf(link, sizeof(link), "%s/%u/fd/%d", t->proc_root, pid, dirfd);
	n = readlink(link, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

int iotrack_open(struct iotrack *t, uint32_t pid, int fd, int dirfd, uint64_t id,
		 const char *path)
{
	char *buf = malloc(2 * PATH_MAX), *base = buf, *full = buf + PATH_MAX, *copy, *old;
	int err;

	if (!buf)
		return -ENOMEM;
	if (!path[0])
		path = "[unreadable path]";
	if (path[0] == '/' || path[0] == '[' || open_base(t, pid, dirfd, base, PATH_MAX))
		err = path_resolve(NULL, path, full, PATH_MAX);
	else
		err = path_resolve(base, path, full, PATH_MAX);
	if (err || path[0] == '[')
		snprintf(full, PATH_MAX, "%s", path);
	err = entry_opened(t, IO_KIND_FILE, full, pid, id);
	if (err)
		goto out;
	/* directories may be dirfds of later openat calls */
	old = hashmap_get(&t->fd_paths, NULL, pid, (uint32_t)fd);
	copy = strdup(full);
	if (!copy || hashmap_put(&t->fd_paths, NULL, pid, (uint32_t)fd, copy)) {
		free(copy);
		err = -ENOMEM;
		goto out;
	}
	free(old);
out:
	free(buf);
	return err;
}

int iotrack_peer(struct iotrack *t, uint32_t pid, bool accepted, uint64_t id, int family,
		 const uint8_t *addr, uint16_t port)
{
	char ip[INET6_ADDRSTRLEN] = "?", name[INET6_ADDRSTRLEN + 16];

	inet_ntop(family, addr, ip, sizeof(ip));
	if (accepted)
		snprintf(name, sizeof(name), family == AF_INET6 ? "[%s]" : "%s", ip);
	else
		snprintf(name, sizeof(name), family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, port);
	return entry_opened(t, accepted ? IO_KIND_ACCEPT : IO_KIND_CONNECT, name, pid, id);
}

void iotrack_io(struct iotrack *t, uint64_t id, uint64_t bytes_in, uint64_t bytes_out,
		uint64_t io_ns, uint64_t ops)
{
	size_t i = HASHMAP_TO_NUM(hashmap_get(&t->by_id, NULL, id, 0));
	struct io_entry *e;

	if (!i)
		return;
	e = &t->entries.items[i - 1];
	e->bytes_in += bytes_in;
	e->bytes_out += bytes_out;
	e->io_ns += io_ns;
	e->ops += ops;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct io_entry *x = a, *y = b;

	if (x->io_ns != y->io_ns)
		return x->io_ns > y->io_ns ? -1 : 1;
	if (x->bytes_in + x->bytes_out != y->bytes_in + y->bytes_out)
		return x->bytes_in + x->bytes_out > y->bytes_in + y->bytes_out ? -1 : 1;
	return strcmp(x->name, y->name);
}

void io_entries_sort(struct io_entry *items, size_t nr)
{
	if (nr)
		array_sort(items, nr, sizeof(*items), cmp_entry);
}

int iotrack_store(const struct iotrack *t, struct profile *p)
{
	struct io_entry *sorted = NULL;
	size_t i, n = t->entries.nr;
	char key[32], *val = NULL;
	int err = 0;

	if (n) {
		sorted = malloc(n * sizeof(*sorted));
		if (!sorted)
			return -ENOMEM;
		memcpy(sorted, t->entries.items, n * sizeof(*sorted));
		io_entries_sort(sorted, n);
	}
	for (i = 0; !err && i < n && i < IOTRACK_MAX_STORED; i++) {
		const struct io_entry *e = &sorted[i];

		if (asprintf(&val, "kind=%s opens=%" PRIu64 " bytes_in=%" PRIu64
			     " bytes_out=%" PRIu64 " io_ns=%" PRIu64 " ops=%" PRIu64
			     " pids=%" PRIu64 " name=%s", io_kind_name(e->kind), e->opens,
			     e->bytes_in, e->bytes_out, e->io_ns, e->ops, e->pids, e->name) < 0) {
			err = -ENOMEM;
			break;
		}
		snprintf(key, sizeof(key), "io.%zu", i);
		err = profile_set_meta(p, key, val);
		free(val);
	}
	if (!err && n > IOTRACK_MAX_STORED)
		err = profile_set_meta_u64(p, "io.dropped", n - IOTRACK_MAX_STORED);
	free(sorted);
	return err;
}

/* Parse "kind=K opens=N ... name=NAME" into @e (name strdup'ed). */
static int entry_parse(const char *s, struct io_entry *e)
{
	static const char *const keys[] = { "opens", "bytes_in", "bytes_out", "io_ns", "ops",
					    "pids" };
	uint64_t *vals[] = { &e->opens, &e->bytes_in, &e->bytes_out, &e->io_ns, &e->ops,
			     &e->pids };
	char kind[16];
	int n = 0;
	size_t i, len;

	memset(e, 0, sizeof(*e));
	if (sscanf(s, "kind=%15s %n", kind, &n) != 1 || !n)
		return -EINVAL;
	for (e->kind = 0; e->kind < IO_KIND_NR && strcmp(kind, kind_names[e->kind]); e->kind++)
		;
	if (e->kind == IO_KIND_NR)
		return -EINVAL;
	s += n;
	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		len = strlen(keys[i]);
		if (strncmp(s, keys[i], len) || s[len] != '=')
			return -EINVAL;
		n = 0;
		if (sscanf(s + len + 1, "%" SCNu64 " %n", vals[i], &n) != 1 || !n)
			return -EINVAL;
		s += len + 1 + n;
	}
	if (strncmp(s, "name=", 5))
		return -EINVAL;
	e->name = strdup(s + 5);
	return e->name ? 0 : -ENOMEM;
}

int io_entries_load(const struct profile *p, struct io_entries *out)
{
	const char *key;
	size_t i;
	int err;

	for (i = 0; i < p->meta.nr; i++) {
		key = p->meta.items[i].key;
		if (strncmp(key, "io.", 3) || key[3] < '0' || key[3] > '9')
			continue;
		if (array_grow(out, out->nr + 1))
			return -ENOMEM;
		err = entry_parse(p->meta.items[i].value, &out->items[out->nr]);
		if (err == -ENOMEM)
			return err;
		if (!err)
			out->nr++;
	}
	io_entries_sort(out->items, out->nr);
	return 0;
}

void io_entries_free(struct io_entries *e)
{
	size_t i;

	for (i = 0; i < e->nr; i++)
		free((char *)e->items[i].name);
	free(e->items);
	memset(e, 0, sizeof(*e));
}
