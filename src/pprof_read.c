// SPDX-License-Identifier: GPL-2.0-only
/*
 * pprof decoding: inflate with a size cap, unpack, and validate every index
 * before building a struct profile, so a hostile file gets -EINVAL and a
 * reason, never a crash. Foreign ids are renumbered to ours.
 */
#include "src/pprof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "src/pprof_pb.h"
#include "src/lib/util.h"

#define MAX_INFLATED (1ULL << 30)

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

	array_sort(pairs, n, sizeof(*pairs), array_cmp_u64);	/* id is the first member */
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
	if (pb->default_sample_type && !pb_str(in, pb->default_sample_type, &p->default_type))
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

struct profile *profile_load(const char *path)
{
	struct profile *p = NULL;
	const char *why = NULL;
	int err;

	if (!path)
		path = PROFILE_DEFAULT_PATH;
	err = pprof_read_file(path, &p, &why);
	if (err) {
		pr_err("cannot read profile %s: %s", path, why ? why : strerror(-err));
		return NULL;
	}
	return p;
}
