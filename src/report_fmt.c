// SPDX-License-Identifier: GPL-2.0-only
/* The report's shared formatting (report_fmt.h). */
#include "src/report_fmt.h"

#include <inttypes.h>
#include <stdarg.h>

#include "src/lib/util.h"

const char *report_fmt_bold(bool color)
{
	return color ? "\033[1m" : "";
}

const char *report_fmt_reset(bool color)
{
	return color ? "\033[0m" : "";
}

void report_fmt_heading(FILE *out, bool color, const char *title, const char *fmt, ...)
{
	va_list ap;

	fprintf(out, "\n%s%s%s", report_fmt_bold(color), title, report_fmt_reset(color));
	if (fmt) {
		putc(' ', out);
		va_start(ap, fmt);
		vfprintf(out, fmt, ap);
		va_end(ap);
	}
	putc('\n', out);
}

double report_fmt_pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * part / total : 0.0;
}

void report_fmt_ns(char *buf, size_t size, uint64_t ns)
{
	if (ns >= 10 * NSEC_PER_SEC)
		snprintf(buf, size, "%.1fs", ns / 1e9);
	else if (ns >= NSEC_PER_SEC)
		snprintf(buf, size, "%.2fs", ns / 1e9);
	else if (ns >= 10000000)
		snprintf(buf, size, "%.0fms", ns / 1e6);
	else if (ns >= 1000000)
		snprintf(buf, size, "%.1fms", ns / 1e6);
	else if (ns >= 10000)
		snprintf(buf, size, "%.0fus", ns / 1e3);
	else if (ns >= 1000)
		snprintf(buf, size, "%.1fus", ns / 1e3);
	else
		snprintf(buf, size, "%" PRIu64 "ns", ns);
}
