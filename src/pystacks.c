// SPDX-License-Identifier: GPL-2.0-only
/*
 * Python processes of a recording (pystacks.h): each traced image's
 * interpreter looked for, again and again with a growing delay until found
 * (every millisecond while a python file is mapped without one), the view of
 * it the BPF walk reads (struct lp_py_proc, for the py_procs map), the
 * images that ran no Python forgotten when they exit, and what the profile's
 * metadata says of each. Naming the frames the walk recorded and merging
 * them into the native stacks is pystacks_frames.c's.
 */
#include "src/pystacks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/lib/hashmap.h"
#include "src/profile.h"
#include "src/pystacks_priv.h"
#include "src/lib/strtab.h"
#include "src/lib/util.h"
#include "symbolize/pycode.h"

#define PROBE_FIRST_DELAY_NS (5 * 1000 * 1000ULL)
#define PROBE_MAX_DELAY_NS (2 * NSEC_PER_SEC)
/* a python file mapped, no interpreter yet: how often, and for how long */
#define PROBE_PENDING_DELAY_NS (1000 * 1000ULL)
#define PROBE_PENDING_NS (10 * NSEC_PER_SEC)
/*
 * an interpreter whose GIL is not made yet (found before Py_Initialize
 * made it): a few reads of its memory, so soon and often
 */
#define GIL_FIRST_DELAY_NS (1000 * 1000ULL)
#define GIL_MAX_DELAY_NS (100 * 1000 * 1000ULL)

static const char *const walk_names[LP_PY_WALK_NR] = {
	[LP_PY_WALK_NONE] = "before_found",
	[LP_PY_WALK_OK] = "ok",
	[LP_PY_WALK_TRUNCATED] = "truncated",
	[LP_PY_WALK_NO_THREAD] = "no_thread",
	[LP_PY_WALK_READ_FAILED] = "read_failed",
};

static const char *const unnamed_names[PY_UNNAMED_NR] = {
	[PY_UNNAMED_EXITED] = "exited",
	[PY_UNNAMED_CHANGED] = "changed",
	[PY_UNNAMED_UNREADABLE] = "unreadable",
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

struct pyproc *pystacks_proc_get(struct pystacks *ps, int pid, uint32_t gen, bool add)
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

/*
 * The BPF view of the interpreter of @pp (with its GIL, when found); false
 * when its frame members lie too far apart to read at once.
 */
static bool bpf_view(const struct pyproc *pp, struct lp_py_proc *out)
{
	const struct py_interp *in = &pp->interp;
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
	if (pp->gil.addr) {
		out->gil = pp->gil.addr;
		out->gil_size = pp->gil.size;
		out->gil_locked = pp->gil.locked;
		out->gil_holder = pp->gil.holder;
	}
	return true;
}

/*
 * Look for the GIL of @pp, found walkable, when due: true when it was found
 * now (the py_procs map should get it).
 */
static bool gil_probe(struct pyproc *pp, uint64_t now)
{
	if (pp->gil.addr || (pp->gil_delay_ns && pp->gil_err != -EAGAIN) ||
	    now < pp->gil_next_ns)
		return false;
	pp->gil_err = py_gil_find(&pp->interp.off, pp->interp.runtime, py_read_process,
				  (void *)(intptr_t)pp->pid, &pp->gil);
	pp->gil_delay_ns = pp->gil_delay_ns ? pp->gil_delay_ns : GIL_FIRST_DELAY_NS;
	pp->gil_next_ns = now + pp->gil_delay_ns;
	if (pp->gil_delay_ns < GIL_MAX_DELAY_NS)
		pp->gil_delay_ns *= 2;
	if (pp->gil_err)
		memset(&pp->gil, 0, sizeof(pp->gil));
	else
		pr_debug("pid %d: the GIL at %#" PRIx64 ", %u bytes", pp->pid, pp->gil.addr,
			 pp->gil.size);
	return !pp->gil_err;
}

void pystacks_set_current(struct pystacks *ps, bool (*current)(void *arg, int pid, uint32_t gen),
			  void *arg)
{
	ps->current = current;
	ps->current_arg = arg;
}

/* Whether @pp is still its process's image; one replaced is never probed again. */
static bool image_current(struct pystacks *ps, struct pyproc *pp)
{
	if (!ps->current || ps->current(ps->current_arg, pp->pid, pp->gen))
		return true;
	memset(&pp->interp, 0, sizeof(pp->interp));
	pp->next_probe_ns = UINT64_MAX;
	return false;
}

int pystacks_probe(struct pystacks *ps, int pid, uint32_t gen, bool wait,
		   struct lp_py_proc *out)
{
	struct pyproc *pp = pystacks_proc_get(ps, pid, gen, true);
	uint64_t now = now_ns();
	int err;

	if (!pp)
		return -ENOMEM;
	/* walked already: only its GIL may be new */
	if (pp->interp.status == PY_STATUS_OK)
		return gil_probe(pp, now) && bpf_view(pp, out);
	if (pp->interp.status != PY_STATUS_NONE || now < pp->next_probe_ns)
		return 0;
	if (!pp->first_probe_ns)
		pp->first_probe_ns = now;
	if (!image_current(ps, pp))
		return 0;
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
	/* replaced while its maps were read: they were the next program's */
	if (!image_current(ps, pp))
		return 0;
	gil_probe(pp, now);
	if (!bpf_view(pp, out)) {
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
	const struct pyproc *pp = pystacks_proc_get(ps, pid, gen, false);

	return pp && pp->interp.status == PY_STATUS_OK && bpf_view(pp, out);
}

void pystacks_prepare(struct pystacks *ps, const char *path)
{
	int err = py_finder_prepare(ps->finder, path);

	if (err)
		pr_debug("%s: %s", path, strerror(-err));
}

/* What "proc.PID.python_gil" says: whether its GIL waits were seen, or why not. */
static const char *gil_state(const struct pyproc *pp)
{
	if (pp->gil.addr)
		return "found";
	switch (pp->gil_err) {
	case -EAGAIN:
		return "not found: not made yet";
	case -ENOENT:
		return "not found: no GIL offsets for this build";
	case -EINVAL:
		return "not found: it does not read as a GIL";
	default:
		return "not found: its memory is unreadable";
	}
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
		if (!err && in->status == PY_STATUS_OK) {
			snprintf(key, sizeof(key), "proc.%d.python_gil", pp->pid);
			err = profile_set_meta(p, key, gil_state(pp));
		}
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
