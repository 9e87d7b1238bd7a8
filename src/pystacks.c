// SPDX-License-Identifier: GPL-2.0-only
/*
 * Python frames of a recording (pystacks.h). Code objects are read from the
 * process when a sample first names them, so a process that exits later still
 * has its names; a (code object, instruction) pair is turned into a frame once.
 * An address reused by a new code object keeps the first one's name: code
 * objects of functions live as long as their module, so servers rarely see it.
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

struct pycode_entry {
	bool ok;
	const char *name, *file;	/* interned */
	uint32_t first_line;
	struct py_code code;
};

struct pyproc {
	int pid;
	uint32_t gen;
	struct py_interp interp;	/* status NONE until found */
	uint64_t next_probe_ns, probe_delay_ns;
	uint64_t first_probe_ns;
	struct hashmap codes;		/* (NULL, code address, 0) -> struct pycode_entry */
	struct { struct pycode_entry **items; size_t nr, alloc; } entries;
	uint64_t walks[LP_PY_WALK_NR];	/* samples of this process by how the walk ended */
	uint64_t unnamed;		/* frames whose code object could not be read */
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

static struct pyproc *pyproc_get(struct pystacks *ps, int pid, uint32_t gen, bool add)
{
	struct pyproc *pp = hashmap_get(&ps->procs, NULL, (uint32_t)pid, gen);

	if (pp || !add)
		return pp;
	pp = calloc(1, sizeof(*pp));
	if (!pp || array_grow(&ps->list, ps->list.nr + 1) ||
	    hashmap_put(&ps->procs, NULL, (uint32_t)pid, gen, pp)) {
		free(pp);
		return NULL;
	}
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

int pystacks_known(struct pystacks *ps, int pid, uint32_t gen, struct lp_py_proc *out)
{
	struct pyproc *pp = pyproc_get(ps, pid, gen, false);

	return pp && pp->interp.status == PY_STATUS_OK && bpf_view(&pp->interp, out);
}

void pystacks_prepare(struct pystacks *ps, const char *path)
{
	int err = py_finder_prepare(ps->finder, path);

	if (err)
		pr_debug("%s: %s", path, strerror(-err));
}

/* The code object at @addr of @pp, read on first use; NULL on ENOMEM. */
static struct pycode_entry *code_entry(struct pystacks *ps, struct pyproc *pp, uint64_t addr)
{
	struct pycode_entry *ce = hashmap_get(&pp->codes, NULL, addr, 0);

	if (ce)
		return ce;
	ce = calloc(1, sizeof(*ce));
	if (!ce || array_grow(&pp->entries, pp->entries.nr + 1) ||
	    hashmap_put(&pp->codes, NULL, addr, 0, ce)) {
		free(ce);
		return NULL;
	}
	pp->entries.items[pp->entries.nr++] = ce;
	if (!py_code_read_typed(&pp->interp.off, &pp->interp.types, py_read_process,
				(void *)(intptr_t)pp->pid, addr, &ce->code)) {
		ce->name = strtab_intern(ps->strs, ce->code.qualname);
		ce->file = strtab_intern(ps->strs, ce->code.filename);
		ce->first_line = ce->code.firstlineno;
		ce->ok = ce->name && ce->file;
	}
	return ce;
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
	uint64_t id = HASHMAP_TO_NUM(hashmap_get(&ps->pc_ids, pp, f->code, f->instr));
	struct pycode_entry *ce;
	uint32_t line = 0;

	if (id)
		return PYSTACKS_PC | (id - 1);
	ce = code_entry(ps, pp, f->code);
	if (!ce)
		return 0;
	if (ce->ok) {
		line = py_code_line(&ce->code, pp->interp.version,
				    py_code_offset(&pp->interp.off, f->code, f->instr));
		id = frame_id(ps, ce->name, ce->file, line, ce->first_line);
	} else {
		pp->unnamed++;
		id = frame_id(ps, strtab_intern(ps->strs, "[unknown]"), strtab_intern(ps->strs, ""),
			      0, 0);
	}
	if (!id || hashmap_put(&ps->pc_ids, pp, f->code, f->instr, HASHMAP_NUM(id)))
		return 0;
	return PYSTACKS_PC | (id - 1);
}

static bool in_eval(const struct pyproc *pp, uint64_t pc, bool is_return)
{
	uint64_t addr = pc & ~SYM_PC_EXACT;

	/* a return address may be one past the end of the call's function */
	if (is_return && !(pc & SYM_PC_EXACT))
		addr--;
	return addr >= pp->interp.eval_start && addr < pp->interp.eval_end;
}

/* Append Python frames [*j, the next eval loop's first] to @out; false on ENOMEM. */
static bool emit_run(struct pystacks *ps, struct pyproc *pp, const struct lp_ustack_sample *s,
		     size_t *j, uint64_t *out, size_t *n, size_t max)
{
	while (*j < s->py_nr && *j < LP_PY_MAX_FRAMES && *n < max) {
		uint64_t pc = frame_pc(ps, pp, &s->py[*j]);
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
		if (!err && pp->unnamed) {
			snprintf(key, sizeof(key), "proc.%d.python_frames_unnamed", pp->pid);
			err = add_meta_u64(p, key, pp->unnamed);
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
