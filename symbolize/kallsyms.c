// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/kallsyms parsing and lookup. Only text symbols (t, T, w, W) are kept,
 * like perf does: a sampled kernel address is always code. A symbol ends where
 * the next one starts, or at an end marker: _etext, _einittext and the
 * __*_text_end of text subsections for the kernel image, and base + size from
 * /proc/modules for a module. Symbols that share an address (aliases) are
 * reduced to one: global before weak before local, then the name with fewer
 * leading underscores.
 */
#include "symbolize/kallsyms.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/lib/strtab.h"
#include "src/lib/util.h"

#define KERNEL_MAP_NAME "[kernel.kallsyms]"

static const char *const end_markers[] = { "_etext", "_einittext" };

/*
 * The names of the symbols kept, copied as the file is read: the file is
 * 5.4 MB on a 6.18 kernel, of which the names are 3.1 MB (the addresses
 * and types are 19 bytes a line), and a whole-file buffer would be held for
 * as long as the kernel's symbols are.
 */
#define KALLSYMS_NAMES_CHUNK (256 * 1024)

struct kallsyms_names {
	struct kallsyms_names *next;
	size_t used, size;
	char data[];
};

/* A copy of the @len bytes of @name, NUL-terminated, that never moves; NULL: ENOMEM. */
static const char *kallsyms_name_copy(struct kallsyms *k, const char *name, size_t len)
{
	struct kallsyms_names *c = k->names;
	char *out;

	if (!c || c->size - c->used < len + 1) {
		size_t size = len + 1 > KALLSYMS_NAMES_CHUNK ? len + 1 : KALLSYMS_NAMES_CHUNK;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->next = k->names;
		c->used = 0;
		c->size = size;
		k->names = c;
	}
	out = c->data + c->used;
	memcpy(out, name, len);
	out[len] = '\0';
	c->used += len + 1;
	return out;
}

static void kallsyms_names_free(struct kallsyms *k)
{
	struct kallsyms_names *c;

	while ((c = k->names)) {
		k->names = c->next;
		free(c);
	}
}

static int kallsyms_add_map(struct kallsyms *k, const char *path, uint64_t offset)
{
	struct sym_mapping *m;

	if (array_grow(&k->maps, k->maps.nr + 1))
		return -ENOMEM;
	m = &k->maps.items[k->maps.nr++];
	memset(m, 0, sizeof(*m));
	m->start = UINT64_MAX;
	m->offset = offset;
	m->path = path;
	m->build_id = "";
	m->kernel = true;
	return 0;
}

/* Index of the mapping named @path (interned), added if new; -ENOMEM. */
static long kallsyms_map_index(struct kallsyms *k, const char *path, size_t *last)
{
	size_t i;

	if (*last < k->maps.nr && k->maps.items[*last].path == path)
		return *last;	/* module symbols come in runs */
	for (i = 0; i < k->maps.nr; i++) {
		if (k->maps.items[i].path == path)
			break;
	}
	if (i == k->maps.nr && kallsyms_add_map(k, path, 0))
		return -ENOMEM;
	*last = i;
	return i;
}

static uint32_t ksym_rank(char type, const char *name)
{
	uint32_t underscores = 0;

	while (name[underscores] == '_' && underscores < 15)
		underscores++;
	/* end markers get 0, so a real function at the same address wins */
	switch (type) {
	case 'T':
		return 4 * 16 + 15 - underscores;
	case 'W':
		return 3 * 16 + 15 - underscores;
	case 't':
		return 2 * 16 + 15 - underscores;
	default:
		return 1 * 16 + 15 - underscores;
	}
}

/* _etext, or the end of a text subsection such as __entry_text_end */
static bool is_end_marker(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(end_markers); i++) {
		if (!strcmp(name, end_markers[i]))
			return true;
	}
	return name[0] == '_' && str_has_suffix(name, "_text_end");
}

/*
 * One line: "ffffffff81000000 T _stext" or "... t name\t[module]". @line is
 * NUL-terminated, without its newline; the name is copied.
 */
