// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/sysexited: exited processes' syscall statistics stay bounded however
 * many processes come and go; the busiest keep their own under their pid,
 * the rest add up under their name's pseudo pid, and no call is lost.
 */
#include <stdlib.h>
#include <string.h>

#include "src/sysexited.h"
#include "tests/unit/check.h"

/* One process's statistics: @nr_syscalls numbers, @calls calls of each. */
static struct sys_exited_stat *process(uint32_t pid, size_t nr_syscalls, uint64_t calls)
{
	struct sys_exited_stat *s = calloc(nr_syscalls, sizeof(*s));
	size_t i;

	for (i = 0; s && i < nr_syscalls; i++) {
		s[i].nr = (int32_t)i;
		s[i].st.pid = pid;
		snprintf(s[i].st.name, sizeof(s[i].st.name), "syscall_%zu", i);
		s[i].st.count = calls;
		s[i].st.total_ns = calls * 1000;
		s[i].st.hist[10] = calls;
		s[i].st.hist_ns[10] = calls * 1000;
	}
	return s;
}

struct sums {
	uint64_t calls, entries, pseudo_calls;
	uint32_t max_real_pid;
	uint64_t calls_of[8];	/* by pid, for pids below 8 */
};

static int sum_one(void *arg, const struct sys_exited_stat *s)
{
	struct sums *t = arg;

	t->calls += s->st.count;
	t->entries++;
	if (s->st.pid >= SYS_EXITED_PID_BASE)
		t->pseudo_calls += s->st.count;
	else if (s->st.pid > t->max_real_pid)
		t->max_real_pid = s->st.pid;
	if (s->st.pid < 8)
		t->calls_of[s->st.pid] += s->st.count;
	return 0;
}

/*
 * 20,000 short processes of one name around two busy ones: memory is
 * SYS_EXITED_KEPT processes and one name's entries, every call is counted,
 * and the busy ones keep their own whenever they exited.
 */
static void test_churn_bounded(void)
{
	struct sys_exited x = { 0 };
	struct sums t = { 0 };
	uint64_t made = 0;
	uint32_t pid;

	/* a busy process exits first, among the first kept */
	CHECK(!sys_exited_add(&x, 3, "busy", process(3, 4, 100000), 4));
	made += 4 * 100000;
	for (pid = 100; pid < 20100; pid++) {
		CHECK(!sys_exited_add(&x, pid, "sleep", process(pid, 30, 2 + pid % 3), 30));
		made += 30 * (2 + pid % 3);
		/* another busy one in the middle, when all places are taken */
		if (pid == 10000) {
			CHECK(!sys_exited_add(&x, 5, "busy2", process(5, 2, 50000), 2));
			made += 2 * 50000;
		}
	}
	CHECK(x.kept.nr == SYS_EXITED_KEPT);
	CHECK(x.names.nr == 1);	/* only "sleep" was folded */
	CHECK(!strcmp(x.names.items[0].comm, "sleep"));
	CHECK(x.names.items[0].processes == 20000 - (SYS_EXITED_KEPT - 2));
	CHECK(x.folded.nr == 30);
	CHECK(!sys_exited_each(&x, sum_one, &t));
	CHECK(t.calls == made);
	CHECK(t.calls_of[3] == 400000 && t.calls_of[5] == 100000);
	CHECK(t.entries == 30 + (SYS_EXITED_KEPT - 2) * 30 + 4 + 2);
	sys_exited_release(&x);
	CHECK(x.kept.nr == 0 && x.folded.nr == 0);
}

/* Names: 16 bytes without a NUL fold together; past the cap, all under "". */
static void test_names(void)
{
	struct sys_exited x = { 0 };
	struct sys_exited_stat one = { .nr = 0, .st = { .name = "read", .count = 1 } };
	char name[32];
	size_t i;

	for (i = 0; i < SYS_EXITED_MAX_NAMES + 10; i++) {
		snprintf(name, sizeof(name), "n%zu", i);
		CHECK(!sys_exited_fold(&x, name, &one));
	}
	CHECK(x.names.nr == SYS_EXITED_MAX_NAMES + 1);
	CHECK(x.names.items[SYS_EXITED_MAX_NAMES].comm[0] == 0);
	CHECK(!sys_exited_fold(&x, "0123456789abcdefXYZ", &one));
	CHECK(x.names.nr == SYS_EXITED_MAX_NAMES + 1);	/* past the cap */
	/* a name that has its own entry keeps it past the cap */
	CHECK(!sys_exited_fold(&x, "n7", &one));
	CHECK(x.folded.items[7].st.count == 2 && x.folded.items[SYS_EXITED_MAX_NAMES].st.count == 11);
	CHECK(sys_exited_name_pid(0) == SYS_EXITED_PID_BASE);
	sys_exited_release(&x);
	CHECK(!sys_exited_fold(&x, "0123456789abcdefXYZ", &one));
	CHECK(!sys_exited_fold(&x, "0123456789abcdef", &one));
	CHECK(x.names.nr == 1 && x.folded.nr == 1 && x.folded.items[0].st.count == 2);
	CHECK(!memcmp(x.names.items[0].comm, "0123456789abcdef", 16) && !x.names.items[0].comm[16]);
	sys_exited_release(&x);
}

/* A pid reused by a second exited process: one set of statistics for both. */
static void test_pid_reused(void)
{
	struct sys_exited x = { 0 };
	struct sums t = { 0 };

	CHECK(!sys_exited_add(&x, 7, "first", process(7, 2, 10), 2));
	CHECK(!sys_exited_add(&x, 7, "second", process(7, 3, 5), 3));
	CHECK(x.kept.nr == 1 && x.kept.items[0].nr == 3 && x.kept.items[0].calls == 35);
	CHECK(x.kept.items[0].stats[0].st.count == 15 && x.kept.items[0].stats[2].st.count == 5);
	CHECK(!sys_exited_each(&x, sum_one, &t));
	CHECK(t.entries == 3 && t.calls_of[7] == 35);
	sys_exited_release(&x);
}

int main(void)
{
	test_churn_bounded();
	test_pid_reused();
	test_names();
	return check_exit();
}
