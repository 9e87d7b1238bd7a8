// SPDX-License-Identifier: GPL-2.0-only
/* Naming of frames and stacks, shared by export, report and flame graphs. */
#include "src/stacks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/util.h"

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
	const struct profile_label *comm = profile_sample_label(s, "comm");
	const struct profile_label *pid = profile_sample_label(s, "pid");
	const char *c = comm && comm->str ? comm->str : "[unknown]";
	char buf[64];

	if (flags & STACKS_FLAG_NO_COMM)
		return 0;
	if (!(flags & STACKS_FLAG_PER_PID) || !pid)
		return push(out, names, c);
	snprintf(buf, sizeof(buf), "%s-%" PRId64, c, pid->num);
	return push(out, names, buf);
}

/* Frames of one location, outermost (the real function) first. */
static int push_location(const struct profile *p, const struct profile_location *l,
			 struct strtab *names, struct stack_names *out)
{
	const struct profile_mapping *m = profile_mapping(p, l->mapping_id);
	const char *suffix = profile_mapping_is_kernel(m) ? "_[k]" : "";
	char buf[512];
	size_t j;
	int err;

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

		snprintf(buf, sizeof(buf), "%s%s", name, j + 1 < l->nr_lines ? "_[i]" : suffix);
		err = push(out, names, buf);
		if (err)
			return err;
	}
	return 0;
}

int stack_names_of(const struct profile *p, const struct profile_sample *s, unsigned flags,
		   struct strtab *names, struct stack_names *out)
{
	size_t i;
	int err;

	out->nr = 0;
	err = push_process(s, flags, names, out);
	for (i = s->nr_locs; !err && i-- > 0;) {
		const struct profile_location *l = profile_location(p, s->locs[i]);

		if (l)
			err = push_location(p, l, names, out);
	}
	return err;
}

int stacks_to_flame(const struct profile *p, int column, unsigned flags, struct flame *f)
{
	struct stack_names names = { 0 };
	struct strtab *tab = strtab_new();
	size_t i;
	int err = tab ? 0 : -ENOMEM;

	for (i = 0; !err && i < p->samples.nr; i++) {
		const struct profile_sample *s = &p->samples.items[i];

		if (s->values[column] <= 0)
			continue;
		err = stack_names_of(p, s, flags, tab, &names);
		if (!err)
			err = flame_add(f, names.items, names.nr, s->values[column]);
	}
	free(names.items);
	strtab_free(tab);
	return err;
}
