// SPDX-License-Identifier: GPL-2.0-only
/*
 * Python frames of a recording (pystacks.h). Code objects are named when a
 * sample first shows them, from what the BPF walk copied with the frame (the
 * code object's members and its name string's first bytes, as they were at
 * the sample) and the process's memory (the file name, the line table), so a
 * process that exits later still has its names and a code object freed
 * since the sample (a module body after its import) is still named. A
 * (code object, name, instruction) triple is turned into a frame once: an
 * address reused by a code object with another name is a new code object.
 */
#include "src/pystacks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/hashmap.h"
#include "src/profile.h"
#include "src/strtab.h"
#include "src/util.h"
#include "symbolize/pycode.h"
#include "symbolize/symbolize.h"

#define PROBE_FIRST_DELAY_NS (5 * 1000 * 1000ULL)
#define PROBE_MAX_DELAY_NS (2 * NSEC_PER_SEC)
/* a python file mapped, no interpreter yet: how often, and for how long */
#define PROBE_PENDING_DELAY_NS (1000 * 1000ULL)
#define PROBE_PENDING_NS (10 * NSEC_PER_SEC)

static const char *const walk_names[LP_PY_WALK_NR] = {
	[LP_PY_WALK_NONE] = "before_found",
	[LP_PY_WALK_OK] = "ok",
	[LP_PY_WALK_TRUNCATED] = "truncated",
	[LP_PY_WALK_NO_THREAD] = "no_thread",
	[LP_PY_WALK_READ_FAILED] = "read_failed",
};

/* Why a frame was not named: the read's error. */
enum py_unnamed {
	PY_UNNAMED_EXITED,	/* the process was gone when its names were read */
	PY_UNNAMED_CHANGED,	/* the memory no longer held that code object */
	PY_UNNAMED_UNREADABLE,	/* any other failed read */
	PY_UNNAMED_NR,
};

static const char *const unnamed_names[PY_UNNAMED_NR] = {
	[PY_UNNAMED_EXITED] = "exited",
	[PY_UNNAMED_CHANGED] = "changed",
	[PY_UNNAMED_UNREADABLE] = "unreadable",
};
/* Reads of a code object that failed before it is taken for gone (code_entry). */
#define PY_CODE_READ_TRIES 16

struct pycode_entry {
	bool ok;
	uint32_t tries;			/* reads so far */
	const char *name, *file;	/* interned */
	uint32_t first_line;
	int err;			/* why not ok */
	struct py_code code;
};

struct pyproc {
	int pid;
	uint32_t gen;
	struct py_interp interp;	/* status NONE until found */
	uint64_t next_probe_ns, probe_delay_ns;
	uint64_t first_probe_ns;
	struct hashmap codes;		/* (NULL, code address, code_key()) -> pycode_entry */
	struct hashmap files;		/* (NULL, co_filename address, 0) -> interned name */
	struct { struct pycode_entry **items; size_t nr, alloc; } entries;
	uint64_t walks[LP_PY_WALK_NR];	/* samples of this process by how the walk ended */
	uint64_t unnamed[PY_UNNAMED_NR];	/* frames not named, by why */
	size_t list_idx;		/* in pystacks.list */
};

struct pystacks {
	struct py_finder *finder;
	struct strtab *strs;
	struct hashmap procs;		/* (NULL, pid, gen) -> struct pyproc */
	struct { struct pyproc **items; size_t nr, alloc; } list;
	struct hashmap frame_ids;	/* (name, file, line << 32 | first) -> id + 1 */
	struct hashmap pc_ids;		/* (proc, code, instr) -> id + 1 */
	struct { struct pyframe *items; size_t nr, alloc; } frames;
};

struct pystacks *pystacks_new(const char *const *debug_dirs, size_t nr)
{
	struct pystacks *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->finder = py_finder_new(debug_dirs, nr);
	ps->strs = strtab_new();
	if (!ps->finder || !ps->strs) {
		pystacks_free(ps);
		errno = ENOMEM;
		return NULL;
	}
	return ps;
}

