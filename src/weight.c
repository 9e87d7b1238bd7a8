// SPDX-License-Identifier: GPL-2.0-only
/* What a stack is weighed by: --weight resolved, and the default (weight.h). */
#include "src/weight.h"

#include <errno.h>
#include <string.h>

#include "src/stacks.h"
#include "src/syscalls.h"
#include "src/lib/util.h"

int profile_weight_get(const struct profile *p, const char *name, struct profile_weight *w)
{
	static const struct {
		const char *weight, *col[2], *unit, *mode;
		unsigned int flags;
	} weights[] = {
		{ "cpu", { PROFILE_TYPE_SAMPLES }, "count", "cpu", 0 },
		{ "samples", { PROFILE_TYPE_SAMPLES }, "count", "cpu", 0 },
		{ "cpu-time", { PROFILE_TYPE_CPU }, "nanoseconds", "cpu", 0 },
		{ "latency", { PROFILE_TYPE_LATENCY }, "nanoseconds", "syscall",
		  STACKS_FLAG_SYSCALL_LEAF },
		{ "syscalls", { PROFILE_TYPE_SYSCALLS }, "count", "syscall",
		  STACKS_FLAG_SYSCALL_LEAF },
		{ "offcpu", { PROFILE_TYPE_OFFCPU }, "nanoseconds", "offcpu", 0 },
		{ "wall", { PROFILE_TYPE_CPU, PROFILE_TYPE_OFFCPU }, "nanoseconds",
		  "cpu,offcpu", 0 },
		/* a column only a recording that saw a stall has */
		{ "stall", { PROFILE_TYPE_STALL }, "nanoseconds", NULL, STACKS_FLAG_SYSCALL_LEAF },
		/* and one that saw an asyncio task suspended */
		{ "await", { PROFILE_TYPE_AWAIT }, "nanoseconds", NULL, 0 },
	};
	const char *colon = strchr(name, ':'), *wait = NULL;
	size_t i, j, len = colon ? (size_t)(colon - name) : strlen(name);

	if (colon && !strcmp(colon + 1, SYSCALL_WAIT_IDLE))
		wait = SYSCALL_WAIT_IDLE;
	else if (colon && !strcmp(colon + 1, SYSCALL_WAIT_PATH))
		wait = SYSCALL_WAIT_PATH;
	else if (colon && !strcmp(colon + 1, SYSCALL_WAIT_READY))
		wait = SYSCALL_WAIT_READY;
	else if (colon) {
		pr_err("unknown wait filter '%s' in --weight %s (want :path, :idle or :readiness)",
		       colon + 1, name);
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(weights); i++) {
		if (strncmp(name, weights[i].weight, len) || weights[i].weight[len])
			continue;
		*w = (struct profile_weight){ .name = weights[i].weight, .unit = weights[i].unit,
					      .stack_flags = weights[i].flags, .wait = wait };
		for (j = 0; j < 2 && weights[i].col[j]; j++) {
			w->cols[j] = profile_type_index(p, weights[i].col[j]);
			/* a foreign profile with one column: that is its weight */
			if (w->cols[j] < 0 && p->types.nr == 1 && i < 3)
				w->cols[j] = 0;
			if (w->cols[j] < 0 && !strcmp(weights[i].weight, "await")) {
				pr_err("profile has no asyncio task seen awaiting for --weight %s "
				       "(it needs CPython 3.14+, Python frames and --await-hz)",
				       name);
				return -EINVAL;
			}
			if (w->cols[j] < 0 && !weights[i].mode) {
				pr_err("profile has no event-loop stall for --weight %s (none was "
				       "seen, or it was recorded without --mode syscall)", name);
				return -EINVAL;
			}
			if (w->cols[j] < 0) {
				pr_err("profile has no '%s' values for --weight %s "
				       "(record with --mode %s)", weights[i].col[j], name,
				       weights[i].mode);
				return -EINVAL;
			}
			w->nr_cols++;
		}
		return 0;
	}
	pr_err("unknown weight '%s' (want %s)", name, PROFILE_WEIGHTS);
	return -EINVAL;
}

static bool profile_has_values(const struct profile *p, int col)
{
	size_t i;

	for (i = 0; col >= 0 && i < p->samples.nr; i++)
		if (p->samples.items[i].values[col] > 0)
			return true;
	return false;
}

const char *profile_weight_default(const struct profile *p)
{
	static const char *const order[][2] = {
		{ "cpu", PROFILE_TYPE_SAMPLES },
		{ "latency", PROFILE_TYPE_LATENCY },
		{ "offcpu", PROFILE_TYPE_OFFCPU },
	};
	int col, pass;
	size_t i;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < ARRAY_SIZE(order); i++) {
			col = profile_type_index(p, order[i][1]);
			if (col >= 0 && (pass || profile_has_values(p, col)))
				return order[i][0];
		}
	return "cpu";
}

int64_t profile_weight_of(const struct profile_weight *w, const struct profile_sample *s)
{
	int64_t v = 0;
	int i;

	if (w->wait) {
		const struct profile_label *l = profile_sample_label(s, SYSCALL_WAIT_LABEL);
		/* no label (CPU time, time outside syscalls): on the path */
		const char *wait = l && l->str ? l->str : SYSCALL_WAIT_PATH;

		if (strcmp(wait, w->wait))
			return 0;
	}

	for (i = 0; i < w->nr_cols; i++)
		if (s->values[w->cols[i]] > 0)
			v += s->values[w->cols[i]];
	return v;
}
