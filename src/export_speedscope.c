// SPDX-License-Identifier: GPL-2.0-only
/*
 * `export --format speedscope` (see export_speedscope.h). Frames are named
 * through stacks.c one location at a time, so a name here is always the
 * name folded output has; only the file and line are added.
 */
#include "src/export_speedscope.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "src/export_json.h"
#include "src/lib/hashmap.h"
#include "src/pyview.h"
#include "src/stacks.h"
#include "src/lib/util.h"

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

struct ss_frame {
	const char *name, *file;	/* interned; file NULL when unknown */
	int64_t line;			/* 0 when unknown */
};

/* The frames of one location (outermost first) are ids.items[first..first+nr). */
struct ss_span {
	size_t first, nr;
};

struct ss_sample {
	uint32_t *frames;	/* root first, owned */
	size_t nr;
	uint64_t weight;
};

/* One speedscope profile: a process, or a thread of it. */
struct ss_group {
	int64_t pid, tid;	/* tid -1: the whole process */
	const char *comm;
	uint64_t total;
	struct { struct ss_sample *items; size_t nr, alloc; } samples;
	struct hashmap idx;	/* interned stack key -> sample index + 1 */
};

struct ss {
	const struct profile *p;
	const struct profile_weight *w;
	bool native;			/* STACKS_FLAG_NATIVE: no Python view */
	struct strtab *strs;
	struct stack_names names;
	struct { struct ss_frame *items; size_t nr, alloc; } frames;
	struct hashmap frame_idx;	/* (name, file) -> frame index + 1 */
	struct { struct ss_span *items; size_t nr, alloc; } spans;
	struct hashmap loc_span;	/* location id -> span index + 1 */
	struct { uint32_t *items; size_t nr, alloc; } ids;
	struct hashmap leaf_frame;	/* syscall label -> frame index + 1 */
	struct { struct ss_group *items; size_t nr, alloc; } groups;
	struct hashmap group_idx;	/* (pid, tid) -> group index + 1 */
	struct { uint32_t *items; size_t nr, alloc; } stack;	/* being built */
	struct { char *items; size_t nr, alloc; } key;	/* the stack as text */
};

static void ss_release(struct ss *s)
{
	size_t i, j;

	for (i = 0; i < s->groups.nr; i++) {
		for (j = 0; j < s->groups.items[i].samples.nr; j++)
			free(s->groups.items[i].samples.items[j].frames);
		free(s->groups.items[i].samples.items);
		hashmap_release(&s->groups.items[i].idx);
	}
	free(s->groups.items);
	hashmap_release(&s->group_idx);
	hashmap_release(&s->frame_idx);
	hashmap_release(&s->loc_span);
	hashmap_release(&s->leaf_frame);
	free(s->frames.items);
	free(s->spans.items);
	free(s->ids.items);
	free(s->stack.items);
	free(s->key.items);
	free(s->names.items);
	strtab_free(s->strs);
}

/*
 * The index of frame (@name, @file), added if new. Without a start line in
 * the profile (latprof's symbolizer gives none), a function's line is the
 * smallest seen in it: the nearest known line to its declaration.
 */
static int ss_frame(struct ss *s, const char *name, const char *file, int64_t line,
		    uint32_t *out)
{
	void *v = hashmap_get(&s->frame_idx, name, (uintptr_t)file, 0);
	struct ss_frame *f;

	if (v) {
		f = &s->frames.items[HASHMAP_TO_NUM(v) - 1];
		if (line > 0 && (!f->line || line < f->line))
			f->line = line;
		*out = HASHMAP_TO_NUM(v) - 1;
		return 0;
	}
	if (s->frames.nr >= UINT32_MAX || array_grow(&s->frames, s->frames.nr + 1) ||
	    hashmap_put(&s->frame_idx, name, (uintptr_t)file, 0,
			HASHMAP_NUM(s->frames.nr + 1)))
		return -ENOMEM;
	s->frames.items[s->frames.nr] = (struct ss_frame){ name, file, line > 0 ? line : 0 };
	*out = s->frames.nr++;
	return 0;
}

/* File and line of the @k-th name (outermost first) of location @l. */
static void ss_line_of(struct ss *s, const struct profile_location *l, size_t k,
		       const char **file, int64_t *line)
{
	const struct profile_line *ln = &l->lines[l->nr_lines - 1 - k];
	const struct profile_function *f = profile_function(s->p, ln->function_id);

	*file = NULL;
	*line = 0;
	if (!f || !f->file || !f->file[0])
		return;
	*file = strtab_intern(s->strs, f->file);
	*line = f->start_line > 0 ? f->start_line : ln->line;
}