static void pyproc_free(struct pyproc *pp)
{
	size_t i;

	for (i = 0; i < pp->entries.nr; i++) {
		py_code_release(&pp->entries.items[i]->code);
		free(pp->entries.items[i]);
	}
	free(pp->entries.items);
	hashmap_release(&pp->codes);
	hashmap_release(&pp->files);
	free(pp);
}

void pystacks_free(struct pystacks *ps)
{
	size_t i;

	if (!ps)
		return;
	for (i = 0; i < ps->list.nr; i++)
		pyproc_free(ps->list.items[i]);
	free(ps->list.items);
	hashmap_release(&ps->procs);
	hashmap_release(&ps->frame_ids);
	hashmap_release(&ps->pc_ids);
	free(ps->frames.items);
	py_finder_free(ps->finder);
	strtab_free(ps->strs);
	free(ps);
}

/* What the procs map holds for an image forgotten by pystacks_exited. */
static struct pyproc forgotten;

static struct pyproc *pyproc_get(struct pystacks *ps, int pid, uint32_t gen, bool add)
{
	struct pyproc *pp = hashmap_get(&ps->procs, NULL, (uint32_t)pid, gen);

	if (pp == &forgotten)
		pp = NULL;	/* a later process with the same pid is another */
	if (pp || !add)
		return pp;
	pp = calloc(1, sizeof(*pp));
	if (!pp || array_grow(&ps->list, ps->list.nr + 1) ||
	    hashmap_put(&ps->procs, NULL, (uint32_t)pid, gen, pp)) {
		free(pp);
		return NULL;
	}
	pp->list_idx = ps->list.nr;
	ps->list.items[ps->list.nr++] = pp;
	pp->pid = pid;
	pp->gen = gen;
	pp->probe_delay_ns = PROBE_FIRST_DELAY_NS;
	return pp;
}

static int32_t max4(int32_t a, int32_t b, int32_t c, int32_t d)
{
	int32_t m = a > b ? a : b;

	m = m > c ? m : c;
	return m > d ? m : d;
}

/*
 * The code object members the walk copies with each frame (struct
 * lp_py_code_ref), in one read from the first to the last; none when they
 * lie too far apart.
 */
static void code_view(const struct py_offsets *o, struct lp_py_proc *out)
{
	int32_t offs[] = {
		o->object_type, o->code_qualname >= 0 ? o->code_qualname : o->code_name,
		o->code_filename, o->code_linetable, o->code_firstlineno,
	};
	int32_t lo = offs[0], hi = offs[0];
	size_t i;

	for (i = 1; i < ARRAY_SIZE(offs); i++) {
		lo = offs[i] < lo ? offs[i] : lo;
		hi = offs[i] > hi ? offs[i] : hi;
	}
	if (lo < 0 || hi + 8 - lo > LP_PY_FRAME_READ)
		return;
	out->code_first = lo;
	out->code_read = hi + 8 - lo;
	out->code_type = offs[0] - lo;
	out->code_name = offs[1] - lo;
	out->code_file = offs[2] - lo;
	out->code_table = offs[3] - lo;
	out->code_firstlineno = offs[4] - lo;
	out->name_raw = o->unicode_length;
	if (o->unicode_length > 0 && o->unicode_ascii_size > o->unicode_length &&
	    o->unicode_state > o->unicode_length &&
	    o->unicode_state - o->unicode_length < LP_PY_FILE_HDR)
		out->str_data = o->unicode_ascii_size - o->unicode_length;
}

