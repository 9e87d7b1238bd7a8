// SPDX-License-Identifier: GPL-2.0-only
/* Per-syscall statistics in profile metadata (see sysstats.h). */
#include "src/sysstats.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "bpf/latprof.h"
#include "src/syscalls.h"
#include "src/lib/util.h"

#define META_PREFIX "syscall."

void sys_stat_name(int nr, char *buf, size_t size)
{
	const char *name = nr >= 0 ? syscall_name(nr) : NULL;

	if (name)
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, "syscall_%d", nr);
}

int sys_stat_store(struct profile *p, const struct sys_stat *s)
{
	char key[96], hist[SYS_HIST_TEXT_MAX], *val = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&val, &len);
	int err;

	if (!f)
		return -ENOMEM;
	sys_hist_format(s, hist, sizeof(hist));
	fprintf(f, "count=%" PRIu64 " errors=%" PRIu64 " total_ns=%" PRIu64 " max_ns=%" PRIu64
		" in_flight=%" PRIu64 " hist=%s", s->count, s->errors, s->total_ns, s->max_ns,
		s->in_flight, hist);
	if (fclose(f))
		return -ENOMEM;
	snprintf(key, sizeof(key), META_PREFIX "%" PRIu32 ".%s", s->pid, s->name);
	err = profile_set_meta(p, key, val);
	free(val);
	return err;
}

static int parse_hist(const char *v, struct sys_stat *s);

void sys_hist_format(const struct sys_stat *s, char *buf, size_t size)
{
	size_t len = 0;
	unsigned int i;

	buf[0] = 0;
	for (i = 0; i < SYS_HIST_SLOTS && len + 1 < size; i++)
		if (s->hist[i])
			len += snprintf(buf + len, size - len, "%s%u:%" PRIu64 ":%" PRIu64,
					len ? "," : "", i, s->hist[i], s->hist_ns[i]);
}

int sys_hist_parse(const char *v, struct sys_stat *s)
{
	return parse_hist(v, s);
}

/* "SLOT:COUNT[:SUM_NS],..." into s->hist; -EINVAL when malformed. */
static int parse_hist(const char *v, struct sys_stat *s)
{
	unsigned int slot;
	uint64_t count, sum;
	int used;

	while (*v) {
		if (sscanf(v, "%u:%" SCNu64 "%n", &slot, &count, &used) != 2 ||
		    slot >= SYS_HIST_SLOTS)
			return -EINVAL;
		v += used;
		sum = 0;
		if (*v == ':') {
			if (sscanf(v + 1, "%" SCNu64 "%n", &sum, &used) != 1)
				return -EINVAL;
			v += 1 + used;
		}
		s->hist[slot] = count;
		s->hist_ns[slot] = sum;
		if (*v == ',')
			v++;
		else if (*v)
			return -EINVAL;
	}
	return 0;
}

static int parse_stat(const char *key, const char *val, struct sys_stat *s)
{
	const char *dot = strchr(key, '.');
	const char *h = strstr(val, "hist=");
	char *end;
	unsigned long pid;

	memset(s, 0, sizeof(*s));
	if (!dot)
		return -EINVAL;
	pid = strtoul(key, &end, 10);
	if (end != dot || end == key || pid > UINT32_MAX || !dot[1] ||
	    strlen(dot + 1) >= sizeof(s->name))
		return -EINVAL;
	s->pid = pid;
	strcpy(s->name, dot + 1);
	if (!h || sscanf(val, "count=%" SCNu64 " errors=%" SCNu64 " total_ns=%" SCNu64
			 " max_ns=%" SCNu64 " in_flight=%" SCNu64, &s->count, &s->errors,
			 &s->total_ns, &s->max_ns, &s->in_flight) != 5)
		return -EINVAL;
	return parse_hist(h + 5, s);
}

int sys_stats_load(const struct profile *p, struct sys_stats *out)
{
	struct sys_stat s;
	size_t i;

	for (i = 0; i < p->meta.nr; i++) {
		const struct profile_meta *m = &p->meta.items[i];

		if (strncmp(m->key, META_PREFIX, strlen(META_PREFIX)) ||
		    parse_stat(m->key + strlen(META_PREFIX), m->value, &s))
			continue;
		if (array_grow(out, out->nr + 1))
			return -ENOMEM;
		out->items[out->nr++] = s;
	}
	return 0;
}

