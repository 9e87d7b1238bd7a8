/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Inside the collect module (src/collect.h), shared by the files of
 * src/collect/ and nothing else; the only place that sees the BPF skeleton.
 * Each file has one job: abi.c (the record layouts checked against
 * bpf/latprof.h, the counters' names), load.c (opening: map sizes,
 * configuration, load), events.c (the ring buffers), attach.c (targets,
 * attach and detach, the counters, free), inflight.c (what the kernel
 * still holds at the stop), build.c (the final drain into a struct
 * profile) with symbols.c (frames into locations) and meta.c (the run's
 * metadata), counters.c (the timeline's live counters), maps.c (reading
 * the maps) and drain.c (serve's periodic drain, exited processes, the
 * stacks map).
 */
#ifndef LATPROF_COLLECT_PRIV_H
#define LATPROF_COLLECT_PRIV_H

#include "src/collect.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "latprof.skel.h"
#include "src/lib/hashmap.h"
#include "src/awaits.h"
#include "src/gil.h"
#include "src/iotrack.h"
#include "src/procimg.h"
#include "src/proctree.h"
#include "src/pystacks.h"
#include "src/requests.h"
#include "src/stackagg.h"
#include "src/stalls.h"
#include "src/syscalls.h"
#include "src/sysexited.h"
#include "src/sysstats.h"
#include "src/lib/util.h"

/* Names of enum lp_stat, as they appear in metadata ("lost.NAME"). */
extern const char *const collect_stat_names[LP_STAT_NR];
/* Names of enum sym_unwind_status in metadata ("proc.PID.NAME"). */
extern const char *const collect_unwind_names[SYM_UNWIND_NR];

#define COLLECT_RINGS 3

struct fast_block;

struct collect {
	struct collect_opts o;		/* as opened, without the caller's lists */
	struct latprof_bpf *skel;
	struct symbolizer *sym;
	struct ring_buffer *rings[COLLECT_RINGS];	/* events, stacks, track records */
	size_t nr_rings;
	size_t ring_next;		/* the ring read first at the next poll */
	int epfd;			/* the rings' epoll descriptors */
	struct { struct bpf_link **items; size_t nr, alloc; } links;
	struct { int *items; size_t nr, alloc; } perf_fds;
	struct proc_images images;
	struct proc_tree procs;		/* fork/exec/exit of the targets, absolute times */
	struct stackagg *ustacks;	/* DWARF-unwound samples */
	struct pystacks *py;		/* Python frames; NULL: not walked */
	size_t py_walked;		/* processes in the py_procs map */
	struct awaits *awaits;		/* asyncio tasks walked (--await-hz); NULL: not */
	uint64_t poll_until_ns;		/* records are read until then (0: no limit) */
	bool skip_records;		/* after the stop's budget: records only counted */
	bool stop_read_all;		/* collect_stop_read_all() */
	uint64_t events_unread;		/* process and track records left at the stop */
	uint64_t ustacks_unread;	/* user stacks left at the stop */
	bool sys_hooks;			/* sys_enter/sys_exit are loaded */
	bool sys_typed;			/* their tp_btf builds (syshooks.h) */
	bool features;			/* loaded with the newer kernels' (kernel_features) */
	char *btf_path;			/* CO-RE against this btfcache file, or NULL */
	bool in_flight_done;
	uint32_t fast_slots;		/* blocks of the per-CPU syscall stats array */
	bool fast_drain;		/* collect_drain reads them (serve) */
	struct fast_block *fast_blocks;	/* collect_drain's view of each */
	pid_t command_pid;		/* generation 0 of it is latprof's fork */
	uint64_t in_flight_reported;
	struct { struct request_raw *items; size_t nr, alloc; } reqs;
	uint64_t reqs_dropped;		/* past max_requests */
	struct stalls stalls;		/* event-loop stalls (record) */
	uint64_t stalls_dropped;	/* past COLLECT_MAX_STALLS */
	uint64_t reqs_unanswered;	/* open at stop with no response yet */
	struct iotrack io;
	/* the stacks map by id, read once for the profile (collect_load_stacks) */
	struct { struct collect_stack *items; size_t nr; } stacks;
	/* exited processes' syscall statistics, out of the kernel (collect_sys_exited) */
	struct sys_exited exited;
	uint64_t exited_ns[TIMELINE_SERIES_NR];	/* their time by timeline series */
	uint64_t exited_opens;		/* their file opens */
	uint64_t exited_swept;		/* entries collect_sys_sweep took out */
	uint64_t last_sweep_ns;
	struct hashmap sweep_suspects;	/* (NULL, tgid, 0): gone at the last sweep */
	struct lp_sys_stat *sys_vals;	/* a per-CPU value buffer */
};

