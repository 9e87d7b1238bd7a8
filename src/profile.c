// SPDX-License-Identifier: GPL-2.0-only
/*
 * The profile model: growable arrays of pprof-shaped records plus the hash
 * indexes that deduplicate functions and locations while a profile is built.
 * It does no I/O (pprof.c reads and writes it).
 */
#include "src/profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/lib/hashmap.h"
#include "src/lib/util.h"

/*
 * Dedup indexes. Strings are interned, so a function is keyed by the three
 * pointers of {name, system_name, file}; a location by {mapping id, address}.
 */
struct profile_idx {
	struct hashmap functions;
	struct hashmap locations;
	struct hashmap meta;		/* key hash -> index + 1 in p->meta */
};

struct profile *profile_new(void)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->strs = strtab_new();
	p->idx = calloc(1, sizeof(*p->idx));
	if (!p->strs || !p->idx) {
		profile_free(p);
		errno = ENOMEM;
		return NULL;
	}
	p->period_type.type = profile_str(p, "");
	p->period_type.unit = p->period_type.type;
	return p;
}

void profile_free(struct profile *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->samples.nr; i++) {
		free(p->samples.items[i].locs);
		free(p->samples.items[i].values);
		free(p->samples.items[i].labels);
	}
	for (i = 0; i < p->locations.nr; i++)
		free(p->locations.items[i].lines);
	free(p->samples.items);
	free(p->locations.items);
	free(p->mappings.items);
	free(p->functions.items);
	free(p->types.items);
	free(p->meta.items);
	free(p->comments.items);
	if (p->idx) {
		hashmap_release(&p->idx->functions);
		hashmap_release(&p->idx->locations);
		hashmap_release(&p->idx->meta);
		free(p->idx);
	}
	strtab_free(p->strs);
	free(p);
}

const char *profile_str(struct profile *p, const char *s)
{
	return strtab_intern(p->strs, s ? s : "");
}

int profile_add_type(struct profile *p, const char *type, const char *unit)
{
	struct profile_value_type *t;

	if (array_grow(&p->types, p->types.nr + 1))
		return -ENOMEM;
	t = &p->types.items[p->types.nr];
	t->type = profile_str(p, type);
	t->unit = profile_str(p, unit);
	if (!t->type || !t->unit)
		return -ENOMEM;
	return p->types.nr++;
}

int profile_type_index(const struct profile *p, const char *type)
{
	size_t i;

	for (i = 0; i < p->types.nr; i++)
		if (!strcmp(p->types.items[i].type, type))
			return i;
	return -1;
}

uint64_t profile_add_mapping(struct profile *p, const struct profile_mapping *m)
{
	struct profile_mapping *n;

	if (array_grow(&p->mappings, p->mappings.nr + 1))
		return 0;
	n = &p->mappings.items[p->mappings.nr];
	*n = *m;
	n->file = profile_str(p, m->file);
	n->build_id = profile_str(p, m->build_id);
	if (!n->file || !n->build_id)
		return 0;
	return ++p->mappings.nr;
}

uint64_t profile_function_id(struct profile *p, const char *name, const char *system_name,
			     const char *file, int64_t start_line)
{
	struct profile_function f = {
		.name = profile_str(p, name),
		.system_name = profile_str(p, system_name ? system_name : name),
		.file = profile_str(p, file),
		.start_line = start_line,
	};
	struct hashmap *h = &p->idx->functions;
	void *id;

	if (!f.name || !f.system_name || !f.file)
		return 0;
	id = hashmap_get(h, f.name, (uintptr_t)f.system_name, (uintptr_t)f.file);
	if (id)
		return HASHMAP_TO_NUM(id);
	if (array_grow(&p->functions, p->functions.nr + 1))
		return 0;
	p->functions.items[p->functions.nr] = f;
	if (hashmap_put(h, f.name, (uintptr_t)f.system_name, (uintptr_t)f.file,
			HASHMAP_NUM(p->functions.nr + 1)))
		return 0;
	return ++p->functions.nr;
}

uint64_t profile_find_location(const struct profile *p, uint64_t mapping_id, uint64_t address)
{
	return HASHMAP_TO_NUM(hashmap_get(&p->idx->locations, NULL, mapping_id, address));
}

uint64_t profile_add_location(struct profile *p, uint64_t mapping_id, uint64_t address,
			      const struct profile_line *lines, size_t nr_lines)
{
	struct profile_location *l;
	struct profile_line *copy = NULL;

	if (nr_lines) {
		copy = calloc(nr_lines, sizeof(*copy));
		if (!copy)
			return 0;
		memcpy(copy, lines, nr_lines * sizeof(*copy));
	}
	if (array_grow(&p->locations, p->locations.nr + 1) ||
	    hashmap_put(&p->idx->locations, NULL, mapping_id, address,
			HASHMAP_NUM(p->locations.nr + 1))) {
		free(copy);
		return 0;
	}
	l = &p->locations.items[p->locations.nr++];
	l->mapping_id = mapping_id;
	l->address = address;
	l->lines = copy;
	l->nr_lines = nr_lines;
	return p->locations.nr;
}