void sys_stat_merge(struct sys_stat *into, const struct sys_stat *from)
{
	unsigned int i;

	into->count += from->count;
	into->errors += from->errors;
	into->total_ns += from->total_ns;
	into->in_flight += from->in_flight;
	if (from->max_ns > into->max_ns)
		into->max_ns = from->max_ns;
	for (i = 0; i < SYS_HIST_SLOTS; i++) {
		into->hist[i] += from->hist[i];
		into->hist_ns[i] += from->hist_ns[i];
	}
}

/* @a - @b, 0 when @b is larger */
static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

void sys_stat_sub(struct sys_stat *into, const struct sys_stat *from)
{
	unsigned int i;

	into->count = sub0(into->count, from->count);
	into->errors = sub0(into->errors, from->errors);
	into->total_ns = sub0(into->total_ns, from->total_ns);
	into->in_flight = sub0(into->in_flight, from->in_flight);
	for (i = 0; i < SYS_HIST_SLOTS; i++) {
		into->hist[i] = sub0(into->hist[i], from->hist[i]);
		into->hist_ns[i] = sub0(into->hist_ns[i], from->hist_ns[i]);
	}
}

void sys_stat_add(struct sys_stat *s, uint64_t ns)
{
	unsigned int slot = lp_hist_slot(ns) & (SYS_HIST_SLOTS - 1);

	s->count++;
	s->total_ns += ns;
	if (ns > s->max_ns)
		s->max_ns = ns;
	s->hist[slot]++;
	s->hist_ns[slot] += ns;
}

void sys_hist_bucket_us(unsigned int slot, uint64_t *low, uint64_t *high)
{
	*low = slot ? 1ULL << (slot - 1) : 0;
	*high = 1ULL << slot;
}

uint64_t sys_stat_quantile_ns(const struct sys_stat *s, double q)
{
	uint64_t total = 0, seen = 0, low, high, ns;
	double rank, frac;
	unsigned int i;

	for (i = 0; i < SYS_HIST_SLOTS; i++)
		total += s->hist[i];
	if (!total || q <= 0)
		return 0;
	if (q >= 1 && s->max_ns)
		return s->max_ns;
	rank = q >= 1 ? total : q * total;
	for (i = 0; i < SYS_HIST_SLOTS; i++) {
		if (!s->hist[i] || seen + s->hist[i] < rank) {
			seen += s->hist[i];
			continue;
		}
		sys_hist_bucket_us(i, &low, &high);
		if (s->hist_ns[i]) {
			ns = s->hist_ns[i] / s->hist[i];
		} else {
			frac = (rank - seen) / s->hist[i];
			ns = (uint64_t)((low + frac * (high - low)) * 1000.0);
		}
		if (i == SYS_HIST_SLOTS - 1 || (s->max_ns && ns > s->max_ns))
			ns = s->max_ns > low * 1000 ? s->max_ns : low * 1000;
		/* stay inside the bucket: its upper bound is exclusive */
		if (ns >= high * 1000 && i != SYS_HIST_SLOTS - 1)
			ns = high * 1000 - 1;
		if (ns < low * 1000)
			ns = low * 1000;
		return ns;
	}
	return s->max_ns;
}

int sys_sum_add(struct sys_sum *sum, const struct sys_stat *s)
{
	const char *name;
	uint64_t i;
	int err;

	if (!sum->names && !(sum->names = strtab_new()))
		return -ENOMEM;
	name = strtab_intern(sum->names, s->name);
	if (!name)
		return -ENOMEM;
	i = HASHMAP_TO_NUM(hashmap_get(&sum->idx, name, s->pid, 0));
	if (i) {
		sys_stat_merge(&sum->st.items[i - 1], s);
		return 0;
	}
	err = array_grow(&sum->st, sum->st.nr + 1);
	if (!err)
		err = hashmap_put(&sum->idx, name, s->pid, 0, HASHMAP_NUM(sum->st.nr + 1));
	if (!err)
		sum->st.items[sum->st.nr++] = *s;
	return err;
}

int sys_sum_store(const struct sys_sum *sum, struct profile *p)
{
	size_t i;
	int err = 0;

	for (i = 0; !err && i < sum->st.nr; i++)
		err = sys_stat_store(p, &sum->st.items[i]);
	return err;
}

void sys_sum_release(struct sys_sum *sum)
{
	free(sum->st.items);
	hashmap_release(&sum->idx);
	strtab_free(sum->names);
	*sum = (struct sys_sum){ 0 };
}