/* The BPF view of @in; false when its frame members lie too far apart to read at once. */
static bool bpf_view(const struct py_interp *in, struct lp_py_proc *out)
{
	const struct py_offsets *o = &in->off;
	uint32_t mm = PY_MM(in->version);
	int32_t last;

	memset(out, 0, sizeof(*out));
	out->runtime = in->runtime;
	if (mm <= PY_VERSION_OF(3, 10, 0)) {
		out->model = LP_PY_FRAME_OBJECT;
		out->entry = LP_PY_ENTRY_ALL;
		out->tstate_frame = o->tstate_frame;
	} else if (mm <= PY_VERSION_OF(3, 12, 0)) {
		out->model = LP_PY_CFRAME;
		out->tstate_frame = o->tstate_cframe;
		out->cframe_current_frame = o->cframe_current_frame;
	} else {
		out->model = LP_PY_CURRENT_FRAME;
		out->tstate_frame = o->tstate_frame;
	}
	if (mm == PY_VERSION_OF(3, 11, 0)) {
		out->entry = LP_PY_ENTRY_FLAG;
		out->frame_flag = o->frame_is_entry;
	} else if (mm >= PY_VERSION_OF(3, 12, 0)) {
		out->entry = LP_PY_ENTRY_SHIM;
		out->frame_flag = o->frame_owner;
	}
	out->match_native = mm >= PY_VERSION_OF(3, 11, 0);
	out->tstate_id = out->match_native ? o->tstate_native_thread_id : o->tstate_thread_id;
	out->runtime_interp_head = o->runtime_interp_head;
	out->interp_threads_head = o->interp_threads_head;
	out->tstate_next = o->tstate_next;
	out->frame_back = o->frame_back;
	out->frame_code = o->frame_code;
	out->frame_instr = o->frame_instr;
	last = max4(o->frame_back, o->frame_code, o->frame_instr, (int32_t)out->frame_flag);
	if (last < 0 || last + 8 > LP_PY_FRAME_READ)
		return false;
	out->frame_read = last + 8;
	code_view(o, out);
	out->code_tag = (uint32_t)~py_code_ref_mask(in->version);
	return true;
}

int pystacks_probe(struct pystacks *ps, int pid, uint32_t gen, bool wait,
		   struct lp_py_proc *out)
{
	struct pyproc *pp = pyproc_get(ps, pid, gen, true);
	uint64_t now = now_ns();
	int err;

	if (!pp)
		return -ENOMEM;
	if (pp->interp.status != PY_STATUS_NONE || now < pp->next_probe_ns)
		return 0;
	if (!pp->first_probe_ns)
		pp->first_probe_ns = now;
	err = py_finder_find(ps->finder, pid, wait, &pp->interp);
	/*
	 * A process that maps a python file is about to be one: look again
	 * within a millisecond for its first seconds, so a loader slowed by
	 * a busy machine costs no more samples than it takes. The others
	 * back off, doubling up to every 2 s.
	 */
	if (pp->interp.pending && now - pp->first_probe_ns < PROBE_PENDING_NS) {
		pp->next_probe_ns = now + PROBE_PENDING_DELAY_NS;
	} else {
		pp->next_probe_ns = now + pp->probe_delay_ns;
		if (pp->probe_delay_ns < PROBE_MAX_DELAY_NS)
			pp->probe_delay_ns *= 2;
	}
	if (err)
		return err;
	if (pp->interp.status != PY_STATUS_OK)
		return 0;
	if (!bpf_view(&pp->interp, out)) {
		pp->interp.status = PY_STATUS_NO_OFFSETS;
		snprintf(pp->interp.why, sizeof(pp->interp.why),
			 "frame members beyond %d bytes", LP_PY_FRAME_READ);
		return 0;
	}
	pr_debug("pid %d: Python %u.%u.%u in %s, offsets from %s", pid,
		 PY_MAJOR(pp->interp.version), PY_MINOR(pp->interp.version),
		 PY_MICRO(pp->interp.version), pp->interp.path,
		 pyoffsets_source_name(pp->interp.source));
	return 1;
}

