// SPDX-License-Identifier: GPL-2.0-only
/*
 * symbolize/pyasync: the .AsyncioDebug sections of Debian testing's
 * python3.14 (its _asyncio module, 3.14.8-1) and python3.15 (the
 * executable, 3.15.0-1), as objdump -s -j .AsyncioDebug prints them, read
 * into offsets; one whose task node lies past the task, or that is short,
 * refused. A task's auto-numbered name (an int) read as "Task-N"; a
 * negative one, one past a digit, or an object of another type refused.
 * The walk over a small image of a process (3.14's and 3.15's frame state
 * numbers and awaited slot): the running task left out, a suspended one's
 * chain innermost first and untagged, a chain through a Future ended, a
 * list that loops back on itself bounded, offsets that do not fit refused,
 * the main interpreter found at the end of the list, a coroutine at the
 * end of mapped memory read alone. py_readv_process on this process: whole
 * pieces up to one across a PROT_NONE page.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/pyasync.h"
#include "symbolize/python.h"
#include "tests/unit/check.h"

/* A flat image of target memory at MEM_BASE. */
#define MEM_BASE 0x10000ULL
static uint8_t mem[4096];

static int read_mem(void *arg, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	if (addr < MEM_BASE || addr + len > MEM_BASE + sizeof(mem))
		return -EFAULT;
	memcpy(buf, mem + (addr - MEM_BASE), len);
	return 0;
}

/* read_mem for each piece, up to the first that fails: a py_readv_fn */
static int readv_mem(void *arg, const struct py_iov *iov, size_t n)
{
	size_t i;

	for (i = 0; i < n && !read_mem(arg, iov[i].addr, iov[i].buf, iov[i].len); i++)
		;
	return (int)i;
}

static void put64(uint64_t addr, uint64_t v)
{
	memcpy(mem + (addr - MEM_BASE), &v, sizeof(v));
}

static const uint64_t section_314[13] = {
	0xa8, 0x88, 0x60, 0x6c, 0x6d, 0x80, 0x98, 0x37248, 0x2a80, 0x3a8, 0x360, 0x368, 0x370,
};
static const uint64_t section_315[13] = {
	0xa8, 0x88, 0x60, 0x6c, 0x6d, 0x80, 0x98, 0x373c0, 0x2a68, 0x450, 0x400, 0x408, 0x418,
};

static void test_sections(void)
{
	struct pyasync_offsets o;
	uint64_t bad[13];

	memcpy(mem, section_314, sizeof(section_314));
	CHECK(pyasync_offsets_read(read_mem, NULL, MEM_BASE, 104, &o) == 0);
	CHECK(o.task_size == 0xa8 && o.task_name == 0x88 && o.task_coro == 0x80);
	CHECK(o.task_node == 0x98 && o.task_is_task == 0x6c);
	CHECK(o.interp_tasks_head == 0x2a80);
	CHECK(o.tstate_running_task == 0x368 && o.tstate_tasks_head == 0x370);

	memcpy(mem, section_315, sizeof(section_315));
	CHECK(pyasync_offsets_read(read_mem, NULL, MEM_BASE, 104, &o) == 0);
	CHECK(o.interp_tasks_head == 0x2a68 && o.tstate_tasks_head == 0x418);
	CHECK(o.tstate_running_loop == 0x400);

	/* the task's list node past the task: not this layout */
	memcpy(bad, section_314, sizeof(bad));
	bad[6] = 0xa0;
	memcpy(mem, bad, sizeof(bad));
	CHECK(pyasync_offsets_read(read_mem, NULL, MEM_BASE, 104, &o) == -EINVAL);
	/* a section too short to hold the 13 offsets */
	memcpy(mem, section_314, sizeof(section_314));
	CHECK(pyasync_offsets_read(read_mem, NULL, MEM_BASE, 96, &o) == -EINVAL);
	/* unreadable */
	CHECK(pyasync_offsets_read(read_mem, NULL, 8, 104, &o) == -EFAULT);
}

/* An object at @obj of a type whose tp_flags are @flags, lv_tag @tag, digit @digit. */
static void make_int(uint64_t obj, uint64_t flags, uint64_t tag, uint32_t digit)
{
	const uint64_t type = MEM_BASE + 0x800;

	memset(mem, 0, sizeof(mem));
	put64(obj + 8, type);		/* ob_type */
	put64(type + 168, flags);	/* tp_flags */
	put64(obj + 16, tag);		/* lv_tag */
	memcpy(mem + (obj + 24 - MEM_BASE), &digit, sizeof(digit));
}

