// SPDX-License-Identifier: GPL-2.0-only
/*
 * asyncio's suspended tasks and their await chains (pyasync.h). A task's
 * chain starts at its coroutine; a coroutine suspended in `await` holds
 * what it awaits on top of its frame's value stack, and when that is a
 * coroutine too (the same type) the chain goes on into it. It ends at the
 * first coroutine that awaits something else: a Future (asyncio.sleep's,
 * a socket's), another Task, an iterator.
 */
#include "symbolize/pyasync.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/lib/util.h"

/* Bytes of a task object or a coroutine read at once, at most. */
#define PYASYNC_OBJ_READ 1024
/* No struct member lies further in than this (PyInterpreterState is 220 KiB). */
#define PYASYNC_OFFSET_MAX (4 << 20)
/* Interpreters followed to the main one, at most. */
#define PYASYNC_MAX_INTERPS 64
/* Tasks followed along one list before it is taken for corrupt. */
#define PYASYNC_MAX_LIST 65536

/* Py_TPFLAGS_LONG_SUBCLASS, Py_TPFLAGS_UNICODE_SUBCLASS (Include/object.h) */
#define PY_TPFLAGS_LONG_SUBCLASS (1UL << 24)
#define PY_TPFLAGS_UNICODE_SUBCLASS (1UL << 28)

/*
 * A coroutine's gi_frame_state (Include/internal/pycore_frame.h): 3.14
 * numbers them from FRAME_CREATED = -3, 3.15 from FRAME_CREATED = 0 and
 * adds FRAME_SUSPENDED_YIELD_FROM_LOCKED (free-threaded builds).
 */
enum coro_state { CORO_CREATED, CORO_SUSPENDED, CORO_AWAITING, CORO_OTHER };

static enum coro_state coro_state(uint32_t version, int8_t s)
{
	if (PY_MM(version) == PY_VERSION_OF(3, 14, 0))
		return s == -3 ? CORO_CREATED : s == -2 ? CORO_SUSPENDED :
		       s == -1 ? CORO_AWAITING : CORO_OTHER;
	return s == 0 ? CORO_CREATED : s == 1 ? CORO_SUSPENDED :
	       s == 2 || s == 3 ? CORO_AWAITING : CORO_OTHER;
}

/*
 * Where a coroutine suspended in `await` keeps what it awaits: the top of
 * its value stack in 3.14 (_PyGen_yf peeks stackpointer[-1]); 3.15's SEND
 * keeps it one slot below the value sent.
 */
static unsigned int awaited_slot(uint32_t version)
{
	return PY_MM(version) == PY_VERSION_OF(3, 14, 0) ? 1 : 2;
}

static int put_off(int32_t *dst, uint64_t v, uint64_t size, unsigned int width)
{
	if (size >= PYASYNC_OFFSET_MAX || v >= size || width > size - v)
		return -EINVAL;
	*dst = (int32_t)v;
	return 0;
}

int pyasync_offsets_read(py_read_fn read, void *arg, uint64_t addr, uint64_t size,
			 struct pyasync_offsets *out)
{
	struct {
		uint64_t task_size, task_name, task_awaited_by, task_is_task,
			task_awaited_by_is_set, task_coro, task_node;
		uint64_t interp_size, interp_tasks_head;
		uint64_t tstate_size, running_loop, running_task, tstate_tasks_head;
	} s;
	struct pyasync_offsets r;
	int err;

	if (size < sizeof(s))
		return -EINVAL;
	err = read(arg, addr, &s, sizeof(s));
	if (err)
		return err;
	r.task_size = (int32_t)s.task_size;
	err = s.task_size > PYASYNC_OBJ_READ ? -EINVAL : 0;
	err |= put_off(&r.task_name, s.task_name, s.task_size, 8);
	err |= put_off(&r.task_awaited_by, s.task_awaited_by, s.task_size, 8);
	err |= put_off(&r.task_is_task, s.task_is_task, s.task_size, 1);
	err |= put_off(&r.task_coro, s.task_coro, s.task_size, 8);
	err |= put_off(&r.task_node, s.task_node, s.task_size, 16);
	err |= put_off(&r.interp_tasks_head, s.interp_tasks_head, s.interp_size, 16);
	err |= put_off(&r.tstate_running_loop, s.running_loop, s.tstate_size, 8);
	err |= put_off(&r.tstate_running_task, s.running_task, s.tstate_size, 8);
	err |= put_off(&r.tstate_tasks_head, s.tstate_tasks_head, s.tstate_size, 16);
	if (err)
		return -EINVAL;
	*out = r;
	return 0;
}

