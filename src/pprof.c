// SPDX-License-Identifier: GPL-2.0-only
/*
 * pprof encoding and decoding. The writer builds the protobuf-c message tree
 * over the profile's arrays (string table from interned pointers), packs it
 * and gzips it. The reader inflates with a size cap, unpacks, and validates
 * every index before it builds a struct profile: a hostile file gets -EINVAL
 * and a reason, never a crash.
 */
#include "src/pprof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "src/hashmap.h"
#include "src/util.h"

#define META_PREFIX "latprof:"
#define MAX_INFLATED (1ULL << 30)

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;
typedef Perftools__Profiles__ValueType PbValueType;

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

/* Inflate gzip/zlib data with a size cap. 0, -ENOMEM, or -EINVAL (why set). */
static int inflate_all(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len,
		       const char **why)
{
	z_stream z = { 0 };
	size_t alloc = len * 4 + 4096, n = 0;
	uint8_t *buf = NULL, *q;
	int zr = Z_OK, err = 0;

	if (inflateInit2(&z, 15 + 32) != Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)in;
	z.avail_in = len;
	while (zr != Z_STREAM_END) {
		if (n == alloc || !buf) {
			if (buf)
				alloc *= 2;
			if (alloc > MAX_INFLATED) {
				*why = "decompressed size over 1 GiB";
				err = -EINVAL;
				break;
			}
			q = realloc(buf, alloc);
			if (!q) {
				err = -ENOMEM;
				break;
			}
			buf = q;
		}
		z.next_out = buf + n;
		z.avail_out = alloc - n;
		zr = inflate(&z, Z_NO_FLUSH);
		n = alloc - z.avail_out;
		if (zr == Z_STREAM_END)
			break;
		if (zr != Z_OK || (z.avail_in == 0 && z.avail_out != 0)) {
			*why = "truncated or corrupt gzip data";
			err = -EINVAL;
			break;
		}
	}
	inflateEnd(&z);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*out_len = n;
	return 0;
}

/* Every index a foreign file hands us is checked before use. */
struct pb_in {
	const PbProfile *pb;
	struct profile *p;
	const char **strs;	/* string table, interned */
	uint64_t *map_ids, *loc_ids, *fn_ids;	/* sorted foreign ids */
	uint64_t *map_new, *loc_new, *fn_new;	/* ... their new ids */
	const char *why;
};

static bool pb_str(struct pb_in *in, int64_t idx, const char **out)
{
	if (idx < 0 || (uint64_t)idx >= in->pb->n_string_table) {
		in->why = "string index out of range";
		return false;
	}
	*out = in->strs[idx];
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Foreign id -> our id via binary search; 0 if unknown. */
static uint64_t remap(const uint64_t *ids, const uint64_t *new_ids, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ids[mid] == id)
			return new_ids[mid];
		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

struct id_pair {
	uint64_t id, new_id;
};

/* Sort the (foreign id, new id) pairs and reject duplicate ids. */
static int index_ids(struct pb_in *in, struct id_pair *pairs, size_t n, uint64_t **ids,
		     uint64_t **new_ids)
{
	size_t i;

	qsort(pairs, n, sizeof(*pairs), cmp_u64);	/* id is the first member */
	*ids = calloc(n + 1, sizeof(**ids));
	*new_ids = calloc(n + 1, sizeof(**new_ids));
	if (!*ids || !*new_ids)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!pairs[i].id || (i && pairs[i].id == pairs[i - 1].id)) {
			in->why = "zero or duplicate id";
			return -EINVAL;
		}
		(*ids)[i] = pairs[i].id;
		(*new_ids)[i] = pairs[i].new_id;
	}
	return 0;
}

static int read_functions(struct pb_in *in)
{
	const PbProfile *pb = in->pb;
	struct id_pair *pairs = calloc(pb->n_function + 1, sizeof(*pairs));
	int err = 0;
	size_t i;

	if (!pairs)
		return -ENOMEM;
	for (i = 0; i < pb->n_function && !err; i++) {
		const PbFunction *f = pb->function[i];
		const char *name, *sys, *file;

		if (!pb_str(in, f->name, &name) || !pb_str(in, f->system_name, &sys) ||
		    !pb_str(in, f->filename, &file)) {
			err = -EINVAL;
			break;
		}
		pairs[i].id = f->id;
		pairs[i].new_id = profile_function_id(in->p, name, sys, file, f->start_line);
		if (!pairs[i].new_id)
			err = -ENOMEM;
	}
	if (!err)
		err = index_ids(in, pairs, pb->n_function, &in->fn_ids, &in->fn_new);
	free(pairs);
	return err;
}

