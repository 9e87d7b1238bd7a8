// SPDX-License-Identifier: GPL-2.0-only
/* src/procmem: smaps_rollup and statm parsing on sample texts, and /proc/self. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "src/procmem.h"
#include "tests/unit/check.h"

static const char rollup[] =
	"00400000-7ffe3c3cf000 ---p 00000000 00:00 0                              [rollup]\n"
	"Rss:              215300 kB\n"
	"Pss:              213937 kB\n"
	"Pss_Dirty:        209624 kB\n"
	"Pss_Anon:         209624 kB\n"
	"Shared_Clean:       1756 kB\n"
	"Swap:                  0 kB\n"
	"SwapPss:               0 kB\n";

/* The kernel's percpu_counter batch for the mm counters (mm_init). */
static uint64_t batch_pages(uint64_t ncpus)
{
	return ncpus * 2 > 32 ? ncpus * 2 : 32;
}

int main(void)
{
	uint64_t rss = 0, pss = 0, cost = 0, rss_rollup = 0, slack_kb;
	uint64_t ncpus = (uint64_t)sysconf(_SC_NPROCESSORS_CONF);
	uint64_t page_kb = (uint64_t)sysconf(_SC_PAGESIZE) / 1024;

	CHECK(procmem_parse_smaps_rollup(rollup, &rss, &pss) == 0);
	CHECK(rss == 215300 && pss == 213937);	/* Pss, not Pss_Dirty or SwapPss */
	CHECK(procmem_parse_smaps_rollup("Rss: 5 kB\n", &rss, &pss) == -EINVAL);
	CHECK(procmem_parse_smaps_rollup("", &rss, &pss) == -EINVAL);
	CHECK(procmem_parse_statm("56123 53825 1078 1 0 53011 0\n", 4, &rss) == 0);
	CHECK(rss == 53825 * 4);
	CHECK(procmem_parse_statm("56123\n", 4, &rss) == -EINVAL);
	CHECK(procmem_parse_statm("", 4, &rss) == -EINVAL);
	/*
	 * This process: both sources agree within a few pages. statm adds up
	 * the mm's file, anon and shmem RSS counters, per-CPU counters read
	 * without folding in each CPU's pending delta (up to the batch,
	 * max(32, 2 x nr_cpus) pages, per CPU and counter); smaps_rollup walks
	 * the page tables. So they may differ by 3 x batch x nr_cpus pages,
	 * plus the pages the two reads themselves touch in between (their
	 * buffers and stack: 16 pages is ample for this single thread).
	 */
	CHECK(procmem_read_rss(getpid(), &rss) == 0 && rss > 0);
	CHECK(procmem_read_pss(getpid(), &rss_rollup, &pss, &cost) == 0);
	CHECK(pss > 0 && pss <= rss_rollup);
	slack_kb = (3 * batch_pages(ncpus) * ncpus + 16) * page_kb;
	CHECK(rss <= rss_rollup + slack_kb && rss_rollup <= rss + slack_kb);
	if (rss > rss_rollup + slack_kb || rss_rollup > rss + slack_kb)
		fprintf(stderr, "statm rss %llu kB, smaps_rollup rss %llu kB, allowed +-%llu kB\n",
			(unsigned long long)rss, (unsigned long long)rss_rollup,
			(unsigned long long)slack_kb);
	CHECK(procmem_read_rss(0x7ffffff0, &rss) == -ESRCH);
	return check_exit();
}