/* Does [@off, @off + @width) lie in [0, @size)? */
static bool fits(int32_t off, unsigned int width, int64_t size)
{
	return off >= 0 && (int64_t)off + width <= size;
}

int pyasync_check(const struct pyasync *a)
{
	int64_t frame = a->gen.frame_size, len = (int64_t)a->gen.gen_iframe + frame;

	/* what chain() and walk_list() index their copies of objects with */
	if (a->gen.gen_iframe < 0 || frame <= 0 || len > PYASYNC_OBJ_READ ||
	    !fits(a->gen.gen_frame_state, 1, a->gen.gen_iframe) ||
	    !fits(a->off.object_type, 8, a->gen.gen_iframe) ||
	    !fits(a->off.frame_code, 8, frame) || !fits(a->off.frame_instr, 8, frame) ||
	    !fits(a->gen.frame_stackpointer, 8, frame) ||
	    a->aio.task_size <= 0 || a->aio.task_size > PYASYNC_OBJ_READ ||
	    !fits(a->aio.task_name, 8, a->aio.task_size) ||
	    !fits(a->aio.task_coro, 8, a->aio.task_size) ||
	    !fits(a->aio.task_is_task, 1, a->aio.task_size) ||
	    !fits(a->aio.task_node, 16, a->aio.task_size))
		return -EINVAL;
	return 0;
}

static int read_ptr(const struct pyasync *a, uint64_t addr, uint64_t *v)
{
	*v = 0;
	return a->read(a->arg, addr, v, sizeof(*v));
}

static uint64_t buf_u64(const uint8_t *buf, int32_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/* A pointer member that may be a tagged _PyStackRef (3.14+): its object. */
static uint64_t untag(uint64_t v)
{
	return v & ~(uint64_t)7;
}

/*
 * The await chains of the tasks a walk found are followed together, a
 * coroutine of each task a step, each step one batch read of all of them
 * (a process_vm_readv of up to PYASYNC_BATCH pieces: a read costs the same
 * for one object as for hundreds). A coroutine is read with what follows
 * it, its value stack among it, so what it awaits is usually in the same
 * read; the next step reads that, and its type (a coroutine's, or not: a
 * Future, another Task) says whether the chain goes on.
 */
#define PYASYNC_BATCH 256

struct pending {
	struct pyasync_task t;
	uint64_t coro;			/* the next object of the chain to read; 0: done */
	uint64_t type;			/* the chain's coroutine type */
	uint32_t depth;			/* coroutines so far (frames[] keeps the last ones) */
};

struct batch {
	struct pending items[PYASYNC_BATCH];
	uint8_t bufs[PYASYNC_BATCH][PYASYNC_OBJ_READ];
	size_t got[PYASYNC_BATCH];	/* bytes read of each; 0: unreadable */
	struct py_iov iov[PYASYNC_BATCH];
	size_t nr;
};

/*
 * Read the objects of the pending chains (@idx[0..n)) into their buffers.
 * 0, or the batch read's -errno (-ESRCH: the process is gone; then none
 * is read).
 */
static int batch_read(const struct pyasync *a, struct batch *b, const size_t *idx, size_t n)
{
	size_t len = (size_t)a->gen.gen_iframe + (size_t)a->gen.frame_size, i, done = 0;
	int got;

	for (i = 0; i < n; i++)
		b->iov[i] = (struct py_iov){ .addr = b->items[idx[i]].coro,
					     .buf = b->bufs[idx[i]], .len = PYASYNC_OBJ_READ };
	while (done < n) {
		got = a->readv ? a->readv(a->arg, b->iov + done, n - done) : 0;
		if (got < 0) {
			for (i = done; i < n; i++)
				b->got[idx[i]] = 0;
			return got;
		}
		for (i = 0; i < (size_t)got; i++)
			b->got[idx[done + i]] = PYASYNC_OBJ_READ;
		done += (size_t)got;
		if (done >= n)
			break;
		/*
		 * The first the batch could not read whole (or no batch reads):
		 * alone, and where the object and what follows it would cross
		 * into memory not mapped, the object alone.
		 */
		i = idx[done];
		b->got[i] = !a->read(a->arg, b->items[i].coro, b->bufs[i], PYASYNC_OBJ_READ) ?
			    PYASYNC_OBJ_READ :
			    !a->read(a->arg, b->items[i].coro, b->bufs[i], len) ? len : 0;
		done++;
	}
	return 0;
}

/* One step of chain @p from the object read into @buf (@got bytes). */
static void chain_step(const struct pyasync *a, struct pending *p, const uint8_t *buf, size_t got)
{
	const uint8_t *frame = buf + a->gen.gen_iframe;
	uint64_t coro = p->coro, slot, awaited;
	enum coro_state state;

	p->coro = 0;
	/* what a coroutine awaits goes on the chain when it is one too */
	if (!got || (p->depth && buf_u64(buf, a->off.object_type) != p->type))
		return;
	p->type = buf_u64(buf, a->off.object_type);
	state = coro_state(a->version, (int8_t)buf[a->gen.gen_frame_state]);
	if (state == CORO_OTHER)
		return;
	p->t.frames[p->depth % PYASYNC_MAX_FRAMES] = (struct pyasync_frame){
		.code = untag(buf_u64(frame, a->off.frame_code)),
		.instr = buf_u64(frame, a->off.frame_instr),
	};
	p->depth++;
	if (state != CORO_AWAITING || p->depth >= PYASYNC_MAX_DEPTH)
		return;
	/* what it awaits, on its value stack */
	slot = untag(buf_u64(frame, a->gen.frame_stackpointer)) - 8 * awaited_slot(a->version);
	if (slot >= coro && slot - coro <= got - 8)
		awaited = buf_u64(buf, (int32_t)(slot - coro));
	else if (read_ptr(a, slot, &awaited))
		return;
	p->coro = untag(awaited);
}

/* A chain's frames, read outermost first in a ring, innermost first in @t. */
static void chain_finish(struct pending *p)
{
	struct pyasync_frame ring[PYASYNC_MAX_FRAMES];
	uint32_t n = p->depth < PYASYNC_MAX_FRAMES ? p->depth : PYASYNC_MAX_FRAMES, i;

	memcpy(ring, p->t.frames, sizeof(ring));
	for (i = 0; i < n; i++)
		p->t.frames[i] = ring[(p->depth - 1 - i) % PYASYNC_MAX_FRAMES];
	p->t.nr = n;
	p->t.truncated = p->depth > PYASYNC_MAX_FRAMES;
}

/* Is @task one that some thread is running now? */
static bool is_running(const uint64_t *running, size_t nr, uint64_t task)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (running[i] == task)
			return true;
	return false;
}

