// SPDX-License-Identifier: GPL-2.0-only
/* Records of numbers in profile metadata (metarecords.h). */
#include "src/metarecords.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int store_chunk(struct profile *p, const char *prefix, const uint64_t *v, size_t n,
		       size_t fields, size_t k)
{
	char key[64], *buf = NULL;
	size_t len = 0, i, j;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		for (j = 0; j < fields; j++)
			fprintf(f, "%s%llu", j ? "," : i ? ";" : "",
				(unsigned long long)v[i * fields + j]);
	if (fclose(f)) {
		free(buf);
		return -ENOMEM;
	}
	snprintf(key, sizeof(key), "%s.%zu", prefix, k);
	err = profile_set_meta(p, key, buf);
	free(buf);
	return err;
}

int metarecords_store(struct profile *p, const char *prefix, const uint64_t *v, size_t nr,
		      size_t fields)
{
	size_t i, n;
	int err = 0;

	if (!fields || fields > METARECORDS_MAX_FIELDS || strlen(prefix) > 40)
		return -EINVAL;
	for (i = 0; !err && i < nr; i += n) {
		n = nr - i < METARECORDS_PER_CHUNK ? nr - i : METARECORDS_PER_CHUNK;
		err = store_chunk(p, prefix, v + i * fields, n, fields, i / METARECORDS_PER_CHUNK);
	}
	return err;
}

/* Parse the record [@s, @end) into @v; false when malformed. */
static bool record_parse(const char *s, const char *end, size_t fields, uint64_t *v)
{
	char *next = (char *)s;
	size_t i;

	for (i = 0; i < fields; i++) {
		if (s >= end || *s < '0' || *s > '9')
			return false;
		errno = 0;
		v[i] = strtoull(s, &next, 10);
		if (errno || next > end || (i + 1 < fields && *next != ','))
			return false;
		s = next + 1;
	}
	return next == end;
}

int metarecords_each(const struct profile *p, const char *prefix, size_t fields,
		     int (*fn)(void *arg, const uint64_t *v), void *arg)
{
	size_t i, plen = strlen(prefix);
	uint64_t v[METARECORDS_MAX_FIELDS];
	const char *key, *rest, *s, *end;
	int err = 0;

	if (!fields || fields > METARECORDS_MAX_FIELDS)
		return -EINVAL;
	for (i = 0; !err && i < p->meta.nr; i++) {
		key = p->meta.items[i].key;
		if (strncmp(key, prefix, plen) || key[plen] != '.')
			continue;
		rest = key + plen + 1;
		if (*rest < '0' || *rest > '9' || rest[strspn(rest, "0123456789")])
			continue;
		for (s = p->meta.items[i].value; !err && *s; s = *end ? end + 1 : end) {
			end = strchr(s, ';');
			if (!end)
				end = s + strlen(s);
			if (record_parse(s, end, fields, v))
				err = fn(arg, v);
		}
	}
	return err;
}
