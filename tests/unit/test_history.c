// SPDX-License-Identifier: GPL-2.0-only
/*
 * serve's history (src/history.h) and the merge it queries with
 * (src/profile_merge.h): windows merged over a range (samples summed by
 * column name, a column one window lacks zero, shared code deduplicated,
 * the pid filter), the look-back, the memory cap (the bytes never over it,
 * the oldest dropped first), and the spill directory with its own cap (a
 * spilled window still queried, the directory never over its cap, a
 * previous run's files removed).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/history.h"
#include "src/profile_merge.h"
#include "src/sysstats.h"
#include "src/lib/util.h"
#include "tests/unit/check.h"

#define SEC NSEC_PER_SEC
#define T0 (1700000000ULL * SEC)

/* One call of @ns by @pid to @name added to @p's statistics. */
static void sys_add(struct profile *p, uint32_t pid, const char *name, uint64_t ns)
{
	struct sys_stats st = { 0 };
	struct sys_stat s = { .pid = pid };
	size_t i;

	CHECK(sys_stats_load(p, &st) == 0);
	for (i = 0; i < st.nr; i++)
		if (st.items[i].pid == pid && !strcmp(st.items[i].name, name))
			s = st.items[i];
	snprintf(s.name, sizeof(s.name), "%s", name);
	sys_stat_add(&s, ns);
	CHECK(sys_stat_store(p, &s) == 0);
	free(st.items);
}

/* @p's statistics of (@pid, @name), zero when it has none. */
static struct sys_stat sys_get(const struct profile *p, uint32_t pid, const char *name)
{
	struct sys_stats st = { 0 };
	struct sys_stat s = { 0 };
	size_t i;

	CHECK(sys_stats_load(p, &st) == 0);
	for (i = 0; i < st.nr; i++)
		if (st.items[i].pid == pid && !strcmp(st.items[i].name, name))
			s = st.items[i];
	free(st.items);
	return s;
}

/*
 * Window @i: [T0 + i s, T0 + i + 1 s), one sample of pid 10 in leaf_i
 * (value i + 1 in column "cpu"), one of pid 20 in "shared"; with @await, a
 * column "await" too. @pad_fns functions of padding make it larger. Its
 * syscall statistics: pid 10 (comm "app") made i + 1 reads of 2^(i % 16) us
 * each (of windows 0-15 the slowest is the last), pid 20 ("db") one write
 * of 5 us.
 */
static struct profile *window(int i, bool await, int pad_fns)
{
	struct profile *p = profile_new();
	struct profile_mapping m = { .start = 0x1000, .limit = 0x2000, .file = "/bin/app" };
	struct profile_label l10[] = { { .key = "pid", .num = 10 } };
	struct profile_label l20[] = { { .key = "pid", .num = 20 } };
	struct profile_line line = { 0 };
	int64_t v[2] = { i + 1, 7 }, vs[2] = { 7, 7 };
	uint64_t map, loc, shared;
	char name[32];
	int k;

	profile_add_type(p, "cpu", "nanoseconds");
	if (await)
		profile_add_type(p, "await", "nanoseconds");
	map = profile_add_mapping(p, &m);
	snprintf(name, sizeof(name), "leaf_%d", i);
	line.function_id = profile_function_id(p, name, NULL, "app.c", 0);
	loc = profile_add_location(p, map, 0x1100 + i, &line, 1);
	line.function_id = profile_function_id(p, "shared", NULL, "app.c", 0);
	shared = profile_add_location(p, map, 0x1f00, &line, 1);
	profile_add_sample(p, &loc, 1, v, l10, 1);
	profile_add_sample(p, &shared, 1, vs, l20, 1);
	for (k = 0; k < pad_fns; k++) {
		snprintf(name, sizeof(name), "pad_%d_%d_%x", i, k, rand());
		profile_function_id(p, name, NULL, "pad.c", k);
	}
	profile_set_meta_u64(p, "freq_hz", 99);
	profile_set_meta_u64(p, "lost.samples", i);
	profile_set_meta(p, "proc.10.comm", "app");
	profile_set_meta(p, "proc.20.comm", "db");
	for (k = 0; k <= i; k++)
		sys_add(p, 10, "read", 1000ULL << (i % 16));
	sys_add(p, 20, "write", 5000);
	p->time_ns = T0 + i * SEC;
	p->duration_ns = SEC;
	return p;
}

static int64_t column_sum(const struct profile *p, const char *type)
{
	int c = profile_type_index(p, type);
	int64_t sum = 0;
	size_t i;

	for (i = 0; c >= 0 && i < p->samples.nr; i++)
		sum += p->samples.items[i].values[c];
	return c >= 0 ? sum : -1;
}

static void add(struct history *h, struct profile *p, uint64_t now_ns)
{
	CHECK(history_add(h, p, now_ns) == 0);
	profile_free(p);
}