struct pyasync_walk {
	const struct pyasync *a;
	uint32_t budget;		/* tasks still to look at */
	pyasync_task_fn fn;
	void *arg;
	struct pyasync_stats *st;
	uint64_t running[PYASYNC_MAX_THREADS];	/* the task each thread runs */
	size_t nr_running;
	uint64_t states[PYASYNC_MAX_THREADS];	/* the thread states */
	uint64_t tids[PYASYNC_MAX_THREADS];
	struct batch batch;			/* suspended tasks whose chains are read */
	int err;				/* a batch read's, ends the walk */
};

/*
 * Follow the chains of the batch's tasks to their ends, then hand each
 * over. 0, or the batch read's -errno (nothing handed over).
 */
static int batch_flush(struct pyasync_walk *w)
{
	struct batch *b = &w->batch;
	size_t idx[PYASYNC_BATCH], i, n;
	int err;

	do {
		for (i = n = 0; i < b->nr; i++)
			if (b->items[i].coro)
				idx[n++] = i;
		err = batch_read(w->a, b, idx, n);
		if (err) {
			b->nr = 0;
			return err;
		}
		for (i = 0; i < n; i++)
			chain_step(w->a, &b->items[idx[i]], b->bufs[idx[i]], b->got[idx[i]]);
	} while (n);
	for (i = 0; i < b->nr; i++) {
		struct pending *p = &b->items[i];

		if (!p->depth) {	/* running elsewhere, done, or unreadable */
			w->st->running++;
			continue;
		}
		chain_finish(p);
		w->st->suspended++;
		w->st->truncated += p->t.truncated;
		w->fn(w->arg, &p->t);
	}
	b->nr = 0;
	return 0;
}

