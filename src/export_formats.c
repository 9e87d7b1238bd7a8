// SPDX-License-Identifier: GPL-2.0-only
/*
 * The table of export formats (export_formats.h): names and extensions
 * mapped to the writers in export_*.c and stacks_svg.c, and atomic files.
 */
#include "src/export_formats.h"

#include <errno.h>
#include <string.h>

#include "flamegraph/flame.h"
#include "src/export_json.h"
#include "src/export_pprof.h"
#include "src/export_prom.h"
#include "src/export_speedscope.h"
#include "src/stackflame.h"
#include "src/stacks.h"
#include "src/stacks_svg.h"
#include "src/lib/util.h"

typedef int (*export_write_fn)(FILE *out, const struct profile *p, const struct export_opts *o);

/* Folded text and the JSON report both start from the weighted stacks. */
static int write_flame(FILE *out, const struct profile *p, const struct export_opts *o,
		       bool json)
{
	struct flame *f = flame_new();
	int err = f ? stacks_to_flame(p, o->w, o->stack_flags, f) : -ENOMEM;

	if (!err)
		err = json ? export_json(out, p, o->w, f, o->top) : flame_write_folded(f, out);
	flame_free(f);
	return err;
}

static int write_folded(FILE *out, const struct profile *p, const struct export_opts *o)
{
	return write_flame(out, p, o, false);
}

static int write_json(FILE *out, const struct profile *p, const struct export_opts *o)
{
	return write_flame(out, p, o, true);
}

static int write_speedscope(FILE *out, const struct profile *p, const struct export_opts *o)
{
	return export_speedscope(out, p, o->w, o->stack_flags);
}

static int write_pprof(FILE *out, const struct profile *p, const struct export_opts *o)
{
	return export_pprof(out, p, o->w, o->stack_flags);
}

static int write_prom(FILE *out, const struct profile *p, const struct export_opts *o)
{
	return export_prom(out, p);
}

static int write_svg(FILE *out, const struct profile *p, const struct export_opts *o)
{
	return stacks_svg_write_profile(out, p, o->w, o->stack_flags);
}

/*
 * Order matters for extensions: ".speedscope.json" must be tried before
 * ".json". Indexed by enum export_format.
 */
static const struct export_format_def {
	const char *name;
	const char *exts[3];
	export_write_fn write;
	bool weighted;
} formats[] = {
	[EXPORT_FORMAT_FOLDED] = { "folded", { ".folded", ".collapsed" }, write_folded, true },
	[EXPORT_FORMAT_SPEEDSCOPE] = { "speedscope", { ".speedscope.json" }, write_speedscope,
				       true },
	[EXPORT_FORMAT_PPROF] = { "pprof", { ".pb.gz" }, write_pprof, true },
	[EXPORT_FORMAT_JSON] = { "json", { ".json" }, write_json, true },
	[EXPORT_FORMAT_PROMETHEUS] = { "prometheus", { ".prom" }, write_prom, false },
	[EXPORT_FORMAT_SVG] = { "svg", { ".svg" }, write_svg, true },
};

int export_format_find(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(formats); i++)
		if (formats[i].write && !strcmp(name, formats[i].name))
			return i;
	return -ENOENT;
}

int export_format_for_path(const char *path)
{
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(formats); i++)
		for (j = 0; j < ARRAY_SIZE(formats[i].exts) && formats[i].exts[j]; j++)
			if (str_has_suffix(path, formats[i].exts[j]))
				return i;
	return -ENOENT;
}

const char *export_format_name(int format)
{
	if (format < 0 || (size_t)format >= ARRAY_SIZE(formats))
		return "unknown";
	return formats[format].name;
}

bool export_format_has_weight(int format)
{
	return format >= 0 && (size_t)format < ARRAY_SIZE(formats) && formats[format].weighted;
}

int export_write(FILE *out, int format, const struct profile *p, const struct export_opts *o)
{
	if (format < 0 || (size_t)format >= ARRAY_SIZE(formats) || !formats[format].write)
		return -EOPNOTSUPP;
	return formats[format].write(out, p, o);
}

struct export_job {
	int format;
	const struct profile *p;
	const struct export_opts *o;
};

static int export_job_write(FILE *out, void *arg)
{
	const struct export_job *j = arg;

	return export_write(out, j->format, j->p, j->o);
}

int export_write_path_opts(const char *path, int format, const struct profile *p,
			   const struct export_opts *o)
{
	struct export_job j = { .format = format, .p = p, .o = o };

	if (format < 0 || (size_t)format >= ARRAY_SIZE(formats) || !formats[format].write)
		return -EOPNOTSUPP;	/* before a temporary file exists */
	return write_file_atomic(path, export_job_write, &j);
}

int export_write_path(const char *path, int format, const struct profile *p,
		      const struct profile_weight *w, unsigned int stack_flags)
{
	struct export_opts o = { .w = w, .stack_flags = stack_flags, .top = EXPORT_TOP_DEFAULT };

	return export_write_path_opts(path, format, p, &o);
}