static int kallsyms_parse_line(struct kallsyms *k, char *line, struct strtab *strs,
			       size_t *last)
{
	struct ksym *sym;
	char *end, *name, *mod, type;
	const char *path = k->maps.items[0].path;
	uint64_t addr;
	long map;

	addr = strtoull(line, &end, 16);
	if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
		return 0;
	type = end[1];
	name = end + 3;
	if (!addr || !strchr("tTwW", type))
		return 0;
	mod = strchr(name, '\t');
	if (mod) {
		*mod++ = '\0';
		path = strtab_intern(strs, mod);
		if (!path)
			return -ENOMEM;
	}
	map = kallsyms_map_index(k, path, last);
	if (map < 0 || array_grow(&k->syms, k->syms.nr + 1))
		return -ENOMEM;
	sym = &k->syms.items[k->syms.nr++];
	sym->addr = addr;
	sym->map = map;
	if (map == 0 && is_end_marker(name)) {
		sym->name = NULL;
		sym->rank = 0;
	} else {
		sym->name = kallsyms_name_copy(k, name, strlen(name));
		if (!sym->name)
			return -ENOMEM;
		sym->rank = ksym_rank(type, name);
	}
	return 0;
}

/* Every line of @f; 0 or -ENOMEM. */
static int kallsyms_parse(struct kallsyms *k, FILE *f, struct strtab *strs)
{
	char *line = NULL;
	size_t cap = 0, last = 0;
	ssize_t len;
	int err = 0;

	while (!err && (len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		err = kallsyms_parse_line(k, line, strs, &last);
	}
	free(line);
	return err;
}

/* Add an end marker at base + size for each module /proc/modules lists. */
static int kallsyms_parse_modules(struct kallsyms *k, const char *path, struct strtab *strs)
{
	char *buf = NULL, *line, *nl;
	char name[72];
	uint64_t size, base;
	const char *mod;
	size_t i;
	int err;

	if (read_file(path, &buf, NULL))
		return 0;	/* sizes only sharpen the last symbol's end */
	err = 0;
	for (line = buf; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (sscanf(line, "%63s %" SCNu64 " %*s %*s %*s %" SCNx64, name + 1, &size,
			   &base) != 3 || !base)
			continue;
		name[0] = '[';
		strcat(name, "]");
		mod = strtab_intern(strs, name);
		if (!mod) {
			err = -ENOMEM;
			break;
		}
		for (i = 1; i < k->maps.nr && k->maps.items[i].path != mod; i++)
			;
		if (i == k->maps.nr)
			continue;	/* no symbols: nothing to end */
		if (array_grow(&k->syms, k->syms.nr + 1)) {
			err = -ENOMEM;
			break;
		}
		k->syms.items[k->syms.nr++] = (struct ksym){ .addr = base + size, .map = i };
	}
	free(buf);
	return err;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if (!x->name || !y->name)
		return !x->name - !y->name;
	return strcmp(x->name, y->name);
}

static int ksym_addr_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

/*
 * Sort @syms by address. /proc/kallsyms lists the kernel image's symbols
 * in address order, then the modules' and BPF's: only what follows the
 * sorted start is sorted, then merged into it from the end with a copy of
 * that tail (here 7 BPF programs below the ftrace trampoline). A
 * whole-table qsort took a 2.9 MB buffer for 122,000 symbols, at the
 * profile's peak.
 */
static void ksym_sort(struct ksym *syms, size_t n)
{
	size_t p = 1, i, j, k;
	struct ksym *tail;

	while (p < n && syms[p - 1].addr <= syms[p].addr)
		p++;
	if (p >= n)
		return;
	array_sort(syms + p, n - p, sizeof(*syms), ksym_addr_cmp);
	if (syms[p - 1].addr <= syms[p].addr)
		return;
	tail = malloc((n - p) * sizeof(*tail));
	if (!tail) {
		array_sort(syms, n, sizeof(*syms), ksym_addr_cmp);
		return;
	}
	memcpy(tail, syms + p, (n - p) * sizeof(*tail));
	for (i = p, j = n - p, k = n; j;)
		syms[--k] = i && syms[i - 1].addr > tail[j - 1].addr ? syms[--i] : tail[--j];
	free(tail);
}

/* Sort, keep the best alias per address, and compute each mapping's range. */
static void kallsyms_finish(struct kallsyms *k)
{
	struct ksym *syms = k->syms.items;
	struct sym_mapping *m;
	uint64_t end;
	size_t i, n = 0;

	ksym_sort(syms, k->syms.nr);
	for (i = 0; i < k->syms.nr; i++) {
		if (n && syms[n - 1].addr == syms[i].addr) {
			if (ksym_cmp(&syms[i], &syms[n - 1]) < 0)
				syms[n - 1] = syms[i];	/* the better alias */
			continue;
		}
		syms[n++] = syms[i];
	}
	k->syms.nr = n;
	/* 120,000 symbols: the doublings' slack would be megabytes */
	syms = n ? realloc(k->syms.items, n * sizeof(*syms)) : NULL;
	if (syms) {
		k->syms.items = syms;
		k->syms.alloc = n;
	}
	syms = k->syms.items;
	for (i = 0; i < n; i++) {
		m = &k->maps.items[syms[i].map];
		if (syms[i].name && syms[i].addr < m->start)
			m->start = syms[i].addr;
		/* a function runs to the next symbol, an end marker ends there */
		end = syms[i].addr;
		if (syms[i].name)
			end = i + 1 < n ? syms[i + 1].addr : UINT64_MAX;
		if (end > m->limit)
			m->limit = end;
	}
	for (i = 0; i < k->maps.nr; i++) {
		m = &k->maps.items[i];
		if (m->start > m->limit)
			m->start = m->limit;	/* only end markers: empty */
	}
	/* rel_address of the kernel image is the address itself, as perf shows it */
	k->maps.items[0].offset = k->maps.items[0].start;
}

/* The state without symbols: one mapping that covers every address. */
static void kallsyms_make_catch_all(struct kallsyms *k)
{
	struct sym_mapping *m = &k->maps.items[0];

	kallsyms_names_free(k);
	free(k->syms.items);
	memset(&k->syms, 0, sizeof(k->syms));
	k->maps.nr = 1;
	m->start = 0;
	m->limit = UINT64_MAX;
	m->offset = 0;
	k->usable = false;
}

int kallsyms_load(struct kallsyms *k, const char *path, const char *modules_path,
		  struct strtab *strs)
{
	const char *kernel;
	FILE *f;
	int err = -ENOMEM;

	memset(k, 0, sizeof(*k));
	kernel = strtab_intern(strs, KERNEL_MAP_NAME);
	if (!kernel || kallsyms_add_map(k, kernel, 0))
		goto out;
	f = path ? fopen(path, "re") : NULL;
	if (!f) {
		kallsyms_make_catch_all(k);
		return 0;
	}
	err = kallsyms_parse(k, f, strs);
	fclose(f);
	if (!err && modules_path)
		err = kallsyms_parse_modules(k, modules_path, strs);
	if (err)
		goto out;
	if (!k->syms.nr) {
		kallsyms_make_catch_all(k);	/* kptr_restrict: all addresses are 0 */
		return 0;
	}
	kallsyms_finish(k);
	k->usable = true;
	return 0;
out:
	kallsyms_release(k);
	return err;
}

void kallsyms_release(struct kallsyms *k)
{
	free(kallsyms_release_keep_maps(k));
}

struct sym_mapping *kallsyms_release_keep_maps(struct kallsyms *k)
{
	struct sym_mapping *maps = k->maps.items;

	kallsyms_names_free(k);
	free(k->syms.items);
	memset(k, 0, sizeof(*k));
	return maps;
}

void kallsyms_lookup(const struct kallsyms *k, uint64_t addr, const struct sym_mapping **map,
		     const char **name, uint64_t *sym_addr)
{
	const struct ksym *sym;
	const struct sym_mapping *m;
	size_t lo = 0, hi = k->syms.nr, mid;

	*map = NULL;
	*name = NULL;
	*sym_addr = 0;
	if (!k->usable) {
		*map = k->maps.nr ? &k->maps.items[0] : NULL;
		return;
	}
	while (lo < hi) {	/* first symbol above addr */
		mid = lo + (hi - lo) / 2;
		if (k->syms.items[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return;
	sym = &k->syms.items[lo - 1];
	m = &k->maps.items[sym->map];
	if (addr < m->start || addr >= m->limit)
		return;
	*map = m;
	*name = sym->name;
	*sym_addr = sym->name ? sym->addr : 0;
}
