// SPDX-License-Identifier: GPL-2.0-only
/*
 * pprof encoding: the writer builds the protobuf-c message tree over the
 * profile's arrays (string table from interned pointers), packs it and gzips
 * it. Metadata becomes "latprof:KEY=VALUE" comments.
 */
#include "src/pprof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "src/lib/hashmap.h"
#include "src/pprof_pb.h"
#include "src/lib/util.h"

/* The string table being built; interned pointer -> index + 1. */
struct str_index {
	const char **items;
	size_t nr, alloc;
	struct hashmap idx;
};

static void str_index_release(struct str_index *x)
{
	free(x->items);
	hashmap_release(&x->idx);
}

/* Index of @s in the string table; strings are interned so pointers suffice. */
static int64_t str_idx(struct str_index *x, const char *s, int *err)
{
	void *v = hashmap_get(&x->idx, s, 0, 0);

	if (v)
		return HASHMAP_TO_NUM(v) - 1;
	if (array_grow(x, x->nr + 1) || hashmap_put(&x->idx, s, 0, 0, HASHMAP_NUM(x->nr + 1))) {
		*err = -ENOMEM;
		return 0;
	}
	x->items[x->nr] = s;
	return x->nr++;
}

struct pb_out {
	PbProfile prof;
	PbValueType *types, period_type;
	PbValueType **type_ptrs;
	PbSample *samples, **sample_ptrs;
	PbLabel *labels, **label_ptrs;
	PbMapping *mappings, **mapping_ptrs;
	PbLocation *locations, **location_ptrs;
	PbLine *lines, **line_ptrs;
	PbFunction *functions, **function_ptrs;
	int64_t *comments;
	uint64_t *loc_ids;
	int64_t *values;
	char **meta_strs;
	size_t nr_meta;
};

static void pb_out_release(struct pb_out *o)
{
	size_t i;

	free(o->types);
	free(o->type_ptrs);
	free(o->samples);
	free(o->sample_ptrs);
	free(o->labels);
	free(o->label_ptrs);
	free(o->mappings);
	free(o->mapping_ptrs);
	free(o->locations);
	free(o->location_ptrs);
	free(o->lines);
	free(o->line_ptrs);
	free(o->functions);
	free(o->function_ptrs);
	free(o->comments);
	free(o->loc_ids);
	free(o->values);
	for (i = 0; i < o->nr_meta; i++)
		free(o->meta_strs[i]);
	free(o->meta_strs);
	free(o->prof.string_table);
}

#define ALLOC(ptr, n) ((ptr) = calloc((n) ? (n) : 1, sizeof(*(ptr))))

static void fill_types(struct pb_out *o, const struct profile *p, struct str_index *x, int *err)
{
	size_t i;

	for (i = 0; i < p->types.nr; i++) {
		perftools__profiles__value_type__init(&o->types[i]);
		o->types[i].type = str_idx(x, p->types.items[i].type, err);
		o->types[i].unit = str_idx(x, p->types.items[i].unit, err);
		o->type_ptrs[i] = &o->types[i];
	}
	o->prof.n_sample_type = p->types.nr;
	o->prof.sample_type = o->type_ptrs;
	perftools__profiles__value_type__init(&o->period_type);
	o->period_type.type = str_idx(x, p->period_type.type, err);
	o->period_type.unit = str_idx(x, p->period_type.unit, err);
	o->prof.period_type = &o->period_type;
	if (p->default_type)
		o->prof.default_sample_type = str_idx(x, p->default_type, err);
}

