/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Python frames of a recording: which traced processes run CPython (and how
 * to walk them, for the py_procs BPF map), the names of the code objects
 * the BPF walk recorded (read from the live process, cached per process and
 * code object), and the merge of those frames into the DWARF-unwound native
 * stack. Owned by the record session; knows nothing about the skeleton.
 *
 * A merged stack is a native pc array, leaf first, in which each run of
 * Python frames that one eval loop call executed stands where that call's
 * _PyEval_EvalFrameDefault frame was. A Python frame is the pc
 * PYSTACKS_PC | id, resolved by pystacks_frame().
 */
#ifndef LATPROF_PYSTACKS_H
#define LATPROF_PYSTACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "bpf/latprof.h"
#include "symbolize/pyasync.h"
#include "symbolize/python.h"

struct profile;

/* Tag of a Python frame in a merged pc array (user pcs are < 2^47). */
#define PYSTACKS_PC (1ULL << 62)

/* One distinct Python frame as shown: names interned, valid until pystacks_free. */
struct pyframe {
	const char *name;	/* co_qualname (3.11+) or co_name; "[unknown]" if unreadable */
	const char *file;	/* co_filename, "" if unknown */
	uint32_t line;		/* the line running, 0 if unknown */
	uint32_t first_line;	/* co_firstlineno: where the function starts */
};

struct pystacks;

/* A new set, searching debuginfo under @debug_dirs too. NULL with errno set. */
struct pystacks *pystacks_new(const char *const *debug_dirs, size_t nr);
/* NULL is a no-op. */
void pystacks_free(struct pystacks *ps);

/*
 * Look (again) for an interpreter in image (@pid, @gen). Returns 1 and fills
 * @out when the process runs a CPython whose frames can be walked and the
 * py_procs map should now hold @out; 0 when there is nothing (new) to put
 * there; -errno on failure. Cheap to call again: a process already found is
 * not looked at twice, but for its GIL (symbolize/pygil.h), looked for until
 * made, and 1 again with @out when it is found (the GIL waits of
 * bpf/gil.bpf.h start then). An interpreter file not seen before is read now if
 * @wait (before recording starts), else in the background (see
 * py_finder_find) and found by a later call.
 */
int pystacks_probe(struct pystacks *ps, int pid, uint32_t gen, bool wait,
		   struct lp_py_proc *out);

/*
 * Whether @gen is still @pid's image (unset: assumed), asked before and
 * after each look at its maps: a sample or event of an image replaced by an
 * exec is often read after that exec, and the maps read then are the next
 * program's. Found for the old image too, the next program's interpreter was
 * walked as both (two asyncio walkers: every await charged twice). An image
 * found replaced is never looked at again.
 */
void pystacks_set_current(struct pystacks *ps, bool (*current)(void *arg, int pid, uint32_t gen),
			  void *arg);

/*
 * @pid exited in image @last_gen: what was kept of its images that ran no Python (most
 * processes of a busy machine) is freed; an image that did is kept for the
 * profile. Cannot fail.
 */
void pystacks_exited(struct pystacks *ps, int pid, uint32_t last_gen);

/*
 * Whether image (@pid, @gen) was already found walkable by pystacks_probe:
 * true with @out filled as that call filled it, false otherwise. Looks at
 * nothing in the process; cannot fail.
 */
bool pystacks_walkable(struct pystacks *ps, int pid, uint32_t gen, struct lp_py_proc *out);

/*
 * Read the interpreter file @path before a command runs it (its DWARF can
 * take 0.2 s to read), so its first frames are walked. Best effort.
 */
void pystacks_prepare(struct pystacks *ps, const char *path);

/*
 * Name the code objects of sample @s of image (@pid, @gen) now, before the
 * native stack is unwound (which can take long for a new process): code
 * objects that ran briefly are freed soon. pystacks_merge does it too.
 */
void pystacks_name(struct pystacks *ps, int pid, uint32_t gen, const struct lp_ustack_sample *s);

/*
 * Merge the Python frames of sample @s (of image @pid, @gen) into its native
 * pcs @pcs[0..nr) (leaf first, as symbolizer_unwind gives them) into
 * @out[0..max); returns the number of pcs written. A process without Python
 * frames gets its pcs copied. Counts how the walk ended, per process.
 */
size_t pystacks_merge(struct pystacks *ps, int pid, uint32_t gen,
		      const struct lp_ustack_sample *s, const uint64_t *pcs, size_t nr,
		      uint64_t *out, size_t max);

/*
 * The pcs of suspended asyncio task @t of image (@pid, @gen) into
 * @out[0..max): its await chain's coroutine frames, innermost first, then
 * a frame "[task NAME]" (@task) at the root. 0 when the process is not a
 * walkable one, or on ENOMEM.
 */
size_t pystacks_await_pcs(struct pystacks *ps, int pid, uint32_t gen,
			  const struct pyasync_task *t, const char *task, uint64_t *out, size_t max);

/* The interpreter of image (@pid, @gen) when its frames are walked, else NULL. */
const struct py_interp *pystacks_interp(struct pystacks *ps, int pid, uint32_t gen);

/* Frame @pc (with PYSTACKS_PC), or NULL if no such frame. */
const struct pyframe *pystacks_frame(const struct pystacks *ps, uint64_t pc);

/*
 * Into the profile's metadata: per process "proc.PID.python" (version and
 * offsets source, or "unsupported: WHY"), "proc.PID.python_gil" ("found",
 * or "not found: WHY"), "proc.PID.python_walk_NAME"
 * counters, and "python.processes"/"python.unsupported" totals. 0 or -ENOMEM.
 */
int pystacks_store(const struct pystacks *ps, struct profile *p);

#endif
