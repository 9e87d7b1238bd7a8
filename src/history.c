// SPDX-License-Identifier: GPL-2.0-only
/* serve's history of windows (see history.h). */
#include "src/history.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/pprof.h"
#include "src/lib/util.h"

/* A window's file in the spill directory: its start, wall clock ns. */
#define HISTORY_SPILL_PREFIX "window-"
#define HISTORY_SPILL_SUFFIX ".pb.gz"

struct history_window {
	uint64_t start_ns, end_ns;	/* wall clock */
	char *buf;			/* owned gzip pprof; NULL once spilled */
	size_t len;
	char *path;			/* owned; the spilled file, or NULL */
};

struct history_windows {
	struct history_window *items;
	size_t nr, alloc;
};

struct history {
	struct history_opts o;
	char *spill_dir;		/* owned copy */
	pthread_mutex_t lock;
	struct history_windows windows;	/* oldest first */
	struct history_stats st;
};

/* Files of an earlier run: their times mean nothing to this one. */
static void spill_dir_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *path;
	size_t n;

	while (d && (e = readdir(d))) {
		n = strlen(e->d_name);
		if (strncmp(e->d_name, HISTORY_SPILL_PREFIX, strlen(HISTORY_SPILL_PREFIX)) ||
		    n < strlen(HISTORY_SPILL_SUFFIX) ||
		    strcmp(e->d_name + n - strlen(HISTORY_SPILL_SUFFIX), HISTORY_SPILL_SUFFIX))
			continue;
		if (asprintf(&path, "%s/%s", dir, e->d_name) >= 0) {
			unlink(path);
			free(path);
		}
	}
	if (d)
		closedir(d);
}

struct history *history_new(const struct history_opts *o)
{
	struct history *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->o = *o;
	if (o->spill_dir) {
		h->spill_dir = strdup(o->spill_dir);
		if (!h->spill_dir || (mkdir(o->spill_dir, 0700) && errno != EEXIST)) {
			int err = errno;

			free(h->spill_dir);
			free(h);
			errno = err;
			return NULL;
		}
		h->o.spill_dir = h->spill_dir;
		spill_dir_empty(h->spill_dir);
	}
	pthread_mutex_init(&h->lock, NULL);
	return h;
}

static void window_release(struct history_window *w)
{
	free(w->buf);
	if (w->path)
		unlink(w->path);
	free(w->path);
}

void history_free(struct history *h)
{
	size_t i;

	if (!h)
		return;
	for (i = 0; i < h->windows.nr; i++)
		window_release(&h->windows.items[i]);
	free(h->windows.items);
	pthread_mutex_destroy(&h->lock);
	free(h->spill_dir);
	free(h);
}

/* Drop window @i; h->lock held. */
static void history_drop(struct history *h, size_t i)
{
	struct history_window *w = &h->windows.items[i];

	if (w->buf) {
		h->st.windows--;
		h->st.bytes -= w->len;
	} else {
		h->st.spilled_windows--;
		h->st.spilled_bytes -= w->len;
	}
	window_release(w);
	memmove(w, w + 1, (h->windows.nr - i - 1) * sizeof(*w));
	h->windows.nr--;
	h->st.dropped++;
}

struct spill_arg {
	const char *buf;
	size_t len;
};

static int spill_write(FILE *f, void *arg)
{
	const struct spill_arg *a = arg;

	return fwrite(a->buf, 1, a->len, f) == a->len ? 0 : -EIO;
}

/* Window @i out of memory into the spill directory. 0 or -errno. */
static int history_spill(struct history *h, size_t i)
{
	struct history_window *w = &h->windows.items[i];
	struct spill_arg a = { w->buf, w->len };
	char *path;
	int err;

	if (asprintf(&path, "%s/" HISTORY_SPILL_PREFIX "%" PRIu64 HISTORY_SPILL_SUFFIX,
		     h->spill_dir, w->start_ns) < 0)
		return -ENOMEM;
	err = write_file_atomic(path, spill_write, &a);
	if (err) {
		free(path);
		return err;
	}
	free(w->buf);
	w->buf = NULL;
	w->path = path;
	h->st.windows--;
	h->st.bytes -= w->len;
	h->st.spilled_windows++;
	h->st.spilled_bytes += w->len;
	return 0;
}

/* The look-back, then the memory cap (spilling), then the directory's; h->lock held. */
static int history_trim(struct history *h, uint64_t now_wall_ns)
{
	bool spill = h->spill_dir && h->o.spill_max_bytes;
	size_t i;
	int err = 0;

	while (h->windows.nr && h->windows.items[0].end_ns + h->o.keep_ns < now_wall_ns)
		history_drop(h, 0);
	for (i = 0; h->st.bytes > h->o.max_bytes && i < h->windows.nr; i++) {
		if (!h->windows.items[i].buf)
			continue;
		if (!spill || (err = history_spill(h, i)))
			history_drop(h, i--);	/* the next one is at i now */
	}
	while (h->st.spilled_bytes > h->o.spill_max_bytes) {
		for (i = 0; i < h->windows.nr && h->windows.items[i].buf; i++)
			;
		if (i == h->windows.nr)
			break;
		history_drop(h, i);
	}
	return err;
}