static void test_query(void)
{
	struct history_opts o = { .keep_ns = 600 * SEC, .max_bytes = 1 << 20 };
	struct history *h = history_new(&o);
	struct profile_merge_filter f = { .pid = 10 }, fc = { .comm = "db" };
	struct profile *p = NULL;
	struct sys_stat s;
	const char *why;
	int i;

	for (i = 0; i < 5; i++)
		add(h, window(i, i == 3, 0), T0 + (i + 1) * SEC);
	/* windows 1..3 overlap [T0 + 1.5 s, T0 + 3.5 s) */
	CHECK(history_query(h, T0 + 3 * SEC / 2, T0 + 7 * SEC / 2, NULL, &p, &why) == 0);
	CHECK(p && p->samples.nr == 6);
	CHECK(column_sum(p, "cpu") == 2 + 3 + 4 + 3 * 7);
	CHECK(column_sum(p, "await") == 7 * 2);	/* window 3's only, zero elsewhere */
	CHECK(p && p->functions.nr == 4);	/* leaf_1..3 and shared once */
	CHECK(p && p->mappings.nr == 1);
	CHECK(p && p->time_ns == (int64_t)(T0 + SEC) && p->duration_ns == (int64_t)(3 * SEC));
	CHECK(profile_get_meta_u64(p, "history.windows") == 3);
	CHECK(profile_get_meta_u64(p, "lost.samples") == 3);	/* the last window's */
	CHECK(profile_get_meta_u64(p, "freq_hz") == 99);
	/* syscall statistics add up, not the last window's */
	s = sys_get(p, 10, "read");
	CHECK(s.count == 2 + 3 + 4 && s.max_ns == 8000);
	CHECK(s.total_ns == 2 * 2000 + 3 * 4000 + 4 * 8000);
	CHECK(sys_stat_quantile_ns(&s, 0.99) == 8000);
	CHECK(sys_get(p, 20, "write").count == 3);
	profile_free(p);
	CHECK(history_query(h, T0, T0 + 10 * SEC, &f, &p, &why) == 0);
	CHECK(p && p->samples.nr == 5 && column_sum(p, "cpu") == 15);
	CHECK(sys_get(p, 10, "read").count == 15 && sys_get(p, 20, "write").count == 0);
	profile_free(p);
	CHECK(history_query(h, T0, T0 + 10 * SEC, &fc, &p, &why) == 0);
	CHECK(p && p->samples.nr == 0);	/* these samples have no comm label */
	CHECK(sys_get(p, 10, "read").count == 0 && sys_get(p, 20, "write").count == 5);
	profile_free(p);
	CHECK(history_query(h, T0 + 100 * SEC, T0 + 200 * SEC, NULL, &p, &why) == -ENOENT);
	CHECK(p == NULL);
	history_free(h);
}

static void test_lookback_and_cap(void)
{
	struct history_opts o = { .keep_ns = 10 * SEC, .max_bytes = 64 << 10 };
	struct history *h = history_new(&o);
	struct history_stats st;
	uint64_t max_seen = 0;
	int i;

	for (i = 0; i < 200; i++) {
		add(h, window(i, false, 100), T0 + (i + 1) * SEC);
		history_get_stats(h, &st);
		if (st.bytes > max_seen)
			max_seen = st.bytes;
	}
	history_get_stats(h, &st);
	CHECK(max_seen <= o.max_bytes);
	CHECK(st.windows > 0 && st.windows <= 11);
	CHECK(st.dropped == 200 - st.windows);
	CHECK(st.newest_ns == T0 + 200 * SEC);
	CHECK(st.oldest_ns >= T0 + 189 * SEC);	/* the look-back: 10 s before the last add */
	history_free(h);

	/* a cap smaller than the look-back: the newest windows kept, within it */
	o.keep_ns = 600 * SEC;
	o.max_bytes = 16 << 10;
	h = history_new(&o);
	for (i = 0; i < 50; i++)
		add(h, window(i, false, 100), T0 + (i + 1) * SEC);
	history_get_stats(h, &st);
	CHECK(st.bytes <= o.max_bytes && st.windows >= 1);
	CHECK(st.newest_ns == T0 + 50 * SEC);
	history_free(h);
}

static size_t dir_files(const char *dir, uint64_t *bytes)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat sb;
	char path[512];
	size_t n = 0;

	*bytes = 0;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!stat(path, &sb))
			*bytes += sb.st_size;
		n++;
	}
	if (d)
		closedir(d);
	return n;
}

static void test_spill(void)
{
	char dir[] = "/tmp/latprof-history-XXXXXX", old[600];
	struct history_opts o = { .keep_ns = 600 * SEC, .max_bytes = 8 << 10,
				  .spill_max_bytes = 64 << 10 };
	struct history_stats st;
	struct profile *p = NULL;
	struct history *h;
	const char *why;
	uint64_t bytes;
	FILE *f;
	int i;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(old, sizeof(old), "%s/window-1.pb.gz", dir);
	f = fopen(old, "w");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	o.spill_dir = dir;
	h = history_new(&o);
	CHECK(h != NULL);
	CHECK(access(old, F_OK) != 0);	/* an earlier run's window is gone */
	for (i = 0; i < 80; i++) {
		add(h, window(i, false, 100), T0 + (i + 1) * SEC);
		history_get_stats(h, &st);
		CHECK(st.bytes <= o.max_bytes);
		CHECK(st.spilled_bytes <= o.spill_max_bytes);
	}
	fprintf(stderr, "spill: %llu windows in memory (%llu bytes), %llu spilled (%llu bytes), %llu dropped\n",
		(unsigned long long)st.windows, (unsigned long long)st.bytes,
		(unsigned long long)st.spilled_windows, (unsigned long long)st.spilled_bytes,
		(unsigned long long)st.dropped);
	CHECK(st.spilled_windows > 0 && st.dropped > 0);
	CHECK(dir_files(dir, &bytes) == st.spilled_windows);
	CHECK(bytes == st.spilled_bytes && bytes <= o.spill_max_bytes);
	/* the oldest window kept is on disk: it is read back */
	CHECK(history_query(h, st.oldest_ns, st.oldest_ns + 1, NULL, &p, &why) == 0);
	CHECK(p && p->samples.nr == 2);
	profile_free(p);
	history_free(h);
	CHECK(dir_files(dir, &bytes) == 0);	/* the agent's end removes its windows */
	rmdir(dir);
}

int main(void)
{
	srand(1);
	test_query();
	test_lookback_and_cap();
	test_spill();
	return check_exit();
}
