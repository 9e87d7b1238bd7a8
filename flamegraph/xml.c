// SPDX-License-Identifier: GPL-2.0-only
/* Text into XML: escaping, invalid bytes, and numbers for people (xml.h). */
#include "flamegraph/xml.h"

#include <inttypes.h>
#include <string.h>

#include "src/lib/util.h"

/*
 * Bytes of the character at @s if XML may hold it, 0 if not: malformed
 * UTF-8, surrogates, U+FFFE/U+FFFF and control characters other than tab.
 */
static size_t xml_char_len(const unsigned char *s)
{
	size_t n, i;

	if (s[0] < 0x80)
		return s[0] >= 0x20 || s[0] == '\t' ? 1 : 0;
	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	if (s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe)
		return 0;
	return n;
}

size_t xml_strlen(const char *s)
{
	size_t n = 0, k;

	for (; *s; s += k ? k : 1, n++)
		k = xml_char_len((const unsigned char *)s);
	return n;
}

void xml_put(FILE *out, const char *s, size_t max)
{
	size_t k;

	for (; *s && max; s += k ? k : 1, max--) {
		k = xml_char_len((const unsigned char *)s);
		if (!k)
			fputc('?', out);
		else if (*s == '&')
			fputs("&amp;", out);
		else if (*s == '<')
			fputs("&lt;", out);
		else if (*s == '>')
			fputs("&gt;", out);
		else if (*s == '"')
			fputs("&quot;", out);
		else if (*s == '\'')
			fputs("&apos;", out);
		else
			fwrite(s, 1, k, out);
	}
}

void xml_format_value(char *buf, size_t size, const char *unit, uint64_t v)
{
	static const struct { double div; const char *name; } steps[] = {
		{ 1, "ns" }, { 1e3, "\xc2\xb5s" }, { 1e6, "ms" }, { 1e9, "s" },
	};
	char digits[32], grouped[48];
	size_t i, j, n, k = 0;
	double x;

	if (!strcmp(unit, "nanoseconds")) {
		for (i = 0; i + 1 < ARRAY_SIZE(steps) && v >= steps[i + 1].div * 0.9995; i++)
			;
		x = v / steps[i].div;
		/* three significant digits: 1.23, 12.3, 123 */
		snprintf(buf, size, "%.*f %s", i && x < 10 ? 2 : i && x < 100 ? 1 : 0, x,
			 steps[i].name);
		return;
	}
	n = snprintf(digits, sizeof(digits), "%" PRIu64, v);
	for (i = 0, j = n; i < n; i++, j--) {
		if (i && j % 3 == 0)
			grouped[k++] = ',';
		grouped[k++] = digits[i];
	}
	grouped[k] = '\0';
	snprintf(buf, size, "%s%s%s", grouped, strcmp(unit, "count") ? " " : "",
		 strcmp(unit, "count") ? unit : "");
}
