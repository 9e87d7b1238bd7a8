// SPDX-License-Identifier: GPL-2.0-only
/* Naming of frames and stacks, shared by export, report and flame graphs. */
#include "src/stacks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/pyview.h"
#include "src/syslib.h"
#include "src/lib/util.h"

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

static int push(struct stack_names *out, struct strtab *names, const char *s)
{
	if (array_grow(out, out->nr + 1))
		return -ENOMEM;
	out->items[out->nr] = strtab_intern(names, s);
	return out->items[out->nr++] ? 0 : -ENOMEM;
}

static int push_process(const struct profile_sample *s, unsigned flags, struct strtab *names,
			struct stack_names *out)
{
	const struct profile_label *comm = profile_sample_label(s, PROFILE_LABEL_COMM);
	const struct profile_label *pid = profile_sample_label(s, PROFILE_LABEL_PID);
	const char *c = comm && comm->str ? comm->str : "[unknown]";
	char buf[64];

	if (flags & STACKS_FLAG_NO_COMM)
		return 0;
	if (!(flags & STACKS_FLAG_PER_PID) || !pid)
		return push(out, names, c);
	snprintf(buf, sizeof(buf), "%s-%" PRId64, c, pid->num);
	return push(out, names, buf);
}

/* A Python frame (PROFILE_PYTHON_MAPPING): "f (file.py)" or "f (file.py:LINE)". */
static int push_python(const struct profile *p, const struct profile_location *l,
		       unsigned flags, struct strtab *names, struct stack_names *out)
{
	const struct profile_function *f = l->nr_lines ?
		profile_function(p, l->lines[0].function_id) : NULL;
	const char *name = f && f->name[0] ? f->name : "[unknown]";
	char buf[512];

	if (!f || !f->file || !f->file[0])
		return push(out, names, name);
	if ((flags & STACKS_FLAG_PY_LINES) && l->lines[0].line)
		snprintf(buf, sizeof(buf), "%s (%s:%" PRId64 ")", name, base_name(f->file),
			 l->lines[0].line);
	else
		snprintf(buf, sizeof(buf), "%s (%s)", name, base_name(f->file));
	return push(out, names, buf);
}

/* Frames of one location, outermost (the real function) first. */
static int push_location(const struct profile *p, const struct profile_location *l,
			 unsigned flags, struct strtab *names, struct stack_names *out)
{
	const struct profile_mapping *m = profile_mapping(p, l->mapping_id);
	bool kernel = profile_mapping_is_kernel(m);
	/*
	 * A name in anonymous memory came from perf-PID.map: JIT-compiled code.
	 * An address it does not name is recorded as "[anon]+0xOFFSET" and stays
	 * that, an unknown frame.
	 */
	bool jit = m && !strcmp(m->file, "[anon]");
	const char *suffix = kernel ? "_[k]" : "";
	char buf[512];
	size_t j;
	int err;

	if (kernel && (flags & STACKS_FLAG_SYSCALL_LEAF))
		return 0;
	if (m && !strcmp(m->file, PROFILE_PYTHON_MAPPING))
		return push_python(p, l, flags, names, out);
	if (!l->nr_lines) {
		if (m && m->file[0])
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64 "%s", base_name(m->file),
				 l->address - m->start + m->offset, suffix);
		else
			snprintf(buf, sizeof(buf), "[unknown]%s", suffix);
		return push(out, names, buf);
	}
	for (j = l->nr_lines; j-- > 0;) {
		const struct profile_function *f = profile_function(p, l->lines[j].function_id);
		const char *name = f && f->name[0] ? f->name : "[unknown]";
		bool named_jit = jit && strncmp(name, "[anon]+0x", 9);

		snprintf(buf, sizeof(buf), "%s%s", name,
			 j + 1 < l->nr_lines ? "_[i]" : named_jit ? "_[j]" : suffix);
		err = push(out, names, buf);
		if (err)
			return err;
	}
	return 0;
}

/* Is @m a system library's mapping (syslib_is)? */
static bool mapping_syslib(const struct profile_mapping *m)
{
	return m && !profile_mapping_is_kernel(m) && syslib_is(m->file);
}

/* Has sample @s a user frame outside the system libraries? */
static bool has_program_frame(const struct profile *p, const struct profile_sample *s)
{
	size_t i;

	for (i = 0; i < s->nr_locs; i++) {
		const struct profile_location *l = profile_location(p, s->locs[i]);
		const struct profile_mapping *m = l ? profile_mapping(p, l->mapping_id) : NULL;

		if (!profile_mapping_is_kernel(m) && !mapping_syslib(m))
			return true;
	}
	return false;
}

int stack_names_of(const struct profile *p, const struct profile_sample *s, unsigned flags,
		   struct strtab *names, struct stack_names *out)
{
	bool program = (flags & STACKS_FLAG_PROGRAM_ONLY) && has_program_frame(p, s);
	struct pyview v;
	size_t i;
	int err;

	out->nr = 0;
	out->python_leaf = 0;
	pyview_find(&v, p, s, flags & STACKS_FLAG_NATIVE);
	err = push_process(s, flags, names, out);
	for (i = s->nr_locs; !err && i-- > 0;) {
		const struct profile_location *l = profile_location(p, s->locs[i]);
		const struct profile_mapping *m = l ? profile_mapping(p, l->mapping_id) : NULL;

		if ((program && mapping_syslib(m)) || !pyview_shows(&v, p, s, i))
			continue;
		if (l)
			err = push_location(p, l, flags, names, out);
		if (v.has_python && i == v.inner)
			out->python_leaf = out->nr;
	}
	if (!err && (flags & STACKS_FLAG_SYSCALL_LEAF)) {
		const struct profile_label *sys = profile_sample_label(s, PROFILE_LABEL_SYSCALL);
		char buf[128];

		if (sys && sys->str) {
			snprintf(buf, sizeof(buf), "syscall:%s", sys->str);
			err = push(out, names, buf);
		}
	}
	return err;
}
