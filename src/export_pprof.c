// SPDX-License-Identifier: GPL-2.0-only
/* `export --format pprof` (see export_pprof.h): copy a profile, keep some columns. */
#include "src/export_pprof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/pprof.h"
#include "src/pyview.h"
#include "src/stacks.h"
#include "src/lib/util.h"

struct locs {
	uint64_t *items;
	size_t nr, alloc;
};

/* The columns shown together: a count and the time it stands for. */
static const char *const families[][2] = {
	{ PROFILE_TYPE_SAMPLES, PROFILE_TYPE_CPU },
	{ PROFILE_TYPE_SYSCALLS, PROFILE_TYPE_LATENCY },
	{ PROFILE_TYPE_OFFCPU },
};

/* Source columns to keep, in @cols (at most 2; all without @w); returns how many. */
static int pick_columns(const struct profile *p, const struct profile_weight *w, int *cols)
{
	const char *type;
	size_t i, j;
	int n = 0;

	if (!w) {
		for (i = 0; i < p->types.nr; i++)
			cols[n++] = i;
		return n;
	}
	type = p->types.items[w->cols[0]].type;
	if (w->nr_cols > 1) {
		cols[0] = w->cols[0];
		cols[1] = w->cols[1];
		return 2;
	}
	for (i = 0; i < ARRAY_SIZE(families); i++) {
		for (j = 0; j < 2 && families[i][j]; j++)
			if (!strcmp(type, families[i][j]))
				break;
		if (j == 2 || !families[i][j])
			continue;
		for (j = 0; j < 2 && families[i][j]; j++)
			if (profile_type_index(p, families[i][j]) >= 0)
				cols[n++] = profile_type_index(p, families[i][j]);
		return n;
	}
	cols[0] = w->cols[0];	/* a foreign column: alone */
	return 1;
}

static int copy_types(struct profile *n, const struct profile *p,
		      const struct profile_weight *w, const int *cols, int nr)
{
	int i;

	/* profile_add_type returns the new column's index or -ENOMEM */
	for (i = 0; i < nr; i++)
		if (profile_add_type(n, p->types.items[cols[i]].type,
				     p->types.items[cols[i]].unit) < 0)
			return -ENOMEM;
	if (!w) {
		n->default_type = p->default_type ? profile_str(n, p->default_type) : NULL;
		return !p->default_type || n->default_type ? 0 : -ENOMEM;
	}
	if (w->nr_cols > 1 && profile_add_type(n, PROFILE_TYPE_WALL, w->unit) < 0)
		return -ENOMEM;
	n->default_type = profile_str(n, w->nr_cols > 1 ? PROFILE_TYPE_WALL
					 : p->types.items[w->cols[0]].type);
	return n->default_type ? 0 : -ENOMEM;
}

/* Mappings and locations keep their ids; functions may merge, hence @fn_ids. */
static int copy_code(struct profile *n, const struct profile *p, uint64_t *fn_ids)
{
	struct { struct profile_line *items; size_t nr, alloc; } lines = { 0 };
	const struct profile_function *f;
	size_t i, j;
	int err = 0;

	for (i = 0; !err && i < p->mappings.nr; i++)
		err = profile_add_mapping(n, &p->mappings.items[i]) ? 0 : -ENOMEM;
	for (i = 0; !err && i < p->functions.nr; i++) {
		f = &p->functions.items[i];
		fn_ids[i] = profile_function_id(n, f->name, f->system_name, f->file,
						f->start_line);
		err = fn_ids[i] ? 0 : -ENOMEM;
	}
	for (i = 0; !err && i < p->locations.nr; i++) {
		const struct profile_location *l = &p->locations.items[i];

		err = array_grow(&lines, l->nr_lines);
		for (j = 0; !err && j < l->nr_lines; j++) {
			lines.items[j] = l->lines[j];
			if (l->lines[j].function_id && l->lines[j].function_id <= p->functions.nr)
				lines.items[j].function_id = fn_ids[l->lines[j].function_id - 1];
		}
		if (!err && !profile_add_location(n, l->mapping_id, l->address, lines.items,
						  l->nr_lines))
			err = -ENOMEM;
	}
	free(lines.items);
	return err;
}