void pystacks_exited(struct pystacks *ps, int pid, uint32_t last_gen)
{
	struct pyproc *pp, *last;
	uint32_t gen;
	uint64_t k, walks;

	/* one generation per exec; one never probed has none */
	for (gen = 0; gen <= last_gen; gen++) {
		pp = hashmap_get(&ps->procs, NULL, (uint32_t)pid, gen);
		if (!pp || pp == &forgotten)
			continue;
		for (walks = 0, k = 0; k < LP_PY_WALK_NR; k++)
			walks += pp->walks[k];
		if (pp->interp.status != PY_STATUS_NONE || walks || pp->entries.nr)
			continue;	/* the profile tells of it, or its frames were named */
		if (hashmap_put(&ps->procs, NULL, (uint32_t)pid, gen, &forgotten))
			continue;
		last = ps->list.items[--ps->list.nr];
		ps->list.items[pp->list_idx] = last;
		last->list_idx = pp->list_idx;
		pyproc_free(pp);
	}
}

bool pystacks_walkable(struct pystacks *ps, int pid, uint32_t gen, struct lp_py_proc *out)
{
	const struct pyproc *pp = pyproc_get(ps, pid, gen, false);

	return pp && pp->interp.status == PY_STATUS_OK && bpf_view(&pp->interp, out);
}

void pystacks_prepare(struct pystacks *ps, const char *path)
{
	int err = py_finder_prepare(ps->finder, path);

	if (err)
		pr_debug("%s: %s", path, strerror(-err));
}

/*
 * A code object is known by its address and, when the walk copied them, its
 * name and file strings' addresses and first line: a code object freed and
 * another made at the same address (exec'ed code, a module body) is a new
 * one when one of them differs. The name alone did not tell module bodies
 * apart ("<module>" is interned): a 3.8 script's was named as site.py's.
 */
static uint64_t code_key(const struct lp_py_frame *f)
{
	return f->ref.name * 0x9e3779b97f4a7c15ULL ^ f->ref.file * 0xc2b2ae3d27d4eb4fULL ^
	       (uint64_t)f->ref.firstlineno << 40;
}

static uint64_t pc_key(const struct lp_py_frame *f)
{
	return f->instr ^ code_key(f);
}

/*
 * Does file name @file, read from memory at the address the sample's copy
 * holds, agree with that copy (@copied: the name, or "..." and its tail)?
 */
static bool file_agrees(const char *file, const char *copied)
{
	return file && str_has_suffix(file, strncmp(copied, "...", 3) ? copied : copied + 3);
}

/*
 * A frame whose strings could not be read (the process exited before its
 * stack was read, or its file name string was freed with its code object):
 * its name from the copy taken at the sample, when the copy is of a code
 * object; its file from the copy too, unless another code object of the
 * same file read earlier has all of it (its name ends as the copy's does);
 * else from that one, else "?"; no line.
 */
static void code_name_only(struct pystacks *ps, struct pyproc *pp, struct pycode_entry *ce,
			   const struct py_code_ref *r)
{
	const char *file = r->file ? hashmap_get(&pp->files, NULL, r->file, 0) : NULL;
	char *name, *copied = NULL;

	/* the copy is of a code object only if its type, copied with it, says so */
	if (!r->name || (pp->interp.types.code && r->type != pp->interp.types.code) ||
	    py_code_name_from_ref(&pp->interp.off, r, &name))
		return;
	/*
	 * The string at that address when it was last read is that file only
	 * if its copied tail agrees: a freed one's address is soon another's
	 * (3.8: a script's module body was "<module> (site.py)").
	 */
	if (!py_code_file_from_ref(&pp->interp.off, r, &copied) && !file_agrees(file, copied))
		file = strtab_intern(ps->strs, copied);
	free(copied);
	ce->name = strtab_intern(ps->strs, name);
	ce->file = file ? file : strtab_intern(ps->strs, "?");
	ce->first_line = r->firstlineno;
	ce->ok = ce->name && ce->file;
	if (ce->ok)
		ce->err = 0;
	free(name);
}

/*
 * Name @ce from the members the walk copied (@ref), else from the code
 * object's memory now: the copy is of the moment of the sample, when a code
 * object that is freed soon after (a module body) was still alive.
 */
