// SPDX-License-Identifier: GPL-2.0-only
/*
 * Profiles and folded stacks read for the flame graph verbs (stacks_load.h),
 * each failure printed once with the file's name. Parsing folded text is
 * flamegraph/folded.c's, reading profiles src/pprof_read.c's.
 */
#include "src/pprof.h"
#include "src/stacks_load.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flamegraph/folded.h"
#include "src/weight.h"
#include "src/lib/util.h"

#define FOLDED_STDIN_MAX (1ULL << 30)	/* a pipe cannot make us allocate without end */

int stacks_load_folded(const char *path, unsigned int folded_flags, struct flame *f)
{
	struct folded_error e;
	char *buf = NULL;
	size_t len = 0;
	int err;

	if (!strcmp(path, "-"))
		err = read_fd(dup(STDIN_FILENO), FOLDED_STDIN_MAX, &buf, &len);
	else
		err = read_file(path, &buf, &len);
	if (err) {
		pr_err("cannot read %s: %s", path, strerror(-err));
		free(buf);
		return -EINVAL;
	}
	err = folded_parse(f, buf, len, folded_flags, &e);
	free(buf);
	if (err == -EINVAL)
		pr_err("%s:%zu: %s", strcmp(path, "-") ? path : "<stdin>", e.line, e.reason);
	else if (err)
		pr_err("cannot read %s: %s", path, strerror(-err));
	return err;
}

int stacks_load_profile(const char *path, struct stacks_svg *s, struct flame *f)
{
	struct profile *p = profile_load(path);
	struct profile_weight w;
	int err = -EINVAL;

	if (!p)
		goto out;
	/* none asked: the profile's default (a diff's second side takes the first's) */
	if (!s->weight)
		s->weight = profile_weight_default(p);
	if (profile_weight_get(p, s->weight, &w))
		goto out;
	err = stacks_svg_add_profile(s, p, &w, f);
	if (err)
		pr_err("cannot read profile %s: %s", path ? path : PROFILE_DEFAULT_PATH, strerror(-err));
out:
	profile_free(p);
	return err;
}

/* Does @path start with gzip's magic (a pprof profile)? No: folded text. */
static bool is_gzip(const char *path)
{
	unsigned char magic[2];
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : NULL;
	bool yes = f && fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;

	if (f)
		fclose(f);
	return yes;
}

static int load_side(const char *path, bool force_folded, struct stacks_svg *s, struct flame *f)
{
	if (!force_folded && is_gzip(path))
		return stacks_load_profile(path, s, f);
	return stacks_load_folded(path, 0, f);
}

/* Add the stacks of @from to @to as AFTER weights, or as BEFORE (weight2). */
static int add_side(struct flame *to, struct flame *from, bool after)
{
	const struct flame_stack *st = flame_stacks(from);
	size_t i, n = flame_nr_stacks(from);
	int err = 0;

	for (i = 0; !err && i < n; i++)
		err = flame_add_pair(to, st[i].frames, st[i].nr_frames, after ? st[i].weight : 0,
				     after ? 0 : st[i].weight);
	return err;
}

int stacks_load_diff(char *const *paths, int nr, bool force_folded, struct stacks_svg *s,
		     struct flame *f)
{
	struct flame *side = NULL;
	int i, err = 0;

	if (nr == 1) {
		if (!force_folded && is_gzip(paths[0])) {
			pr_err("%s is a profile: a diff needs BEFORE and AFTER", paths[0]);
			return -EINVAL;
		}
		return stacks_load_folded(paths[0], FOLDED_FLAG_PAIRS, f);
	}
	for (i = 0; !err && i < nr; i++) {
		flame_free(side);
		side = flame_new();
		err = side ? load_side(paths[i], force_folded, s, side) : -ENOMEM;
		if (!err)
			err = add_side(f, side, i == 1);
		if (err == -ERANGE)
			pr_err("%s: total weight out of range", paths[i]);
	}
	flame_free(side);
	return err == -ERANGE ? -EINVAL : err;
}
