/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * asyncio's tasks in another process's memory, private to symbolize/ and
 * the record session (CPython 3.14+): which tasks exist, which one each
 * thread is running, and for every other one its await chain, the
 * coroutine frames from the task's own coroutine down to the innermost one
 * that awaits, read the way CPython's `python -m asyncio pstree` reads
 * them. Where the structures are comes from the interpreter itself: the
 * AsyncioDebug section of the _asyncio module (an extension module in
 * 3.14, the executable in 3.15) and _Py_DebugOffsets (pyoffsets.h).
 *
 * Nothing is stopped while it is read: a task may finish, a list change
 * under the walk. Every list and chain is bounded, every object is read
 * whole and checked before use, and bad memory ends one task's chain or
 * one list, never the walk.
 */
#ifndef LATPROF_SYMBOLIZE_PYASYNC_H
#define LATPROF_SYMBOLIZE_PYASYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/pycode.h"
#include "symbolize/pyoffsets.h"

/* The section of the _asyncio module that describes its structures. */
#define PYASYNC_SECTION ".AsyncioDebug"

/* Its contents (Modules/_asynciomodule.c of 3.14 and 3.15: 13 uint64_t). */
struct pyasync_offsets {
	int32_t task_size;		/* sizeof(TaskObj) */
	int32_t task_name;		/* PyObject *task_name: a str, or an int N for "Task-N" */
	int32_t task_awaited_by;
	int32_t task_is_task;		/* char: a Task, not a bare Future */
	int32_t task_coro;		/* PyObject *task_coro */
	int32_t task_node;		/* struct llist_node: the thread's list of tasks */
	int32_t interp_tasks_head;	/* the tasks of threads that exited */
	int32_t tstate_running_loop;	/* _PyThreadStateImpl members */
	int32_t tstate_running_task;
	int32_t tstate_tasks_head;
};

/*
 * The @size bytes of the section at @addr, read through @read, into @out;
 * each offset must lie inside its struct. 0, -EINVAL, or the read's -errno.
 */
int pyasync_offsets_read(py_read_fn read, void *arg, uint64_t addr, uint64_t size,
			 struct pyasync_offsets *out);

/* One process's interpreter, as the walk needs it. */
struct pyasync {
	py_read_fn read;
	py_readv_fn readv;		/* NULL: one read at a time */
	void *arg;
	uint32_t version;
	uint64_t runtime;		/* &_PyRuntime */
	struct py_offsets off;		/* the frame walk's (python.h) */
	struct py_types types;
	struct py_gen_offsets gen;
	struct pyasync_offsets aio;
	struct pyasync_walk *scratch;	/* the walks' memory, kept between them:
					 * pyasync_release frees it */
};

#define PYASYNC_MAX_FRAMES 32		/* coroutines of one await chain kept */
#define PYASYNC_MAX_DEPTH 128		/* coroutines of one chain followed */
#define PYASYNC_MAX_THREADS 1024	/* thread states looked at */

/* A coroutine's frame. */
struct pyasync_frame {
	uint64_t code;			/* the code object */
	uint64_t instr;			/* the frame's instruction pointer */
};

/* A suspended task. */
struct pyasync_task {
	uint64_t addr;			/* the task object */
	uint64_t name;			/* its name object: pyasync_task_name */
	uint32_t tid;			/* the thread whose list holds it; 0: the
					 * interpreter's (its thread exited) */
	uint32_t nr;			/* frames[], innermost first */
	bool truncated;			/* the chain's outer frames did not fit */
	struct pyasync_frame frames[PYASYNC_MAX_FRAMES];
};

/* What one walk saw. */
struct pyasync_stats {
	uint64_t tasks;			/* in the lists */
	uint64_t running;		/* running in a thread, or not suspended */
	uint64_t suspended;		/* handed to the callback */
	uint64_t unreadable;		/* a task or list that could not be read */
	uint64_t cut;			/* tasks past @max_tasks, not looked at */
	uint64_t truncated;		/* chains deeper than PYASYNC_MAX_FRAMES */
};

/*
 * Do @a's offsets fit the objects they index (a coroutine with its frame,
 * a task) as the walk reads them? The interpreter's own _Py_DebugOffsets
 * are in writable memory: a process could say anything. 0 or -EINVAL.
 */
int pyasync_check(const struct pyasync *a);

typedef void (*pyasync_task_fn)(void *arg, const struct pyasync_task *t);

/*
 * Walk the tasks of @a's main interpreter: @fn for each task suspended at an
 * await (or created, not yet started), at most @max_tasks looked at.
 * Counts into @st (added to). 0, -EINVAL (pyasync_check refuses @a),
 * -ENOMEM, or the first read's -errno when not even the interpreter could
 * be read (-ESRCH: the process is gone).
 */
int pyasync_walk(struct pyasync *a, uint32_t max_tasks, pyasync_task_fn fn, void *arg,
		 struct pyasync_stats *st);

/* Free the memory @a's walks kept (a->scratch). */
void pyasync_release(struct pyasync *a);

/*
 * The name of a task from its name object @obj: a str as it is, an int N
 * as "Task-N" (asyncio numbers unnamed tasks so). 0 and *out (malloc'ed),
 * -EINVAL (neither), or the read's -errno.
 */
int pyasync_task_name(const struct pyasync *a, uint64_t obj, char **out);

#endif
