// SPDX-License-Identifier: GPL-2.0-only
/*
 * The separate-debuginfo search policy: a libdwfl debuginfo_path built from
 * the extra roots, and a find_debuginfo callback that hands the search to
 * libdwfl, keeping debuginfod out of runs that did not ask for it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* asprintf */
#endif
#include "symbolize/debuginfo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/lib/util.h"
#include "symbolize/debugcache.h"

#define SYSTEM_DEBUG_DIR "/usr/lib/debug"

struct debuginfo {
	Dwfl_Callbacks callbacks;
	char *path;		/* libdwfl's debuginfo_path, points here */
	struct { char **items; size_t nr, alloc; } roots;	/* absolute, in order */
	bool debuginfod;
};

/* Does @path name something (a file or a link to one)? */
static bool exists(const char *path)
{
	return path && !access(path, F_OK);
}

static bool exists_fmt_free(char *path)
{
	bool yes = exists(path);

	free(path);
	return yes;
}

static bool build_id_file_exists(const struct debuginfo *di, Dwfl_Module *mod)
{
	const unsigned char *bits;
	char hex[2 * 64 + 1];
	GElf_Addr vaddr;
	size_t i;
	int len;
	char *p;

	len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len < 2 || !hex_encode(bits, len, hex, sizeof(hex)))
		return false;
	for (i = 0; i < di->roots.nr; i++) {
		if (asprintf(&p, "%s/.build-id/%.2s/%s.debug", di->roots.items[i], hex,
			     hex + 2) < 0)
			p = NULL;
		if (exists_fmt_free(p))
			return true;
	}
	return false;
}

/*
 * The places libdwfl looks for the debuglink @name of the file in directory
 * @dir (no trailing '/'): @dir, @dir/.debug, and under each root @dir and
 * every tail of it ("/usr/bin" gives ROOT/usr/bin, ROOT/bin, ROOT).
 */
static bool link_file_exists_in(const struct debuginfo *di, const char *dir, const char *name)
{
	const char *tail;
	char *p;
	size_t i;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		p = NULL;
	if (exists_fmt_free(p))
		return true;
	if (asprintf(&p, "%s/.debug/%s", dir, name) < 0)
		p = NULL;
	if (exists_fmt_free(p))
		return true;
	for (i = 0; i < di->roots.nr; i++) {
		/* dir is "" for a file in "/": no tail but the root itself */
		for (tail = dir; tail && *tail; tail = strchr(tail + 1, '/')) {
			if (asprintf(&p, "%s%s/%s", di->roots.items[i], tail, name) < 0)
				p = NULL;
			if (exists_fmt_free(p))
				return true;
		}
		if (asprintf(&p, "%s/%s", di->roots.items[i], name) < 0)
			p = NULL;
		if (exists_fmt_free(p))
			return true;
	}
	return false;
}

static bool link_file_exists(const struct debuginfo *di, const char *file, const char *name)
{
	const char *slash = strrchr(file, '/');
	char *dir, *own = NULL;
	bool yes;

	if (!slash)
		return false;	/* "[vdso]": build-id only */
	if (!name) {
		/* without .gnu_debuglink, libdwfl tries "FILE.debug" */
		if (asprintf(&own, "%s.debug", slash + 1) < 0)
			return true;	/* let libdwfl decide */
		name = own;
	}
	dir = strndup(file, slash - file);
	yes = !dir || link_file_exists_in(di, dir, name);
	free(dir);
	free(own);
	return yes;
}

/*
 * Could libdwfl find a local file for @mod at all? A superset of its search:
 * a candidate that exists may still be rejected (a CRC or build-id that does
 * not match), but no file libdwfl would take is missed. Errors say yes.
 */
static bool debuginfo_may_exist(const struct debuginfo *di, Dwfl_Module *mod,
				const char *file, const char *link)
{
	char *real;
	bool yes;

	if (build_id_file_exists(di, mod))
		return true;
	if (!file)
		return false;
	if (link_file_exists(di, file, link))
		return true;
	/* libdwfl tries a symlink's target too */
	real = realpath(file, NULL);
	yes = real && strcmp(real, file) && link_file_exists(di, real, link);
	free(real);
	return yes;
}