/* The locations of @s that its view shows (pyview.h) into @locs, leaf first. */
static int view_locs(const struct profile *p, const struct profile_sample *s, bool native,
		     struct locs *locs)
{
	struct pyview v;
	size_t i;

	pyview_find(&v, p, s, native);
	locs->nr = 0;
	if (array_grow(locs, s->nr_locs))
		return -ENOMEM;
	for (i = 0; i < s->nr_locs; i++)
		if (pyview_shows(&v, p, s, i))
			locs->items[locs->nr++] = s->locs[i];
	return 0;
}

static int copy_samples(struct profile *n, const struct profile *p,
			const struct profile_weight *w, const int *cols, int nr,
			unsigned int stack_flags)
{
	struct locs locs = { 0 };
	int64_t *values = calloc(nr + 1, sizeof(*values)), v = 1;
	size_t i;
	int j, err = values ? 0 : -ENOMEM;

	for (i = 0; !err && i < p->samples.nr; i++) {
		const struct profile_sample *s = &p->samples.items[i];

		if (w)
			v = profile_weight_of(w, s);
		if (v <= 0)
			continue;
		for (j = 0; j < nr; j++)
			values[j] = !w || s->values[cols[j]] > 0 ? s->values[cols[j]] : 0;
		if (w && w->nr_cols > 1)
			values[nr] = v;
		err = view_locs(p, s, stack_flags & STACKS_FLAG_NATIVE, &locs);
		if (!err)
			err = profile_add_sample(n, locs.items, locs.nr, values, s->labels,
						 s->nr_labels);
	}
	free(locs.items);
	free(values);
	return err;
}

static int copy_meta(struct profile *n, const struct profile *p)
{
	size_t i;
	int err = profile_copy_meta(n, p);

	for (i = 0; !err && i < p->comments.nr; i++) {
		const char *c = profile_str(n, p->comments.items[i]);

		err = c && !array_grow(&n->comments, n->comments.nr + 1) ? 0 : -ENOMEM;
		if (!err)
			n->comments.items[n->comments.nr++] = c;
	}
	return err;
}

struct profile *profile_for_weight(const struct profile *p, const struct profile_weight *w,
				   unsigned int stack_flags)
{
	struct profile *n = profile_new();
	uint64_t *fn_ids = calloc(p->functions.nr ? p->functions.nr : 1, sizeof(*fn_ids));
	int *cols = calloc(p->types.nr + 2, sizeof(*cols));
	int nr = 0, err = n && fn_ids && cols ? 0 : -ENOMEM;

	if (!err)
		nr = pick_columns(p, w, cols);
	if (!err)
		err = copy_types(n, p, w, cols, nr);
	if (!err)
		err = copy_code(n, p, fn_ids);
	if (!err)
		err = copy_samples(n, p, w, cols, nr, stack_flags);
	if (!err)
		err = copy_meta(n, p);
	free(fn_ids);
	free(cols);
	if (err) {
		profile_free(n);
		errno = -err;
		return NULL;
	}
	/* the sampling period means something only next to the cpu column */
	if (profile_type_index(n, PROFILE_TYPE_CPU) >= 0) {
		n->period_type.type = profile_str(n, p->period_type.type);
		n->period_type.unit = profile_str(n, p->period_type.unit);
		n->period = p->period;
	}
	n->time_ns = p->time_ns;
	n->duration_ns = p->duration_ns;
	return n;
}

int export_pprof(FILE *out, const struct profile *p, const struct profile_weight *w,
		 unsigned int stack_flags)
{
	struct profile *n = profile_for_weight(p, w, stack_flags);
	int err;

	if (!n)
		return -errno;
	err = pprof_write(n, out);
	profile_free(n);
	return err;
}
