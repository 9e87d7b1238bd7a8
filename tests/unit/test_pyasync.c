// SPDX-License-Identifier: GPL-2.0-only
/*
 * symbolize/pyasync: the .AsyncioDebug sections of Debian testing's
 * python3.14 (its _asyncio module, 3.14.8-1) and python3.15 (the
 * executable, 3.15.0-1), as objdump -s -j .AsyncioDebug prints them, read
 * into offsets; one whose task node lies past the task, or that is short,
 * refused. A task's auto-numbered name (an int) read as "Task-N"; a
 * negative one, one past a digit, or an object of another type refused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/pyasync.h"
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

int main(void)
{
	test_sections();
	test_names();
	return check_exit();
}
