// SPDX-License-Identifier: GPL-2.0-only
/* Profile samples into a flame graph's stacks. */
#include "src/stackflame.h"

#include <errno.h>
#include <stdlib.h>

#include "src/stacks.h"
#include "src/lib/strtab.h"

int stacks_to_flame(const struct profile *p, const struct profile_weight *w, unsigned flags,
		    struct flame *f)
{
	struct stack_names names = { 0 };
	struct strtab *tab = strtab_new();
	size_t i;
	int err = tab ? 0 : -ENOMEM;

	for (i = 0; !err && i < p->samples.nr; i++) {
		const struct profile_sample *s = &p->samples.items[i];
		int64_t v = profile_weight_of(w, s), v2 = 0;

		if (v <= 0)
			continue;
		/* two columns (wall): the second is the off-CPU part, hot/cold's split */
		if (w->nr_cols == 2 && s->values[w->cols[1]] > 0)
			v2 = s->values[w->cols[1]];
		err = stack_names_of(p, s, flags | w->stack_flags, tab, &names);
		if (!err)
			err = flame_add_pair(f, names.items, names.nr, v, v2);
	}
	free(names.items);
	strtab_free(tab);
	return err;
}