static void code_read(struct pystacks *ps, struct pyproc *pp, struct pycode_entry *ce,
		      uint64_t addr, const struct lp_py_code_ref *ref)
{
	struct py_code_ref r = {
		.type = ref->type, .name = ref->name, .file = ref->file, .table = ref->table,
		.firstlineno = ref->firstlineno, .name_raw = ref->name_raw,
		.name_raw_len = sizeof(ref->name_raw), .file_hdr = ref->file_hdr,
		.file_hdr_len = sizeof(ref->file_hdr), .file_tail = ref->file_tail,
		.file_tail_len = sizeof(ref->file_tail),
	};
	void *arg = (void *)(intptr_t)pp->pid;
	char *copied = NULL;

	ce->err = -EINVAL;
	if (r.name)
		ce->err = py_code_read_ref(&pp->interp.off, &pp->interp.types, py_read_process,
					   arg, &r, &ce->code);
	/*
	 * The code object's memory now, only without a copy: with one, what
	 * lies at its address now is either the same code object (whose
	 * strings failed just the same) or another one at a reused address.
	 */
	if (ce->err && !r.name)
		ce->err = py_code_read_typed(&pp->interp.off, &pp->interp.types, py_read_process,
					     arg, addr, &ce->code);
	if (ce->err) {
		code_name_only(ps, pp, ce, &r);
		return;
	}
	ce->name = strtab_intern(ps->strs, ce->code.qualname);
	/* the file string read now is another one if the copy's differs */
	if (!py_code_file_from_ref(&pp->interp.off, &r, &copied) &&
	    !file_agrees(ce->code.filename, copied))
		ce->file = strtab_intern(ps->strs, copied);
	else
		ce->file = strtab_intern(ps->strs, ce->code.filename);
	free(copied);
	ce->first_line = ce->code.firstlineno;
	ce->ok = ce->name && ce->file;
	if (!ce->ok)
		ce->err = -ENOMEM;
	/* best effort: a file name known for the frames read after the process is gone */
	else if (r.file && !hashmap_get(&pp->files, NULL, r.file, 0))
		hashmap_put(&pp->files, NULL, r.file, 0, (void *)ce->file);
}

/*
 * The code object of frame @f of @pp, read on first use; one that could not
 * be named is tried again with each new sample (its copy may be readable).
 * NULL on ENOMEM.
 */
static struct pycode_entry *code_entry(struct pystacks *ps, struct pyproc *pp,
				       const struct lp_py_frame *f)
{
	struct pycode_entry *ce = hashmap_get(&pp->codes, NULL, f->code, code_key(f));

	if (ce) {
		if (!ce->ok && ce->tries++ < PY_CODE_READ_TRIES)
			code_read(ps, pp, ce, f->code, &f->ref);
		return ce;
	}
	ce = calloc(1, sizeof(*ce));
	if (!ce || array_grow(&pp->entries, pp->entries.nr + 1) ||
	    hashmap_put(&pp->codes, NULL, f->code, code_key(f), ce)) {
		free(ce);
		return NULL;
	}
	pp->entries.items[pp->entries.nr++] = ce;
	code_read(ps, pp, ce, f->code, &f->ref);
	return ce;
}

static enum py_unnamed unnamed_reason(int err)
{
	if (err == -ESRCH)
		return PY_UNNAMED_EXITED;
	return err == -EINVAL ? PY_UNNAMED_CHANGED : PY_UNNAMED_UNREADABLE;
}

/* The id of frame {name, file, line, first}, added if new; 0 on ENOMEM. */
static uint64_t frame_id(struct pystacks *ps, const char *name, const char *file, uint32_t line,
			 uint32_t first)
{
	uint64_t b = (uint64_t)line << 32 | first;
	uint64_t id = HASHMAP_TO_NUM(hashmap_get(&ps->frame_ids, name, (uintptr_t)file, b));

	if (id)
		return id;
	if (array_grow(&ps->frames, ps->frames.nr + 1))
		return 0;
	ps->frames.items[ps->frames.nr] = (struct pyframe){
		.name = name, .file = file, .line = line, .first_line = first,
	};
	id = ++ps->frames.nr;
	return hashmap_put(&ps->frame_ids, name, (uintptr_t)file, b, HASHMAP_NUM(id)) ? 0 : id;
}