/* A stack of the stacks map, copied out by id. */
struct collect_stack {
	uint64_t *ips;		/* NULL: no stack of this id */
	uint32_t nr;
};

/*
 * collect_get_stats(), saying which counters could not be read (and are 0 in
 * @st): bit (1 << k) for counter k of enum lp_stat. Every bit when the
 * per-CPU buffer cannot be allocated. Cannot fail otherwise.
 */
uint32_t collect_read_stats(struct collect *c, struct collect_stats *st);

typedef int (*collect_map_fn)(void *arg, const void *key, const void *value);

/*
 * Call @fn with every entry of @map (per-CPU values: one per possible CPU,
 * each rounded up to 8 bytes), read in batches of a thousand where the
 * kernel has them (5.6): a full map is a few system calls, not two per
 * entry, which a busy machine makes slow. Stops at @fn's first non-zero
 * return, which it returns; -errno (maps.c).
 */
int collect_map_each(const struct bpf_map *map, collect_map_fn fn, void *arg);

/*
 * Take every entry out of hash @map, one at a time, handing each to @fn
 * (per-CPU values as collect_map_each); at most max_entries of them, so
 * programs adding entries as fast as they go cannot keep the caller there.
 * Stops at @fn's first non-zero return, which it returns; -errno (maps.c).
 */
int collect_map_take(struct bpf_map *map, collect_map_fn fn, void *arg);

/*
 * Add the per-CPU values @vals (libbpf_num_possible_cpus() of them) of one
 * (process, syscall) entry to @st (maps.c). Cannot fail.
 */
void collect_sys_sum(struct sys_stat *st, const struct lp_sys_stat *vals);

/*
 * Call @fn with the number and statistics (pid 0) of each syscall in
 * sys_spill (calls that found no room for their process's entry); with @drain,
 * each entry read is zeroed (a call counted between the read and the write
 * is lost). Stops at @fn's first non-zero return, which it returns; -errno
 * (maps.c).
 */
int collect_sys_spill(struct collect *c, bool drain,
		      int (*fn)(void *arg, int nr, const struct sys_stat *st), void *arg);

/*
 * Process @tgid named @comm exited: take its entries out of the sys_stats
 * hash, those of @used (a bit per syscall number, its exit event's), into
 * c->exited (drain.c, src/sysexited.h). An entry that cannot be
 * read stays in the hash, read at the end as before. Cannot fail.
 */
void collect_sys_exited(struct collect *c, uint32_t tgid, const char *comm, const __u64 *used);

/*
 * Take the entries of processes that are no longer targets, and were not at
 * the previous sweep either, out of the sys_stats hash into their names'
 * (sysexited.h): those whose exit event was lost (the ring full). Walks the
 * hash. Cannot fail.
 */
void collect_sys_sweep(struct collect *c);

/* The name under which sys_spill's calls are shown (a pseudo pid of sysexited.h) */
#define COLLECT_UNATTRIBUTED "[unattributed]"

/* Free c->exited. */
void collect_sys_exited_free(struct collect *c);

/* Free what collect_drain keeps of the blocks of sys_fast (drain.c). */
void collect_fast_free(struct collect *c);

/* The timeline series of syscall @name, whether it opens a file (counters.c). */
enum timeline_series collect_sys_series(const char *name);
bool collect_sys_opens_file(const char *name);

/* Empty the stacks map and start ids again at 0 (drain.c). */
void collect_drain_stacks(struct collect *c);

/*
 * Read the stacks map into c->stacks, by id (drain.c). 0 or
 * -ENOMEM; a stack that cannot be read is missing from it.
 */
int collect_load_stacks(struct collect *c);

/* Free c->stacks. */
void collect_free_stacks(struct collect *c);

/* Is @what ("stats", "stacks") in the hidden LATPROF_DEBUG_LOSE list? (load.c) */
bool collect_debug_lose(const char *what);

/*
 * At stop, after detach: the connections and descriptors the kernel still
 * holds become requests and file/peer I/O (inflight.c). 0 or -ENOMEM.
 */
int collect_track_flush(struct collect *c);

/*
 * Run the in-flight iterator once, at the stop (inflight.c): the target
 * threads still in a syscall or off CPU report their time so far. Needs the
 * other programs detached. Once per session; failures are warned of.
 */
void collect_report_in_flight(struct collect *c);

/* events.c: the ring buffers and what their records feed. */

/* @pi's command line from /proc (a process found by name, a -p target). */
void collect_proc_read_cmdline(struct proc_info *pi);
/* The parent of @pid from /proc/PID/status, 0 if unknown. */
uint32_t collect_proc_read_ppid(uint32_t pid);

