// SPDX-License-Identifier: GPL-2.0-only
/*
 * flamegraph/timechart and `latprof timeline`: a timeline stored in a
 * profile file and drawn by the verb equals the golden file (UPDATE=1
 * rewrites it), passes xmllint, escapes text, and the axis tops are nice.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flamegraph/timechart.h"
#include "src/pprof.h"
#include "src/timeline.h"
#include "src/verbs.h"
#include "tests/unit/check.h"
#include "tests/unit/golden.h"

#define S 1000000000ULL

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 20);

	if (f && buf)
		fread(buf, 1, (1 << 20) - 1, f);
	if (f)
		fclose(f);
	return buf;
}

/* A loading phase (files, RSS rising) then an inference phase (CPU). */
static struct profile *phases_profile(void)
{
	struct profile *p = profile_new();
	struct timeline tl;
	struct timeline_counters c = { 0 };
	struct timeline_interval iv = { .procs = 1 };
	int i;

	timeline_init(&tl, S / 2, 0);
	tl.has_cpu = tl.has_syscalls = true;
	for (i = 1; i <= 6; i++) {
		bool loading = i <= 2;

		c.ns[TIMELINE_SERIES_CPU] += loading ? S / 5 : S / 2 - S / 50;
		c.ns[TIMELINE_SERIES_FILE] += loading ? S / 4 : 0;
		c.ns[TIMELINE_SERIES_SYNC] += S / 100;
		c.opens += loading ? 700 : 0;
		iv.rss_kb = loading ? 60000 * i : 120000 + 10000 * (i - 2);
		iv.procs = i == 6 ? 0 : 1;
		CHECK(timeline_add(&tl, i * S / 2, &c, &iv) == 0);
	}
	CHECK(timeline_store(&tl, p) == 0);
	CHECK(profile_set_meta(p, "command_line", "record -- load <model> & serve") == 0);
	timeline_release(&tl);
	return p;
}

static void check_verb(void)
{
	char prof[] = "/tmp/latprof-test-tl.XXXXXX", svg[64], cmd[128];
	char *argv[] = { "timeline", prof, "--width", "800", "-o", svg, NULL };
	struct profile *p = phases_profile();
	char *got;
	int fd = mkstemp(prof);

	close(fd);
	unlink(prof);
	snprintf(svg, sizeof(svg), "%s.svg", prof);
	CHECK(pprof_write_file(p, prof) == 0);
	CHECK(cmd_timeline(6, argv) == EXIT_STATUS_OK);
	got = slurp(svg);
	CHECK(got && strstr(got, "load &lt;model&gt; &amp; serve"));
	CHECK(got && strstr(got, "<title>0.00-0.50 s: cpu 0.400 s/s, file 0.500 s/s, network "
			  "0.000 s/s, sync 0.020 s/s, sleep 0.000 s/s, other syscalls 0.000 s/s, "
			  "RSS (MB) 58.6 MB, files opened 700, processes 1</title>"));
	check_golden("timeline.svg", got ? got : "");
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", svg);
	if (system(cmd) != 0) {
		fprintf(stderr, "xmllint rejects the SVG (is libxml2-utils installed? make setup)\n");
		check_failures++;
	}
	free(got);
	unlink(svg);
	unlink(prof);
	profile_free(p);
}

int main(void)
{
	CHECK(timechart_nice_ceil(0) == 1);
	CHECK(timechart_nice_ceil(0.93) == 1);
	CHECK(timechart_nice_ceil(1.01) == 2);
	CHECK(timechart_nice_ceil(2.2) == 2.5);
	CHECK(timechart_nice_ceil(224.5) == 250);
	CHECK(timechart_nice_ceil(4000) == 5000);
	check_verb();
	return check_exit();
}