/* The merged pc of Python frame @f of @pp; 0 on ENOMEM. */
static uint64_t frame_pc(struct pystacks *ps, struct pyproc *pp, const struct lp_py_frame *f)
{
	uint64_t id = HASHMAP_TO_NUM(hashmap_get(&ps->pc_ids, pp, f->code, pc_key(f)));
	struct pycode_entry *ce;
	uint32_t line = 0;

	if (id)
		return PYSTACKS_PC | (id - 1);
	ce = code_entry(ps, pp, f);
	if (!ce)
		return 0;
	if (!ce->ok) {
		/* not cached: a later sample's copy may name it */
		pp->unnamed[unnamed_reason(ce->err)]++;
		id = frame_id(ps, strtab_intern(ps->strs, "[unknown]"), strtab_intern(ps->strs, ""),
			      0, 0);
		return id ? PYSTACKS_PC | (id - 1) : 0;
	}
	line = py_code_line(&ce->code, pp->interp.version,
			    py_code_offset(&pp->interp.off, f->code, f->instr));
	id = frame_id(ps, ce->name, ce->file, line, ce->first_line);
	if (!id || hashmap_put(&ps->pc_ids, pp, f->code, pc_key(f), HASHMAP_NUM(id)))
		return 0;
	return PYSTACKS_PC | (id - 1);
}

/* The Python frames of @s, after its stack (bpf/latprof.h; src/collect/events.c checked the size). */
static const struct lp_py_frame *py_frames(const struct lp_ustack_sample *s)
{
	return (const struct lp_py_frame *)(s->stack + LP_USTACK_PY_OFF(s));
}

void pystacks_name(struct pystacks *ps, int pid, uint32_t gen, const struct lp_ustack_sample *s)
{
	struct pyproc *pp = pyproc_get(ps, pid, gen, false);
	uint32_t i;

	if (!pp || pp->interp.status != PY_STATUS_OK)
		return;
	for (i = 0; i < s->py_nr && i < LP_PY_MAX_FRAMES; i++)
		if (!hashmap_get(&ps->pc_ids, pp, py_frames(s)[i].code, pc_key(&py_frames(s)[i])))
			code_entry(ps, pp, &py_frames(s)[i]);
}

static bool in_eval(const struct pyproc *pp, uint64_t pc, bool is_return)
{
	uint64_t addr = pc & ~SYM_PC_EXACT;

	/* a return address may be one past the end of the call's function */
	if (is_return && !(pc & SYM_PC_EXACT))
		addr--;
	return (addr >= pp->interp.eval_start && addr < pp->interp.eval_end) ||
	       (addr >= pp->interp.eval_cold_start && addr < pp->interp.eval_cold_end);
}

/* Append Python frames [*j, the next eval loop's first] to @out; false on ENOMEM. */
static bool emit_run(struct pystacks *ps, struct pyproc *pp, const struct lp_ustack_sample *s,
		     size_t *j, uint64_t *out, size_t *n, size_t max)
{
	while (*j < s->py_nr && *j < LP_PY_MAX_FRAMES && *n < max) {
		uint64_t pc = frame_pc(ps, pp, &py_frames(s)[*j]);
		bool last = s->py_entry >> *j & 1;

		if (!pc)
			return false;
		out[(*n)++] = pc;
		(*j)++;
		if (last)
			break;
	}
	return true;
}