/* Name location @id through stacks.c and record its frames as a span. */
static int ss_add_span(struct ss *s, uint64_t id, const struct profile_location *l)
{
	struct profile_sample one = { .nr_locs = 1, .locs = &id };
	struct ss_span span = { .first = s->ids.nr };
	const char *file;
	int64_t line;
	size_t k;
	int err;

	err = stack_names_of(s->p, &one, STACKS_FLAG_NO_COMM | s->w->stack_flags, s->strs,
			     &s->names);
	for (k = 0; !err && k < s->names.nr; k++) {
		file = NULL;
		line = 0;
		/* names and lines pair up unless the location had no lines */
		if (s->names.nr == l->nr_lines)
			ss_line_of(s, l, k, &file, &line);
		err = array_grow(&s->ids, s->ids.nr + 1);
		if (!err)
			err = ss_frame(s, s->names.items[k], file, line, &s->ids.items[s->ids.nr]);
		if (!err)
			s->ids.nr++;
	}
	span.nr = s->ids.nr - span.first;
	if (!err)
		err = array_grow(&s->spans, s->spans.nr + 1);
	if (!err)
		err = hashmap_put(&s->loc_span, NULL, id, 0, HASHMAP_NUM(s->spans.nr + 1));
	if (!err)
		s->spans.items[s->spans.nr++] = span;
	return err;
}

/* Append the frames of location @id to the stack being built. */
static int ss_push_location(struct ss *s, uint64_t id)
{
	const struct profile_location *l = profile_location(s->p, id);
	const struct ss_span *span;
	void *v;
	int err;

	if (!l)
		return 0;
	v = hashmap_get(&s->loc_span, NULL, id, 0);
	if (!v) {
		err = ss_add_span(s, id, l);
		if (err)
			return err;
		v = hashmap_get(&s->loc_span, NULL, id, 0);
	}
	span = &s->spans.items[HASHMAP_TO_NUM(v) - 1];
	if (array_grow(&s->stack, s->stack.nr + span->nr))
		return -ENOMEM;
	memcpy(&s->stack.items[s->stack.nr], &s->ids.items[span->first],
	       span->nr * sizeof(*s->ids.items));
	s->stack.nr += span->nr;
	return 0;
}

/* The "syscall:NAME" leaf of latency-weighted stacks, named by stacks.c. */
static int ss_push_leaf(struct ss *s, const struct profile_sample *smp)
{
	const struct profile_label *sys = profile_sample_label(smp, PROFILE_LABEL_SYSCALL);
	struct profile_sample leaf = { .nr_labels = 1 };
	void *v;
	uint32_t idx;
	int err;

	if (!(s->w->stack_flags & STACKS_FLAG_SYSCALL_LEAF) || !sys || !sys->str)
		return 0;
	v = hashmap_get(&s->leaf_frame, sys->str, 0, 0);
	if (v) {
		idx = HASHMAP_TO_NUM(v) - 1;
	} else {
		leaf.labels = (struct profile_label *)sys;
		err = stack_names_of(s->p, &leaf, STACKS_FLAG_NO_COMM | STACKS_FLAG_SYSCALL_LEAF,
				     s->strs, &s->names);
		if (!err && s->names.nr != 1)
			return 0;
		if (!err)
			err = ss_frame(s, s->names.items[0], NULL, 0, &idx);
		if (!err)
			err = hashmap_put(&s->leaf_frame, sys->str, 0, 0, HASHMAP_NUM(idx + 1));
		if (err)
			return err;
	}
	if (array_grow(&s->stack, s->stack.nr + 1))
		return -ENOMEM;
	s->stack.items[s->stack.nr++] = idx;
	return 0;
}

