// SPDX-License-Identifier: GPL-2.0-only
/* flamegraph/flame: merging and deterministic folded output. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "flamegraph/flame.h"
#include "tests/unit/check.h"

static char *folded(struct flame *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	CHECK(flame_write_folded(f, out) == 0);
	fclose(out);
	return buf;
}

/* A second weight merges like the first and never reaches folded text. */
static void check_pairs(void)
{
	const char *a[] = { "app", "main", "hot_a" };
	const char *b[] = { "app", "main", "gone" };
	struct flame *f = flame_new();
	const struct flame_stack *s;
	char *text;

	CHECK(flame_add_pair(f, a, 3, 10, 4) == 0);
	CHECK(flame_add_pair(f, a, 3, 5, 1) == 0);
	CHECK(flame_add_pair(f, b, 3, 0, 7) == 0);	/* only BEFORE: kept */
	CHECK(flame_add_pair(f, b, 3, 0, 0) == 0);	/* both zero: ignored */
	CHECK(flame_add(f, a, 3, 1) == 0);
	CHECK(flame_nr_stacks(f) == 2);
	CHECK(flame_total(f) == 16);
	CHECK(flame_total2(f) == 12);
	s = flame_stacks(f);
	CHECK(s[0].weight == 0 && s[0].weight2 == 7);	/* "gone" sorts first */
	CHECK(s[1].weight == 16 && s[1].weight2 == 5);
	text = folded(f);
	CHECK_STR(text, "app;main;hot_a 16\n");
	free(text);
	CHECK(flame_add(f, a, 3, UINT64_MAX) == -ERANGE);
	CHECK(flame_total(f) == 16);
	flame_free(f);
}

/*
 * Sorting rebuilds the hash slots: with more stacks than the first table had
 * room for, rebuilding once looped forever.
 */
static void check_many(void)
{
	const char *st[] = { "app", NULL };
	struct flame *f = flame_new();
	char name[32];
	int i;

	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "fn%d", i);
		st[1] = name;
		CHECK(flame_add(f, st, 2, 1) == 0);
	}
	CHECK(flame_stacks(f) != NULL);
	for (i = 0; i < 5000; i += 7) {	/* merges into the sorted stacks */
		snprintf(name, sizeof(name), "fn%d", i);
		st[1] = name;
		CHECK(flame_add(f, st, 2, 1) == 0);
	}
	CHECK(flame_nr_stacks(f) == 5000);
	CHECK(flame_total(f) == 5000 + 715);
	flame_free(f);
}

int main(void)
{
	const char *a[] = { "app", "main", "hot_a" };
	const char *b[] = { "app", "main", "hot_b" };
	const char *k[] = { "app", "main", "read", "vfs_read_[k]" };
	struct flame *f = flame_new();
	char *text;

	CHECK(f != NULL);
	CHECK(flame_add(f, b, 3, 1) == 0);
	CHECK(flame_add(f, a, 3, 2) == 0);
	CHECK(flame_add(f, k, 4, 5) == 0);
	CHECK(flame_add(f, a, 3, 3) == 0);	/* merges with the first hot_a */
	CHECK(flame_add(f, a, 3, 0) == 0);	/* zero weight is ignored */
	CHECK(flame_nr_stacks(f) == 3);
	CHECK(flame_total(f) == 11);
	text = folded(f);
	CHECK_STR(text, "app;main;hot_a 5\napp;main;hot_b 1\napp;main;read;vfs_read_[k] 5\n");
	free(text);
	/* adding after sorting keeps merging */
	CHECK(flame_add(f, b, 3, 4) == 0);
	CHECK(flame_nr_stacks(f) == 3);
	text = folded(f);
	CHECK_STR(text, "app;main;hot_a 5\napp;main;hot_b 5\napp;main;read;vfs_read_[k] 5\n");
	free(text);
	flame_free(f);
	flame_free(NULL);
	check_pairs();
	check_many();
	return check_exit();
}
