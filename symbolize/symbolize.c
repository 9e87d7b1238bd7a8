// SPDX-License-Identifier: GPL-2.0-only
/*
 * The symbolizer: process snapshots, the caches, and the glue between
 * /proc/PID/maps, binaries (binary.c) and kernel symbols (kallsyms.c).
 *
 * A snapshot keeps only executable mappings, since only they hold sampled
 * code: file-backed ones with their binary, opened right away so the file
 * stays reachable after the process exits, plus [vdso] and anonymous ones
 * (JIT code), which resolve through perf-PID.map when the JIT writes one.
 *
 * Results are cached twice: frames per (binary, address in the file), shared
 * by every process mapping that binary, and locations per (process, address),
 * because a location names the process's own mapping and address. Locations
 * and frames live in an arena, so the pointers handed out never move.
 */
#include "symbolize/symbolize.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/lib/strtab.h"
#include "src/lib/util.h"
#include "symbolize/binary.h"
#include "symbolize/debuginfo.h"
#include "src/lib/hashmap.h"
#include "symbolize/kallsyms.h"
#include "symbolize/perfmap.h"
#include "symbolize/procroot.h"
#include "symbolize/unwind.h"

#define KALLSYMS_PATH "/proc/kallsyms"
#define MODULES_PATH "/proc/modules"
#define DELETED_SUFFIX " (deleted)"
#define ARENA_CHUNK_SIZE (64 * 1024)

/* Bump allocation for results that must not move; freed all at once. */
struct arena_chunk {
	struct arena_chunk *next;
	size_t size, used;
	max_align_t data[];
};

struct proc_map {
	struct sym_mapping map;
	struct binary *bin;	/* NULL: no ELF to read (anonymous, unreadable) */
};

struct sym_process {
	int pid;
	struct { struct proc_map *items; size_t nr, alloc; } maps;	/* sorted by start */
	struct perfmap *jit;	/* perf-PID.map, read on first need */
	bool jit_tried;
	int jit_refused;	/* why that map was refused, -errno; 0: it was not */
	struct proc_ids ids;	/* what finds that map, read before its maps */
	struct unwinder *unw;	/* DWARF unwinder, made on first need */
	bool unw_tried;
	size_t unw_refused;	/* unwinder_nr_refused() of a trimmed unwinder */
	uint64_t unw_used;	/* symbolizer.unwind_clock at its last unwind */
	struct symbolizer *owner;	/* set while it holds an unwinder */
	size_t modules_refused;	/* distinct files libdwfl refused (binary_refused) */
	uint64_t maps_digest;	/* sym_maps_digest() of the text read */
};

struct symbolizer {
	struct symbolizer_opts opts;
	struct strtab *strs;
	struct { struct sym_process **items; size_t nr, alloc; } procs;
	struct { struct binary **items; size_t nr, alloc; } bins;
	struct hashmap bin_cache;	/* (NULL, dev, inode), or (path, dev, 0) -> binary */
	struct hashmap bin_by_id;	/* (interned build-id, 0, 0) -> binary */
	struct hashmap frame_cache;	/* (binary, vaddr, is_return) -> a location */
	struct hashmap loc_cache;	/* (key, addr, is_return) -> location; the key is the
					 * process, &procs without one, &ksyms for the kernel */
	struct kallsyms ksyms;
	bool ksyms_loaded;
	/* the mappings of unloaded kernel tables: cached locations point there */
	struct { struct sym_mapping **items; size_t nr, alloc; } kmaps_unloaded;
	struct debuginfo *debuginfo;	/* the search every binary borrows */
	struct binary *vdso;
	bool vdso_tried;
	struct arena_chunk *arena;
	struct sym_frames scratch;
	struct sym_frame unknown;	/* the one frame of an unresolved address */
	size_t nr_cached;		/* locations in frame_cache and loc_cache */
	struct sym_location spare;	/* the result once the caches are full */
	/* processes holding an unwinder, at most SYM_MAX_UNWINDERS */
	struct { struct sym_process **items; size_t nr, alloc; } unwinding;
	uint64_t unwind_clock;		/* ticks at every unwind: the LRU order */
};

