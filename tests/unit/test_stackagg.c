// SPDX-License-Identifier: GPL-2.0-only
/*
 * The aggregation of unwound stacks (src/stackagg.h): identical stacks add
 * up, a slow syscall's durations go into the entry's histogram, and
 * stackagg_keep drops the entries of the processes it is told to, after
 * which the others still aggregate in place (no entry twice) and new ones
 * come in, past several rehashes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "src/stackagg.h"
#include "tests/unit/check.h"

static int add(struct stackagg *a, uint32_t tgid, uint64_t pc, uint64_t value, bool hist)
{
	struct stackagg_key k = { .tgid = tgid, .kind = 2, .nr = 0 };
	uint64_t pcs[2] = { pc, 0x400000 };
	struct stackagg_values v = { .value = value, .hist = hist };

	return stackagg_add(a, &k, pcs, 2, &v);
}

/* The entry of (@tgid, @pc), NULL: none; *@n how many there are. */
static const struct stackagg_entry *find(const struct stackagg *a, uint32_t tgid, uint64_t pc,
					 size_t *n)
{
	const struct stackagg_entry *found = NULL;
	size_t i;

	*n = 0;
	for (i = 0; i < stackagg_nr(a); i++) {
		const struct stackagg_entry *e = stackagg_get(a, i);

		if (e->key.tgid == tgid && e->pcs[0] == pc) {
			found = e;
			(*n)++;
		}
	}
	return found;
}

static bool keep_even(void *arg, const struct stackagg_entry *e)
{
	(void)arg;
	return e->key.tgid % 2 == 0;
}

int main(void)
{
	struct stackagg *a = stackagg_new();
	const struct stackagg_entry *e;
	uint32_t pid;
	size_t n;

	CHECK(a);
	if (!a)
		return check_exit();
	/* 3000 distinct stacks of 30 processes: rehashed a few times */
	for (pid = 1; pid <= 30; pid++)
		for (uint64_t pc = 0; pc < 100; pc++)
			CHECK(add(a, pid, 0x401000 + pc, 2000000, true) == 0);
	CHECK(add(a, 4, 0x401000, 3000000, true) == 0);
	CHECK(stackagg_nr(a) == 3000);
	e = find(a, 4, 0x401000, &n);
	CHECK(e && n == 1 && e->count == 2 && e->sum.value == 5000000 && e->max_value == 3000000);
	/* 2 ms and 3 ms: log2 slot 11 (1-2 ms) and 12 (2-4 ms) */
	CHECK(e && e->hist && e->hist->count == 2 && e->hist->hist[11] == 1 &&
	      e->hist->hist[12] == 1);

	CHECK(stackagg_keep(a, keep_even, NULL) == 1500);
	CHECK(stackagg_nr(a) == 1500);
	e = find(a, 3, 0x401000, &n);
	CHECK(!e && n == 0);
	/* a kept stack still aggregates in its entry, a dropped one comes back new */
	CHECK(add(a, 4, 0x401000, 1000000, false) == 0);
	e = find(a, 4, 0x401000, &n);
	CHECK(e && n == 1 && e->count == 3 && e->sum.value == 6000000 && e->hist->count == 2);
	CHECK(add(a, 3, 0x401000, 1000000, false) == 0);
	e = find(a, 3, 0x401000, &n);
	CHECK(e && n == 1 && e->count == 1 && !e->hist);
	for (pid = 31; pid <= 60; pid++)
		for (uint64_t pc = 0; pc < 100; pc++)
			CHECK(add(a, pid, 0x401000 + pc, 1, false) == 0);
	CHECK(stackagg_nr(a) == 1500 + 1 + 3000);
	for (pid = 2; pid <= 60; pid += 29) {
		find(a, pid, 0x401063, &n);
		CHECK(n == 1);
	}
	stackagg_free(a);
	return check_exit();
}