static void test_names(void)
{
	struct pyasync a = { .read = read_mem };
	const uint64_t obj = MEM_BASE + 0x100;
	char *name = NULL;

	a.off.object_type = 8;
	a.gen.type_flags = 168;
	a.gen.long_tag = 16;
	a.gen.long_digit = 24;

	make_int(obj, 1UL << 24, 1 << 3, 42);
	CHECK(pyasync_task_name(&a, obj, &name) == 0);
	CHECK_STR(name, "Task-42");
	free(name);
	name = NULL;
	make_int(obj, 1UL << 24, 1, 0);		/* zero: sign 1, no digit */
	CHECK(pyasync_task_name(&a, obj, &name) == 0);
	CHECK_STR(name, "Task-0");
	free(name);
	name = NULL;
	make_int(obj, 1UL << 24, 1 << 3 | 2, 5);	/* negative */
	CHECK(pyasync_task_name(&a, obj, &name) == -EINVAL);
	make_int(obj, 1UL << 24, 2 << 3, 5);	/* two digits: past 2^30 */
	CHECK(pyasync_task_name(&a, obj, &name) == -EINVAL);
	make_int(obj, 1UL << 10, 1 << 3, 5);	/* neither an int nor a str */
	CHECK(pyasync_task_name(&a, obj, &name) == -EINVAL);
	CHECK(pyasync_task_name(&a, 0, &name) == -EINVAL);
	CHECK(pyasync_task_name(&a, 8, &name) == -EFAULT);
	CHECK(name == NULL);
}

/* The image's layout: a runtime, one interpreter, one thread, two tasks. */
enum {
	R = MEM_BASE, I = MEM_BASE + 0x100, T = MEM_BASE + 0x200, TA = MEM_BASE + 0x300,
	TB = MEM_BASE + 0x400, C1 = MEM_BASE + 0x500, C2 = MEM_BASE + 0x600,
	SP = MEM_BASE + 0x780, CT = MEM_BASE + 0x800, FUT = MEM_BASE + 0x900,
	I2 = MEM_BASE + 0xc00,	/* a subinterpreter, newer than I: the list's head */
	C2_END = MEM_BASE + 0xf90,	/* C2 where 1024 bytes run past the image */
};

static struct pyasync fake_layout(uint32_t version)
{
	struct pyasync a = { .read = read_mem, .version = version, .runtime = R };

	a.off.object_type = 8;
	a.off.runtime_interp_head = 0;
	a.off.interp_threads_head = 0x10;
	a.off.tstate_next = 0x8;
	a.off.tstate_native_thread_id = 0x18;
	a.off.frame_code = 0;
	a.off.frame_instr = 8;
	a.gen = (struct py_gen_offsets){ .gen_size = 0x70, .gen_iframe = 0x40,
					 .gen_frame_state = 0x20, .frame_size = 0x30,
					 .frame_stackpointer = 0x10, .interp_next = 0x8 };
	a.aio = (struct pyasync_offsets){ .task_size = 0x80, .task_name = 0x10,
					  .task_is_task = 0x18, .task_coro = 0x20,
					  .task_node = 0x30, .interp_tasks_head = 0x40,
					  .tstate_running_loop = 0x20,
					  .tstate_running_task = 0x28, .tstate_tasks_head = 0x30 };
	return a;
}

/* A coroutine at @c in state @state running @code, awaiting @awaited at slot @slot. */
static void make_coro(uint64_t c, int8_t state, uint64_t code, uint64_t awaited, unsigned int slot)
{
	put64(c + 8, CT);
	mem[c + 0x20 - MEM_BASE] = (uint8_t)state;
	put64(c + 0x40, code);
	put64(c + 0x48, code + 0x100);
	put64(c + 0x50, SP + 0x10 * (c == C1));
	if (awaited)
		put64(SP + 0x10 * (c == C1) - 8 * slot, awaited);
}

/* The image: thread 77 runs task B; task A's coroutine C1 awaits C2, which awaits a Future. */
static void make_image(int8_t yield_from, unsigned int slot)
{
	memset(mem, 0, sizeof(mem));
	put64(R, I2);
	put64(I2 + 0x8, I);			/* the main interpreter is the list's last */
	put64(I + 0x10, T);
	put64(I + 0x40, I + 0x40);		/* the interpreter's list: empty */
	put64(T + 0x18, 77);
	put64(T + 0x28, TB | 1);		/* running B (a tagged pointer) */
	put64(T + 0x30, TA + 0x30);		/* its list: A, B, back to the head */
	put64(TA + 0x30, TB + 0x30);
	put64(TB + 0x30, T + 0x30);
	mem[TA + 0x18 - MEM_BASE] = mem[TB + 0x18 - MEM_BASE] = 1;
	put64(TA + 0x20, C1);
	put64(TB + 0x20, C2);
	put64(TA + 0x10, MEM_BASE + 0xa00);
	make_coro(C1, yield_from, 0x1111, C2, slot);
	make_coro(C2, yield_from, 0x3333, FUT, slot);
	put64(FUT + 8, MEM_BASE + 0xb00);	/* not a coroutine: the chain ends */
}

struct seen {
	size_t nr;
	struct pyasync_task t;
};

