/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Inside the pystacks module (pystacks.h), shared by its two files and
 * nothing else: pystacks.c (the processes: their interpreters probed for,
 * the BPF walk's view, exits, the metadata) and pystacks_frames.c (the code
 * objects named, the frames merged into the native stacks). The layout of
 * the set, its processes and their code objects.
 */
#ifndef LATPROF_PYSTACKS_PRIV_H
#define LATPROF_PYSTACKS_PRIV_H

#include "src/pystacks.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/lib/hashmap.h"
#include "src/lib/strtab.h"
#include "symbolize/pycode.h"
#include "symbolize/pygil.h"
#include "symbolize/python.h"

/* Why a frame was not named: the read's error. */
enum py_unnamed {
	PY_UNNAMED_EXITED,	/* the process was gone when its names were read */
	PY_UNNAMED_CHANGED,	/* the memory no longer held that code object */
	PY_UNNAMED_UNREADABLE,	/* any other failed read */
	PY_UNNAMED_NR,
};

struct pycode_entry {
	bool ok;
	uint32_t tries;			/* reads so far */
	const char *name, *file;	/* interned */
	uint32_t first_line;
	int err;			/* why not ok */
	struct py_code code;
};

struct pyproc {
	int pid;
	uint32_t gen;
	struct py_interp interp;	/* status NONE until found */
	uint64_t next_probe_ns, probe_delay_ns;
	uint64_t first_probe_ns;
	struct py_gil gil;		/* its GIL; addr 0 until found */
	int gil_err;			/* the last py_gil_find's; -EAGAIN: look again */
	uint64_t gil_next_ns, gil_delay_ns;	/* when to look again */
	struct hashmap codes;		/* (NULL, code address, code_key()) -> pycode_entry */
	struct hashmap files;		/* (NULL, co_filename address, 0) -> interned name */
	struct { struct pycode_entry **items; size_t nr, alloc; } entries;
	uint64_t walks[LP_PY_WALK_NR];	/* samples of this process by how the walk ended */
	uint64_t unnamed[PY_UNNAMED_NR];	/* frames not named, by why */
	size_t list_idx;		/* in pystacks.list */
};

struct pystacks {
	struct py_finder *finder;
	struct strtab *strs;
	struct hashmap procs;		/* (NULL, pid, gen) -> struct pyproc */
	struct { struct pyproc **items; size_t nr, alloc; } list;
	struct hashmap frame_ids;	/* (name, file, line << 32 | first) -> id + 1 */
	struct hashmap pc_ids;		/* (proc, code, instr) -> id + 1 */
	struct { struct pyframe *items; size_t nr, alloc; } frames;
	bool (*current)(void *arg, int pid, uint32_t gen);	/* pystacks_set_current */
	void *current_arg;
};

/*
 * The process of image (@pid, @gen), added when new if @add (its first probe
 * due now); NULL when unknown, or forgotten by pystacks_exited, and not
 * @add, or on ENOMEM. pystacks_probe adds; naming and merging only look.
 */
struct pyproc *pystacks_proc_get(struct pystacks *ps, int pid, uint32_t gen, bool add);

#endif
