/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Inside the proctree module (proctree.h), shared by its two files and
 * nothing else: proctree.c (the tree: starts, folds, parents, memory
 * samples) and proctree_meta.c (the tree stored in a profile's metadata and
 * loaded back).
 */
#ifndef LATPROF_PROCTREE_PRIV_H
#define LATPROF_PROCTREE_PRIV_H

#include "src/proctree.h"

#include <stdint.h>

/*
 * Append an entry for @pid to t->procs and index it, as the latest process
 * of that pid; NULL with errno ENOMEM. proc_tree_start adds the processes
 * started, proc_tree_load the processes loaded.
 */
struct proc_info *proc_tree_append(struct proc_tree *t, uint32_t pid);

/*
 * @comm's PROC_COMM_LEN bytes, zero-padded, as the two keys of
 * t->folded_idx: a fold finds names with them, a load indexes the folded
 * names it read.
 */
void proc_tree_comm_keys(const char *comm, uint64_t *a, uint64_t *b);

#endif
