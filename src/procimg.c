// SPDX-License-Identifier: GPL-2.0-only
/* Process images and their refresh schedule (see procimg.h). */
#include "src/procimg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/util.h"

static const unsigned int refresh_delays_ms[] = { 5, 20, 100, 500 };
#define REFRESH_PERIOD_MS 2000

struct proc_image *proc_images_find(struct proc_images *m, pid_t pid, uint32_t gen)
{
	size_t i;

	for (i = m->list.nr; i-- > 0;)
		if (m->list.items[i].pid == pid && m->list.items[i].gen == gen)
			return &m->list.items[i];
	return NULL;
}

static void image_schedule(struct proc_image *img)
{
	unsigned int ms = img->refreshes < ARRAY_SIZE(refresh_delays_ms) ?
		refresh_delays_ms[img->refreshes] : REFRESH_PERIOD_MS;

	img->next_refresh_ns = now_ns() + ms * 1000000ULL;
}

/* The digest of @pid's executable mappings now (sym_maps_digest). */
static int maps_digest(pid_t pid, uint64_t *digest)
{
	char path[64], *buf = NULL;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	err = read_file(path, &buf, NULL);
	if (err)
		return err;
	*digest = sym_maps_digest(buf);
	free(buf);
	return 0;
}

/* (Re)read @pid's maps as image (pid, gen); a failed re-read keeps the old. */
int proc_images_snapshot(struct proc_images *m, pid_t pid, uint32_t gen)
{
	struct proc_image *img = proc_images_find(m, pid, gen);
	struct sym_process *sym;
	uint64_t digest;
	size_t i;

	if (!img) {
		if (array_grow(&m->list, m->list.nr + 1))
			return -ENOMEM;
		img = &m->list.items[m->list.nr++];
		memset(img, 0, sizeof(*img));
		img->pid = pid;
		img->gen = gen;
		img->first_ns = now_ns();
		/* an older image of this pid has been replaced by an exec */
		for (i = 0; i + 1 < m->list.nr; i++)
			if (m->list.items[i].pid == pid)
				m->list.items[i].next_refresh_ns = 0;
	}
	if (img->sym && !maps_digest(pid, &digest) &&
	    digest == sym_process_maps_digest(img->sym)) {
		image_schedule(img);	/* unchanged: keep the snapshot we have */
		img->refreshes++;
		return 0;
	}
	/*
	 * A process that exited or is exec'ing lists no code: that read fails
	 * and the image keeps the snapshot its queued samples need.
	 */
	sym = symbolizer_snapshot_after(m->sym, pid, img->sym);
	if (sym && m->current && !m->current(m->current_arg, pid, gen)) {
		sym = NULL;	/* the next image's maps; the symbolizer frees them */
		errno = ESRCH;
	}
	if (!sym) {
		if (!img->sym)
			m->snapshot_failed++;
		img->next_refresh_ns = 0;
		return -errno;
	}
	/* the old snapshot's samples were taken with its files */
	img->modules_refused = proc_image_modules_refused(img);
	img->sym = sym;
	image_schedule(img);
	img->refreshes++;
	return 0;
}

uint64_t proc_image_modules_refused(const struct proc_image *img)
{
	uint64_t n = img->sym ? sym_process_modules_refused(img->sym) : 0;

	return n > img->modules_refused ? n : img->modules_refused;
}

void proc_images_stop_refresh(struct proc_images *m, pid_t pid)
{
	size_t i;

	for (i = 0; i < m->list.nr; i++)
		if (m->list.items[i].pid == pid)
			m->list.items[i].next_refresh_ns = 0;
}

/* Re-read the images whose time has come; returns ms until the next one. */
int proc_images_refresh(struct proc_images *m, int max_ms)
{
	uint64_t now = now_ns(), next = now + max_ms * 1000000ULL;
	size_t i;

	for (i = 0; i < m->list.nr; i++) {
		struct proc_image *img = &m->list.items[i];

		if (img->next_refresh_ns && img->next_refresh_ns <= now) {
			pid_t pid = img->pid;
			uint32_t gen = img->gen;

			proc_images_snapshot(m, pid, gen);
			img = &m->list.items[i];	/* the list may have moved */
			if (m->refreshed)
				m->refreshed(m->refreshed_arg, pid, gen);
		}
		if (img->next_refresh_ns && img->next_refresh_ns < next)
			next = img->next_refresh_ns;
	}
	return next > now ? (next - now + 999999) / 1000000 : 0;
}

uint64_t proc_images_nr_processes(const struct proc_images *m)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < m->list.nr; i++)
		n += m->list.items[i].gen == 0;	/* one gen-0 image per process */
	return n;
}

void proc_images_release(struct proc_images *m)
{
	free(m->list.items);
	m->list.items = NULL;
	m->list.nr = m->list.alloc = 0;
}
