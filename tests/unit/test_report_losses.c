// SPDX-License-Identifier: GPL-2.0-only
/*
 * The report's "Lost and dropped" section: every non-zero lost.* key, the
 * processes whose files libdwfl refused (proc.PID.modules_refused), and the
 * counters that could not be read (stats_unreadable) said to be unknown,
 * never "none".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/profile.h"
#include "src/report.h"
#include "tests/unit/check.h"

/* The report of @p from its "Lost and dropped" heading on, as an owned string. */
static char *report_losses(const struct profile *p)
{
	struct report_opts o = { .top = 5, .stacks = 5 };
	char *buf = NULL, *at;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	int err = -1;

	if (out) {
		err = report_profile(out, &o, p, "test.pb.gz");
		CHECK(fclose(out) == 0);
	}
	CHECK(err == 0);
	at = buf ? strstr(buf, "Lost and dropped") : NULL;
	CHECK(at);
	if (at)
		memmove(buf, at, strlen(at) + 1);
	return buf;
}

static struct profile *profile_with(const char *const *meta)
{
	struct profile *p = profile_new();

	CHECK(p && profile_add_type(p, PROFILE_TYPE_SAMPLES, "count") >= 0);
	for (; p && *meta; meta += 2)
		CHECK(profile_set_meta(p, meta[0], meta[1]) == 0);
	return p;
}

int main(void)
{
	static const char *const clean[] = { "lost.kstack_missing", "0",
					     "lost.modules_refused", "0", NULL };
	static const char *const lossy[] = {
		"lost.kstack_missing", "3", "lost.ustack_missing", "0",
		"lost.modules_refused", "2", "proc.4242.modules_refused", "2", NULL
	};
	static const char *const unread[] = {
		"lost.kstack_error", "0", "stats_unreadable", "count.samples,lost.kstack_error", NULL
	};
	struct profile *p;
	char *out;

	p = profile_with(clean);
	out = p ? report_losses(p) : NULL;
	CHECK(out && strstr(out, "none: every sample"));
	CHECK(out && !strstr(out, "kstack_missing"));
	free(out);
	profile_free(p);

	p = profile_with(lossy);
	out = p ? report_losses(p) : NULL;
	if (out)
		fputs(out, stderr);
	CHECK(out && strstr(out, "  kstack_missing "));
	CHECK(out && !strstr(out, "ustack_missing"));
	CHECK(out && strstr(out, "  modules_refused "));
	CHECK(out && strstr(out, "  modules_refused, pid 4242 "));
	CHECK(out && strstr(out, "the result is partial"));
	CHECK(out && !strstr(out, "none:"));
	free(out);
	profile_free(p);

	p = profile_with(unread);
	out = p ? report_losses(p) : NULL;
	if (out)
		fputs(out, stderr);
	CHECK(out && strstr(out, "unknown: ") && strstr(out, "count.samples,lost.kstack_error"));
	CHECK(out && !strstr(out, "none:"));
	free(out);
	profile_free(p);
	return check_exit();
}
