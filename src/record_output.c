// SPDX-License-Identifier: GPL-2.0-only
/* `record -o FILE`: which format, which weight, and writing it (record_output.h). */
#include "src/record_output.h"

#include <errno.h>
#include <string.h>

#include "src/export_formats.h"
#include "src/weight.h"
#include "src/pprof.h"
#include "src/lib/util.h"

/*
 * A name without an extension, or ending in .pb or .pprof, is the full
 * profile, as always; any other unknown extension is refused rather than
 * guessed, so a typo does not silently produce a pprof file.
 */
static int output_format(struct record_output *o)
{
	const char *base = strrchr(o->path, '/');

	base = base ? base + 1 : o->path;
	o->format = strcmp(o->path, "-") ? export_format_for_path(o->path) : -ENOENT;
	if (o->format >= 0)
		return 0;
	o->format = EXPORT_FORMAT_PPROF;
	if (!strcmp(o->path, "-") || !strchr(base, '.') || str_has_suffix(base, ".pb") ||
	    str_has_suffix(base, ".pprof"))
		return 0;
	pr_err("cannot write %s: unknown extension (want .pb.gz, .folded, .speedscope.json, "
	       ".json, .prom or .svg)", o->path);
	return -EINVAL;
}

/* An empty profile with the columns the collectors of @o will write. */
static struct profile *columns_of(const struct record_output *o)
{
	struct profile *p = profile_new();
	bool ok = p;

	if (ok && o->modes.cpu)
		ok = profile_add_type(p, PROFILE_TYPE_SAMPLES, "count") >= 0 &&
		     profile_add_type(p, PROFILE_TYPE_CPU, "nanoseconds") >= 0;
	if (ok && o->modes.syscall)
		ok = profile_add_type(p, PROFILE_TYPE_SYSCALLS, "count") >= 0 &&
		     profile_add_type(p, PROFILE_TYPE_LATENCY, "nanoseconds") >= 0;
	if (ok && o->modes.offcpu)
		ok = profile_add_type(p, PROFILE_TYPE_OFFCPU, "nanoseconds") >= 0;
	if (!ok) {
		profile_free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

int record_output_check(struct record_output *o)
{
	struct profile_weight w;
	struct profile *p;
	int err = output_format(o);

	if (err)
		return err;
	if (o->weight && o->format == EXPORT_FORMAT_PPROF)
		pr_warn("--weight has no effect on a full profile (%s)", o->path);
	if (o->stack_flags && o->format == EXPORT_FORMAT_PPROF)
		pr_warn("--native has no effect on a full profile (%s): it keeps every frame",
			o->path);
	if (!export_format_has_weight(o->format) || o->format == EXPORT_FORMAT_PPROF)
		return 0;
	/* resolving the weight now names the --mode it needs, before recording */
	p = columns_of(o);
	if (!p)
		return -ENOMEM;
	err = profile_weight_get(p, o->weight ? o->weight : profile_weight_default(p), &w);
	profile_free(p);
	return err;
}

int record_output_write(const struct record_output *o, const struct profile *p)
{
	const char *name = o->weight ? o->weight : profile_weight_default(p);
	struct profile_weight w;
	int err;

	if (o->format == EXPORT_FORMAT_PPROF)
		return pprof_write_file(p, o->path);
	if (!export_format_has_weight(o->format))
		return export_write_path(o->path, o->format, p, NULL, 0);
	err = profile_weight_get(p, name, &w);
	if (err)
		return err;
	if (!o->weight && profile_type_index(p, PROFILE_TYPE_SAMPLES) >= 0 && strcmp(name, "cpu"))
		pr_info("no CPU samples: %s weighted by %s", o->path, w.name);
	return export_write_path(o->path, o->format, p, &w, o->stack_flags);
}

int record_output_ready(struct record_output *o, const struct collector_modes *modes)
{
	int err;

	o->modes = *modes;
	if (record_output_check(o))
		return -EINVAL;
	err = output_check(o->path);
	if (err)
		pr_err("cannot write %s: %s", o->path, strerror(-err));
	return err;
}
