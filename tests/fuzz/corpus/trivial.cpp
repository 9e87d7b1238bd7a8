// SPDX-License-Identifier: GPL-2.0-only
/* C++ source of a fuzzer seed: mangled names for the demangler. */
namespace ns {
template <typename T> struct box {
	T v;
	__attribute__((noinline)) T get() const { return v; }
};
}

int main(int argc, char **)
{
	ns::box<long> b{argc};
	ns::box<int> c{argc};
	return (int)b.get() + c.get();
}
