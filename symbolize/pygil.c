// SPDX-License-Identifier: GPL-2.0-only
/* Where a running CPython keeps its GIL (pygil.h). */
#include "symbolize/pygil.h"

#include <errno.h>
#include <string.h>

/* The pointer at @addr; a NULL one is -EAGAIN (not set yet). */
static int read_ptr(py_read_fn read, void *arg, uint64_t addr, uint64_t *v)
{
	int err = read(arg, addr, v, sizeof(*v));

	if (!err && !*v)
		err = -EAGAIN;
	return err;
}

int py_gil_find(const struct py_offsets *o, uint64_t runtime, py_read_fn read, void *arg,
		struct py_gil *g)
{
	uint64_t interp, addr, interval;
	int32_t locked;
	int err;

	if (o->gil_size <= 0 || o->gil_locked < 0 || o->gil_holder < 0 ||
	    o->gil_locked + (int32_t)sizeof(locked) > o->gil_size ||
	    o->gil_holder + (int32_t)sizeof(addr) > o->gil_size)
		return -ENOENT;
	if (o->runtime_gil >= 0) {
		addr = runtime + o->runtime_gil;
	} else if (o->interp_gil >= 0 && o->runtime_interp_head >= 0) {
		err = read_ptr(read, arg, runtime + o->runtime_interp_head, &interp);
		if (!err)
			err = read_ptr(read, arg, interp + o->interp_gil, &addr);
		if (err)
			return err;
	} else {
		return -ENOENT;
	}
	err = read(arg, addr + o->gil_locked, &locked, sizeof(locked));
	if (err)
		return err;
	/* -1 until create_gil: the process is still starting */
	if (locked == -1)
		return -EAGAIN;
	if (locked != 0 && locked != 1)
		return -EINVAL;
	/*
	 * "locked" reads 0 in most memory: the switch interval, the member
	 * before last_holder in every version, must read as one too (5000 us
	 * by default, sys.setswitchinterval's in us otherwise), or a wrong
	 * offset would take other futexes for GIL waits. 0 is a runtime being
	 * set up (3.8's _PyRuntimeState_Init zeroes it all, locked included,
	 * then sets the interval): look again.
	 */
	if (o->gil_holder >= (int32_t)sizeof(interval)) {
		err = read(arg, addr + o->gil_holder - sizeof(interval), &interval,
			   sizeof(interval));
		if (err)
			return err;
		if (!interval)
			return -EAGAIN;
		if (interval > 1000000000ULL)
			return -EINVAL;
	}
	memset(g, 0, sizeof(*g));
	g->addr = addr;
	g->size = o->gil_size;
	g->locked = o->gil_locked;
	g->holder = o->gil_holder;
	return 0;
}
