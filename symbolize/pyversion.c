// SPDX-License-Identifier: GPL-2.0-only
/*
 * PY_VERSION of an interpreter file through Py_GetVersion (pyversion.h).
 * Py_GetVersion is exported (extension modules call it), so it is in
 * .dynsym even of a stripped build, and its body is a handful of
 * instructions: PyOS_snprintf(version, 250, "%.80s (%.80s) %.80s",
 * PY_VERSION, Py_GetBuildInfo(), Py_GetCompiler()). Every RIP-relative lea
 * in it (and mov of an immediate: the address, in non-PIE code) is followed
 * and the one whose target reads as a version is taken. The byte scan may
 * start inside an instruction, but a target counts only if it reads as a
 * version string of the file's minor version, which stray bytes do not.
 */
#include "symbolize/pyversion.h"

#include <string.h>

/* Py_GetVersion is ~60 bytes with gcc -O3; a larger body is not it. */
#define GETVERSION_MAX 512
/* "3.10.13rc2+" and the NUL after it */
#define VERSION_MAX_LEN 16

/* A decimal number of 1 to 3 digits at *@s; false if none. */
static bool parse_num(const char **s, const char *end, unsigned int *v)
{
	const char *p = *s;

	*v = 0;
	while (p < end && *p >= '0' && *p <= '9' && p - *s < 3)
		*v = *v * 10 + (unsigned int)(*p++ - '0');
	if (p == *s || (p < end && *p >= '0' && *p <= '9'))
		return false;
	*s = p;
	return true;
}

uint32_t pyversion_parse(const char *s, size_t len)
{
	const char *end = s + len;
	unsigned int major, minor, micro, serial = 0, level = 0xf;

	if (!parse_num(&s, end, &major) || s == end || *s++ != '.' ||
	    !parse_num(&s, end, &minor) || s == end || *s++ != '.' ||
	    !parse_num(&s, end, &micro) || major != 3 || minor > 99 || micro > 99)
		return 0;
	if (s < end && (*s == 'a' || *s == 'b' || *s == 'r')) {
		level = *s == 'a' ? 0xa : *s == 'b' ? 0xb : 0xc;
		s += *s == 'r' ? 1 : 0;
		if (level == 0xc && (s == end || *s != 'c'))
			return 0;
		s++;
		if (!parse_num(&s, end, &serial) || serial > 15)
			return 0;
	}
	/* Debian and others mark builds from a release branch with a '+' */
	if (s < end && *s == '+')
		s++;
	if (s < end && *s)
		return 0;
	return PY_VERSION_OF(major, minor, micro) | level << 4 | serial;
}

uint32_t pyversion_from_getversion(py_read_fn read, void *arg, uint64_t func, uint64_t size,
				   uint32_t mm)
{
	uint8_t code[GETVERSION_MAX];
	uint32_t found = 0;
	size_t i;

	if (!func || size < 7 || size > sizeof(code) || read(arg, func, code, size))
		return 0;
	for (i = 0; i + 5 <= size; i++) {
		char s[VERSION_MAX_LEN];
		uint64_t target;
		uint32_t v;
		int32_t disp;

		if (i + 7 <= size && (code[i] & 0xfb) == 0x48 && code[i + 1] == 0x8d &&
		    (code[i + 2] & 0xc7) == 0x05) {
			/* lea disp32(%rip), %r64: REX.W (R any), 8d, mod 00 r/m 101 */
			memcpy(&disp, code + i + 3, sizeof(disp));
			target = func + i + 7 + (int64_t)disp;
		} else if ((code[i] & 0xf8) == 0xb8) {
			/* mov $imm32, %r32: the address itself, in a non-PIE executable */
			memcpy(&disp, code + i + 1, sizeof(disp));
			target = (uint32_t)disp;
		} else {
			continue;
		}
		memset(s, 0, sizeof(s));
		/* a string near the end of its segment: read what can be read */
		if (read(arg, target, s, sizeof(s) - 1) && read(arg, target, s, 8))
			continue;
		v = pyversion_parse(s, strnlen(s, sizeof(s)));
		if (!v || (mm && PY_MM(v) != mm))
			continue;
		if (found && found != v)
			return 0;
		found = v;
	}
	return found;
}
