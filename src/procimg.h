/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Process images of a recording: for each (pid, exec generation) the latest
 * symbolizer snapshot of its memory map, kept fresh while the process lives
 * (re-read densely after exec, then every 2 s, and only when its executable
 * mappings changed), plus per-image unwinding statistics. Owned by the
 * record session; knows nothing about BPF.
 */
#ifndef LATPROF_PROCIMG_H
#define LATPROF_PROCIMG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/lib/hashmap.h"
#include "symbolize/symbolize.h"

#define PROC_IMAGE_COMM_LEN 16

/*
 * One process image: (pid, exec generation) -> its latest maps snapshot.
 * The dynamic loader maps libraries after exec and programs dlopen later, so
 * the image of a live process is re-read on a schedule that is dense right
 * after exec and sparse later (refresh_delays_ms, then every 2 s).
 */
struct proc_image {
	pid_t pid;
	uint32_t gen;
	struct sym_process *sym;	/* NULL: the process was gone */
	uint64_t next_refresh_ns;	/* 0: not refreshed any more */
	uint64_t forced_refresh_ns;	/* last re-read asked for by a failed unwind */
	bool forced_same;		/* ... which found the same code mappings */
	uint64_t snap_ns;		/* when the maps of @sym were last read */
	uint64_t first_ns;		/* when the image was first read */
	uint32_t refreshes;
	uint64_t unwind[SYM_UNWIND_NR];	/* how the DWARF unwinds of this image ended */
	uint64_t modules_refused;	/* by the snapshots replaced (see below) */
	bool ended;			/* the process exited (or exec'd past this image) */
	bool trim_queued;		/* in proc_images.trim */
	char comm[PROC_IMAGE_COMM_LEN + 1];
};


struct proc_images {
	struct symbolizer *sym;		/* borrowed */
	struct { struct proc_image *items; size_t nr, alloc; } list;
	struct hashmap idx;		/* (NULL, pid, gen) -> index in list + 1 */
	/*
	 * (NULL, pid, 0) -> W + 1, one entry per pid with an image: each of
	 * its images with a generation below W is ended, so an exec ends the
	 * images from W up, not every one since the first (a process that
	 * exec'd 16,600 times made that quadratic: 1,700 events lost).
	 */
	struct hashmap ended_below;
	/* ended images whose unwinder a late stack built again: trimmed next */
	struct { size_t *items; size_t nr, alloc; } trim;
	uint64_t snapshot_failed;	/* images gone (exit, exec) before their maps were read */
	/*
	 * Whether @gen is still @pid's image (NULL: assumed): asked after
	 * each read of the maps, since a process can exec again before its
	 * reader gets to it (chroot execs its command within a millisecond).
	 * The maps read then are the next image's: kept, they would name
	 * this image's code with another program's symbols.
	 */
	bool (*current)(void *arg, pid_t pid, uint32_t gen);
	void *current_arg;
	/* called after each scheduled re-read that succeeded (NULL: none) */
	void (*refreshed)(void *arg, pid_t pid, uint32_t gen);
	void *refreshed_arg;
};

/* Image (@pid, @gen), or NULL. Borrowed until the next new image. */
struct proc_image *proc_images_find(struct proc_images *m, pid_t pid, uint32_t gen);

/*
 * (Re)read @pid's maps as image (@pid, @gen), creating the image if needed;
 * a re-read that fails keeps the previous snapshot, as does one that finds
 * the image replaced by an exec (-ESRCH; see current). 0 or -errno.
 */
int proc_images_snapshot(struct proc_images *m, pid_t pid, uint32_t gen);

/*
 * Executable files of @img that libdwfl refused (symbolizer.h's
 * sym_process_modules_refused): the most any of its snapshots had, the
 * current one included. Cannot fail.
 */
uint64_t proc_image_modules_refused(const struct proc_image *img);

/*
 * @pid exited in image @last_gen: stop re-reading its images (generations
 * 0 to @last_gen, those there are) and free what unwinding them built
 * (sym_process_trim); they still symbolize.
 */
void proc_images_stop_refresh(struct proc_images *m, pid_t pid, uint32_t last_gen);

/*
 * A stack of ended image @img was just unwound (its unwinder is built
 * again): trim it at the next proc_images_trim(). Cannot fail (a failed
 * queueing trims now).
 */
void proc_images_trim_later(struct proc_images *m, struct proc_image *img);

/* Trim the images proc_images_trim_later() queued. Cannot fail. */
void proc_images_trim(struct proc_images *m);

/* Re-read the images that are due; returns ms until the next one (<= @max_ms). */
int proc_images_refresh(struct proc_images *m, int max_ms);

/*
 * Processes seen: their oldest image read (generation 0, or the first after
 * an exec). Cannot fail.
 */
uint64_t proc_images_nr_processes(const struct proc_images *m);

/* Images kept of processes that exited (or exec'd past them). Cannot fail. */
uint64_t proc_images_nr_ended(const struct proc_images *m);

/* Free the list (snapshots belong to the symbolizer). */
void proc_images_release(struct proc_images *m);

#endif