/* The tasks of the list at @head (an llist_node whose next comes first). */
static void walk_list(struct pyasync_walk *w, uint64_t head, uint32_t tid)
{
	const struct pyasync *a = w->a;
	uint8_t task[PYASYNC_OBJ_READ];
	uint64_t node;
	uint32_t n;

	if (read_ptr(a, head, &node)) {
		w->st->unreadable++;
		return;
	}
	for (n = 0; node && node != head && n < PYASYNC_MAX_LIST && !w->err; n++) {
		struct pyasync_task t = { .tid = tid };
		uint64_t coro;

		if (!w->budget) {
			w->st->cut++;
			if (read_ptr(a, node, &node))
				break;
			continue;
		}
		w->budget--;
		t.addr = node - (uint64_t)a->aio.task_node;
		if (a->read(a->arg, t.addr, task, (size_t)a->aio.task_size)) {
			w->st->unreadable++;
			return;
		}
		w->st->tasks++;
		node = buf_u64(task, a->aio.task_node);
		coro = untag(buf_u64(task, a->aio.task_coro));
		if (!task[a->aio.task_is_task] || !coro)
			continue;
		t.name = untag(buf_u64(task, a->aio.task_name));
		if (is_running(w->running, w->nr_running, t.addr)) {
			w->st->running++;
			continue;
		}
		w->batch.items[w->batch.nr++] = (struct pending){ .t = t, .coro = coro };
		if (w->batch.nr == PYASYNC_BATCH)
			w->err = batch_flush(w);
	}
}

void pyasync_release(struct pyasync *a)
{
	free(a->scratch);
	a->scratch = NULL;
}

int pyasync_walk(struct pyasync *a, uint32_t max_tasks, pyasync_task_fn fn, void *arg,
		 struct pyasync_stats *st)
{
	struct pyasync_walk *w;
	uint64_t interp, ts;
	size_t i, nr = 0;
	int err;

	if (pyasync_check(a))
		return -EINVAL;
	/* 400 KB: kept for the next walk, not mapped and faulted in anew each time */
	if (!a->scratch)
		a->scratch = malloc(sizeof(*a->scratch));
	w = a->scratch;
	if (!w)
		return -ENOMEM;
	w->a = a;
	w->budget = max_tasks;
	w->fn = fn;
	w->arg = arg;
	w->st = st;
	w->nr_running = 0;
	w->batch.nr = 0;
	w->err = 0;
	err = read_ptr(a, a->runtime + a->off.runtime_interp_head, &interp);
	if (!err && !interp)
		err = -ENOENT;
	/* the list's head is the newest interpreter: the main one is its last */
	for (i = 0; !err && i < PYASYNC_MAX_INTERPS; i++) {
		uint64_t next;

		if (read_ptr(a, interp + a->gen.interp_next, &next) || !next)
			break;
		interp = next;
	}
	if (!err)
		err = read_ptr(a, interp + a->off.interp_threads_head, &ts);
	/* the running task of every thread first: those are not waiting */
	while (!err && ts && nr < PYASYNC_MAX_THREADS) {
		uint64_t task = 0;

		w->states[nr] = ts;
		if (read_ptr(a, ts + a->off.tstate_native_thread_id, &w->tids[nr]) ||
		    read_ptr(a, ts + a->aio.tstate_running_task, &task)) {
			st->unreadable++;
			break;
		}
		nr++;
		if (task)
			w->running[w->nr_running++] = untag(task);
		if (read_ptr(a, ts + a->off.tstate_next, &ts))
			break;
	}
	for (i = 0; !err && i < nr; i++)
		walk_list(w, w->states[i] + a->aio.tstate_tasks_head, (uint32_t)w->tids[i]);
	if (!err)
		walk_list(w, interp + a->aio.interp_tasks_head, 0);
	if (!err)
		err = w->err ? w->err : batch_flush(w);
	return err;
}

int pyasync_task_name(const struct pyasync *a, uint64_t obj, char **out)
{
	uint64_t type, flags, tag;
	uint32_t digit;
	int err;

	if (!obj)
		return -EINVAL;
	err = read_ptr(a, obj + a->off.object_type, &type);
	if (!err)
		err = read_ptr(a, type + a->gen.type_flags, &flags);
	if (err)
		return err;
	if (flags & PY_TPFLAGS_UNICODE_SUBCLASS)
		return py_str_read(&a->off, NULL, a->read, a->arg, obj, out);
	if (!(flags & PY_TPFLAGS_LONG_SUBCLASS))
		return -EINVAL;
	/* lv_tag: digits << 3 | sign (0 positive, 1 zero, 2 negative) */
	err = read_ptr(a, obj + a->gen.long_tag, &tag);
	if (!err)
		err = a->read(a->arg, obj + a->gen.long_digit, &digit, sizeof(digit));
	if (err)
		return err;
	if ((tag & 3) == 1)
		digit = 0;
	else if ((tag & 3) != 0 || tag >> 3 != 1)
		return -EINVAL;	/* negative, or past 2^30: not asyncio's counter */
	return asprintf(out, "Task-%u", digit) < 0 ? -ENOMEM : 0;
}