static int copy_labels(struct profile *p, struct profile_sample *s,
		       const struct profile_label *labels, size_t nr)
{
	size_t i;

	s->labels = calloc(nr ? nr : 1, sizeof(*s->labels));
	if (!s->labels)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		s->labels[i] = labels[i];
		s->labels[i].key = profile_str(p, labels[i].key);
		if (labels[i].str)
			s->labels[i].str = profile_str(p, labels[i].str);
		if (labels[i].num_unit)
			s->labels[i].num_unit = profile_str(p, labels[i].num_unit);
		if (!s->labels[i].key)
			return -ENOMEM;
	}
	s->nr_labels = nr;
	return 0;
}

int profile_add_sample(struct profile *p, const uint64_t *locs, size_t nr_locs,
		       const int64_t *values, const struct profile_label *labels,
		       size_t nr_labels)
{
	struct profile_sample s = { .nr_locs = nr_locs };
	int err = -ENOMEM;

	if (array_grow(&p->samples, p->samples.nr + 1))
		return -ENOMEM;
	s.locs = calloc(nr_locs ? nr_locs : 1, sizeof(*s.locs));
	s.values = calloc(p->types.nr ? p->types.nr : 1, sizeof(*s.values));
	if (!s.locs || !s.values)
		goto out;
	/* a sample without a stack may come with locs == NULL: memcpy must not see it */
	if (nr_locs)
		memcpy(s.locs, locs, nr_locs * sizeof(*locs));
	if (p->types.nr)
		memcpy(s.values, values, p->types.nr * sizeof(*values));
	err = copy_labels(p, &s, labels, nr_labels);
	if (err)
		goto out;
	p->samples.items[p->samples.nr++] = s;
	return 0;
out:
	free(s.locs);
	free(s.values);
	free(s.labels);
	return err;
}

/* FNV-1a of @s, the index key of a metadata key. */
static uint64_t meta_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

/*
 * The entry of @key, or NULL. A recording sets metadata for each of its
 * processes, tens of thousands in a fork storm: a scan per key made writing
 * them quadratic. The index holds the first key of each hash; only a key
 * whose hash another key already holds is looked for by a scan.
 */
static struct profile_meta *meta_find(const struct profile *p, const char *key)
{
	uint64_t i = HASHMAP_TO_NUM(hashmap_get(&p->idx->meta, NULL, meta_hash(key), 0));
	size_t j;

	if (!i)
		return NULL;
	if (!strcmp(p->meta.items[i - 1].key, key))
		return &p->meta.items[i - 1];
	for (j = 0; j < p->meta.nr; j++)
		if (!strcmp(p->meta.items[j].key, key))
			return &p->meta.items[j];
	return NULL;
}

int profile_set_meta(struct profile *p, const char *key, const char *value)
{
	const char *k = profile_str(p, key), *v = profile_str(p, value);
	struct profile_meta *m;
	uint64_t h;

	if (!k || !v)
		return -ENOMEM;
	m = meta_find(p, k);
	if (m) {
		m->value = v;
		return 0;
	}
	if (array_grow(&p->meta, p->meta.nr + 1))
		return -ENOMEM;
	h = meta_hash(k);
	if (!hashmap_get(&p->idx->meta, NULL, h, 0) &&
	    hashmap_put(&p->idx->meta, NULL, h, 0, HASHMAP_NUM(p->meta.nr + 1)))
		return -ENOMEM;
	p->meta.items[p->meta.nr].key = k;
	p->meta.items[p->meta.nr++].value = v;
	return 0;
}

int profile_set_meta_u64(struct profile *p, const char *key, uint64_t value)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, value);
	return profile_set_meta(p, key, buf);
}

const char *profile_get_meta(const struct profile *p, const char *key)
{
	const struct profile_meta *m = meta_find(p, key);

	return m ? m->value : NULL;
}

uint64_t profile_get_meta_u64(const struct profile *p, const char *key)
{
	const char *v = profile_get_meta(p, key);
	uint64_t n;

	if (!v || parse_u64(v, 0, UINT64_MAX, &n))
		return 0;
	return n;
}

const struct profile_mapping *profile_mapping(const struct profile *p, uint64_t id)
{
	return id && id <= p->mappings.nr ? &p->mappings.items[id - 1] : NULL;
}

const struct profile_location *profile_location(const struct profile *p, uint64_t id)
{
	return id && id <= p->locations.nr ? &p->locations.items[id - 1] : NULL;
}

const struct profile_function *profile_function(const struct profile *p, uint64_t id)
{
	return id && id <= p->functions.nr ? &p->functions.items[id - 1] : NULL;
}

const struct profile_label *profile_sample_label(const struct profile_sample *s,
						 const char *key)
{
	size_t i;

	for (i = 0; i < s->nr_labels; i++)
		if (!strcmp(s->labels[i].key, key))
			return &s->labels[i];
	return NULL;
}

bool profile_mapping_is_kernel(const struct profile_mapping *m)
{
	return m && !strncmp(m->file, PROFILE_KERNEL_MAPPING,
			     strlen(PROFILE_KERNEL_MAPPING));
}

int profile_copy_meta(struct profile *into, const struct profile *from)
{
	size_t i;
	int err = 0;

	for (i = 0; !err && i < from->meta.nr; i++)
		err = profile_set_meta(into, from->meta.items[i].key, from->meta.items[i].value);
	return err;
}
