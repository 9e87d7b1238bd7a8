// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/proctree: starts, exits, pid reuse, parents, bounds, command lines,
 * memory peaks and the metadata round trip (times made relative).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "src/proctree.h"
#include "tests/unit/check.h"

static void check_tree(void)
{
	struct proc_tree t, back;
	struct profile *p = profile_new();
	struct proc_info *sh, *c1, *c2, *again;
	static const char args[] = "sh\0-c\0echo\thi\0";

	proc_tree_init(&t, 4, 3);
	sh = proc_tree_start(&t, 100, 1, 5000, "sh");
	CHECK(sh && proc_info_set_cmdline(sh, args, sizeof(args)) == 0);
	CHECK_STR(sh->cmdline, "sh -c echo?hi");
	c1 = proc_tree_start(&t, 101, 100, 6000, "sh");
	CHECK(c1 && proc_info_set_cmdline(c1, "sleep\0001", 7) == 0);
	c1->ended = true;
	c1->end_ns = 9000;
	c1->status = 3 << 8;
	c1->has_status = true;
	CHECK(proc_tree_add_memory(&t, c1, 7000, 1500, 1200) == 0);
	CHECK(proc_tree_add_memory(&t, c1, 8000, 1400, -1) == 0);
	CHECK(c1->peak_rss_kb == 1500 && c1->peak_pss_kb == 1200);
	/* a live pid is the same process; an ended one is a new one (reuse) */
	CHECK(proc_tree_start(&t, 100, 1, 7777, "x") == sh);
	c2 = proc_tree_start(&t, 101, 100, 10000, "true");
	CHECK(c2 && c2 != &t.procs.items[1] && t.procs.nr == 3);
	CHECK(proc_tree_find(&t, 101) == c2);
	CHECK(proc_tree_parent(&t, 0) == -1 && proc_tree_parent(&t, 1) == 0 &&
	      proc_tree_parent(&t, 2) == 0);
	CHECK(proc_tree_alive_at(&t, 8000) == 2 && proc_tree_alive_at(&t, 9500) == 1);
	CHECK(proc_tree_alive_at(&t, 10000) == 2);
	/* bounds: the fourth process fits, the fifth is counted; so are samples */
	CHECK(proc_tree_start(&t, 200, 100, 11000, "a") != NULL);
	again = proc_tree_start(&t, 201, 100, 11000, "b");
	CHECK(!again && errno == ENOSPC && t.procs_dropped == 1);
	CHECK(proc_tree_add_memory(&t, sh, 8000, 900, 800) == 0);
	CHECK(proc_tree_add_memory(&t, sh, 9000, 950, 850) == 0);
	CHECK(t.mem_dropped == 1 && sh->peak_rss_kb == 950 && sh->mem.nr == 1);

	CHECK(proc_tree_store(&t, p, 5000) == 0);
	CHECK_STR(profile_get_meta(p, "process.2"), "pid=101 ppid=100 start_ns=1000 end_ns=4000 "
		  "status=768 execs=0 peak_rss_kb=1500 peak_pss_kb=1200 exit_rss_kb=0");
	CHECK_STR(profile_get_meta(p, "process.2.memory"), "2000:1500:1200,3000:1400:-");
	CHECK_STR(profile_get_meta(p, "process.2.cmdline"), "sleep 1");
	CHECK(profile_get_meta_u64(p, "lost.processes_untracked") == 1);
	proc_tree_init(&back, 0, 0);
	CHECK(proc_tree_load(&back, p) == 0);
	CHECK(back.procs.nr == 4 && back.procs_dropped == 1 && back.mem_dropped == 1);
	CHECK(back.procs.items[1].pid == 101 && back.procs.items[1].ended &&
	      back.procs.items[1].start_ns == 1000 && back.procs.items[1].status == 768);
	CHECK(back.procs.items[1].mem.nr == 2 && back.procs.items[1].mem.items[1].pss_kb == -1);
	CHECK(!back.procs.items[0].ended && back.procs.items[0].start_ns == 0);
	CHECK_STR(back.procs.items[0].cmdline, "sh -c echo?hi");
	CHECK_STR(back.procs.items[2].comm, "true");
	CHECK(proc_tree_parent(&back, 2) == 0);
	proc_tree_release(&back);
	proc_tree_release(&t);
	profile_free(p);
}

/*
 * Memory samples cut short: "1:2:x" matches two numbers of either format but
 * not the third field, so sscanf never reached %n (found by fuzz_pprof: the
 * parser then skipped an uninitialized count of bytes; valgrind and
 * `make check-fuzz`, which replays the crashing input, catch it).
 */
static void check_bad_memory(void)
{
	static const char *const values[] = { "1:2:x", "1:2:", "1:2", "5:6:-,7:8:9,1:2:x,3:4:5",
					      "5:6:-x", "" };
	static const size_t want[] = { 0, 0, 0, 2, 1, 0 };
	struct proc_tree t;
	struct profile *p;
	size_t i;

	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		p = profile_new();
		CHECK(p && !profile_set_meta(p, "process.1", "pid=7 ppid=1") &&
		      !profile_set_meta(p, "process.1.memory", values[i]));
		proc_tree_init(&t, 0, 0);
		CHECK(proc_tree_load(&t, p) == 0 && t.procs.nr == 1);
		CHECK(t.procs.nr == 1 && t.procs.items[0].mem.nr == want[i]);
		if (want[i] == 2)
			CHECK(t.procs.items[0].mem.items[0].pss_kb == -1 &&
			      t.procs.items[0].mem.items[1].pss_kb == 9 &&
			      t.procs.items[0].mem.items[1].rss_kb == 8);
		proc_tree_release(&t);
		profile_free(p);
	}
}

int main(void)
{
	check_tree();
	check_bad_memory();
	return check_exit();
}