static void fill_samples(struct pb_out *o, const struct profile *p, struct str_index *x,
			 int *err)
{
	size_t i, j, nl = 0, nloc = 0, nval = 0;

	for (i = 0; i < p->samples.nr; i++) {
		const struct profile_sample *s = &p->samples.items[i];
		PbSample *ps = &o->samples[i];

		perftools__profiles__sample__init(ps);
		ps->n_location_id = s->nr_locs;
		ps->location_id = &o->loc_ids[nloc];
		memcpy(ps->location_id, s->locs, s->nr_locs * sizeof(*s->locs));
		nloc += s->nr_locs;
		ps->n_value = p->types.nr;
		ps->value = &o->values[nval];
		memcpy(ps->value, s->values, p->types.nr * sizeof(*s->values));
		nval += p->types.nr;
		ps->n_label = s->nr_labels;
		ps->label = &o->label_ptrs[nl];
		for (j = 0; j < s->nr_labels; j++, nl++) {
			const struct profile_label *l = &s->labels[j];
			PbLabel *pl = &o->labels[nl];

			perftools__profiles__label__init(pl);
			pl->key = str_idx(x, l->key, err);
			if (l->str)
				pl->str = str_idx(x, l->str, err);
			pl->num = l->num;
			if (l->num_unit)
				pl->num_unit = str_idx(x, l->num_unit, err);
			o->label_ptrs[nl] = pl;
		}
		o->sample_ptrs[i] = ps;
	}
	o->prof.n_sample = p->samples.nr;
	o->prof.sample = o->sample_ptrs;
}

static void fill_mappings(struct pb_out *o, const struct profile *p, struct str_index *x,
			  int *err)
{
	size_t i;

	for (i = 0; i < p->mappings.nr; i++) {
		const struct profile_mapping *m = &p->mappings.items[i];
		PbMapping *pm = &o->mappings[i];

		perftools__profiles__mapping__init(pm);
		pm->id = i + 1;
		pm->memory_start = m->start;
		pm->memory_limit = m->limit;
		pm->file_offset = m->offset;
		pm->filename = str_idx(x, m->file, err);
		pm->build_id = str_idx(x, m->build_id, err);
		pm->has_functions = m->has_functions;
		pm->has_filenames = m->has_filenames;
		pm->has_line_numbers = m->has_line_numbers;
		pm->has_inline_frames = m->has_inline_frames;
		o->mapping_ptrs[i] = pm;
	}
	o->prof.n_mapping = p->mappings.nr;
	o->prof.mapping = o->mapping_ptrs;
}

static void fill_locations(struct pb_out *o, const struct profile *p)
{
	size_t i, j, n = 0;

	for (i = 0; i < p->locations.nr; i++) {
		const struct profile_location *l = &p->locations.items[i];
		PbLocation *pl = &o->locations[i];

		perftools__profiles__location__init(pl);
		pl->id = i + 1;
		pl->mapping_id = l->mapping_id;
		pl->address = l->address;
		pl->n_line = l->nr_lines;
		pl->line = &o->line_ptrs[n];
		for (j = 0; j < l->nr_lines; j++, n++) {
			perftools__profiles__line__init(&o->lines[n]);
			o->lines[n].function_id = l->lines[j].function_id;
			o->lines[n].line = l->lines[j].line;
			o->line_ptrs[n] = &o->lines[n];
		}
		o->location_ptrs[i] = pl;
	}
	o->prof.n_location = p->locations.nr;
	o->prof.location = o->location_ptrs;
}

static void fill_functions(struct pb_out *o, const struct profile *p, struct str_index *x,
			   int *err)
{
	size_t i;

	for (i = 0; i < p->functions.nr; i++) {
		const struct profile_function *f = &p->functions.items[i];
		PbFunction *pf = &o->functions[i];

		perftools__profiles__function__init(pf);
		pf->id = i + 1;
		pf->name = str_idx(x, f->name, err);
		pf->system_name = str_idx(x, f->system_name, err);
		pf->filename = str_idx(x, f->file, err);
		pf->start_line = f->start_line;
		o->function_ptrs[i] = pf;
	}
	o->prof.n_function = p->functions.nr;
	o->prof.function = o->function_ptrs;
}

/* Comments: foreign ones first, then "latprof:KEY=VALUE" per metadata key. */
static int fill_comments(struct pb_out *o, const struct profile *p, struct str_index *x,
			 struct strtab *extra)
{
	size_t i, n = 0;
	int err = 0;

	for (i = 0; i < p->comments.nr; i++)
		o->comments[n++] = str_idx(x, p->comments.items[i], &err);
	for (i = 0; i < p->meta.nr; i++) {
		char *s;
		const char *in;

		if (asprintf(&s, META_PREFIX "%s=%s", p->meta.items[i].key,
			     p->meta.items[i].value) < 0)
			return -ENOMEM;
		in = strtab_intern(extra, s);
		free(s);
		if (!in)
			return -ENOMEM;
		o->comments[n++] = str_idx(x, in, &err);
	}
	o->prof.n_comment = n;
	o->prof.comment = o->comments;
	return err;
}