static int read_mappings(struct pb_in *in)
{
	const PbProfile *pb = in->pb;
	struct id_pair *pairs = calloc(pb->n_mapping + 1, sizeof(*pairs));
	int err = 0;
	size_t i;

	if (!pairs)
		return -ENOMEM;
	for (i = 0; i < pb->n_mapping && !err; i++) {
		const PbMapping *m = pb->mapping[i];
		struct profile_mapping pm = {
			.start = m->memory_start,
			.limit = m->memory_limit,
			.offset = m->file_offset,
			.has_functions = m->has_functions,
			.has_filenames = m->has_filenames,
			.has_line_numbers = m->has_line_numbers,
			.has_inline_frames = m->has_inline_frames,
		};

		if (!pb_str(in, m->filename, &pm.file) || !pb_str(in, m->build_id, &pm.build_id)) {
			err = -EINVAL;
			break;
		}
		pairs[i].id = m->id;
		pairs[i].new_id = profile_add_mapping(in->p, &pm);
		if (!pairs[i].new_id)
			err = -ENOMEM;
	}
	if (!err)
		err = index_ids(in, pairs, pb->n_mapping, &in->map_ids, &in->map_new);
	free(pairs);
	return err;
}

static uint64_t read_location(struct pb_in *in, const PbLocation *l, int *err)
{
	const PbProfile *pb = in->pb;
	struct profile_line *lines = calloc(l->n_line + 1, sizeof(*lines));
	uint64_t map = 0, id = 0;
	size_t j;

	if (!lines) {
		*err = -ENOMEM;
		return 0;
	}
	if (l->mapping_id) {
		map = remap(in->map_ids, in->map_new, pb->n_mapping, l->mapping_id);
		if (!map) {
			in->why = "location refers to an unknown mapping";
			*err = -EINVAL;
			goto out;
		}
	}
	for (j = 0; j < l->n_line; j++) {
		lines[j].function_id = remap(in->fn_ids, in->fn_new, pb->n_function,
					     l->line[j]->function_id);
		lines[j].line = l->line[j]->line;
		if (!lines[j].function_id) {
			in->why = "location line refers to an unknown function";
			*err = -EINVAL;
			goto out;
		}
	}
	id = profile_add_location(in->p, map, l->address, lines, l->n_line);
	if (!id)
		*err = -ENOMEM;
out:
	free(lines);
	return id;
}

static int read_locations(struct pb_in *in)
{
	const PbProfile *pb = in->pb;
	struct id_pair *pairs = calloc(pb->n_location + 1, sizeof(*pairs));
	int err = 0;
	size_t i;

	if (!pairs)
		return -ENOMEM;
	for (i = 0; i < pb->n_location && !err; i++) {
		pairs[i].id = pb->location[i]->id;
		pairs[i].new_id = read_location(in, pb->location[i], &err);
	}
	if (!err)
		err = index_ids(in, pairs, pb->n_location, &in->loc_ids, &in->loc_new);
	free(pairs);
	return err;
}

static int read_labels(struct pb_in *in, const PbSample *s, struct profile_label *labels)
{
	size_t j;

	for (j = 0; j < s->n_label; j++) {
		const PbLabel *l = s->label[j];
		const char *str, *unit;

		if (!pb_str(in, l->key, &labels[j].key) || !pb_str(in, l->str, &str) ||
		    !pb_str(in, l->num_unit, &unit))
			return -EINVAL;
		labels[j].str = l->str ? str : NULL;
		labels[j].num = l->num;
		labels[j].num_unit = l->num_unit ? unit : NULL;
	}
	return 0;
}

static int read_sample(struct pb_in *in, const PbSample *s)
{
	const PbProfile *pb = in->pb;
	struct profile_label *labels = calloc(s->n_label + 1, sizeof(*labels));
	uint64_t *locs = calloc(s->n_location_id + 1, sizeof(*locs));
	size_t j;
	int err = -ENOMEM;

	if (!labels || !locs)
		goto out;
	err = -EINVAL;
	if (s->n_value != pb->n_sample_type) {
		in->why = "sample has the wrong number of values";
		goto out;
	}
	for (j = 0; j < s->n_location_id; j++) {
		locs[j] = remap(in->loc_ids, in->loc_new, pb->n_location, s->location_id[j]);
		if (!locs[j]) {
			in->why = "sample refers to an unknown location";
			goto out;
		}
	}
	if (read_labels(in, s, labels))
		goto out;
	err = profile_add_sample(in->p, locs, s->n_location_id, s->value, labels, s->n_label);
out:
	free(labels);
	free(locs);
	return err;
}

