// SPDX-License-Identifier: GPL-2.0-only
/*
 * symbolize/demangle: C++ and Rust (legacy and v0) names come out as c++filt
 * and rustfilt print them; anything else is left alone.
 */
#include <stdlib.h>

#include "symbolize/demangle.h"
#include "tests/unit/check.h"

static void expect(const char *mangled, const char *want)
{
	char *got = sym_demangle(mangled);

	if (want)
		CHECK_STR(got, want);
	else
		CHECK(got == NULL);
	free(got);
}

int main(void)
{
	expect("_ZN2ns11AccumulatorIiE4spinEm", "ns::Accumulator<int>::spin(unsigned long)");
	expect("_ZN2ns11AccumulatorIiE4spinEm.isra.0",
	       "ns::Accumulator<int>::spin(unsigned long) [clone .isra.0]");
	expect("_ZNSt6vectorIiSaIiEE9push_backERKi",
	       "std::vector<int, std::allocator<int> >::push_back(int const&)");
	/* Rust legacy: the hash goes; v0 */
	expect("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write");
	expect("_RNvCs4fqI2P2rA04_7mycrate3foo", "mycrate::foo");
	/* not mangled, or not valid */
	expect("main", NULL);
	expect("_start", NULL);
	expect("_Zgarbage", NULL);
	expect(NULL, NULL);
	CHECK(sym_is_mangled("_ZN1a1bEv") && sym_is_mangled("_RNvC1a1b"));
	CHECK(!sym_is_mangled("__libc_start_main") && !sym_is_mangled(""));
	return check_exit();
}
