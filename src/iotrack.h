/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Files and network peers (`record --files`, `--net`): the kernel reports an
 * open (path as passed, with its directory descriptor), a connect/accept
 * (peer address), and at close the I/O done on the descriptor and its dup'ed
 * copies under the same id. This module names each id (a relative path is
 * resolved against the process's cwd or its directory descriptor, read from
 * /proc when the open is reported) and sums I/O per file path and per peer.
 * It deliberately does not read file contents or follow renames.
 *
 * Metadata: "io.K" = "kind=file|connect|accept opens=N bytes_in=N
 * bytes_out=N io_ns=N ops=N pids=N name=NAME" (NAME last, to the end of the
 * value: a path or ADDR:PORT; accepted peers are ADDR only), at most
 * IOTRACK_MAX_STORED entries, heaviest (time) first; "io.dropped" counts
 * the rest (docs/formats.md).
 */
#ifndef LATPROF_IOTRACK_H
#define LATPROF_IOTRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/lib/hashmap.h"
#include "src/profile.h"

#define IOTRACK_MAX_STORED 10000

enum io_kind {
	IO_KIND_FILE,
	IO_KIND_CONNECT,	/* a peer we connected to */
	IO_KIND_ACCEPT,		/* clients that connected to us, by address */
	IO_KIND_NR,
};

/* What was done with one file or peer, over every process. */
struct io_entry {
	enum io_kind kind;
	const char *name;	/* a path, ADDR:PORT or ADDR; owned by the tracker's
				 * strtab, or by struct io_entries */
	uint64_t opens;		/* opens, or connections */
	uint64_t bytes_in, bytes_out, io_ns, ops;
	uint32_t last_pid;	/* to count processes (pids) */
	uint64_t pids;
};

struct iotrack {
	struct { struct io_entry *items; size_t nr, alloc; } entries;
	struct strtab *names;
	struct hashmap by_name;		/* (interned name, kind) -> index + 1 */
	struct hashmap by_id;		/* kernel id -> index + 1 */
	struct hashmap fd_paths;	/* (pid, fd) -> owned path, for openat's dirfd */
	const char *proc_root;		/* "/proc" (tests use another root) */
};

/* Start an empty tracker reading processes under @proc_root ("/proc"). 0 or -ENOMEM. */
int iotrack_init(struct iotrack *t, const char *proc_root);
void iotrack_release(struct iotrack *t);

/*
 * An open of @path by @pid as @fd, relative to @dirfd (-100: the cwd).
 * 0 or -ENOMEM.
 */
int iotrack_open(struct iotrack *t, uint32_t pid, int fd, int dirfd, uint64_t id,
		 const char *path);

/* A connection to (@accepted: from) @addr:@port, @family AF_INET/AF_INET6. */
int iotrack_peer(struct iotrack *t, uint32_t pid, bool accepted, uint64_t id, int family,
		 const uint8_t *addr, uint16_t port);

/* I/O totals of one descriptor of id @id, at close or stop. Cannot fail. */
void iotrack_io(struct iotrack *t, uint64_t id, uint64_t bytes_in, uint64_t bytes_out,
		uint64_t io_ns, uint64_t ops);

/*
 * Resolve @path against directory @base (absolute) into @out: "." and ".."
 * and repeated slashes removed; ".." at the root stays at the root. An
 * absolute @path ignores @base. 0, or -ENAMETOOLONG when @out is too small.
 */
int path_resolve(const char *base, const char *path, char *out, size_t size);

/* Store the entries in @p's metadata (see above). 0 or -ENOMEM. */
int iotrack_store(const struct iotrack *t, struct profile *p);

/*
 * Read the "io.K" entries of @p into @out (appended, then all of @out sorted
 * as io_entries_sort does; free with io_entries_free). Malformed ones are
 * skipped. 0 or -ENOMEM.
 */
struct io_entries {
	struct io_entry *items;
	size_t nr, alloc;
};
int io_entries_load(const struct profile *p, struct io_entries *out);
void io_entries_free(struct io_entries *e);

/* "file", "connect", "accept". */
const char *io_kind_name(enum io_kind k);

/* Sort heaviest first: io_ns, then bytes. Cannot fail. */
void io_entries_sort(struct io_entry *items, size_t nr);

#endif
