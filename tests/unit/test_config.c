// SPDX-License-Identifier: GPL-2.0-only
/* src/config: YAML configuration files as command-line options. */
#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "src/config.h"
#include "tests/unit/check.h"

static const struct option opts[] = {
	{ "freq", required_argument, NULL, 'F' },
	{ "mode", required_argument, NULL, 'M' },
	{ "comm", required_argument, NULL, 'c' },
	{ "requests", no_argument, NULL, 'R' },
	{ "config", required_argument, NULL, 'C' },
	{ NULL, 0, NULL, 0 },
};
static const char *const refused[] = { "config", NULL };
static const char *const repeated[] = { "comm", NULL };

/* Parse @text; on success the options joined by ' ' into @joined. */
static int parse(const char *text, char *joined, size_t size, struct config_error *e)
{
	struct config_args a = { 0 };
	size_t i;
	int err = config_parse(text, strlen(text), opts, refused, repeated, &a, e);

	joined[0] = '\0';
	for (i = 0; i < a.nr; i++)
		snprintf(joined + strlen(joined), size - strlen(joined), "%s%s", i ? " " : "",
			 a.items[i]);
	config_args_release(&a);
	return err;
}

int main(void)
{
	struct config_error e;
	char s[512];

	CHECK(parse("freq: 499\nmode: [cpu, offcpu]\ncomm: [a, b]\nrequests: true\n", s,
		    sizeof(s), &e) == 0);
	CHECK_STR(s, "--freq=499 --mode=cpu,offcpu --comm=a --comm=b --requests");
	CHECK(parse("# nothing but a comment\n", s, sizeof(s), &e) == 0 && !*s);
	CHECK(parse("", s, sizeof(s), &e) == 0 && !*s);
	CHECK(parse("requests: no\n", s, sizeof(s), &e) == 0 && !*s);
	CHECK(parse("freq: 1\nbogus: 2\n", s, sizeof(s), &e) == -EINVAL && e.line == 2);
	CHECK(strstr(e.reason, "unknown key 'bogus'") != NULL);
	CHECK(parse("config: other.yaml\n", s, sizeof(s), &e) == -EINVAL && e.line == 1);
	CHECK(parse("requests: maybe\n", s, sizeof(s), &e) == -EINVAL && e.line == 1);
	CHECK(parse("mode: {cpu: 1}\n", s, sizeof(s), &e) == -EINVAL);
	CHECK(parse("mode: [[cpu]]\n", s, sizeof(s), &e) == -EINVAL);
	CHECK(parse("- freq\n", s, sizeof(s), &e) == -EINVAL);
	CHECK(parse("freq: [1\n", s, sizeof(s), &e) == -EINVAL && e.line == 2);
	CHECK(strncmp(e.reason, "bad YAML", 8) == 0);
	/* a repeated option's item may be a mapping: KEY=VALUE,... (serve's --trigger) */
	CHECK(parse("comm:\n  - name: a\n    p99_ms: 5\n  - plain\n", s, sizeof(s), &e) == 0);
	CHECK_STR(s, "--comm=name=a,p99_ms=5 --comm=plain");
	CHECK(parse("comm:\n  - name: a,b\n", s, sizeof(s), &e) == -EINVAL && e.line == 2);
	CHECK(parse("comm:\n  - name: [a]\n", s, sizeof(s), &e) == -EINVAL);
	CHECK(parse("mode:\n  - name: a\n", s, sizeof(s), &e) == -EINVAL);	/* not repeated */
	CHECK(config_parse("freq: 1\0", 8, opts, refused, repeated, &(struct config_args){ 0 },
			   &e) == -EINVAL);
	return check_exit();
}
