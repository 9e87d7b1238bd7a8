/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The syscall statistics of processes that exited during a recording, in
 * bounded memory however many come and go (a busy machine execs hundreds of
 * processes a second).
 *
 * The SYS_EXITED_KEPT exited processes that made the most syscalls keep
 * their own statistics, under their pid. Every other one is folded: its
 * statistics are added to those of its name, stored under a pseudo pid from
 * SYS_EXITED_PID_BASE up (above any pid Linux hands out, so never confused
 * with a live process whose pid was reused), with the name and how many
 * processes were folded into it. A process kept, then outnumbered by a busier
 * one, is folded then. A pid reused by a later process kept apart holds the
 * statistics of both, so each (pid, syscall) is stored once. Nothing is
 * ever dropped: a failed allocation folds.
 * No BPF here: src/collect/drain.c takes the entries out of the kernel.
 */
#ifndef LATPROF_SYSEXITED_H
#define LATPROF_SYSEXITED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/lib/hashmap.h"
#include "src/sysstats.h"

#define SYS_EXITED_KEPT 128
/* PID_MAX_LIMIT is 2^22: pseudo pids start well above it */
#define SYS_EXITED_PID_BASE (1U << 30)
/* distinct names folded apart; later names share the entry of name "" */
#define SYS_EXITED_MAX_NAMES 4096
#define SYS_EXITED_COMM_LEN 16

/* One syscall of one process: its number and its statistics. */
struct sys_exited_stat {
	int32_t nr;
	struct sys_stat st;
};

/* An exited process that keeps its own statistics. */
struct sys_exited_proc {
	uint32_t pid;
	char comm[SYS_EXITED_COMM_LEN + 1];
	uint64_t calls;			/* its syscalls: what it is ranked by */
	struct sys_exited_stat *stats;
	size_t nr;
};

/* A name processes were folded into. */
struct sys_exited_name {
	char comm[SYS_EXITED_COMM_LEN + 1];
	uint64_t processes;
};

struct sys_exited {
	struct { struct sys_exited_proc *items; size_t nr, alloc; } kept;
	struct { struct sys_exited_name *items; size_t nr, alloc; } names;
	struct hashmap by_comm;		/* (NULL, comm bytes 0-7, 8-15) -> index in names + 1 */
	struct { struct sys_exited_stat *items; size_t nr, alloc; } folded;
	struct hashmap folded_idx;	/* (NULL, pseudo pid, nr) -> index in folded + 1 */
};

/*
 * Process @pid named @comm (up to 16 bytes, NUL-terminated or not) exited
 * with the @n statistics @stats (malloc'ed; owned by @x from here, even on
 * failure). 0 or -ENOMEM (its statistics are then folded, or lost only if
 * folding fails too).
 */
int sys_exited_add(struct sys_exited *x, uint32_t pid, const char *comm,
		   struct sys_exited_stat *stats, size_t n);

/* Fold one statistic of a process named @comm (not kept apart). 0 or -ENOMEM. */
int sys_exited_fold(struct sys_exited *x, const char *comm, const struct sys_exited_stat *s);

/*
 * Call @fn with every statistic kept or folded, its (pseudo) pid in
 * s->st.pid; stops at the first non-zero return, which it returns.
 */
int sys_exited_each(const struct sys_exited *x,
		    int (*fn)(void *arg, const struct sys_exited_stat *s), void *arg);

/*
 * The index of name @comm in x->names, added (with no process) if new, for
 * other per-process data folded the same way; -1: out of memory.
 */
ssize_t sys_exited_name(struct sys_exited *x, const char *comm);

/* The pseudo pid of folded name @i (0 <= i < x->names.nr). */
uint32_t sys_exited_name_pid(size_t i);

/* Free everything; @x is empty and reusable after. */
void sys_exited_release(struct sys_exited *x);

#endif