/*
 * Look for a Python interpreter in (@pid, @gen) and let the BPF walk know
 * (@wait: an interpreter file not seen before is read now, not in the
 * background).
 */
void collect_python_probe(struct collect *c, pid_t pid, uint32_t gen, bool wait);
/* procimg.h's refreshed hook: the maps of (@pid, @gen) were re-read, probe again. */
void collect_python_refreshed(void *arg, pid_t pid, uint32_t gen);
/* procimg.h's current hook: image @gen of @pid is not yet replaced by an exec. */
bool collect_image_current(void *arg, pid_t pid, uint32_t gen);

/* A request the kernel finished (or that was open at stop), kept if room. 0 or -ENOMEM. */
int collect_track_request(struct collect *c, uint32_t tgid, int32_t fd,
			  const struct lp_conn *conn);

/* The ring buffer callbacks: lifecycle events, copied user stacks, tracking records. */
int collect_on_event(void *ctx, void *data, size_t size);
int collect_on_ustack(void *ctx, void *data, size_t size);
int collect_on_track(void *ctx, void *data, size_t size);

/* A ring of its own for @map, read by @fn, in c->rings and c->epfd. 0 or -errno. */
int collect_add_ring(struct collect *c, struct bpf_map *map, ring_buffer_sample_fn fn);

/*
 * Read every ring, for at most @budget_ns in all, each ring its share.
 * 1 when a ring was left with records (its share spent), 0, or -errno.
 */
int collect_consume_rings(struct collect *c, uint64_t budget_ns);

/* Free the rings (c->nr_rings becomes 0: nothing more is read). */
void collect_free_rings(struct collect *c);

/* Draining: kernel keys + stack ids -> symbolized profile samples. */
struct builder {
	struct collect *c;
	struct profile *p;
	uint64_t period_ns;
	collect_keep_fn keep;		/* samples of the processes it keeps; NULL: all */
	void *keep_arg;
	struct sys_stats *sys_out;	/* syscall statistics go here, not to metadata */
	uint64_t vanished_samples;	/* user frames of processes never snapshotted */
	uint64_t kstack_missing;	/* stacks whose kernel stack id was not in the map */
	uint64_t ustack_missing;	/* ... whose user stack id was not */
	struct hashmap mappings;	/* sym mapping -> profile mapping id */
	uint64_t py_mapping;		/* the "[python]" mapping, 0 until used */
	struct { uint64_t *items; size_t nr, alloc; } locs;
	struct sys_stats sys;		/* per (process, syscall), from both maps */
	struct hashmap sys_idx;		/* (tgid, nr) -> index + 1 in sys */
};

/* Column indexes of the profile being built; -1 when the mode is off. */
struct builder_cols {
	int samples, cpu, syscalls, latency, offcpu, stall, await;
};

/*
 * build.c, symbols.c and meta.c build the profile with a struct builder;
 * counters.c sums the per-CPU array with one too.
 */

/* Append locations for @pcs (leaf first) to b->locs (symbols.c). 0 or -ENOMEM. */
int builder_frames(struct builder *b, const uint64_t *pcs, size_t nr,
		   struct sym_process *proc, bool kernel);

/*
 * Append the frames of stack map entry @id (leaf first) to b->locs; @trim:
 * a kernel stack taken by a tracepoint program, whose own frames go
 * (symbols.c). A missing stack is counted, not an error. 0 or -ENOMEM.
 */
int builder_stack(struct builder *b, int32_t id, struct sym_process *proc, bool kernel,
		  bool trim);

/*
 * Look up every kernel frame of the stacks map first, then free the kernel's
 * symbol table, so that it and the user frames' DWARF are not held at once
 * (symbols.c).
 */
void builder_kernel_first(struct builder *b);

/* The symbolizer's process of image (@pid, @gen), read now if it was missed; NULL: none. */
struct sym_process *builder_process(struct builder *b, pid_t pid, uint32_t gen);

/* The kernel's counters and the builder's losses into metadata (meta.c). 0 or -errno. */
int builder_meta(struct builder *b);

/* proc.PID.* metadata: unwinding mode and stack quality of each process (meta.c). */
int builder_proc_meta(struct builder *b);

/* count.jit_frames(_unnamed): frames in JIT-compiled code, once the samples are in (meta.c). */
int builder_jit_meta(struct builder *b, const struct builder_cols *cols);

/*
 * The per-CPU syscall array's blocks, summed over CPUs, into b->sys (build.c).
 * 0 or -errno.
 */
int builder_sys_fast(struct builder *b);

#endif
