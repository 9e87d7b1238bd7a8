/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The run metadata of a profile: how it was recorded (version, command
 * line, kernel, collectors, sampling frequency, unwinding, thresholds,
 * start-up time, the command's exit status). One struct, its keys defined
 * here once, written by the session that made the profile (record and
 * serve's profiles alike) and read back by the verbs that show it.
 */
#ifndef LATPROF_RUNMETA_H
#define LATPROF_RUNMETA_H

#include <stdbool.h>
#include <stdint.h>

#include "src/profile.h"

/* The keys, for readers of single values. */
#define RUN_META_VERSION "version"
#define RUN_META_COMMAND_LINE "command_line"
#define RUN_META_KERNEL "kernel"
#define RUN_META_FREQ_HZ "freq_hz"
#define RUN_META_UNWIND "unwind"
#define RUN_META_MODE "mode"
#define RUN_META_SYSCALL_HOOKS "syscall_hooks"
#define RUN_META_KERNEL_BTF "kernel_btf"
#define RUN_META_MIN_DURATION_US "min_duration_us"
#define RUN_META_MIN_BLOCK_US "min_block_us"
#define RUN_META_SYSCALLS "syscalls"
#define RUN_META_TRACK "track"
#define RUN_META_STARTUP_NS "startup_ns"
#define RUN_META_EXIT_STATUS "exit_status"
/*
 * How the "wait" label of syscall samples was decided: "state" (what the
 * program was doing when the wait began, bpf/waits.bpf.h), written when the
 * syscall hooks ran; absent: by the syscall's name (older recordings), or
 * not decided (--mode offcpu --unwind fp: every readiness wait "readiness").
 */
#define RUN_META_WAIT_RULE "wait_rule"

/* NULL strings and the has_ flags off leave their keys out. */
struct run_meta {
	const char *version;
	const char *command_line;	/* latprof's own argv, joined */
	const char *kernel;		/* uname release */
	uint64_t freq_hz;
	const char *unwind;		/* "dwarf" or "fp" */
	const char *mode;		/* "cpu,syscall": the collectors */
	const char *syscall_hooks;	/* "tp_btf" or "raw_tp" (syshooks.h), with syscall hooks */
	const char *kernel_btf;		/* "cached" (btfcache.h) or "vmlinux" */
	bool has_min_duration;
	uint64_t min_duration_us;	/* with --mode syscall */
	bool has_min_block;
	uint64_t min_block_us;		/* with --mode offcpu */
	const char *syscalls;		/* --syscalls as given */
	const char *track;		/* "requests,files,net" or a part */
	const char *wait_rule;		/* "state", with the syscall hooks */
	uint64_t startup_ns;		/* latprof's start to the programs attached */
	bool has_exit_status;
	int exit_status;		/* the command's, when it exited */
};

/* Store @m into @p's metadata. 0 or -ENOMEM. */
int run_meta_store(const struct run_meta *m, struct profile *p);

#endif
