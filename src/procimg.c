// SPDX-License-Identifier: GPL-2.0-only
/* Process images and their refresh schedule (see procimg.h). */
#include "src/procimg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/lib/util.h"

static const unsigned int refresh_delays_ms[] = { 5, 20, 100, 500 };
#define REFRESH_PERIOD_MS 2000
#define PROC_REFRESH_BUDGET_MS 20	/* re-reading per call, at most */

struct proc_image *proc_images_find(struct proc_images *m, pid_t pid, uint32_t gen)
{
	uint64_t i = HASHMAP_TO_NUM(hashmap_get(&m->idx, NULL, (uint32_t)pid, gen));

	return i ? &m->list.items[i - 1] : NULL;
}

/* @img will not run again: no re-reads, no unwinder kept (NULL: no-op). */
static void image_end(struct proc_image *img)
{
	if (!img)
		return;
	img->next_refresh_ns = 0;
	img->ended = true;
	if (img->sym)
		sym_process_trim(img->sym);
}

/* W of @pid (proc_images.ended_below): its images below it are ended. */
static uint32_t ended_below(const struct proc_images *m, pid_t pid)
{
	uint64_t w = HASHMAP_TO_NUM(hashmap_get(&m->ended_below, NULL, (uint32_t)pid, 0));

	return w ? w - 1 : 0;
}

static int set_ended_below(struct proc_images *m, pid_t pid, uint32_t w)
{
	return hashmap_put(&m->ended_below, NULL, (uint32_t)pid, 0, HASHMAP_NUM((uint64_t)w + 1));
}

/* End @pid's images below generation @gen (those from its W up). */
static void end_below(struct proc_images *m, pid_t pid, uint32_t gen)
{
	uint32_t i, w = ended_below(m, pid);

	for (i = w; i < gen; i++)
		image_end(proc_images_find(m, pid, i));
	/* without memory W stays lower: the next call ends them again */
	if (gen > w)
		set_ended_below(m, pid, gen);
}

static void image_schedule(struct proc_images *m, struct proc_image *img)
{
	unsigned int ms = img->refreshes < ARRAY_SIZE(refresh_delays_ms) ?
		refresh_delays_ms[img->refreshes] : REFRESH_PERIOD_MS;

	img->next_refresh_ns = now_ns() + ms * 1000000ULL;
	/*
	 * Re-read below W (a pid reused, an image read late): W comes down
	 * to it, so the exec or exit that follows ends it. Without memory
	 * to replace the entry, it is not ended then: its re-reads stop
	 * once the process is gone (the read fails).
	 */
	if (img->gen < ended_below(m, img->pid))
		set_ended_below(m, img->pid, img->gen);
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
	uint64_t digest, now;

	if (!img) {
		if (array_grow(&m->list, m->list.nr + 1) ||
		    (!hashmap_get(&m->ended_below, NULL, (uint32_t)pid, 0) &&
		     set_ended_below(m, pid, 0)) ||
		    hashmap_put(&m->idx, NULL, (uint32_t)pid, gen, HASHMAP_NUM(m->list.nr + 1)))
			return -ENOMEM;
		img = &m->list.items[m->list.nr++];
		memset(img, 0, sizeof(*img));
		img->pid = pid;
		img->gen = gen;
		img->first_ns = now_ns();
		/* an older image of this pid has been replaced by an exec */
		end_below(m, pid, gen);
	}
	now = now_ns();
	if (img->sym && !maps_digest(pid, &digest) &&
	    digest == sym_process_maps_digest(img->sym)) {
		image_schedule(m, img);	/* unchanged: keep the snapshot we have */
		img->refreshes++;
		img->snap_ns = now;
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
	if (img->sym)
		sym_process_trim(img->sym);	/* stacks are unwound with the newest */
	img->sym = sym;
	img->snap_ns = now;
	image_schedule(m, img);
	img->refreshes++;
	return 0;
}

uint64_t proc_image_modules_refused(const struct proc_image *img)
{
	uint64_t n = img->sym ? sym_process_modules_refused(img->sym) : 0;

	return n > img->modules_refused ? n : img->modules_refused;
}

void proc_images_stop_refresh(struct proc_images *m, pid_t pid, uint32_t last_gen)
{
	/* one generation per exec; one whose event was lost has no image */
	end_below(m, pid, last_gen + 1);
}

void proc_images_trim_later(struct proc_images *m, struct proc_image *img)
{
	if (!img->ended || img->trim_queued)
		return;
	if (array_grow(&m->trim, m->trim.nr + 1)) {
		if (img->sym)
			sym_process_trim(img->sym);
		return;
	}
	img->trim_queued = true;
	m->trim.items[m->trim.nr++] = img - m->list.items;
}

void proc_images_trim(struct proc_images *m)
{
	size_t i;

	for (i = 0; i < m->trim.nr; i++) {
		struct proc_image *img = &m->list.items[m->trim.items[i]];

		img->trim_queued = false;
		if (img->sym)
			sym_process_trim(img->sym);
	}
	m->trim.nr = 0;
}

/* Re-read the images whose time has come; returns ms until the next one. */
int proc_images_refresh(struct proc_images *m, int max_ms)
{
	uint64_t now = now_ns(), next = now + max_ms * 1000000ULL;
	size_t i;

	for (i = 0; i < m->list.nr; i++) {
		struct proc_image *img = &m->list.items[i];

		if (img->next_refresh_ns && img->next_refresh_ns <= now) {
			/* a busy machine's images are many: the rest at the next call */
			if (now_ns() - now > PROC_REFRESH_BUDGET_MS * 1000000ULL)
				return 0;
			pid_t pid = img->pid;
			uint32_t gen = img->gen;
			bool ok;

			/*
			 * Told only of a read of this image: maps read after an
			 * exec are the next program's (the same digest too, when
			 * it runs the same file at the same addresses), and told
			 * as this image's, the next program's interpreter was
			 * walked twice (once as each image).
			 */
			ok = !proc_images_snapshot(m, pid, gen) &&
			     (!m->current || m->current(m->current_arg, pid, gen));
			img = &m->list.items[i];	/* the list may have moved */
			if (ok && m->refreshed)
				m->refreshed(m->refreshed_arg, pid, gen);
		}
		if (img->next_refresh_ns && img->next_refresh_ns < next)
			next = img->next_refresh_ns;
	}
	return next > now ? (next - now + 999999) / 1000000 : 0;
}

uint64_t proc_images_nr_processes(const struct proc_images *m)
{
	/*
	 * A process is its oldest image: gen 0, or the first one seen of a
	 * command started held (its gen-0 image is latprof's own fork, never
	 * read) or of a process that exec'd before it was read. One per pid.
	 */
	return m->ended_below.nr;
}

uint64_t proc_images_nr_ended(const struct proc_images *m)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < m->list.nr; i++)
		n += m->list.items[i].ended;
	return n;
}

void proc_images_release(struct proc_images *m)
{
	hashmap_release(&m->idx);
	hashmap_release(&m->ended_below);
	free(m->trim.items);
	m->trim.items = NULL;
	m->trim.nr = m->trim.alloc = 0;
	free(m->list.items);
	m->list.items = NULL;
	m->list.nr = m->list.alloc = 0;
}
