// SPDX-License-Identifier: GPL-2.0-only
/* flamegraph/folded: the parser, its error messages, hostile input. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/folded.h"
#include "tests/unit/check.h"

static char *folded_of(struct flame *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	CHECK(flame_write_folded(f, out) == 0);
	fclose(out);
	return buf;
}

/* Parse @text; return the folded re-rendering, or "ERR line N: reason". */
static char *parse(const char *text, size_t len, unsigned flags)
{
	struct flame *f = flame_new();
	struct folded_error e;
	char *out = NULL;
	int err = folded_parse(f, text, len, flags, &e);

	if (err == -EINVAL) {
		if (asprintf(&out, "ERR line %zu: %s", e.line, e.reason) < 0)
			out = NULL;
	} else {
		CHECK(err == 0);
		out = folded_of(f);
	}
	flame_free(f);
	return out;
}

#define CHECK_PARSE(text, want)                                          \
	do {                                                             \
		char *got_ = parse(text, strlen(text), 0);              \
		CHECK_STR(got_, want);                                   \
		free(got_);                                              \
	} while (0)

static void check_good(void)
{
	CHECK_PARSE("", "");
	CHECK_PARSE("a;b 1\n\na;c 2\na;b 3\n", "a;b 4\na;c 2\n");
	CHECK_PARSE("a;b 1\r\n\r\na;c 2\r\n", "a;b 1\na;c 2\n");
	CHECK_PARSE("a;b\t5  \n", "a;b 5\n");		/* tab, trailing blanks */
	CHECK_PARSE("a;b 7", "a;b 7\n");			/* no final newline */
	CHECK_PARSE("a;b 0\n", "");				/* zero weight */
	CHECK_PARSE("app;[unknown] x 3\n", "app;[unknown] x 3\n");	/* blank in a frame */
	CHECK_PARSE("std::vector<int>::push_back(int const&);x 2\n",
		    "std::vector<int>::push_back(int const&);x 2\n");
	CHECK_PARSE("a 18446744073709551615\n", "a 18446744073709551615\n");
}

static void check_errors(void)
{
	CHECK_PARSE("a;b 1\na;b\n", "ERR line 2: missing weight");
	CHECK_PARSE("a;b 1\n\n\na;b x1\n", "ERR line 4: weight 'x1' is not a number");
	CHECK_PARSE("a;b 1.5\n", "ERR line 1: weight '1.5' is not a number");
	CHECK_PARSE("a;b -1\n", "ERR line 1: weight '-1' is not a number");
	CHECK_PARSE(" 5\n", "ERR line 1: empty stack");
	CHECK_PARSE("a 1\n 5\n", "ERR line 2: empty stack");
	CHECK_PARSE("a;b 1\n;b 2\n", "ERR line 2: empty frame");
	CHECK_PARSE("a;;b 2\n", "ERR line 1: empty frame");
	CHECK_PARSE("a;b; 2\n", "ERR line 1: empty frame");
	CHECK_PARSE("a 18446744073709551616\n", "ERR line 1: weight out of range");
	CHECK_PARSE("a 99999999999999999999999999999\n", "ERR line 1: weight out of range");
	CHECK_PARSE("a 18446744073709551615\nb 1\n", "ERR line 2: total weight out of range");
	CHECK_PARSE("a;b 1\r\nc\r\n", "ERR line 2: missing weight");
	CHECK_PARSE("a;b 1\nx 12345678901234567890123456789012345678901234567890q\n",
		    "ERR line 2: weight '123456789012345678901234567890123456...' is not a number");
	CHECK_PARSE("a 1\nb \x01\x7f\n", "ERR line 2: weight '?" "?' is not a number");
}

static void check_hostile(void)
{
	static const char nul[] = "a;b 1\na\0b 2\n";
	size_t n = 4 * 1024 * 1024, i;
	char *got, *big = malloc(n + 16);

	got = parse(nul, sizeof(nul) - 1, 0);
	CHECK_STR(got, "ERR line 2: NUL byte");
	free(got);
	/* one 4 MiB frame: fine */
	memset(big, 'x', n);
	strcpy(big + n, " 3\n");
	got = parse(big, n + 3, 0);
	CHECK(got && strlen(got) == n + 3);
	free(got);
	/* a stack of 2 M frames: refused, not a crash */
	for (i = 0; i < n; i += 2)
		big[i] = 'f', big[i + 1] = ';';
	big[n - 1] = 'g';
	got = parse(big, n + 3, 0);
	CHECK_STR(got, "ERR line 1: more than 16384 frames");
	free(got);
	free(big);
}

static void check_pairs(void)
{
	struct flame *f = flame_new();
	struct folded_error e;
	const char *text = "a;b 3 5\na;c 4 0\na;d 7\n";
	const struct flame_stack *s;
	char *got;

	CHECK(folded_parse(f, text, strlen(text), FOLDED_FLAG_PAIRS, &e) == 0);
	CHECK(flame_nr_stacks(f) == 3);
	s = flame_stacks(f);
	CHECK(s[0].weight == 5 && s[0].weight2 == 3);
	CHECK(s[1].weight == 0 && s[1].weight2 == 4);
	CHECK(s[2].weight == 7 && s[2].weight2 == 0);
	CHECK(flame_total(f) == 12 && flame_total2(f) == 7);
	flame_free(f);
	/* without the flag the first number belongs to the frame */
	got = parse("a;b 3 5\n", 8, 0);
	CHECK_STR(got, "a;b 3 5\n");
	free(got);
}

int main(void)
{
	check_good();
	check_errors();
	check_hostile();
	check_pairs();
	return check_exit();
}