/* The group of sample @smp: its process, and its thread when labelled. */
static int ss_group_of(struct ss *s, const struct profile_sample *smp, struct ss_group **out)
{
	const struct profile_label *pid = profile_sample_label(smp, PROFILE_LABEL_PID);
	const struct profile_label *tid = profile_sample_label(smp, PROFILE_LABEL_TID);
	const struct profile_label *comm = profile_sample_label(smp, PROFILE_LABEL_COMM);
	int64_t p = pid ? pid->num : -1, t = tid && !tid->str ? tid->num : -1;
	void *v = hashmap_get(&s->group_idx, NULL, (uint64_t)p, (uint64_t)t);

	if (v) {
		*out = &s->groups.items[HASHMAP_TO_NUM(v) - 1];
		return 0;
	}
	if (array_grow(&s->groups, s->groups.nr + 1) ||
	    hashmap_put(&s->group_idx, NULL, (uint64_t)p, (uint64_t)t,
			HASHMAP_NUM(s->groups.nr + 1)))
		return -ENOMEM;
	*out = &s->groups.items[s->groups.nr++];
	**out = (struct ss_group){ .pid = p, .tid = t,
				   .comm = comm && comm->str ? comm->str : "[unknown]" };
	return 0;
}

/* s->stack as interned text "1f,2,", to find equal stacks by pointer. */
static const char *ss_stack_key(struct ss *s)
{
	size_t i;

	/* 8 hex digits and a comma per frame, and the NUL */
	if (array_grow(&s->key, s->stack.nr * 9 + 1))
		return NULL;
	s->key.nr = 0;
	for (i = 0; i < s->stack.nr; i++)
		s->key.nr += sprintf(s->key.items + s->key.nr, "%" PRIx32 ",", s->stack.items[i]);
	s->key.items[s->key.nr] = 0;
	return strtab_intern_len(s->strs, s->key.items, s->key.nr);
}

/* Add the stack built in s->stack to @g with @weight, merging equal stacks. */
static int ss_group_add(struct ss *s, struct ss_group *g, uint64_t weight)
{
	struct ss_sample *smp;
	const char *key = ss_stack_key(s);
	void *v;

	if (!key)
		return -ENOMEM;
	g->total += weight;
	v = hashmap_get(&g->idx, key, s->stack.nr, 0);
	if (v) {
		g->samples.items[HASHMAP_TO_NUM(v) - 1].weight += weight;
		return 0;
	}
	if (array_grow(&g->samples, g->samples.nr + 1) ||
	    hashmap_put(&g->idx, key, s->stack.nr, 0, HASHMAP_NUM(g->samples.nr + 1)))
		return -ENOMEM;
	smp = &g->samples.items[g->samples.nr];
	smp->frames = malloc(s->stack.nr ? s->stack.nr * sizeof(*smp->frames) : 1);
	if (!smp->frames)
		return -ENOMEM;
	if (s->stack.nr)	/* memcpy from NULL is undefined even for 0 bytes */
		memcpy(smp->frames, s->stack.items, s->stack.nr * sizeof(*smp->frames));
	smp->nr = s->stack.nr;
	smp->weight = weight;
	g->samples.nr++;
	return 0;
}

static int ss_add_sample(struct ss *s, const struct profile_sample *smp)
{
	int64_t v = profile_weight_of(s->w, smp);
	struct ss_group *g;
	struct pyview view;
	size_t i;
	int err;

	if (v <= 0)
		return 0;
	s->stack.nr = 0;
	pyview_find(&view, s->p, smp, s->native);
	err = ss_group_of(s, smp, &g);
	for (i = smp->nr_locs; !err && i-- > 0;)
		if (pyview_shows(&view, s->p, smp, i))
			err = ss_push_location(s, smp->locs[i]);
	if (!err)
		err = ss_push_leaf(s, smp);
	return err ? err : ss_group_add(s, g, v);
}