static int pb_out_alloc(struct pb_out *o, const struct profile *p)
{
	size_t i, nl = 0, nloc = 0, nlines = 0, nval;

	for (i = 0; i < p->samples.nr; i++) {
		nl += p->samples.items[i].nr_labels;
		nloc += p->samples.items[i].nr_locs;
	}
	for (i = 0; i < p->locations.nr; i++)
		nlines += p->locations.items[i].nr_lines;
	ALLOC(o->types, p->types.nr);
	ALLOC(o->type_ptrs, p->types.nr);
	ALLOC(o->samples, p->samples.nr);
	ALLOC(o->sample_ptrs, p->samples.nr);
	ALLOC(o->labels, nl);
	ALLOC(o->label_ptrs, nl);
	ALLOC(o->loc_ids, nloc);
	nval = p->samples.nr * p->types.nr;
	ALLOC(o->values, nval);
	ALLOC(o->mappings, p->mappings.nr);
	ALLOC(o->mapping_ptrs, p->mappings.nr);
	ALLOC(o->locations, p->locations.nr);
	ALLOC(o->location_ptrs, p->locations.nr);
	ALLOC(o->lines, nlines);
	ALLOC(o->line_ptrs, nlines);
	ALLOC(o->functions, p->functions.nr);
	ALLOC(o->function_ptrs, p->functions.nr);
	ALLOC(o->comments, p->comments.nr + p->meta.nr);
	if (!o->types || !o->type_ptrs || !o->samples || !o->sample_ptrs || !o->labels ||
	    !o->label_ptrs || !o->loc_ids || !o->values || !o->mappings || !o->mapping_ptrs ||
	    !o->locations || !o->location_ptrs || !o->lines || !o->line_ptrs ||
	    !o->functions || !o->function_ptrs || !o->comments)
		return -ENOMEM;
	return 0;
}

static int gzip_write(const uint8_t *buf, size_t len, FILE *f)
{
	unsigned char out[65536];
	z_stream z = { 0 };
	int zr, err = 0;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)buf;
	z.avail_in = len;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			err = -EIO;
			break;
		}
		if (fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out) {
			err = errno ? -errno : -EIO;
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return err;
}

int pprof_write(const struct profile *p, FILE *f)
{
	struct pb_out o = { 0 };
	struct str_index x = { 0 };
	struct strtab *extra = strtab_new();
	uint8_t *buf = NULL;
	size_t len;
	int err;

	perftools__profiles__profile__init(&o.prof);
	err = extra ? pb_out_alloc(&o, p) : -ENOMEM;
	if (err)
		goto out;
	str_idx(&x, profile_str((struct profile *)p, ""), &err);	/* index 0 is "" */
	fill_types(&o, p, &x, &err);
	fill_samples(&o, p, &x, &err);
	fill_mappings(&o, p, &x, &err);
	fill_locations(&o, p);
	fill_functions(&o, p, &x, &err);
	if (!err)
		err = fill_comments(&o, p, &x, extra);
	if (err)
		goto out;
	o.prof.time_nanos = p->time_ns;
	o.prof.duration_nanos = p->duration_ns;
	o.prof.period = p->period;
	o.prof.n_string_table = x.nr;
	o.prof.string_table = (char **)x.items;
	len = perftools__profiles__profile__get_packed_size(&o.prof);
	buf = malloc(len ? len : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	perftools__profiles__profile__pack(&o.prof, buf);
	err = gzip_write(buf, len, f);
out:
	o.prof.string_table = NULL;	/* owned by x */
	pb_out_release(&o);
	str_index_release(&x);
	strtab_free(extra);
	free(buf);
	return err;
}

static int pprof_write_cb(FILE *f, void *arg)
{
	return pprof_write(arg, f);
}

int pprof_write_file(const struct profile *p, const char *path)
{
	return write_file_atomic(path, pprof_write_cb, (void *)p);
}
