// SPDX-License-Identifier: GPL-2.0-only
/* Merging profiles of one agent (see profile_merge.h). */
#include "src/profile_merge.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/sysstats.h"
#include "src/lib/util.h"

/* sysstats.h's metadata keys: added up, not replaced */
#define MERGE_SYS_PREFIX "syscall."

/* @from's ids and columns as @into's, for one merge. */
struct merge_ids {
	uint64_t *mappings, *functions, *locations;	/* index: @from's id - 1 */
	int *cols;					/* index: @from's column */
	struct { struct profile_line *items; size_t nr, alloc; } lines;
	struct { uint64_t *items; size_t nr, alloc; } locs;
	int64_t *values;				/* @into's columns */
};

/* Column @type in @into, added (every sample so far 0 in it) if new; -ENOMEM. */
static int merge_column(struct profile *into, const struct profile_value_type *t)
{
	int i = profile_type_index(into, t->type);
	size_t j;
	int64_t *v;

	if (i >= 0)
		return i;
	for (j = 0; j < into->samples.nr; j++) {
		v = realloc(into->samples.items[j].values, (into->types.nr + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		v[into->types.nr] = 0;
		into->samples.items[j].values = v;
	}
	return profile_add_type(into, t->type, t->unit);
}

static int merge_columns(struct profile *into, const struct profile *from, struct merge_ids *m)
{
	size_t i;

	for (i = 0; i < from->types.nr; i++) {
		m->cols[i] = merge_column(into, &from->types.items[i]);
		if (m->cols[i] < 0)
			return m->cols[i];
	}
	if (!into->default_type && from->default_type)
		into->default_type = profile_str(into, from->default_type);
	if (!into->period && from->period) {
		into->period = from->period;
		into->period_type.type = profile_str(into, from->period_type.type);
		into->period_type.unit = profile_str(into, from->period_type.unit);
	}
	return 0;
}

static bool mapping_equal(const struct profile_mapping *a, const struct profile_mapping *b)
{
	return a->start == b->start && a->limit == b->limit && a->offset == b->offset &&
	       !strcmp(a->file, b->file) && !strcmp(a->build_id, b->build_id);
}

static uint64_t merge_mapping(struct profile *into, const struct profile_mapping *m)
{
	size_t i;

	for (i = into->mappings.nr; i > 0; i--)	/* the newest first: most likely */
		if (mapping_equal(&into->mappings.items[i - 1], m))
			return i;
	return profile_add_mapping(into, m);
}

static bool lines_equal(const struct profile_location *l, const struct profile_line *lines,
			size_t nr)
{
	return l->nr_lines == nr && (!nr || !memcmp(l->lines, lines, nr * sizeof(*lines)));
}

/* Location @l of @from as one of @into, its lines' functions renumbered. 0: ENOMEM. */
static uint64_t merge_location(struct profile *into, const struct profile_location *l,
			       struct merge_ids *m)
{
	uint64_t map = l->mapping_id ? m->mappings[l->mapping_id - 1] : 0, id;
	size_t j;

	if (array_grow(&m->lines, l->nr_lines))
		return 0;
	for (j = 0; j < l->nr_lines; j++) {
		m->lines.items[j] = l->lines[j];
		if (l->lines[j].function_id)
			m->lines.items[j].function_id = m->functions[l->lines[j].function_id - 1];
	}
	id = profile_find_location(into, map, l->address);
	/* an address without a mapping names a frame (Python's, JIT's) only with its lines */
	if (id && lines_equal(profile_location(into, id), m->lines.items, l->nr_lines))
		return id;
	return profile_add_location(into, map, l->address, m->lines.items, l->nr_lines);
}

static int merge_code(struct profile *into, const struct profile *from, struct merge_ids *m)
{
	const struct profile_function *f;
	size_t i;

	for (i = 0; i < from->mappings.nr; i++)
		if (!(m->mappings[i] = merge_mapping(into, &from->mappings.items[i])))
			return -ENOMEM;
	for (i = 0; i < from->functions.nr; i++) {
		f = &from->functions.items[i];
		m->functions[i] = profile_function_id(into, f->name, f->system_name, f->file,
						      f->start_line);
		if (!m->functions[i])
			return -ENOMEM;
	}
	for (i = 0; i < from->locations.nr; i++)
		if (!(m->locations[i] = merge_location(into, &from->locations.items[i], m)))
			return -ENOMEM;
	return 0;
}

static bool sample_passes(const struct profile_sample *s, const struct profile_merge_filter *f)
{
	const struct profile_label *l;

	if (!f)
		return true;
	if (f->pid) {
		l = profile_sample_label(s, PROFILE_LABEL_PID);
		if (!l || l->num != f->pid)
			return false;
	}
	if (f->comm && f->comm[0]) {
		l = profile_sample_label(s, PROFILE_LABEL_COMM);
		if (!l || !l->str || strcmp(l->str, f->comm))
			return false;
	}
	return true;
}

static int merge_samples(struct profile *into, const struct profile *from, struct merge_ids *m,
			 const struct profile_merge_filter *f)
{
	const struct profile_sample *s;
	size_t i, j;
	int err = 0;

	for (i = 0; !err && i < from->samples.nr; i++) {
		s = &from->samples.items[i];
		if (!sample_passes(s, f))
			continue;
		m->locs.nr = 0;
		if (array_grow(&m->locs, s->nr_locs))
			return -ENOMEM;
		for (j = 0; j < s->nr_locs; j++)
			m->locs.items[j] = s->locs[j] && s->locs[j] <= from->locations.nr ?
					   m->locations[s->locs[j] - 1] : 0;
		memset(m->values, 0, into->types.nr * sizeof(*m->values));
		for (j = 0; j < from->types.nr; j++)
			m->values[m->cols[j]] = s->values[j];
		err = profile_add_sample(into, m->locs.items, s->nr_locs, m->values, s->labels,
					 s->nr_labels);
	}
	return err;
}

/* Does process @pid of @from pass @f (its comm from "proc.PID.comm")? */
static bool pid_passes(const struct profile *from, uint32_t pid,
		       const struct profile_merge_filter *f)
{
	char key[48];
	const char *comm;

	if (!f)
		return true;
	if (f->pid && (uint32_t)f->pid != pid)
		return false;
	if (!f->comm || !*f->comm)
		return true;
	snprintf(key, sizeof(key), "proc.%" PRIu32 ".comm", pid);
	comm = profile_get_meta(from, key);
	return comm && !strcmp(comm, f->comm);
}

int profile_merge_sys(struct sys_sum *sum, const struct profile *from,
		      const struct profile_merge_filter *f)
{
	struct sys_stats add = { 0 };
	size_t i;
	int err = sys_stats_load(from, &add);

	for (i = 0; !err && i < add.nr; i++)
		if (pid_passes(from, add.items[i].pid, f))
			err = sys_sum_add(sum, &add.items[i]);
	free(add.items);
	return err;
}

/* @from's metadata into @into's (the union), but its syscall statistics. */
static int merge_meta(struct profile *into, const struct profile *from)
{
	size_t i;
	int err = 0;

	for (i = 0; !err && i < from->meta.nr; i++)
		if (strncmp(from->meta.items[i].key, MERGE_SYS_PREFIX, strlen(MERGE_SYS_PREFIX)))
			err = profile_set_meta(into, from->meta.items[i].key,
					       from->meta.items[i].value);
	return err;
}

static void merge_ids_release(struct merge_ids *m)
{
	free(m->mappings);
	free(m->functions);
	free(m->locations);
	free(m->cols);
	free(m->lines.items);
	free(m->locs.items);
	free(m->values);
}

int profile_merge(struct profile *into, const struct profile *from,
		  const struct profile_merge_filter *f)
{
	struct merge_ids m = {
		.mappings = calloc(from->mappings.nr + 1, sizeof(*m.mappings)),
		.functions = calloc(from->functions.nr + 1, sizeof(*m.functions)),
		.locations = calloc(from->locations.nr + 1, sizeof(*m.locations)),
		.cols = calloc(from->types.nr + 1, sizeof(*m.cols)),
	};
	int err = m.mappings && m.functions && m.locations && m.cols ? 0 : -ENOMEM;

	if (!err)
		err = merge_columns(into, from, &m);
	if (!err) {
		m.values = calloc(into->types.nr + 1, sizeof(*m.values));
		err = m.values ? 0 : -ENOMEM;
	}
	if (!err)
		err = merge_code(into, from, &m);
	if (!err)
		err = merge_samples(into, from, &m, f);
	if (!err)
		err = merge_meta(into, from);
	merge_ids_release(&m);
	return err;
}