size_t pystacks_merge(struct pystacks *ps, int pid, uint32_t gen,
		      const struct lp_ustack_sample *s, const uint64_t *pcs, size_t nr,
		      uint64_t *out, size_t max)
{
	struct pyproc *pp = pyproc_get(ps, pid, gen, false);
	size_t i, j = 0, n = 0;

	if (pp && s->py_walk < LP_PY_WALK_NR)
		pp->walks[s->py_walk]++;
	if (!pp || pp->interp.status != PY_STATUS_OK || !s->py_nr) {
		for (i = 0; i < nr && n < max; i++)
			out[n++] = pcs[i];
		return n;
	}
	for (i = 0; i < nr && n < max; i++) {
		if (j < s->py_nr && in_eval(pp, pcs[i], i > 0)) {
			if (!emit_run(ps, pp, s, &j, out, &n, max))
				return 0;
			continue;
		}
		out[n++] = pcs[i];
	}
	/* the native unwind stopped early: the outer Python frames go at the root */
	if (j < s->py_nr)
		while (j < s->py_nr && emit_run(ps, pp, s, &j, out, &n, max) && n < max)
			;
	return n;
}

const struct pyframe *pystacks_frame(const struct pystacks *ps, uint64_t pc)
{
	uint64_t id = pc & ~PYSTACKS_PC;

	if (!(pc & PYSTACKS_PC) || id >= ps->frames.nr)
		return NULL;
	return &ps->frames.items[id];
}

static int add_meta_u64(struct profile *p, const char *key, uint64_t v)
{
	return profile_set_meta_u64(p, key, profile_get_meta_u64(p, key) + v);
}

int pystacks_store(const struct pystacks *ps, struct profile *p)
{
	uint64_t found = 0, unsupported = 0;
	char key[96], val[400];
	size_t i, k;
	int err = 0;

	for (i = 0; !err && i < ps->list.nr; i++) {
		const struct pyproc *pp = ps->list.items[i];
		const struct py_interp *in = &pp->interp;

		if (in->status == PY_STATUS_NONE)
			continue;
		found++;
		snprintf(key, sizeof(key), "proc.%d.python", pp->pid);
		if (in->status == PY_STATUS_OK) {
			char micro[16] = "";

			if (in->micro_known)
				snprintf(micro, sizeof(micro), ".%u", PY_MICRO(in->version));
			snprintf(val, sizeof(val), "%u.%u%s %s (offsets: %s)", PY_MAJOR(in->version),
				 PY_MINOR(in->version), micro, in->path,
				 in->offsets[0] ? in->offsets : pyoffsets_source_name(in->source));
		} else {
			unsupported++;
			snprintf(val, sizeof(val), "unsupported: %s", in->why);
		}
		err = profile_set_meta(p, key, val);
		for (k = LP_PY_WALK_NONE; !err && k < LP_PY_WALK_NR && in->status == PY_STATUS_OK;
		     k++) {
			snprintf(key, sizeof(key), "proc.%d.python_walk_%s", pp->pid, walk_names[k]);
			err = add_meta_u64(p, key, pp->walks[k]);
		}
		for (k = 0; !err && k < PY_UNNAMED_NR; k++) {
			if (!pp->unnamed[k])
				continue;
			snprintf(key, sizeof(key), "proc.%d.python_frames_unnamed", pp->pid);
			err = add_meta_u64(p, key, pp->unnamed[k]);
			snprintf(key, sizeof(key), "proc.%d.python_frames_unnamed_%s", pp->pid,
				 unnamed_names[k]);
			if (!err)
				err = add_meta_u64(p, key, pp->unnamed[k]);
		}
		if (!err && in->status != PY_STATUS_OK) {
			uint64_t samples = 0;

			for (k = 0; k < LP_PY_WALK_NR; k++)
				samples += pp->walks[k];
			snprintf(key, sizeof(key), "proc.%d.python_samples_without_frames", pp->pid);
			err = add_meta_u64(p, key, samples);
		}
	}
	if (!err && found)
		err = profile_set_meta_u64(p, "python.processes", found);
	if (!err && found)
		err = profile_set_meta_u64(p, "python.unsupported", unsupported);
	return err;
}
