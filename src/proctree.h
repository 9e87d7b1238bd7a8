/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * struct proc_tree: the processes a recording traced, as a tree: who forked
 * whom, command lines, start and end, exit status, and each process's
 * memory (RSS, PSS) over time with its peak. `record` fills it from the
 * kernel's fork/exec/exit events and the memory sampler; it is stored in the
 * profile's metadata ("process.SEQ..." keys, docs/formats.md) and read back
 * by report and export. It holds at most max_procs processes and
 * max_mem_samples memory samples in all. A full table makes room by folding
 * the shorter-lived half of its ended processes into per-name totals
 * (struct proc_folded), so a busy machine's thousands of short commands do
 * not shut out the processes that start later; only a table of live
 * processes refuses a new one, and counts it. What does not fit is counted.
 * It does no I/O.
 */
#ifndef LATPROF_PROCTREE_H
#define LATPROF_PROCTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/lib/hashmap.h"
#include "src/profile.h"

#define PROC_COMM_LEN 16
#define PROC_CMDLINE_MAX 1024	/* bytes of a command line kept */
#define PROC_FOLDED_MAX_NAMES 1024	/* names folded apart; newer ones share "" */

struct proc_mem_sample {
	uint64_t time_ns;
	uint64_t rss_kb;
	int64_t pss_kb;		/* -1: not read this time */
};

struct proc_info {
	uint32_t pid, ppid;		/* ppid 0: unknown (a target found by name) */
	uint64_t start_ns, end_ns;	/* relative to the recording's start */
	int32_t status;			/* wait status (exit code << 8 | signal) */
	bool ended, has_status;
	uint32_t execs;			/* exec calls seen */
	char comm[PROC_COMM_LEN + 1];
	char *cmdline;			/* owned; arguments joined by spaces, "" unknown */
	uint64_t peak_rss_kb, peak_pss_kb;
	uint64_t exit_rss_kb;		/* resident when it exited, 0 unknown */
	struct { struct proc_mem_sample *items; size_t nr, alloc; } mem;
	uint64_t pss_next_ns;		/* the sampler's: next PSS read not before */
};

/* Ended processes folded together under their name to make room. */
struct proc_folded {
	char comm[PROC_COMM_LEN + 1];	/* "": unknown, or past PROC_FOLDED_MAX_NAMES */
	uint64_t processes;
	uint64_t life_ns;		/* summed over the processes */
	uint64_t max_life_ns;
	uint64_t peak_rss_kb;		/* the largest of their peaks */
	uint64_t failed;		/* exited with a non-zero code or a signal */
	uint64_t first_start_ns, last_end_ns;
};

struct proc_tree {
	struct { struct proc_info *items; size_t nr, alloc; } procs;
	struct hashmap idx;		/* pid -> index + 1 of its latest process */
	struct { struct proc_folded *items; size_t nr, alloc; } folded;
	struct hashmap folded_idx;	/* comm as two u64 -> index + 1 in folded */
	uint64_t procs_folded;		/* processes in folded, all names */
	size_t max_procs;		/* 0: unbounded */
	size_t max_mem_samples;		/* 0: unbounded */
	size_t nr_mem_samples;
	uint64_t procs_dropped;		/* processes not kept: the table was full of live ones */
	uint64_t mem_dropped;		/* memory samples not kept */
};

/* An empty tree with these bounds (0: none). Cannot fail. */
void proc_tree_init(struct proc_tree *t, size_t max_procs, size_t max_mem_samples);
/* Free everything; the tree is empty and reusable. */
void proc_tree_release(struct proc_tree *t);

/*
 * The latest process with @pid, or NULL (also when it was folded). Borrowed
 * until the next proc_tree_start.
 */
struct proc_info *proc_tree_find(struct proc_tree *t, uint32_t pid);

/*
 * Process @pid started at @time_ns, child of @ppid, named @comm (may be
 * unterminated at PROC_COMM_LEN). A pid seen before and not ended is the
 * same process (the existing entry is returned).
 *
 * A full table first folds ended processes into t->folded: the shorter-lived
 * half of them (at least one), or more when that leaves the table above 3/4
 * of max_procs, shortest lives first, equal ones oldest first; their command
 * lines and memory samples are freed. Live processes are never folded. The
 * others keep their start order, and a child whose parent was folded has no
 * parent in the tree (proc_tree_parent). While a quarter of the table or
 * more has ended, a fold happens at most once per max_procs/4 starts; it
 * costs O(n log n).
 *
 * Every proc_info pointer and every index into t->procs taken before the
 * call is invalid after it: entries move when the array grows or is folded.
 * Returns the entry, or NULL when no entry has ended in a full table (errno
 * ENOSPC, counted in procs_dropped) or with errno ENOMEM (nothing changed).
 */
struct proc_info *proc_tree_start(struct proc_tree *t, uint32_t pid, uint32_t ppid,
				  uint64_t time_ns, const char *comm);

/*
 * Set the command line from @len bytes of NUL-separated arguments (as
 * /proc/PID/cmdline has them), joined by spaces; control characters become
 * '?'; cut at PROC_CMDLINE_MAX. 0 or -ENOMEM.
 */
int proc_info_set_cmdline(struct proc_info *pi, const char *args, size_t len);

/* Append a memory sample and update the peaks. 0 or -ENOMEM (a full budget is not an error). */
int proc_tree_add_memory(struct proc_tree *t, struct proc_info *pi, uint64_t time_ns,
			 uint64_t rss_kb, int64_t pss_kb);

/* Processes alive at @time_ns (started at or before it, not ended before it). */
unsigned int proc_tree_alive_at(const struct proc_tree *t, uint64_t time_ns);

/*
 * Store every process ("process.SEQ...") and every folded name
 * ("process_folded.SEQ...", "" as "[other]") in @p's metadata with times
 * made relative to @base_ns (an absolute time while recording; 0 when they
 * already are), plus the counters "count.processes_tracked",
 * "count.processes_folded", "lost.processes_untracked" and
 * "lost.memory_samples". 0 or -ENOMEM.
 */
int proc_tree_store(const struct proc_tree *t, struct profile *p, uint64_t base_ns);

/*
 * Read the processes stored in @p into @t (initialized, empty), in the order
 * they started, and the folded names in the order they were stored.
 * Malformed entries are skipped. 0 or -ENOMEM.
 */
int proc_tree_load(struct proc_tree *t, const struct profile *p);

/*
 * The index of the parent of process @i in t->procs, or -1 when its parent
 * is not in the tree (a root, or folded): the latest process with that pid
 * that started before @i did. Cannot fail.
 */
long proc_tree_parent(const struct proc_tree *t, size_t i);

#endif
