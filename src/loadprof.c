// SPDX-License-Identifier: GPL-2.0-only
/* Profile loading shared by report and export. */
#include "src/loadprof.h"

#include <string.h>

#include "src/pprof.h"
#include "src/util.h"

struct profile *profile_load(const char *path)
{
	struct profile *p = NULL;
	const char *why = NULL;
	int err;

	if (!path)
		path = "latprof.pb.gz";
	err = pprof_read_file(path, &p, &why);
	if (err) {
		pr_err("cannot read profile %s: %s", path, why ? why : strerror(-err));
		return NULL;
	}
	return p;
}

int profile_weight_column(const struct profile *p, const char *weight)
{
	static const struct {
		const char *weight, *column;
	} cols[] = {
		{ "cpu", PROFILE_TYPE_SAMPLES },
		{ "samples", PROFILE_TYPE_SAMPLES },
		{ "cpu-time", PROFILE_TYPE_CPU },
	};
	size_t i;
	int col;

	for (i = 0; i < ARRAY_SIZE(cols); i++) {
		if (strcmp(weight, cols[i].weight))
			continue;
		col = profile_type_index(p, cols[i].column);
		if (col < 0 && p->types.nr == 1)
			col = 0;	/* a foreign profile with one column */
		if (col < 0)
			pr_err("profile has no '%s' values for --weight %s", cols[i].column,
			       weight);
		return col;
	}
	pr_err("unknown weight '%s' (want cpu)", weight);
	return -1;
}