static int read_header(struct pb_in *in)
{
	const PbProfile *pb = in->pb;
	struct profile *p = in->p;
	const char *type, *unit, *c;
	size_t i;

	for (i = 0; i < pb->n_sample_type; i++) {
		if (!pb_str(in, pb->sample_type[i]->type, &type) ||
		    !pb_str(in, pb->sample_type[i]->unit, &unit))
			return -EINVAL;
		if (profile_add_type(p, type, unit) < 0)
			return -ENOMEM;
	}
	if (pb->period_type && (!pb_str(in, pb->period_type->type, &p->period_type.type) ||
				!pb_str(in, pb->period_type->unit, &p->period_type.unit)))
		return -EINVAL;
	p->period = pb->period;
	p->time_ns = pb->time_nanos;
	p->duration_ns = pb->duration_nanos;
	for (i = 0; i < pb->n_comment; i++) {
		const char *eq;

		if (!pb_str(in, pb->comment[i], &c))
			return -EINVAL;
		eq = strchr(c, '=');
		if (!strncmp(c, META_PREFIX, strlen(META_PREFIX)) && eq) {
			char *key = strndup(c + strlen(META_PREFIX), eq - c - strlen(META_PREFIX));
			int err = key ? profile_set_meta(p, key, eq + 1) : -ENOMEM;

			free(key);
			if (err)
				return err;
		} else if (array_grow(&p->comments, p->comments.nr + 1)) {
			return -ENOMEM;
		} else {
			p->comments.items[p->comments.nr++] = c;
		}
	}
	return 0;
}

static int pb_in_build(struct pb_in *in)
{
	size_t i;
	int err;

	in->strs = calloc(in->pb->n_string_table + 1, sizeof(*in->strs));
	if (!in->strs)
		return -ENOMEM;
	for (i = 0; i < in->pb->n_string_table; i++) {
		in->strs[i] = profile_str(in->p, in->pb->string_table[i]);
		if (!in->strs[i])
			return -ENOMEM;
	}
	if (in->pb->n_string_table == 0 || in->strs[0][0]) {
		in->why = "string table must start with the empty string";
		return -EINVAL;
	}
	err = read_header(in);
	if (!err)
		err = read_functions(in);
	if (!err)
		err = read_mappings(in);
	if (!err)
		err = read_locations(in);
	for (i = 0; !err && i < in->pb->n_sample; i++)
		err = read_sample(in, in->pb->sample[i]);
	return err;
}

int pprof_read_mem(const void *buf, size_t len, struct profile **out, const char **why)
{
	const uint8_t *b = buf;
	uint8_t *raw = NULL;
	size_t raw_len = len;
	struct pb_in in = { 0 };
	int err;

	*why = NULL;
	if (len >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
		err = inflate_all(b, len, &raw, &raw_len, why);
		if (err)
			return err;
		b = raw;
	}
	in.pb = perftools__profiles__profile__unpack(NULL, raw_len, b);
	if (!in.pb) {
		*why = "not a pprof profile (protobuf decoding failed)";
		free(raw);
		return -EINVAL;
	}
	in.p = profile_new();
	err = in.p ? pb_in_build(&in) : -ENOMEM;
	if (err) {
		*why = in.why;
		profile_free(in.p);
	} else {
		*out = in.p;
	}
	perftools__profiles__profile__free_unpacked((PbProfile *)in.pb, NULL);
	free(in.strs);
	free(in.map_ids);
	free(in.map_new);
	free(in.loc_ids);
	free(in.loc_new);
	free(in.fn_ids);
	free(in.fn_new);
	free(raw);
	return err;
}

int pprof_read_file(const char *path, struct profile **out, const char **why)
{
	char *buf;
	size_t len;
	int err;

	*why = NULL;
	err = read_file(path, &buf, &len);
	if (err)
		return err;
	if (len == 0) {
		*why = "empty file";
		free(buf);
		return -EINVAL;
	}
	err = pprof_read_mem(buf, len, out, why);
	free(buf);
	return err;
}
