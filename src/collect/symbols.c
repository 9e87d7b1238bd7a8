// SPDX-License-Identifier: GPL-2.0-only
/*
 * The symbolizer's answers as the profile's mappings, locations and
 * functions: the frames of a stack (kernel, user, Python) turned into
 * profile location ids for the builder (build.c).
 */
#include "src/collect/priv.h"

/* The profile mapping of a symbolizer mapping, added on first use; 0 = none. */
static uint64_t builder_mapping(struct builder *b, const struct sym_mapping *m)
{
	struct profile_mapping pm = { 0 };
	char *file = NULL;
	uint64_t id;

	if (!m)
		return 0;
	id = HASHMAP_TO_NUM(hashmap_get(&b->mappings, m, 0, 0));
	if (id)
		return id;
	pm.start = m->start;
	pm.limit = m->limit;
	pm.offset = m->offset;
	pm.file = m->path;
	pm.build_id = m->build_id;
	pm.has_functions = pm.has_filenames = pm.has_line_numbers = true;
	/* the symbolizer names modules "[mod]"; the profile "[kernel.kallsyms]/mod" */
	if (m->kernel && strcmp(m->path, PROFILE_KERNEL_MAPPING)) {
		if (asprintf(&file, "%s/%.*s", PROFILE_KERNEL_MAPPING,
			     (int)strcspn(m->path + 1, "]"), m->path + 1) < 0)
			return 0;
		pm.file = file;
	}
	id = profile_add_mapping(b->p, &pm);
	free(file);
	if (!id || hashmap_put(&b->mappings, m, 0, 0, HASHMAP_NUM(id)))
		return 0;
	return id;
}

static uint64_t builder_location(struct builder *b, const struct sym_location *loc)
{
	struct profile_line lines[32];
	uint64_t map = builder_mapping(b, loc->map), id;
	size_t i, n = loc->nr_frames < ARRAY_SIZE(lines) ? loc->nr_frames : ARRAY_SIZE(lines);
	char name[512];

	id = profile_find_location(b->p, map, loc->address);
	if (id)
		return id;
	for (i = 0; i < n; i++) {
		const struct sym_frame *f = &loc->frames[i];
		const char *fn = f->function;

		if (!fn) {
			sym_location_fallback_name(loc, name, sizeof(name));
			fn = name;
		}
		/* pprof keeps the mangled name as system_name */
		lines[i].function_id = profile_function_id(b->p, fn,
							   f->function && f->system_name ?
							   f->system_name : fn, f->file, 0);
		lines[i].line = f->line;
		if (!lines[i].function_id)
			return 0;
	}
	return profile_add_location(b->p, map, loc->address, lines, n);
}

static int builder_unknown_location(struct builder *b, uint64_t addr, uint64_t *id)
{
	struct profile_line line = { 0 };

	*id = profile_find_location(b->p, 0, addr);
	if (*id)
		return 0;
	line.function_id = profile_function_id(b->p, "[unknown]", NULL, NULL, 0);
	*id = line.function_id ? profile_add_location(b->p, 0, addr, &line, 1) : 0;
	return *id ? 0 : -ENOMEM;
}

/*
 * The location of Python frame @pc (PYSTACKS_PC): in the "[python]" mapping,
 * at the frame's id, so each (function, line) is one location.
 */
static int builder_python_frame(struct builder *b, uint64_t pc, uint64_t *lid)
{
	const struct pyframe *f = pystacks_frame(b->c->py, pc);
	struct profile_mapping pm = { .file = PROFILE_PYTHON_MAPPING, .build_id = "" };
	struct profile_line line = { 0 };
	uint64_t addr = (pc & ~PYSTACKS_PC) + 1;

	if (!f)
		return builder_unknown_location(b, pc & ~PYSTACKS_PC, lid);
	if (!b->py_mapping) {
		pm.has_functions = pm.has_filenames = pm.has_line_numbers = true;
		b->py_mapping = profile_add_mapping(b->p, &pm);
		if (!b->py_mapping)
			return -ENOMEM;
	}
	*lid = profile_find_location(b->p, b->py_mapping, addr);
	if (*lid)
		return 0;
	line.function_id = profile_function_id(b->p, f->name, f->name, f->file, f->first_line);
	line.line = f->line;
	*lid = line.function_id ? profile_add_location(b->p, b->py_mapping, addr, &line, 1) : 0;
	return *lid ? 0 : -ENOMEM;
}

/* The location of one frame; user pcs may carry SYM_PC_EXACT. */
static int builder_frame(struct builder *b, uint64_t pc, bool is_return,
			 struct sym_process *proc, bool kernel, uint64_t *lid)
{
	const struct sym_location *loc;