static void *arena_alloc(struct symbolizer *s, size_t size)
{
	struct arena_chunk *c = s->arena;
	size_t align = sizeof(max_align_t), n;
	void *p;

	size = (size + align - 1) / align * align;
	if (!c || c->size - c->used < size) {
		n = size > ARENA_CHUNK_SIZE ? size : ARENA_CHUNK_SIZE;
		c = malloc(sizeof(*c) + n);
		if (!c)
			return NULL;
		c->size = n;
		c->used = 0;
		c->next = s->arena;
		s->arena = c;
	}
	p = (char *)c->data + c->used;
	c->used += size;
	return p;
}

struct symbolizer *symbolizer_new(const struct symbolizer_opts *opts)
{
	struct symbolizer *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	if (opts)
		s->opts = *opts;
	/* the caller's array need not outlive this call */
	s->opts.debug_dirs = NULL;
	s->debuginfo = debuginfo_new(opts ? opts->debug_dirs : NULL,
				     opts ? opts->nr_debug_dirs : 0);
	s->strs = s->debuginfo ? strtab_new() : NULL;
	if (!s->strs) {
		err = s->debuginfo ? ENOMEM : errno;
		debuginfo_free(s->debuginfo);
		free(s);
		errno = err;
		return NULL;
	}
	return s;
}

static void process_free(struct sym_process *p)
{
	if (!p)
		return;
	perfmap_free(p->jit);
	unwinder_free(p->unw);
	free(p->maps.items);
	free(p);
}

void symbolizer_free(struct symbolizer *s)
{
	struct arena_chunk *c;
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->procs.nr; i++)
		process_free(s->procs.items[i]);
	free(s->procs.items);
	free(s->unwinding.items);
	for (i = 0; i < s->bins.nr; i++)
		binary_free(s->bins.items[i]);
	free(s->bins.items);
	binary_free(s->vdso);
	hashmap_release(&s->bin_cache);
	hashmap_release(&s->bin_by_id);
	hashmap_release(&s->frame_cache);
	hashmap_release(&s->loc_cache);
	kallsyms_release(&s->ksyms);
	for (i = 0; i < s->kmaps_unloaded.nr; i++)
		free(s->kmaps_unloaded.items[i]);
	free(s->kmaps_unloaded.items);
	while ((c = s->arena)) {
		s->arena = c->next;
		free(c);
	}
	free(s->scratch.items);
	/* after the binaries: their sessions use its callbacks */
	debuginfo_free(s->debuginfo);
	strtab_free(s->strs);
	free(s);
}

/* One line of /proc/PID/maps. */
struct maps_line {
	uint64_t start, limit, offset, dev, inode;
	char perms[5];
	const char *path;	/* the rest of the line, "" for anonymous */
};

static bool maps_parse_line(char *line, struct maps_line *ml)
{
	unsigned int major, minor;
	int n = 0;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 "%n",
		   &ml->start, &ml->limit, ml->perms, &ml->offset, &major, &minor,
		   &ml->inode, &n) != 7 || !n)
		return false;
	ml->dev = (uint64_t)major << 32 | minor;
	line += n;
	while (*line == ' ' || *line == '\t')
		line++;
	ml->path = line;
	return true;
}

/* "/proc/PID/@what@path" as an owned string, NULL on ENOMEM. */
static char *proc_path(int pid, const char *what, const char *path)
{
	size_t n = 32 + strlen(what) + strlen(path);
	char *buf = malloc(n);

	if (buf)
		snprintf(buf, n, "/proc/%d/%s%s", pid, what, path);
	return buf;
}

static int open_owned(char *path)
{
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;

	free(path);
	return fd;
}

