// SPDX-License-Identifier: GPL-2.0-only
/*
 * The last source of CPython offsets: a table generated from each release's
 * headers by symbolize/pyoffsets_gen.sh, matched on major.minor.micro only.
 */
#include "symbolize/pyoffsets.h"

#include <errno.h>

#include "src/util.h"

static const struct py_offsets pyoffsets_table[] = {
#include "symbolize/pyoffsets_table.h"
};

int pyoffsets_from_table(uint32_t version, struct py_offsets *o)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pyoffsets_table); i++) {
		if (pyoffsets_table[i].version == (version & 0xffffff00u)) {
			*o = pyoffsets_table[i];
			return 0;
		}
	}
	return -ENOENT;
}

const struct py_offsets *pyoffsets_table_entry(size_t i)
{
	return i < ARRAY_SIZE(pyoffsets_table) ? &pyoffsets_table[i] : NULL;
}
