// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/proctree: starts, exits, pid reuse, parents, bounds, command lines,
 * memory peaks, folding ended processes by name when the table is full,
 * and the metadata round trip (times made relative).
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
	struct proc_info *sh, *c1, *c2;
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
	/* bounds: the fourth process fits (a fifth: check_fold); samples are counted */
	CHECK(proc_tree_start(&t, 200, 100, 11000, "a") != NULL);
	CHECK(proc_tree_add_memory(&t, sh, 8000, 900, 800) == 0);
	CHECK(proc_tree_add_memory(&t, sh, 9000, 950, 850) == 0);
	CHECK(t.mem_dropped == 1 && sh->peak_rss_kb == 950 && sh->mem.nr == 1);

	CHECK(proc_tree_store(&t, p, 5000) == 0);
	CHECK_STR(profile_get_meta(p, "process.2"), "pid=101 ppid=100 start_ns=1000 end_ns=4000 "
		  "status=768 execs=0 peak_rss_kb=1500 peak_pss_kb=1200 exit_rss_kb=0");
	CHECK_STR(profile_get_meta(p, "process.2.memory"), "2000:1500:1200,3000:1400:-");
	CHECK_STR(profile_get_meta(p, "process.2.cmdline"), "sleep 1");
	CHECK(profile_get_meta_u64(p, "lost.processes_untracked") == 0);
	CHECK(profile_get_meta_u64(p, "count.processes_folded") == 0);
	CHECK(!profile_get_meta(p, "process_folded.1"));
	proc_tree_init(&back, 0, 0);
	CHECK(proc_tree_load(&back, p) == 0);
	CHECK(back.procs.nr == 4 && back.procs_dropped == 0 && back.mem_dropped == 1);
	CHECK(back.folded.nr == 0 && back.procs_folded == 0);
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

/* Process @pid named @comm starts at @start_ns and, unless @life_ns is 0, ends. */
static struct proc_info *run(struct proc_tree *t, uint32_t pid, const char *comm,
			     uint64_t start_ns, uint64_t life_ns, int32_t status)
{
	struct proc_info *pi = proc_tree_start(t, pid, 1, start_ns, comm);

	if (pi && life_ns) {
		pi->ended = pi->has_status = true;
		pi->end_ns = start_ns + life_ns;
		pi->status = status;
	}
	return pi;
}

/* The latest process with @pid, by a scan: what the index must say. */
static struct proc_info *scan_latest(struct proc_tree *t, uint32_t pid)
{
	size_t i;

	for (i = t->procs.nr; i > 0; i--)
		if (t->procs.items[i - 1].pid == pid)
			return &t->procs.items[i - 1];
	return NULL;
}

static const struct proc_folded *folded_named(const struct proc_tree *t, const char *comm)
{
	size_t i;

	for (i = 0; i < t->folded.nr; i++)
		if (!strcmp(t->folded.items[i].comm, comm))
			return &t->folded.items[i];
	return NULL;
}

/* What was started and ended, to check the tree's accounting against. */
struct fold_expect {
	uint64_t sleeps, life_ns, failed, max_life_ns, peak_rss_kb;
};

/*
 * 100 short "sleep" processes (pids reused every 20) fill a table of 8
 * beside two live ones and a long-lived ended "svc": the sleeps are folded,
 * the rest stays, nothing is refused, and a service started last is kept.
 */
static void start_busy(struct proc_tree *t, struct fold_expect *e)
{
	struct proc_info *pi;
	uint64_t life;
	size_t i;

	CHECK(run(t, 10, "app", 100, 0, 0) && run(t, 11, "db", 200, 0, 0));
	CHECK(run(t, 12, "svc", 300, 5000000000ULL, 0) != NULL);
	for (i = 0; i < 100; i++) {
		life = 1000 + (i % 7) * 100;
		pi = run(t, 1000 + i % 20, "sleep", 1000 + i * 10000, life,
			 i % 10 == 3 ? 1 << 8 : i % 10 == 7 ? 9 : 0);
		CHECK(pi && proc_tree_add_memory(t, pi, pi->start_ns, 100 + i, -1) == 0);
		e->sleeps++;
		e->life_ns += life;
		e->failed += i % 10 == 3 || i % 10 == 7;
		e->max_life_ns = life > e->max_life_ns ? life : e->max_life_ns;
		e->peak_rss_kb = 100 + i;
		CHECK(t->procs.nr <= 8);
	}
}