/*
 * Open the file behind a mapping, in order of trust: map_files (the mapped
 * file itself, even deleted, but needs CAP_SYS_ADMIN or
 * CAP_CHECKPOINT_RESTORE), /proc/PID/exe for the main executable (also when
 * deleted), the path resolved inside the process's root (containers; a
 * symlink there cannot lead to a host file), and the host path only when
 * that root cannot be opened (the process is gone).
 */
static int open_mapped_file(int pid, const struct maps_line *ml, const char *path,
			    const char *exe)
{
	bool deleted = strcmp(path, ml->path) != 0;
	char range[40];
	int fd;

	snprintf(range, sizeof(range), "%" PRIx64 "-%" PRIx64, ml->start, ml->limit);
	fd = open_owned(proc_path(pid, "map_files/", range));
	if (fd < 0 && exe && !strcmp(exe, ml->path))
		fd = open_owned(proc_path(pid, "exe", ""));
	if (fd < 0 && !deleted) {
		fd = proc_root_open(pid, path, 0);
		if (fd == -ESRCH)
			fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	return fd < 0 ? -1 : fd;
}

/*
 * Keep the new binary *@b, or, when one with the same GNU build-id is kept
 * already (the same library seen through another container's overlay, a
 * copy at another path), free it and use that one: its symbols, CFI and
 * resolved addresses are shared. 0 or -ENOMEM (then *@b is freed).
 */
static int symbolizer_keep_binary(struct symbolizer *s, struct binary **b)
{
	const char *id = binary_build_id(*b);
	struct binary *same = *id ? hashmap_get(&s->bin_by_id, id, 0, 0) : NULL;

	if (same) {
		binary_free(*b);
		*b = same;
		return 0;
	}
	if (array_grow(&s->bins, s->bins.nr + 1)) {
		binary_free(*b);
		return -ENOMEM;
	}
	s->bins.items[s->bins.nr++] = *b;
	/* build-ids are interned in s->strs: the pointer is the key */
	return *id && hashmap_put(&s->bin_by_id, id, 0, 0, *b) ? -ENOMEM : 0;
}

/*
 * The cached binary for a file mapping, opened now if new. *@out is NULL if
 * the file cannot be opened; that is retried by the next snapshot, since
 * another process may still have it. Returns 0 or -ENOMEM.
 */
static int symbolizer_binary(struct symbolizer *s, int pid, const struct maps_line *ml,
			     const char *path, const char *exe, struct binary **out)
{
	const void *obj = ml->inode ? NULL : path;
	struct binary *b;
	int fd;

	/* maps gives device and inode, so known files need no system call */
	*out = hashmap_get(&s->bin_cache, obj, ml->dev, ml->inode);
	if (*out)
		return 0;
	fd = open_mapped_file(pid, ml, path, exe);
	if (fd < 0)
		return 0;
	b = binary_new(fd, path, s->debuginfo, s->strs);
	if (!b || symbolizer_keep_binary(s, &b))
		return -ENOMEM;
	if (hashmap_put(&s->bin_cache, obj, ml->dev, ml->inode, b))
		return -ENOMEM;
	*out = b;
	return 0;
}

/* This process's vDSO, if @size says the target maps the same image. */
static struct binary *symbolizer_vdso(struct symbolizer *s, uint64_t size)
{
	if (!s->vdso_tried) {
		s->vdso_tried = true;
		s->vdso = binary_new_vdso(s->debuginfo, s->strs);
	}
	/* a 32-bit process maps another image; then resolve nothing */
	if (!s->vdso || binary_vdso_size(s->vdso) != size)
		return NULL;
	return s->vdso;
}

/* Does a mapping of @p before the last one hold binary @b already? */
static bool process_maps_bin(const struct sym_process *p, const struct binary *b)
{
	size_t i;

	for (i = 0; i + 1 < p->maps.nr; i++)
		if (p->maps.items[i].bin == b)
			return true;
	return false;
}

static int process_add_map(struct symbolizer *s, struct sym_process *p,
			   const struct maps_line *ml, const char *exe)
{
	size_t len = strlen(ml->path);
	struct proc_map *m;
	const char *path;

	if (str_has_suffix(ml->path, DELETED_SUFFIX) && ml->path[0] == '/')
		len -= strlen(DELETED_SUFFIX);
	path = strtab_intern_len(s->strs, len ? ml->path : "[anon]", len ? len : 6);
	if (!path || array_grow(&p->maps, p->maps.nr + 1))
		return -ENOMEM;
	m = &p->maps.items[p->maps.nr];
	memset(m, 0, sizeof(*m));
	m->map.start = ml->start;
	m->map.limit = ml->limit;
	m->map.offset = ml->offset;
	m->map.path = path;
	m->map.build_id = "";
	p->maps.nr++;
	if (path[0] == '/') {
		if (symbolizer_binary(s, p->pid, ml, path, exe, &m->bin))
			return -ENOMEM;
	} else if (!strcmp(path, "[vdso]")) {
		m->bin = symbolizer_vdso(s, ml->limit - ml->start);
	}
	if (m->bin)
		m->map.build_id = binary_build_id(m->bin);
	if (m->bin && path[0] == '/' && binary_refused(m->bin) && !process_maps_bin(p, m->bin))
		p->modules_refused++;
	return 0;
}

static int proc_map_cmp(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;

	if (x->map.start != y->map.start)
		return x->map.start < y->map.start ? -1 : 1;
	return 0;
}

static int process_read_maps(struct symbolizer *s, struct sym_process *p, char *buf,
			     const char *exe)
{
	struct maps_line ml;
	char *line, *nl;
	int err;

	for (line = buf; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (!maps_parse_line(line, &ml) || ml.perms[2] != 'x')
			continue;
		err = process_add_map(s, p, &ml, exe);
		if (err)
			return err;
	}
	if (p->maps.nr > 1)
		array_sort(p->maps.items, p->maps.nr, sizeof(*p->maps.items), proc_map_cmp);
	return 0;
}

/* readlink /proc/PID/exe as an owned string, NULL if unavailable. */
static char *process_exe(int pid)
{
	char *link = proc_path(pid, "exe", "");
	size_t n = 4096;
	char *buf = link ? malloc(n) : NULL;
	ssize_t len = buf ? readlink(link, buf, n - 1) : -1;

	free(link);
	if (len < 0) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

uint64_t sym_maps_digest(const char *maps)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */
	const char *line, *end;

	for (line = maps; *line; line = *end ? end + 1 : end) {
		const char *perms = strchr(line, ' ');

		end = line + strcspn(line, "\n");
		if (!perms || perms + 3 >= end || perms[3] != 'x')
			continue;
		for (; line < end; line++) {
			h ^= (unsigned char)*line;
			h *= 1099511628211ULL;
		}
		h ^= '\n';
		h *= 1099511628211ULL;
	}
	return h;
}

uint64_t sym_process_maps_digest(const struct sym_process *p)
{
	return p->maps_digest;
}

/* The index of the first of @p's first @nr mappings (sorted) that starts above @addr. */
static size_t maps_first_above(const struct sym_process *p, size_t nr, uint64_t addr)
{
	size_t lo = 0, hi = nr, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->maps.items[mid].map.start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Add @prev's mappings that no mapping of @p overlaps. A mapping with a
 * binary keeps its file open (the symbolizer owns both); @p's digest stays
 * the one of the text it read.
 */
static int process_keep_unmapped(struct sym_process *p, const struct sym_process *prev)
{
	size_t i, nr = p->maps.nr;

	for (i = 0; i < prev->maps.nr; i++) {
		const struct proc_map *old = &prev->maps.items[i];
		size_t lo = maps_first_above(p, nr, old->map.start);

		if ((lo > 0 && p->maps.items[lo - 1].map.limit > old->map.start) ||
		    (lo < nr && p->maps.items[lo].map.start < old->map.limit))
			continue;	/* overlapped: the new mapping wins */
		if (array_grow(&p->maps, p->maps.nr + 1))
			return -ENOMEM;
		p->maps.items[p->maps.nr++] = *old;
	}
	if (p->maps.nr > nr)
		array_sort(p->maps.items, p->maps.nr, sizeof(*p->maps.items), proc_map_cmp);
	return 0;
}

struct sym_process *symbolizer_snapshot(struct symbolizer *s, int pid)
{
	return symbolizer_snapshot_after(s, pid, NULL);
}

struct sym_process *symbolizer_snapshot_after(struct symbolizer *s, int pid,
					      const struct sym_process *prev)
{
	struct sym_process *p = NULL;
	struct proc_map *shrunk;
	char *maps = NULL, *buf = NULL, *exe = NULL;
	int err = -ENOMEM;

	p = calloc(1, sizeof(*p));
	maps = proc_path(pid, "maps", "");
	if (!p || !maps)
		goto out;
	/*
	 * The ids its JIT's perf map is found by (read after it exited) come
	 * first: read after the maps, a process gone in between had its host pid
	 * and a root not ours (test_perfmap: 29-55 of 480 exiting children). Read
	 * before, they are its own whenever its maps list code: it lists none
	 * once its memory is released, and its root goes after that.
	 */
	err = proc_ids_read(&p->ids, pid);
	if (!err)
		err = read_file(maps, &buf, NULL);
	if (err == -ENOENT)
		err = -ESRCH;
	if (err)
		goto out;
	exe = process_exe(pid);
	err = -ENOMEM;
	if (array_grow(&s->procs, s->procs.nr + 1))
		goto out;
	p->pid = pid;
	p->maps_digest = sym_maps_digest(buf);
	err = process_read_maps(s, p, buf, exe);
	/* no executable mapping: a zombie (its maps read empty) or mid-exec */
	if (!err && !p->maps.nr)
		err = -ESRCH;
	if (!err && prev)
		err = process_keep_unmapped(p, prev);
	if (err)
		goto out;
	/* kept to the end of the session, a snapshot per process: no slack */
	shrunk = realloc(p->maps.items, p->maps.nr * sizeof(*p->maps.items));
	if (shrunk) {
		p->maps.items = shrunk;
		p->maps.alloc = p->maps.nr;
	}
	s->procs.items[s->procs.nr++] = p;
out:
	free(maps);
	free(buf);
	free(exe);
	if (err) {
		process_free(p);
		errno = -err;
		return NULL;
	}
	return p;
}

static const struct proc_map *process_find_map(const struct sym_process *p, uint64_t addr)
{
	size_t lo = maps_first_above(p, p->maps.nr, addr);

	if (!lo || addr >= p->maps.items[lo - 1].map.limit)
		return NULL;
	return &p->maps.items[lo - 1];
}

bool sym_process_maps_code(const struct sym_process *p, uint64_t addr)
{
	return process_find_map(p, addr) != NULL;
}

/* Copy the scratch frames into the arena as @loc's frames. */
/* Are the caches full? Then results live in s->spare until the next call. */
static bool cache_full(const struct symbolizer *s)
{
	return s->nr_cached >= (s->opts.max_cached ? s->opts.max_cached : SYM_DEFAULT_MAX_CACHED);
}

/* Cache @loc under (@key, @addr, @is_return) unless it is the spare. */
static int cache_put(struct symbolizer *s, struct hashmap *h, const void *key, uint64_t addr,
		     bool is_return, struct sym_location *loc)
{
	if (loc == &s->spare)
		return 0;
	s->nr_cached++;
	return hashmap_put(h, key, addr, is_return, loc);
}

static int location_take_frames(struct symbolizer *s, struct sym_location *loc)
{
	struct sym_frame *frames;

	/* the spare borrows the scratch frames: both last until the next call */
	if (loc == &s->spare) {
		loc->frames = s->scratch.items;
		loc->nr_frames = s->scratch.nr;
		return 0;
	}
	frames = arena_alloc(s, s->scratch.nr * sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	memcpy(frames, s->scratch.items, s->scratch.nr * sizeof(*frames));
	loc->frames = frames;
	loc->nr_frames = s->scratch.nr;
	return 0;
}

/* Frames of @vaddr in @b, resolved once per binary and shared. */
static int symbolizer_binary_frames(struct symbolizer *s, struct binary *b, uint64_t vaddr,
				    bool is_return, struct sym_location *loc)
{
	const struct sym_location *done;
	int err;

	done = hashmap_get(&s->frame_cache, b, vaddr, is_return);
	if (done) {
		loc->frames = done->frames;
		loc->nr_frames = done->nr_frames;
		return 0;
	}
	s->scratch.nr = 0;
	err = binary_resolve(b, vaddr, is_return, s->opts.no_lines, s->strs, &s->scratch);
	if (!err)
		err = location_take_frames(s, loc);
	if (!err)
		err = cache_put(s, &s->frame_cache, b, vaddr, is_return, loc);
	return err;
}

/* A JIT's own symbol for an address outside any binary, if it wrote one. */
static int process_jit_frames(struct symbolizer *s, struct sym_process *p, uint64_t addr,
			      bool is_return, struct sym_location *loc)
{
	const char *name;
	uint64_t start;

	if (!p->jit_tried) {
		p->jit_tried = true;
		p->jit = perfmap_load(p->pid, &p->ids, s->strs);
		if (!p->jit && errno == ENOMEM)
			return -ENOMEM;
		/* none written (or in a root that is gone) is no refusal */
		if (!p->jit && errno != ENOENT && errno != ESRCH)
			p->jit_refused = -errno;
	}
	if (!p->jit || !perfmap_lookup(p->jit, addr - is_return, &name, &start))
		return 0;
	s->scratch.nr = 0;
	if (array_grow(&s->scratch, 1))
		return -ENOMEM;
	s->scratch.items[0] = (struct sym_frame){ .function = name, .offset = addr - start };
	s->scratch.nr = 1;
	return location_take_frames(s, loc);
}

static struct sym_location *location_new(struct symbolizer *s, uint64_t addr)
{
	struct sym_location *loc = cache_full(s) ? &s->spare : arena_alloc(s, sizeof(*loc));

	if (!loc)
		return NULL;
	memset(loc, 0, sizeof(*loc));
	loc->address = addr;
	loc->rel_address = addr;
	loc->nr_frames = 1;
	loc->frames = &s->unknown;
	return loc;
}

/*
 * Fill in @loc from @p's binary or JIT map. On entry @loc->rel_address is the
 * file offset in @loc's mapping; it becomes the ELF address if there is one.
 */
static int symbolizer_resolve_user(struct symbolizer *s, struct sym_process *p,
				   struct sym_location *loc, bool is_return)
{
	const struct proc_map *m = process_find_map(p, loc->address);
	uint64_t vaddr;

	if (!m || !m->bin)
		return process_jit_frames(s, p, loc->address, is_return, loc);
	if (!binary_file_to_vaddr(m->bin, loc->rel_address, &vaddr))
		return 0;
	loc->rel_address = vaddr;
	return symbolizer_binary_frames(s, m->bin, vaddr, is_return, loc);
}

const struct sym_location *symbolizer_user(struct symbolizer *s, struct sym_process *p,
					   uint64_t addr, bool is_return)
{
	/* without a snapshot every address is unknown; cache those apart */
	const void *key = p ? (const void *)p : &s->procs;
	const struct proc_map *m;
	struct sym_location *loc;

	loc = hashmap_get(&s->loc_cache, key, addr, is_return);
	if (loc)
		return loc;
	loc = location_new(s, addr);
	if (!loc)
		goto nomem;
	m = p ? process_find_map(p, addr) : NULL;
	if (m) {
		/* for MODULE+0xOFFSET when nothing better is known */
		loc->map = &m->map;
		loc->rel_address = addr - m->map.start + m->map.offset;
	}
	if (p && symbolizer_resolve_user(s, p, loc, is_return))
		goto nomem;
	if (cache_put(s, &s->loc_cache, key, addr, is_return, loc))
		goto nomem;
	return loc;
nomem:
	errno = ENOMEM;
	return NULL;
}

static int symbolizer_load_kernel(struct symbolizer *s)
{
	const char *path = s->opts.kallsyms_path ? s->opts.kallsyms_path : KALLSYMS_PATH;
	const char *modules = s->opts.kallsyms_path ? NULL : MODULES_PATH;
	int err;

	if (s->ksyms_loaded)
		return 0;
	err = kallsyms_load(&s->ksyms, s->opts.no_kernel ? NULL : path, modules, s->strs);
	if (err)
		return err;
	s->ksyms_loaded = true;
	return 0;
}

void symbolizer_kernel_unload(struct symbolizer *s)
{
	struct sym_mapping *maps;

	if (!s->ksyms_loaded || array_grow(&s->kmaps_unloaded, s->kmaps_unloaded.nr + 1))
		return;	/* without room to keep the mappings, the table stays */
	maps = kallsyms_release_keep_maps(&s->ksyms);
	if (maps)
		s->kmaps_unloaded.items[s->kmaps_unloaded.nr++] = maps;
	s->ksyms_loaded = false;
}

const struct sym_location *symbolizer_kernel(struct symbolizer *s, uint64_t addr,
					     bool is_return)
{
	const struct sym_mapping *map;
	struct sym_location *loc;
	const char *name;
	uint64_t start;

	loc = hashmap_get(&s->loc_cache, &s->ksyms, addr, is_return);
	if (loc)
		return loc;
	if (symbolizer_load_kernel(s))
		goto nomem;
	loc = location_new(s, addr);
	if (!loc)
		goto nomem;
	kallsyms_lookup(&s->ksyms, addr - is_return, &map, &name, &start);
	loc->map = map;
	if (map)
		loc->rel_address = addr - map->start + map->offset;
	if (name) {
		s->scratch.nr = 0;
		if (array_grow(&s->scratch, 1))
			goto nomem;
		s->scratch.items[0] = (struct sym_frame){ .offset = addr - start };
		s->scratch.items[0].function = strtab_intern(s->strs, name);
		s->scratch.nr = 1;
		if (!s->scratch.items[0].function || location_take_frames(s, loc))
			goto nomem;
	}
	if (cache_put(s, &s->loc_cache, &s->ksyms, addr, is_return, loc))
		goto nomem;
	return loc;
nomem:
	errno = ENOMEM;
	return NULL;
}

/*
 * Room for one more unwinder: past SYM_MAX_UNWINDERS, the least recently
 * used one is trimmed (its process unwinds again by building it anew).
 * false: out of memory.
 */
static bool unwinder_room(struct symbolizer *s)
{
	struct sym_process *least = NULL;
	size_t i;

	if (s->unwinding.nr >= SYM_MAX_UNWINDERS) {
		for (i = 0; i < s->unwinding.nr; i++)
			if (!least || s->unwinding.items[i]->unw_used < least->unw_used)
				least = s->unwinding.items[i];
		sym_process_trim(least);
	}
	return !array_grow(&s->unwinding, s->unwinding.nr + 1);
}

static struct unwinder *process_unwinder(struct symbolizer *s, struct sym_process *p)
{
	struct unwind_module *mods;
	size_t i;

	p->unw_used = ++s->unwind_clock;
	if (p->unw_tried)
		return p->unw;
	if (!unwinder_room(s))
		return NULL;
	p->unw_tried = true;
	mods = calloc(p->maps.nr + 1, sizeof(*mods));
	if (!mods)
		return NULL;
	for (i = 0; i < p->maps.nr; i++) {
		const struct proc_map *m = &p->maps.items[i];
		const char *path = m->map.path;

		mods[i] = (struct unwind_module){
			.path = path, .fd = -1, .start = m->map.start, .limit = m->map.limit,
			.offset = m->map.offset,
			.jit = !strncmp(path, "[anon", 5) || !strncmp(path, "/memfd:", 7),
		};
		/* a file libdwfl refused once is counted once, in the snapshot */
		if (m->bin && binary_fd(m->bin) >= 0 && !binary_refused(m->bin))
			mods[i].fd = binary_fd(m->bin);
	}
	p->unw = unwinder_new(p->pid, mods, p->maps.nr);
	free(mods);
	if (p->unw) {
		p->owner = s;
		s->unwinding.items[s->unwinding.nr++] = p;
	}
	return p->unw;
}

size_t sym_process_modules_refused(const struct sym_process *p)
{
	return p->modules_refused + (p->unw ? unwinder_nr_refused(p->unw) : p->unw_refused);
}

int sym_process_perfmap_refused(const struct sym_process *p)
{
	return p->jit_refused;
}

void sym_process_trim(struct sym_process *p)
{
	struct symbolizer *s = p->owner;
	size_t i;

	if (!p->unw)
		return;
	for (i = 0; s && i < s->unwinding.nr; i++)
		if (s->unwinding.items[i] == p) {
			s->unwinding.items[i] = s->unwinding.items[--s->unwinding.nr];
			break;
		}
	p->owner = NULL;
	p->unw_refused = unwinder_nr_refused(p->unw);
	unwinder_free(p->unw);
	p->unw = NULL;
	p->unw_tried = false;
}

void symbolizer_trim_unwinders(struct symbolizer *s)
{
	while (s->unwinding.nr)
		sym_process_trim(s->unwinding.items[s->unwinding.nr - 1]);
}

bool sym_process_has_unwinder(const struct sym_process *p)
{
	return p->unw != NULL;
}

int symbolizer_unwind(struct symbolizer *s, struct sym_process *p,
		      const struct sym_unwind_input *in, uint64_t *pcs, size_t max, size_t *nr,
		      enum sym_unwind_status *status)
{
	struct unwinder *u = process_unwinder(s, p);

	*nr = 0;
	*status = SYM_UNWIND_NO_UNWIND_INFO;
	if (!u)
		return errno ? -errno : -ENOENT;
	return unwinder_run(u, in, pcs, max, nr, status);
}

int sym_location_fallback_name(const struct sym_location *loc, char *buf, size_t size)
{
	const char *path, *base;

	if (!loc || !loc->map)
		return snprintf(buf, size, "[unknown]");
	path = loc->map->path;
	base = path[0] == '/' ? strrchr(path, '/') + 1 : path;
	return snprintf(buf, size, "%s+0x%" PRIx64, base, loc->rel_address);
}

const struct sym_location *symbolizer_file(struct symbolizer *s, const char *path,
					   uint64_t vaddr)
{
	struct sym_location *loc;
	struct binary *b;
	int fd;

	/* the cache compares pointers: intern; keyed (path, 0, 1), which no
	 * mapped file uses ((path, dev, 0) or (NULL, dev, inode)) */
	path = strtab_intern(s->strs, path);
	if (!path) {
		errno = ENOMEM;
		return NULL;
	}
	b = hashmap_get(&s->bin_cache, path, 0, 1);
	if (!b) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return NULL;
		b = binary_new(fd, path, s->debuginfo, s->strs);
		if (!b || symbolizer_keep_binary(s, &b) ||
		    hashmap_put(&s->bin_cache, path, 0, 1, b)) {
			errno = ENOMEM;
			return NULL;
		}
	}
	loc = location_new(s, vaddr);
	if (!loc || symbolizer_binary_frames(s, b, vaddr, false, loc)) {
		errno = ENOMEM;
		return NULL;
	}
	return loc;
}
