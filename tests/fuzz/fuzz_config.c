// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for `record --config FILE` (src/config.c): the input is
 * the file's text, parsed against a copy of record's long options. Whatever
 * the outcome, the options it produced are walked and freed. See
 * docs/fuzzing.md.
 */
#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "src/config.h"

static const struct option opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "all", no_argument, NULL, 'a' },
	{ "comm", required_argument, NULL, 'c' },
	{ "freq", required_argument, NULL, 'F' },
	{ "mode", required_argument, NULL, 'M' },
	{ "syscalls", required_argument, NULL, 'Y' },
	{ "debug-dir", required_argument, NULL, 'G' },
	{ "requests", no_argument, NULL, 'R' },
	{ "config", required_argument, NULL, 'C' },
	{ NULL, 0, NULL, 0 },
};
static const char *const refused[] = { "config", "help", NULL };
static const char *const repeated[] = { "comm", "debug-dir", NULL };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config_args a = { 0 };
	struct config_error e;
	size_t i, n = 0;

	config_parse((const char *)data, size, opts, refused, repeated, &a, &e);
	for (i = 0; i < a.nr; i++)
		n += strlen(a.items[i]);
	config_args_release(&a);
	return n == (size_t)-1;
}
