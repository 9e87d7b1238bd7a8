// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/profile metadata: set, replace and get back, in order of first set,
 * and fast with many keys (a fork storm sets metadata for each of its
 * tens of thousands of processes; a scan per key made that quadratic).
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "src/profile.h"
#include "src/lib/util.h"
#include "tests/unit/check.h"

#define NR_KEYS 100000

int main(void)
{
	struct profile *p = profile_new();
	char key[64];
	uint64_t t0, i, bad = 0;

	CHECK(p != NULL);
	if (!p)
		return check_exit();
	CHECK(profile_get_meta(p, "absent") == NULL);
	CHECK(profile_set_meta(p, "a", "1") == 0);
	CHECK(profile_set_meta(p, "b", "2") == 0);
	CHECK(profile_set_meta(p, "a", "3") == 0);
	CHECK_STR(profile_get_meta(p, "a"), "3");
	CHECK_STR(profile_get_meta(p, "b"), "2");
	CHECK(p->meta.nr == 2);
	CHECK_STR(p->meta.items[0].key, "a");

	t0 = now_ns();
	for (i = 0; i < NR_KEYS; i++) {
		snprintf(key, sizeof(key), "proc.%" PRIu64 ".rss_kb", i);
		bad += profile_set_meta_u64(p, key, i) != 0;
	}
	for (i = 0; i < NR_KEYS; i++) {
		snprintf(key, sizeof(key), "proc.%" PRIu64 ".rss_kb", i);
		bad += profile_get_meta_u64(p, key) != i;
	}
	CHECK(bad == 0);
	CHECK(p->meta.nr == NR_KEYS + 2);
	CHECK_STR(p->meta.items[NR_KEYS + 1].key, "proc.99999.rss_kb");
	/* linear: ~0.1 s, 1 s under sanitizers; the quadratic scan took minutes */
	fprintf(stderr, "%d keys set and read in %.3f s\n", NR_KEYS, (now_ns() - t0) / 1e9);
	CHECK(now_ns() - t0 < 10 * NSEC_PER_SEC);
	profile_free(p);
	return check_exit();
}