/* Kept and folded "sleep"s add up to what was started. */
static void check_busy_accounting(struct proc_tree *t, const struct fold_expect *e)
{
	const struct proc_folded *f = folded_named(t, "sleep");
	uint64_t kept = 0, life = 0, failed = 0, samples = 0;
	size_t i;

	for (i = 0; i < t->procs.nr; i++) {
		const struct proc_info *pi = &t->procs.items[i];

		samples += pi->mem.nr;
		if (strcmp(pi->comm, "sleep"))
			continue;
		kept++;
		life += pi->end_ns - pi->start_ns;
		failed += pi->status != 0;
	}
	CHECK(f && t->folded.nr == 1 && f->processes == t->procs_folded);
	CHECK(f && kept + f->processes == e->sleeps && life + f->life_ns == e->life_ns &&
	      failed + f->failed == e->failed);
	CHECK(f && f->max_life_ns <= e->max_life_ns && f->peak_rss_kb <= e->peak_rss_kb &&
	      f->peak_rss_kb >= 100 && f->first_start_ns == 1000);
	CHECK(t->nr_mem_samples == samples);
	/* the table is kept in start order */
	for (i = 1; i < t->procs.nr; i++)
		CHECK(t->procs.items[i - 1].start_ns <= t->procs.items[i].start_ns);
}

static void check_fold(void)
{
	struct fold_expect e = { 0 };
	struct proc_tree t, back;
	struct profile *p = profile_new();
	const struct proc_folded *f, *fb;
	struct proc_info *late;
	uint32_t pid;

	proc_tree_init(&t, 8, 1000);
	start_busy(&t, &e);
	check_busy_accounting(&t, &e);
	CHECK(t.procs_dropped == 0 && t.procs.nr + t.procs_folded == 3 + e.sleeps);
	CHECK(proc_tree_find(&t, 10) && !proc_tree_find(&t, 10)->ended);
	CHECK(proc_tree_find(&t, 11) && !strcmp(proc_tree_find(&t, 11)->comm, "db"));
	CHECK(proc_tree_find(&t, 12) && proc_tree_find(&t, 12)->ended &&
	      !strcmp(proc_tree_find(&t, 12)->comm, "svc"));
	/* the index says what a scan says: the latest kept process of each pid */
	for (pid = 1000; pid < 1020; pid++)
		CHECK(proc_tree_find(&t, pid) == scan_latest(&t, pid));
	/* a pid reused after 100 starts: the new process, live, is found */
	late = run(&t, 1019, "service", 2000000, 0, 0);
	CHECK(late && proc_tree_find(&t, 1019) == late && late->start_ns == 2000000);
	CHECK(t.procs.nr + t.procs_folded == 4 + e.sleeps && t.procs_dropped == 0);
	for (pid = 1000; pid < 1020; pid++)
		CHECK(proc_tree_find(&t, pid) == scan_latest(&t, pid));

	CHECK(proc_tree_store(&t, p, 50) == 0);
	CHECK(profile_get_meta_u64(p, "count.processes_folded") == t.procs_folded);
	CHECK(profile_get_meta_u64(p, "count.processes_tracked") == t.procs.nr);
	CHECK_STR(profile_get_meta(p, "process_folded.1.comm"), "sleep");
	CHECK(!profile_get_meta(p, "process_folded.2"));
	proc_tree_init(&back, 0, 0);
	CHECK(proc_tree_load(&back, p) == 0);
	f = folded_named(&t, "sleep");
	fb = folded_named(&back, "sleep");
	CHECK(back.procs.nr == t.procs.nr && back.folded.nr == 1 &&
	      back.procs_folded == t.procs_folded);
	CHECK(f && fb && fb->processes == f->processes && fb->life_ns == f->life_ns &&
	      fb->max_life_ns == f->max_life_ns && fb->peak_rss_kb == f->peak_rss_kb &&
	      fb->failed == f->failed && fb->first_start_ns == f->first_start_ns - 50 &&
	      fb->last_end_ns == f->last_end_ns - 50);
	proc_tree_release(&back);
	proc_tree_release(&t);
	profile_free(p);
}

/* Past PROC_FOLDED_MAX_NAMES names, new ones are folded together as "" ("[other]"). */
static void check_fold_names(void)
{
	struct proc_tree t, back;
	struct profile *p = profile_new();
	const struct proc_folded *other;
	char comm[PROC_COMM_LEN + 1];
	uint64_t sum = 0;
	size_t i;

	proc_tree_init(&t, 8, 0);
	for (i = 0; i < PROC_FOLDED_MAX_NAMES + 100; i++) {
		snprintf(comm, sizeof(comm), "n%zu", i);
		CHECK(run(&t, 100 + i, comm, i * 10, 5, 0) != NULL);
	}
	other = folded_named(&t, "");
	CHECK(t.folded.nr == PROC_FOLDED_MAX_NAMES + 1 && other && other->processes > 0);
	for (i = 0; i < t.folded.nr; i++)
		sum += t.folded.items[i].processes;
	CHECK(sum == t.procs_folded && t.procs.nr + sum == PROC_FOLDED_MAX_NAMES + 100);
	CHECK(proc_tree_store(&t, p, 0) == 0);
	proc_tree_init(&back, 0, 0);
	CHECK(proc_tree_load(&back, p) == 0 && back.folded.nr == t.folded.nr);
	CHECK(other && folded_named(&back, "[other]") &&
	      folded_named(&back, "[other]")->processes == other->processes);
	proc_tree_release(&back);
	proc_tree_release(&t);
	profile_free(p);
}