static void seen_task(void *arg, const struct pyasync_task *t)
{
	struct seen *s = arg;

	s->nr++;
	s->t = *t;
}

static void test_walk(uint32_t version, int8_t yield_from, int8_t suspended, unsigned int slot,
		      bool batched)
{
	struct pyasync a = fake_layout(version);
	struct pyasync_stats st = { 0 };
	struct seen s = { 0 };

	make_image(yield_from, slot);
	a.readv = batched ? readv_mem : NULL;
	CHECK(pyasync_walk(&a, 100, seen_task, &s, &st) == 0);
	CHECK(s.nr == 1 && st.tasks == 2 && st.running == 1 && st.suspended == 1);
	CHECK(s.t.addr == TA && s.t.tid == 77 && s.t.name == MEM_BASE + 0xa00);
	CHECK(s.t.nr == 2 && !s.t.truncated);
	/* innermost first, the code object's tag bits cleared */
	CHECK(s.t.frames[0].code == 0x3333 - 3 && s.t.frames[0].instr == 0x3433);
	CHECK(s.t.frames[1].code == 0x1111 - 1 && s.t.frames[1].instr == 0x1211);

	/* A's coroutine merely suspended (a yield, no await): a chain of one */
	mem[C1 + 0x20 - MEM_BASE] = (uint8_t)suspended;
	s.nr = 0;
	CHECK(pyasync_walk(&a, 100, seen_task, &s, &st) == 0);
	CHECK(s.nr == 1 && s.t.nr == 1 && s.t.frames[0].code == 0x1110);

	/* no interpreter yet (a 3.15 executable has its section before): not yet readable */
	put64(R, 0);
	CHECK(pyasync_walk(&a, 100, seen_task, &s, &st) == -ENOENT);
	put64(R, I2);

	/*
	 * C2 at the image's end: the object with what follows it cannot be
	 * read (the batch stops there), the object alone can; what it awaits
	 * lies outside it, read apart
	 */
	make_image(yield_from, slot);
	make_coro(C2_END, yield_from, 0x3333, FUT, slot);
	put64(C1 + 0x50, SP + 0x10);
	put64(SP + 0x10 - 8 * slot, C2_END);
	memset(&st, 0, sizeof(st));
	s.nr = 0;
	CHECK(pyasync_walk(&a, 100, seen_task, &s, &st) == 0);
	CHECK(s.nr == 1 && s.t.nr == 2 && s.t.frames[0].code == 0x3330);
	make_image(yield_from, slot);

	/* a list that loops on A without coming back to its head: bounded */
	put64(TA + 0x30, TA + 0x30);
	memset(&st, 0, sizeof(st));
	CHECK(pyasync_walk(&a, 100, seen_task, &s, &st) == 0);
	CHECK(st.tasks == 100 && st.cut > 0);

	/* offsets that do not fit what is read */
	pyasync_release(&a);
	a.off.frame_code = 0x30;
	CHECK(pyasync_check(&a) == -EINVAL);
	CHECK(pyasync_walk(&a, 100, seen_task, &s, &st) == -EINVAL);
	a = fake_layout(version);
	a.aio.task_node = 0x78;
	CHECK(pyasync_check(&a) == -EINVAL);
	a = fake_layout(version);
	CHECK(pyasync_check(&a) == 0);
}

/* py_readv_process on this process: whole pieces up to the first it cannot read. */
static void test_readv_self(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t out[3][16];
	void *self = (void *)(intptr_t)getpid();
	struct py_iov iov[3];

	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED)
		return;
	memset(m, 7, 3 * pg);
	CHECK(mprotect(m + pg, pg, PROT_NONE) == 0);
	for (int i = 0; i < 3; i++)
		iov[i] = (struct py_iov){ .addr = (uintptr_t)(m + i * pg), .buf = out[i], .len = 16 };
	CHECK(py_readv_process(self, iov, 3) == 1 && out[0][15] == 7);
	CHECK(py_readv_process(self, iov + 2, 1) == 1 && out[2][0] == 7);
	CHECK(py_readv_process(self, iov + 1, 2) == 0);
	CHECK(py_readv_process(self, iov, 0) == 0);
	/* a piece that runs into the protected page is not whole */
	iov[0].addr = (uintptr_t)(m + pg - 8);
	CHECK(py_readv_process(self, iov, 1) == 0);
	munmap(m, 3 * pg);
}

int main(void)
{
	test_readv_self();
	test_sections();
	test_names();
	test_walk(PY_VERSION_OF(3, 14, 8), -1, -2, 1, false);
	test_walk(PY_VERSION_OF(3, 15, 0), 2, 1, 2, false);
	test_walk(PY_VERSION_OF(3, 14, 8), -1, -2, 1, true);
	test_walk(PY_VERSION_OF(3, 15, 0), 2, 1, 2, true);
	return check_exit();
}
