// SPDX-License-Identifier: GPL-2.0-only
/* src/procmem: smaps_rollup and statm parsing on sample texts, and /proc/self. */
#include <errno.h>
#include <stdint.h>
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

int main(void)
{
	uint64_t rss = 0, pss = 0, cost = 0;

	CHECK(procmem_parse_smaps_rollup(rollup, &rss, &pss) == 0);
	CHECK(rss == 215300 && pss == 213937);	/* Pss, not Pss_Dirty or SwapPss */
	CHECK(procmem_parse_smaps_rollup("Rss: 5 kB\n", &rss, &pss) == -EINVAL);
	CHECK(procmem_parse_smaps_rollup("", &rss, &pss) == -EINVAL);
	CHECK(procmem_parse_statm("56123 53825 1078 1 0 53011 0\n", 4, &rss) == 0);
	CHECK(rss == 53825 * 4);
	CHECK(procmem_parse_statm("56123\n", 4, &rss) == -EINVAL);
	CHECK(procmem_parse_statm("", 4, &rss) == -EINVAL);
	/* this process: both sources agree within a few pages */
	CHECK(procmem_read_rss(getpid(), &rss) == 0 && rss > 0);
	if (procmem_read_pss(getpid(), &rss, &pss, &cost) == 0)
		CHECK(pss > 0 && pss <= rss);
	CHECK(procmem_read_rss(0x7ffffff0, &rss) == -ESRCH);
	return check_exit();
}