/*
 * Which ones a fold takes: the shorter-lived half of the ended ones, or all
 * it takes to bring the table down to 3/4 of its size; the rest keep their
 * order.
 */
static void check_fold_rule(void)
{
	static const uint64_t lives[] = { 60, 10, 50, 20, 40, 30 };
	static const uint32_t kept[] = { 1, 2, 3, 5, 7, 9 };
	struct proc_tree t;
	uint32_t pid;
	size_t i;

	proc_tree_init(&t, 8, 0);
	CHECK(run(&t, 1, "live", 1, 0, 0) && run(&t, 2, "live", 2, 0, 0));
	for (i = 0; i < 6; i++)
		CHECK(run(&t, 3 + i, "x", 10 + i, lives[i], i == 1 ? 1 << 8 : 0) != NULL);
	/* 6 ended: the 3 shortest (10, 20, 30) go, which leaves 5 + the new one */
	CHECK(run(&t, 9, "new", 100, 0, 0) && t.procs.nr == 6 && t.procs_folded == 3);
	for (i = 0; i < 6 && i < t.procs.nr; i++)
		CHECK(t.procs.items[i].pid == kept[i]);
	CHECK(folded_named(&t, "x") && folded_named(&t, "x")->life_ns == 60 &&
	      folded_named(&t, "x")->max_life_ns == 30 && folded_named(&t, "x")->failed == 1 &&
	      folded_named(&t, "x")->first_start_ns == 11 &&
	      folded_named(&t, "x")->last_end_ns == 15 + 30);
	proc_tree_release(&t);

	/* 6 live and 2 ended: half of 2 is 1, but 3/4 of 8 is 6, so both go */
	proc_tree_init(&t, 8, 0);
	for (pid = 1; pid <= 6; pid++)
		CHECK(run(&t, pid, "live", pid, 0, 0) != NULL);
	CHECK(run(&t, 7, "x", 10, 5, 0) && run(&t, 8, "x", 11, 50, 0));
	CHECK(run(&t, 9, "new", 100, 0, 0) && t.procs.nr == 7 && t.procs_folded == 2);
	CHECK(!proc_tree_find(&t, 7) && !proc_tree_find(&t, 8) &&
	      proc_tree_find(&t, 9) == &t.procs.items[6]);
	proc_tree_release(&t);
}

/* A table of live processes cannot fold: a new one is refused and counted. */
static void check_full_of_live(void)
{
	struct proc_tree t, back;
	struct profile *p = profile_new();
	struct proc_info *pi;
	uint32_t pid;

	proc_tree_init(&t, 4, 0);
	for (pid = 1; pid <= 4; pid++)
		CHECK(run(&t, pid, "live", pid, 0, 0) != NULL);
	errno = 0;
	CHECK(!run(&t, 5, "new", 10, 0, 0) && errno == ENOSPC && t.procs_dropped == 1);
	/* a live pid is still found, and costs nothing */
	CHECK(run(&t, 2, "live", 11, 0, 0) == proc_tree_find(&t, 2) && t.procs_dropped == 1);
	CHECK(t.procs.nr == 4 && t.folded.nr == 0 && t.procs_folded == 0);
	/* one ends: it is folded for the next */
	pi = proc_tree_find(&t, 3);
	CHECK(pi != NULL);
	if (pi) {
		pi->ended = true;
		pi->end_ns = 20;
	}
	CHECK(run(&t, 6, "new", 30, 0, 0) && t.procs.nr == 4 && t.procs_folded == 1);
	CHECK(!proc_tree_find(&t, 3) && proc_tree_find(&t, 4) == &t.procs.items[2]);
	CHECK(folded_named(&t, "live") && folded_named(&t, "live")->failed == 0 &&
	      folded_named(&t, "live")->max_life_ns == 17);
	CHECK(proc_tree_store(&t, p, 0) == 0);
	CHECK(profile_get_meta_u64(p, "lost.processes_untracked") == 1);
	proc_tree_init(&back, 0, 0);
	CHECK(proc_tree_load(&back, p) == 0 && back.procs_dropped == 1 && back.procs_folded == 1);
	proc_tree_release(&back);
	proc_tree_release(&t);
	profile_free(p);
}

int main(void)
{
	check_tree();
	check_bad_memory();
	check_fold();
	check_fold_rule();
	check_fold_names();
	check_full_of_live();
	return check_exit();
}
