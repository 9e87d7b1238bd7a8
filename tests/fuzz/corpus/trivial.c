// SPDX-License-Identifier: GPL-2.0-only
/* Source of the fuzzer's ELF seeds (tests/fuzz/make-corpus.sh): a few
 * functions, a static one, an always-inlined one and a loop, so the seeds
 * carry symbols, line tables and an inline chain. */
static volatile int sink;

static inline __attribute__((always_inline)) int square(int x)
{
	return x * x;
}

static __attribute__((noinline)) int sum_squares(int n)
{
	int i, s = 0;

	for (i = 0; i < n; i++)
		s += square(i);
	return s;
}

int leaf(int x)
{
	sink = x;
	return x + 1;
}

int main(int argc, char **argv)
{
	return leaf(sum_squares(argc)) & 1;
}
