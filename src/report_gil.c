// SPDX-License-Identifier: GPL-2.0-only
/*
 * The GIL section of `latprof report` (src/gil.h): per Python thread of a
 * GIL build, its time waiting to take the GIL and its time holding it, the
 * threads that waited most first. Printed only for a recording that saw
 * such a thread.
 */
#include "src/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "src/gil.h"
#include "src/report_fmt.h"

#define REPORT_GIL_THREADS 10	/* threads listed */

int report_gil(FILE *out, const struct report_opts *o, const struct profile *p)
{
	struct gil_threads g = { 0 };
	uint64_t waits = 0, wait_ns = 0, held_ns = 0;
	char t[3][16];
	size_t i;
	int err = gil_load(p, &g);

	if (err == -ENOENT)
		return 0;
	if (err)
		goto out;
	for (i = 0; i < g.nr; i++) {
		waits += g.items[i].waits;
		wait_ns += g.items[i].wait_ns;
		held_ns += g.items[i].held_ns;
	}
	gil_sort_by_wait(&g);
	report_fmt_heading(out, o->color, "Python GIL",
			   "(per thread: waiting to take it, holding it on CPU, sampled)");
	report_fmt_ns(t[0], sizeof(t[0]), wait_ns);
	report_fmt_ns(t[1], sizeof(t[1]), held_ns);
	fprintf(out, "  %zu threads: %s waiting (%" PRIu64 " waits), %s holding\n", g.nr, t[0],
		waits, t[1]);
	if (profile_get_meta_u64(p, "gil.dropped"))
		fprintf(out, "  (%" PRIu64 " waits or samples not kept: the kernel's map was full)\n",
			profile_get_meta_u64(p, "gil.dropped"));
	fprintf(out, "      pid      tid    waits  waiting  %%rec  holding   on CPU\n");
	for (i = 0; i < g.nr && i < REPORT_GIL_THREADS; i++) {
		const struct gil_thread *x = &g.items[i];

		report_fmt_ns(t[0], sizeof(t[0]), x->wait_ns);
		report_fmt_ns(t[1], sizeof(t[1]), x->held_ns);
		report_fmt_ns(t[2], sizeof(t[2]), x->cpu_ns);
		fprintf(out, "  %7" PRIu32 "  %7" PRIu32 "  %7" PRIu64 "  %7s %5.1f  %7s  %7s\n",
			x->pid, x->tid, x->waits, t[0],
			report_fmt_pct(x->wait_ns, p->duration_ns > 0 ? p->duration_ns : 0), t[1],
			t[2]);
	}
	if (g.nr > REPORT_GIL_THREADS)
		fprintf(out, "  ... %zu more threads\n", g.nr - REPORT_GIL_THREADS);
	fprintf(out, "  (waiting: futex waits on the GIL, also in the breakdown as \"gil\";"
		" %%rec: of the recording)\n");
out:
	gil_threads_release(&g);
	return err;
}