	if (kernel) {
		loc = symbolizer_kernel(b->c->sym, pc, is_return);
	} else {
		if ((pc & PYSTACKS_PC) && b->c->py)
			return builder_python_frame(b, pc, lid);
		if (pc & SYM_PC_EXACT)
			is_return = false;	/* a signal interrupted this frame */
		pc &= ~SYM_PC_EXACT;
		if (!proc)
			return builder_unknown_location(b, pc, lid);
		loc = symbolizer_user(b->c->sym, proc, pc, is_return);
	}
	*lid = loc ? builder_location(b, loc) : 0;
	return *lid ? 0 : -ENOMEM;
}

/* Append locations for @pcs (leaf first) to b->locs. */
int builder_frames(struct builder *b, const uint64_t *pcs, size_t nr,
		   struct sym_process *proc, bool kernel)
{
	size_t i;
	int err;

	for (i = 0; i < nr && pcs[i]; i++) {
		if (array_grow(&b->locs, b->locs.nr + 1))
			return -ENOMEM;
		err = builder_frame(b, pcs[i], i > 0, proc, kernel, &b->locs.items[b->locs.nr]);
		if (err)
			return err;
		b->locs.nr++;
	}
	return 0;
}

/*
 * Is kernel @pc in the path that runs latprof's own tracepoint program
 * (bpf_prog_*, bpf_trace_run*, __traceiter_*, __bpf_trace_*)? How many such
 * frames a stack taken in sched_switch has depends on what else is attached.
 */
static bool tracing_frame(struct builder *b, uint64_t pc, bool is_return)
{
	static const char *const prefixes[] = { "bpf_prog_", "bpf_trace_run", "__traceiter_",
						"__bpf_trace_" };
	const struct sym_location *loc = symbolizer_kernel(b->c->sym, pc, is_return);
	const char *fn;
	size_t i;

	if (!loc || !loc->nr_frames || !(fn = loc->frames[loc->nr_frames - 1].function))
		return false;
	for (i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(fn, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/*
 * Append the frames of stack map entry @id (leaf first) to b->locs; @trim:
 * a kernel stack taken by a tracepoint program, whose own frames go.
 */
int builder_stack(struct builder *b, int32_t id, struct sym_process *proc, bool kernel,
		  bool trim)
{
	const struct collect_stack *st = (size_t)id < b->c->stacks.nr ? &b->c->stacks.items[id] : NULL;
	size_t skip = 0;

	if (id < 0)
		return 0;	/* none taken, or stack_get failed: counted in the kernel */
	if (!st || !st->ips) {
		/* the sample is kept without these frames: say so */
		if (kernel)
			b->kstack_missing++;
		else
			b->ustack_missing++;
		return 0;
	}
	while (trim && kernel && skip < st->nr && tracing_frame(b, st->ips[skip], skip > 0))
		skip++;
	return builder_frames(b, st->ips + skip, st->nr - skip, proc, kernel);
}

/*
 * Look up every kernel frame of the stacks map the way builder_stack() will
 * (untrimmed, and the first frame a trim keeps), then free the kernel's
 * symbol table: the DWARF that user frames load does not come on top of it
 * (6 MB of kallsyms beside libc's 11 MB of DWARF made the peak). Kernel
 * stacks are the ones in the upper half of the address space. A lookup that
 * fails here fails again, and is reported, when the samples are built.
 */
void builder_kernel_first(struct builder *b)
{
	const struct collect_stack *st;
	size_t i, j, skip;

	for (i = 0; i < b->c->stacks.nr; i++) {
		st = &b->c->stacks.items[i];
		if (!st->ips || !st->nr || (int64_t)st->ips[0] >= 0)
			continue;
		for (j = 0; j < st->nr && st->ips[j]; j++)
			symbolizer_kernel(b->c->sym, st->ips[j], j > 0);
		skip = 0;
		while (skip < st->nr && tracing_frame(b, st->ips[skip], skip > 0))
			skip++;
		if (skip && skip < st->nr && st->ips[skip])
			symbolizer_kernel(b->c->sym, st->ips[skip], false);
	}
	symbolizer_kernel_unload(b->c->sym);
}

struct sym_process *builder_process(struct builder *b, pid_t pid, uint32_t gen)
{
	struct proc_image *img = proc_images_find(&b->c->images, pid, gen);

	/* an event may have been lost: a live process can still be read now */
	if (!img && !proc_images_snapshot(&b->c->images, pid, gen))
		img = proc_images_find(&b->c->images, pid, gen);
	return img ? img->sym : NULL;
}