int history_add(struct history *h, const struct profile *p, uint64_t now_wall_ns)
{
	struct history_window w = {
		.start_ns = p->time_ns, .end_ns = p->time_ns + p->duration_ns,
	};
	FILE *f = open_memstream(&w.buf, &w.len);
	int err;

	if (!f)
		return -errno;
	err = pprof_write(p, f);
	if (fclose(f) && !err)
		err = -errno;
	pthread_mutex_lock(&h->lock);
	if (!err)
		err = array_grow(&h->windows, h->windows.nr + 1);
	if (!err) {
		h->windows.items[h->windows.nr++] = w;
		h->st.windows++;
		h->st.bytes += w.len;
		w.buf = NULL;
		err = history_trim(h, now_wall_ns);
	}
	pthread_mutex_unlock(&h->lock);
	free(w.buf);
	return err;
}

static int window_read(const struct history_window *w, struct profile **out, const char **why)
{
	if (w->buf)
		return pprof_read_mem(w->buf, w->len, out, why);
	return pprof_read_file(w->path, out, why);
}

static int query_meta(struct profile *p, uint64_t first_ns, uint64_t last_ns, uint64_t n)
{
	int err = profile_set_meta_u64(p, "history.start_ns", first_ns);

	if (!err)
		err = profile_set_meta_u64(p, "history.end_ns", last_ns);
	if (!err)
		err = profile_set_meta_u64(p, "history.windows", n);
	p->time_ns = first_ns;
	p->duration_ns = last_ns - first_ns;
	return err;
}

/*
 * Copies of the windows overlapping [@start_ns, @end_ns) into @out, so the
 * merge runs without h->lock: the agent keeps adding windows meanwhile.
 */
static int history_copy(struct history *h, uint64_t start_ns, uint64_t end_ns,
			struct history_windows *out)
{
	struct history_window c;
	size_t i;
	int err = 0;

	pthread_mutex_lock(&h->lock);
	for (i = 0; !err && i < h->windows.nr; i++) {
		const struct history_window *w = &h->windows.items[i];

		if (w->end_ns <= start_ns || w->start_ns >= end_ns)
			continue;
		c = (struct history_window){ .start_ns = w->start_ns, .end_ns = w->end_ns,
					     .len = w->len };
		if (w->buf)
			c.buf = malloc(w->len ? w->len : 1);
		else
			c.path = strdup(w->path);
		if (c.buf)
			memcpy(c.buf, w->buf, w->len);
		err = (c.buf || c.path) ? array_grow(out, out->nr + 1) : -ENOMEM;
		if (!err)
			out->items[out->nr++] = c;
		else {
			free(c.buf);
			free(c.path);
		}
	}
	pthread_mutex_unlock(&h->lock);
	return err;
}

/*
 * The windows copied into @into. A spilled one the directory's cap removed
 * meanwhile is left out.
 */
static int history_merge(const struct history_windows *ws,
			 const struct profile_merge_filter *f, struct profile *into,
			 const char **why)
{
	uint64_t first_ns = 0, last_ns = 0, n = 0;
	struct sys_sum sys = { 0 };
	struct profile *p = NULL;
	size_t i;
	int err = 0;

	for (i = 0; !err && i < ws->nr; i++) {
		const struct history_window *w = &ws->items[i];

		err = window_read(w, &p, why);
		if (err == -ENOENT && !w->buf) {
			err = 0;
			*why = NULL;
			continue;
		}
		if (!err)
			err = profile_merge(into, p, f);
		if (!err)
			err = profile_merge_sys(&sys, p, f);
		profile_free(p);
		p = NULL;
		if (!n++)
			first_ns = w->start_ns;
		last_ns = w->end_ns;
	}
	if (!err)
		err = sys_sum_store(&sys, into);
	sys_sum_release(&sys);
	if (!err && !n)
		return -ENOENT;
	return err ? err : query_meta(into, first_ns, last_ns, n);
}

int history_query(struct history *h, uint64_t start_ns, uint64_t end_ns,
		  const struct profile_merge_filter *f, struct profile **out, const char **why)
{
	struct history_windows ws = { 0 };
	struct profile *p = profile_new();
	size_t i;
	int err = p ? 0 : -ENOMEM;

	*out = NULL;
	*why = NULL;
	if (!err)
		err = history_copy(h, start_ns, end_ns, &ws);
	if (!err)
		err = history_merge(&ws, f, p, why);
	for (i = 0; i < ws.nr; i++) {
		free(ws.items[i].buf);
		free(ws.items[i].path);
	}
	free(ws.items);
	if (err) {
		profile_free(p);
		return err;
	}
	*out = p;
	return 0;
}

void history_get_stats(struct history *h, struct history_stats *st)
{
	pthread_mutex_lock(&h->lock);
	*st = h->st;
	st->oldest_ns = h->windows.nr ? h->windows.items[0].start_ns : 0;
	st->newest_ns = h->windows.nr ? h->windows.items[h->windows.nr - 1].end_ns : 0;
	pthread_mutex_unlock(&h->lock);
}