/* Samples in folded order: frame names compared root first. */
static int cmp_sample(const void *a, const void *b, void *arg)
{
	const struct ss_sample *x = a, *y = b;
	const struct ss_frame *fr = arg;
	size_t i;
	int c;

	for (i = 0; i < x->nr && i < y->nr; i++) {
		if (x->frames[i] == y->frames[i])
			continue;
		c = strcmp(fr[x->frames[i]].name, fr[y->frames[i]].name);
		if (c)
			return c;
		return x->frames[i] < y->frames[i] ? -1 : 1;
	}
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

static int cmp_group(const void *a, const void *b)
{
	const struct ss_group *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void ss_write_frames(FILE *out, const struct ss *s)
{
	size_t i;

	fputs("\"shared\":{\"frames\":[", out);
	for (i = 0; i < s->frames.nr; i++) {
		const struct ss_frame *f = &s->frames.items[i];

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		json_put_str(out, f->name);
		if (f->file) {
			fputs(",\"file\":", out);
			json_put_str(out, f->file);
		}
		if (f->line)
			fprintf(out, ",\"line\":%" PRId64, f->line);
		fputc('}', out);
	}
	fputs("]}", out);
}

/* "comm (pid N)", the process name from the metadata when recorded. */
static void ss_write_name(FILE *out, const struct ss *s, const struct ss_group *g)
{
	const char *comm = NULL;
	char key[64], name[320];

	if (g->tid < 0) {
		snprintf(key, sizeof(key), "proc.%" PRId64 ".comm", g->pid);
		comm = profile_get_meta(s->p, key);
	}
	if (!comm || !comm[0])
		comm = g->comm;
	if (g->tid >= 0)
		snprintf(name, sizeof(name), "%.256s (pid %" PRId64 ", tid %" PRId64 ")", comm,
			 g->pid, g->tid);
	else
		snprintf(name, sizeof(name), "%.256s (pid %" PRId64 ")", comm, g->pid);
	json_put_str(out, name);
}

/* speedscope's unit for weight @w: time, or plain counts. */
static const char *ss_unit(const struct profile_weight *w)
{
	return strcmp(w->unit, "nanoseconds") ? "none" : "nanoseconds";
}

static void ss_write_profile(FILE *out, const struct ss *s, const struct ss_group *g)
{
	size_t i, j;

	fputs("{\"type\":\"sampled\",\"name\":", out);
	ss_write_name(out, s, g);
	fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\"samples\":[",
		ss_unit(s->w), g->total);
	for (i = 0; i < g->samples.nr; i++) {
		fputs(i ? ",\n[" : "\n[", out);
		for (j = 0; j < g->samples.items[i].nr; j++)
			fprintf(out, "%s%" PRIu32, j ? "," : "", g->samples.items[i].frames[j]);
		fputc(']', out);
	}
	fputs("],\"weights\":[", out);
	for (i = 0; i < g->samples.nr; i++)
		fprintf(out, "%s%" PRIu64, i ? "," : "", g->samples.items[i].weight);
	fputs("]}", out);
}

/* speedscope opens the heaviest profile first. */
static size_t ss_heaviest(const struct ss *s)
{
	size_t i, best = 0;

	for (i = 1; i < s->groups.nr; i++)
		if (s->groups.items[i].total > s->groups.items[best].total)
			best = i;
	return best;
}

static void ss_write(FILE *out, struct ss *s)
{
	size_t i;

	if (s->groups.nr)	/* qsort wants an array, even an empty one */
		array_sort(s->groups.items, s->groups.nr, sizeof(*s->groups.items), cmp_group);
	for (i = 0; i < s->groups.nr; i++)
		array_sort_r(s->groups.items[i].samples.items, s->groups.items[i].samples.nr,
			sizeof(struct ss_sample), cmp_sample, s->frames.items);
	fputs("{\"$schema\":\"" SPEEDSCOPE_SCHEMA "\",\n", out);
	fputs("\"exporter\":\"latprof " LATPROF_VERSION "\",\"name\":", out);
	json_put_str(out, s->w->name);
	fprintf(out, ",\"activeProfileIndex\":%zu,\n", ss_heaviest(s));
	ss_write_frames(out, s);
	fputs(",\n\"profiles\":[", out);
	for (i = 0; i < s->groups.nr; i++) {
		fputs(i ? ",\n" : "\n", out);
		ss_write_profile(out, s, &s->groups.items[i]);
	}
	/* speedscope refuses a file without profiles: say "nothing" instead */
	if (!s->groups.nr)
		fprintf(out, "\n{\"type\":\"sampled\",\"name\":\"no samples\",\"unit\":\"%s\","
			"\"startValue\":0,\"endValue\":0,\"samples\":[],\"weights\":[]}",
			ss_unit(s->w));
	fputs("]}\n", out);
}

int export_speedscope(FILE *out, const struct profile *p, const struct profile_weight *w,
		      unsigned int stack_flags)
{
	struct ss s = { .p = p, .w = w, .native = stack_flags & STACKS_FLAG_NATIVE,
			.strs = strtab_new() };
	size_t i;
	int err = s.strs ? 0 : -ENOMEM;

	for (i = 0; !err && i < p->samples.nr; i++)
		err = ss_add_sample(&s, &p->samples.items[i]);
	if (!err) {
		ss_write(out, &s);
		err = ferror(out) ? -EIO : 0;
	}
	ss_release(&s);
	return err;
}
