// SPDX-License-Identifier: GPL-2.0-only
/*
 * Python frames of a recording (pystacks.h): the code objects the BPF walk
 * recorded, named, and their frames merged into the native stacks. Code
 * objects are named when a sample first shows them, from what the BPF walk
 * copied with the frame (the code object's members and its name string's
 * first bytes, as they were at the sample) and the process's memory (the
 * file name, the line table), so a process that exits later still has its
 * names and a code object freed since the sample (a module body after its
 * import) is still named. A (code object, name, instruction) triple is
 * turned into a frame once: an address reused by a code object with another
 * name is a new code object.
 */
#include "src/pystacks_priv.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/lib/hashmap.h"
#include "src/lib/strtab.h"
#include "src/lib/util.h"
#include "symbolize/pycode.h"
#include "symbolize/symbolize.h"

/* Reads of a code object that failed before it is taken for gone (code_entry). */
#define PY_CODE_READ_TRIES 16

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
	struct pyproc *pp = pystacks_proc_get(ps, pid, gen, false);
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
	struct pyproc *pp = pystacks_proc_get(ps, pid, gen, false);
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

size_t pystacks_await_pcs(struct pystacks *ps, int pid, uint32_t gen,
			  const struct pyasync_task *t, const char *task, uint64_t *out, size_t max)
{
	struct pyproc *pp = pystacks_proc_get(ps, pid, gen, false);
	char label[PY_CODE_MAX_NAME + 16];
	size_t i, n = 0;
	uint64_t id;

	if (!pp || pp->interp.status != PY_STATUS_OK)
		return 0;
	for (i = 0; i < t->nr && n + 1 < max; i++) {
		struct lp_py_frame f = { .code = t->frames[i].code, .instr = t->frames[i].instr };
		uint64_t pc = frame_pc(ps, pp, &f);

		if (!pc)
			return 0;
		out[n++] = pc;
	}
	snprintf(label, sizeof(label), "[task %s]", task);
	id = frame_id(ps, strtab_intern(ps->strs, label), strtab_intern(ps->strs, ""), 0, 0);
	if (!id || n >= max)
		return 0;
	out[n++] = PYSTACKS_PC | (id - 1);
	return n;
}

const struct py_interp *pystacks_interp(struct pystacks *ps, int pid, uint32_t gen)
{
	struct pyproc *pp = pystacks_proc_get(ps, pid, gen, false);

	return pp && pp->interp.status == PY_STATUS_OK ? &pp->interp : NULL;
}

const struct pyframe *pystacks_frame(const struct pystacks *ps, uint64_t pc)
{
	uint64_t id = pc & ~PYSTACKS_PC;

	if (!(pc & PYSTACKS_PC) || id >= ps->frames.nr)
		return NULL;
	return &ps->frames.items[id];
}