static int debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file, const char *link, GElf_Word crc,
			  char **debuginfo_file)
{
	const struct debuginfo *di = *userdata;

	/*
	 * libdwfl 0.188 asks debuginfod for every binary whose debuginfo is
	 * not on disk, DEBUGINFOD_URLS or not: it loads libcurl and keeps a
	 * client with two descriptors per session. Without a server, go to
	 * libdwfl only when there is a file it could take. A .gnu_debugaltlink
	 * (dwz) lookup comes with a name and no CRC; that one goes through.
	 */
	bool alt = link && !crc, may = di && !alt && debuginfo_may_exist(di, mod, file, link);
	int fd;

	if (di && !di->debuginfod && !alt && !may)
		return -1;
	/* the inflated copy of a compressed file that is still there */
	fd = may ? debugcache_open(mod, debuginfo_file) : -1;
	if (fd >= 0)
		return fd;
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file, link, crc,
					  debuginfo_file);
	if (fd >= 0 && may)
		debugcache_add(mod, fd);
	return fd;
}

static int debuginfo_add_root(struct debuginfo *di, const char *dir)
{
	char *copy;
	size_t len = strlen(dir);

	if (dir[0] != '/' || strchr(dir, ':'))
		return -EINVAL;
	while (len > 1 && dir[len - 1] == '/')
		len--;	/* ROOT + "/usr/bin" must not give "//" */
	copy = strndup(dir, len == 1 ? 0 : len);
	if (!copy || array_grow(&di->roots, di->roots.nr + 1)) {
		free(copy);
		return -ENOMEM;
	}
	di->roots.items[di->roots.nr++] = copy;
	return 0;
}

/* "+:.debug:ROOT...": CRC checks on, the binary's own directory, .debug/ in it, the roots */
static int debuginfo_make_path(struct debuginfo *di)
{
	size_t i, len = sizeof("+:.debug");
	char *p;

	for (i = 0; i < di->roots.nr; i++)
		len += strlen(di->roots.items[i]) + 2;	/* ":" and "/" for the root "" */
	di->path = p = malloc(len);
	if (!p)
		return -ENOMEM;
	p += sprintf(p, "+:.debug");
	for (i = 0; i < di->roots.nr; i++)
		p += sprintf(p, ":%s", di->roots.items[i][0] ? di->roots.items[i] : "/");
	return 0;
}

struct debuginfo *debuginfo_new(const char *const *dirs, size_t nr)
{
	struct debuginfo *di = calloc(1, sizeof(*di));
	const char *urls = getenv("DEBUGINFOD_URLS");
	size_t i;
	int err = di ? 0 : -ENOMEM;

	for (i = 0; i < nr && !err; i++)
		err = debuginfo_add_root(di, dirs[i]);
	if (!err)
		err = debuginfo_add_root(di, SYSTEM_DEBUG_DIR);
	if (!err)
		err = debuginfo_make_path(di);
	if (err) {
		debuginfo_free(di);
		errno = -err;
		return NULL;
	}
	/* the same test libdebuginfod makes before it asks any server */
	di->debuginfod = urls && *urls;
	di->callbacks.find_debuginfo = debuginfo_find;
	di->callbacks.section_address = dwfl_offline_section_address;
	di->callbacks.debuginfo_path = &di->path;
	return di;
}

void debuginfo_free(struct debuginfo *di)
{
	size_t i;

	if (!di)
		return;
	for (i = 0; i < di->roots.nr; i++)
		free(di->roots.items[i]);
	free(di->roots.items);
	free(di->path);
	free(di);
}

const Dwfl_Callbacks *debuginfo_callbacks(const struct debuginfo *di)
{
	return &di->callbacks;
}

void debuginfo_attach(const struct debuginfo *di, Dwfl_Module *mod)
{
	void **userdata = NULL;

	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (userdata)
		*userdata = (void *)di;
}

bool debuginfo_uses_debuginfod(const struct debuginfo *di)
{
	return di->debuginfod;
}
