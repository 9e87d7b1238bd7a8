// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/pprof + src/profile + src/stacks: a profile survives write + read with
 * every field, metadata and folded naming intact; corrupt input is rejected
 * with a reason, never a crash.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/pprof.h"
#include "src/weight.h"
#include "src/stackflame.h"
#include "src/stacks.h"
#include "tests/unit/check.h"

static struct profile *sample_profile(void)
{
	struct profile *p = profile_new();
	struct profile_mapping exe = { .start = 0x400000, .limit = 0x500000, .file = "/bin/app",
				       .build_id = "abcd", .has_functions = true };
	struct profile_mapping kern = { .start = 0, .limit = ~0ULL,
					.file = PROFILE_KERNEL_MAPPING };
	struct profile_label labels[] = { { .key = "pid", .num = 42 },
					  { .key = "comm", .str = "app" } };
	struct profile_line inl[2];
	uint64_t m1, m2, f_main, f_hot, f_inl, f_k, l_main, l_hot, l_k, l_raw;
	uint64_t stack1[3], stack2[2];
	int64_t v1[2] = { 3, 30000000 }, v2[2] = { 1, 10000000 };

	CHECK(profile_add_type(p, PROFILE_TYPE_SAMPLES, "count") == 0);
	CHECK(profile_add_type(p, PROFILE_TYPE_CPU, "nanoseconds") == 1);
	m1 = profile_add_mapping(p, &exe);
	m2 = profile_add_mapping(p, &kern);
	f_main = profile_function_id(p, "main", NULL, "app.c", 10);
	f_hot = profile_function_id(p, "hot", NULL, "app.c", 20);
	f_inl = profile_function_id(p, "helper", NULL, "app.h", 3);
	f_k = profile_function_id(p, "vfs_read", NULL, NULL, 0);
	CHECK(profile_function_id(p, "main", NULL, "app.c", 10) == f_main);	/* dedup */
	l_main = profile_add_location(p, m1, 0x401000, &(struct profile_line){ f_main, 12 }, 1);
	inl[0] = (struct profile_line){ f_inl, 4 };
	inl[1] = (struct profile_line){ f_hot, 22 };
	l_hot = profile_add_location(p, m1, 0x402000, inl, 2);
	l_k = profile_add_location(p, m2, 0xffffffff81000000ULL,
				   &(struct profile_line){ f_k, 0 }, 1);
	l_raw = profile_add_location(p, m1, 0x403010, NULL, 0);
	CHECK(profile_find_location(p, m1, 0x402000) == l_hot);
	stack1[0] = l_k;
	stack1[1] = l_hot;
	stack1[2] = l_main;
	stack2[0] = l_raw;
	stack2[1] = l_main;
	CHECK(profile_add_sample(p, stack1, 3, v1, labels, 2) == 0);
	CHECK(profile_add_sample(p, stack2, 2, v2, labels, 2) == 0);
	CHECK(profile_set_meta_u64(p, "freq_hz", 99) == 0);
	CHECK(profile_set_meta(p, "kernel", "6.18") == 0);
	CHECK(profile_set_meta_u64(p, "freq_hz", 100) == 0);	/* replaces */
	p->period = 10000000;
	p->duration_ns = 2000000000;
	return p;
}

static char *folded_of(const struct profile *p, unsigned flags)
{
	struct flame *f = flame_new();
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	struct profile_weight w = { .name = "samples", .cols = { 0 }, .nr_cols = 1 };

	CHECK(stacks_to_flame(p, &w, flags, f) == 0);
	CHECK(flame_write_folded(f, out) == 0);
	fclose(out);
	flame_free(f);
	return buf;
}

static void test_roundtrip(void)
{
	struct profile *p = sample_profile(), *q = NULL;
	const char *why = NULL;
	char *buf = NULL, *a, *b;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(pprof_write(p, f) == 0);
	fclose(f);
	CHECK(len > 20 && (unsigned char)buf[0] == 0x1f);
	CHECK(pprof_read_mem(buf, len, &q, &why) == 0);
	if (!q)
		return;
	CHECK(q->samples.nr == 2);
	CHECK(q->types.nr == 2);
	CHECK_STR(q->types.items[1].type, "cpu");
	CHECK(q->period == 10000000);
	CHECK(q->duration_ns == 2000000000);
	CHECK(profile_get_meta_u64(q, "freq_hz") == 100);
	CHECK_STR(profile_get_meta(q, "kernel"), "6.18");
	CHECK_STR(q->mappings.items[0].build_id, "abcd");
	a = folded_of(p, 0);
	b = folded_of(q, 0);
	CHECK_STR(a, "app;main;app+0x3010 1\napp;main;hot;helper_[i];vfs_read_[k] 3\n");
	CHECK_STR(a, b);
	free(a);
	free(b);
	a = folded_of(q, STACKS_FLAG_PER_PID);
	CHECK(strstr(a, "app-42;main;hot") != NULL);
	free(a);
	profile_free(p);
	profile_free(q);
	free(buf);
}

static void test_corrupt(void)
{
	static const unsigned char junk[] = { 0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02, 0x03 };
	static const unsigned char garbage[] = "this is not a profile at all";
	struct profile *p = sample_profile(), *q = NULL;
	const char *why = NULL;
	char *buf = NULL;
	size_t len = 0, cut;
	FILE *f = open_memstream(&buf, &len);

	CHECK(pprof_read_mem(junk, sizeof(junk), &q, &why) == -EINVAL && why && !q);
	CHECK(pprof_read_mem(garbage, sizeof(garbage), &q, &why) == -EINVAL && why && !q);
	CHECK(pprof_write(p, f) == 0);
	fclose(f);
	for (cut = 1; cut < len; cut += 7) {	/* every truncation is an error */
		why = NULL;
		CHECK(pprof_read_mem(buf, cut, &q, &why) < 0);
		CHECK(q == NULL);
	}
	CHECK(pprof_read_file("/nonexistent/profile.pb.gz", &q, &why) == -ENOENT);
	free(buf);
	profile_free(p);
}

/*
 * A sample with no stack, given as (NULL, 0) as src/collect/build.c does for a request
 * without user frames (the SANITIZE=1 build caught a memcpy from NULL there),
 * and a profile without sample types.
 */
static void test_empty_sample(void)
{
	struct profile *p = profile_new(), *q = NULL;
	int64_t v[1] = { 7 };
	const char *why = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(p && profile_add_sample(p, NULL, 0, NULL, NULL, 0) == 0);
	CHECK(p->samples.nr == 1 && p->samples.items[0].nr_locs == 0);
	CHECK(profile_add_type(p, PROFILE_TYPE_SAMPLES, "count") == 0);
	CHECK(profile_add_sample(p, NULL, 0, v, NULL, 0) == 0);
	CHECK(p->samples.items[1].values[0] == 7);
	f = open_memstream(&buf, &len);
	CHECK(f && pprof_write(p, f) == 0);
	fclose(f);
	CHECK(pprof_read_mem(buf, len, &q, &why) == 0 && q && q->samples.nr == 2);
	free(buf);
	profile_free(q);
	profile_free(p);
}

int main(void)
{
	test_roundtrip();
	test_empty_sample();
	test_corrupt();
	return check_exit();
}
