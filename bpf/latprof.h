/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The only header shared by the BPF programs and user space: fixed-width
 * types, no pointers, padding written out. User space _Static_asserts sizes.
 */
#ifndef LATPROF_BPF_H
#define LATPROF_BPF_H

#define LP_COMM_LEN 16
#define LP_MAX_COMMS 8
#define LP_MAX_STACK_DEPTH 127

/*
 * A stack in the stacks map (stacks.bpf.h, stack_get), keyed by a 64-bit
 * hash of its frames: ids are handed out in order, 0, 1, 2 ... At most
 * LP_STACK_FRAMES frames (the innermost), so that a map element (the
 * kernel's 64 bytes of header and key, and this) is one 1 KiB allocation:
 * at 127 frames each would take 2 KiB.
 */
#define LP_STACK_FRAMES 119
struct lp_stack {
	__u32 id;
	__u32 nr;		/* frames in ips[] (the rest is zero) */
	__u64 ips[LP_STACK_FRAMES];
};
#define LP_MAX_STACK_COPY 32768	/* bytes of user stack copied for DWARF unwinding */
#define LP_NR_REGS 17		/* x86-64 DWARF registers 0..16 (16 = ip) */

/* Key of the in-kernel CPU sample aggregation. */
struct lp_sample_key {
	__u32 tgid;
	__u32 gen;		/* exec generation of tgid, see struct lp_proc */
	__s32 ustack_id;	/* stack id (struct lp_stack), or -errno */
	__s32 kstack_id;
	char comm[LP_COMM_LEN];	/* thread name */
};

/* Per-process state of a traced process (value of the procs map). */
#define LP_SYS_USED_WORDS 8	/* LP_MAX_SYSCALL_NR bits (asserted below) */

/* A bit per syscall number below LP_MAX_SYSCALL_NR. */
struct lp_sys_used {
	__u64 words[LP_SYS_USED_WORDS];
};

struct lp_proc {
	__u32 gen;		/* bumped by every exec, so samples of the old and
				 * the new image are told apart */
	__u32 fast_slot;	/* 1 + its block of the per-CPU syscall stats
				 * array, 0: its stats go to the hash map */
	__s32 pending;		/* conversations with a request or call pending,
				 * and client ones (bpf/waits.bpf.h) */
	__s32 clients;
	__u32 serves;		/* it accepted a connection or was asked on one */
	__u32 stamp;		/* its conversations carry it: one of another
				 * process of the same pid, or of the image before
				 * an exec, does not count */
	/*
	 * A bit per syscall number below LP_MAX_SYSCALL_NR with an entry of
	 * this process in the sys_stats hash: its exit event carries them,
	 * so user space takes exactly those entries out and the hash holds
	 * only live processes however many come and go.
	 */
	__u64 sys_used[LP_SYS_USED_WORDS];
};

/*
 * What a readiness wait of a target was when it began (bpf/waits.bpf.h,
 * docs/syscalls.md "Idle waits"); LP_WAIT_NONE: not decided by the hooks
 * (not a wait, or begun before the recording).
 */
enum lp_wait {
	LP_WAIT_NONE = 0,
	LP_WAIT_PATH,		/* something the wait may be for was pending */
	LP_WAIT_IDLE,		/* waiting for work to arrive, nothing pending */
	LP_WAIT_READY,		/* a readiness wait the hooks cannot decide */
};

enum lp_event_type {
	LP_EVENT_NEW = 1,	/* a process became a target (fork, --comm, -a) */
	LP_EVENT_EXEC,		/* a target exec'ed: its address space changed */
	LP_EVENT_EXIT,		/* the last thread of a target exited */
	LP_EVENT_STALL,		/* an event loop ran long between two waits */
};

/* Ring buffer record: lifecycle of target processes. */
struct lp_event {
	__u32 type;		/* enum lp_event_type */
	__u32 pid;		/* tgid */
	__u32 ppid;		/* parent tgid (NEW) */
	__u32 gen;
	__u64 time_ns;		/* bpf_ktime_get_ns() */
	char comm[LP_COMM_LEN];
};

#define LP_ARGS_LEN 256		/* bytes of argv an exec event carries */

/*
 * Ring buffer record of LP_EVENT_EXEC and LP_EVENT_EXIT: struct lp_event
 * followed by what the process tree needs (src/proctree.h).
 */
struct lp_proc_event {
	struct lp_event e;
	__s32 exit_code;	/* EXIT: task->exit_code, a wait status */
	__u32 args_len;		/* EXEC: bytes in args[] */
	__u64 rss_pages;	/* EXIT: resident pages as the last thread exits, 0 unknown */
	char args[LP_ARGS_LEN];	/* EXEC: argv, NUL-separated, cut at LP_ARGS_LEN */
	__u64 sys_used[LP_SYS_USED_WORDS];	/* EXIT: struct lp_proc's */
};

/*
 * Ring buffer record of LP_EVENT_STALL: a thread's stretch from a readiness
 * wait's return (epoll, poll on several fds) to its next one, at least --stall-min
 * long: the loop ran one piece of work that long and served nothing else.
 * e.time_ns is the stretch's end, the next wait's start.
 */
struct lp_stall_event {
	struct lp_event e;
	__u64 dur_ns;
	__u32 tid;
	__u32 flags;		/* enum lp_stall_flag */
};

enum lp_stall_flag {
	LP_STALL_IN_FLIGHT = 1,	/* still running at the stop: time up to it */
};

#define LP_HIST_SLOTS 32		/* log2 latency buckets, see struct lp_sys_stat */
#define LP_MAX_SYSCALL_NR 512	/* --syscalls filter covers numbers below this */
#define LP_SYS_FAST_SLOTS 8	/* processes whose syscall stats live in an array */
/*
 * The targets' tgids as bits (tgid modulo LP_TARGET_BITS) in a global array
 * that every program reads with one load, no helper and no hash: a clear
 * bit means "not a target", the answer for nearly every process on the
 * machine; a set one (a target, or another tgid equal modulo the size) is
 * confirmed in the procs hash. Bits are set by whoever adds a target (BPF
 * at fork, --comm, -a; user space for -p and the command) and never
 * cleared, so a check can only be conservative.
 */
#define LP_TARGET_BITS (1U << 17)
#define LP_TARGET_WORDS (LP_TARGET_BITS / 64)

enum lp_sample_kind {
	LP_SAMPLE_CPU = 1,	/* value: 1 sample */
	LP_SAMPLE_SYSCALL,	/* a syscall ended (or was in flight at stop): value is its
				 * duration when slow (else 0), plus the off-CPU time it
				 * spent blocked/preempted */
	LP_SAMPLE_OFFCPU,	/* off CPU outside a syscall (in flight at stop) */
	LP_SAMPLE_AWAIT,	/* never sent by BPF: user space's walk of asyncio
				 * tasks, a suspended task's time (src/awaits.h) */
};

enum lp_ustack_flag {
	LP_USTACK_IN_FLIGHT = 1,	/* still running when recording stopped */
	LP_USTACK_IN_STALL = 2,		/* taken in an event loop's stall (--stall-min) */
	LP_USTACK_GIL = 4,		/* a syscall that waited for the GIL (bpf/gil.bpf.h) */
};
#define LP_USTACK_WAIT_SHIFT 8		/* flags >> this & 3: enum lp_wait */

#define LP_PY_MAX_FRAMES 64	/* Python frames recorded per stack, innermost first */
#define LP_PY_MAX_THREADS 256	/* PyThreadStates searched for a thread not cached */
#define LP_PY_FRAME_READ 256	/* bytes of a frame read at once: every member used */

/* How the frames of a CPython version are chained (struct lp_py_proc). */
enum lp_py_model {
	LP_PY_FRAME_OBJECT = 1,	/* 3.8-3.10: tstate->frame, PyFrameObject.f_back; each
				 * frame is run by its own eval loop call */
	LP_PY_CFRAME,		/* 3.11, 3.12: tstate->cframe->current_frame */
	LP_PY_CURRENT_FRAME,	/* 3.13+: tstate->current_frame */
};

/* How a 3.11+ frame says it was the first of an eval loop call. */
enum lp_py_entry {
	LP_PY_ENTRY_ALL = 0,	/* every frame (FRAME_OBJECT) */
	LP_PY_ENTRY_FLAG,	/* 3.11: bool is_entry */
	LP_PY_ENTRY_SHIM,	/* 3.12+: a frame with owner FRAME_OWNED_BY_CSTACK (3;
				 * from 3.14 _INTERPRETER, 3, or _CSTACK, 4) sits below
				 * the first one, and is not Python code */
};

/*
 * A traced CPython process (value of the py_procs map, by tgid): where its
 * threads' frames are, from symbolize/pyoffsets.h. Offsets are bytes into
 * the struct named; all < LP_PY_FRAME_READ - 8 for the frame ones.
 */
struct lp_py_proc {
	__u64 runtime;			/* &_PyRuntime */
	__u32 model;			/* enum lp_py_model */
	__u32 entry;			/* enum lp_py_entry */
	__u32 match_native;		/* 1: tstate id is gettid(), 0: pthread_self() */
	__u32 frame_read;		/* bytes of a frame to read, <= LP_PY_FRAME_READ */
	__u32 runtime_interp_head;
	__u32 interp_threads_head;
	__u32 tstate_next;
	__u32 tstate_id;		/* native_thread_id or thread_id */
	__u32 tstate_frame;		/* frame, cframe or current_frame */
	__u32 cframe_current_frame;
	__u32 frame_back;
	__u32 frame_code;
	__u32 frame_instr;
	__u32 frame_flag;		/* is_entry (ENTRY_FLAG) or owner (ENTRY_SHIM) */
	/*
	 * The code object's members copied with each frame (struct
	 * lp_py_code_ref): code_read bytes from code_first, members at
	 * offsets from there; code_read 0: none copied.
	 */
	__u32 code_first;
	__u32 code_read;		/* <= LP_PY_FRAME_READ */
	__u32 code_type;		/* ob_type */
	__u32 code_name;		/* co_qualname (3.11+) or co_name */
	__u32 code_file;		/* co_filename */
	__u32 code_table;		/* co_linetable or co_lnotab */
	__u32 code_firstlineno;
	__u32 name_raw;			/* PyASCIIObject.length: where name_raw starts */
	__u32 code_tag;			/* low bits of frame_code that are a tag (3.14+) */
	__u32 str_data;			/* a compact ASCII string's characters, from its
					 * length member; 0: file names not copied */
	/*
	 * Its GIL (symbolize/pygil.h): a futex inside [gil, gil + gil_size)
	 * is a wait for the GIL (bpf/gil.bpf.h); gil 0: not known (yet).
	 */
	__u64 gil;
	__u32 gil_size;
	__u32 gil_locked;		/* offset of int locked in it */
	__u32 gil_holder;		/* offset of last_holder (PyThreadState *) */
	__u32 gil_pad;
};

/*
 * What names a code object, copied at the sample: user space reads names
 * later, when a code object that ran only then (a module body being
 * imported, a function of an exec'ed string) may be freed, but its name
 * and file strings usually live on (interned, shared with the module's other
 * code). All 0 when not copied.
 */
#define LP_PY_NAME_RAW 64	/* bytes of the name string copied with a frame */
#define LP_PY_FILE_HDR 24	/* bytes of the file string from its length member */
#define LP_PY_FILE_TAIL 48	/* its last characters copied with a frame */

struct lp_py_code_ref {
	__u64 type;			/* the code object's ob_type */
	__u64 name;			/* PyUnicodeObject * */
	__u64 file;			/* PyUnicodeObject * */
	__u64 table;			/* PyBytesObject *: the line table */
	__u32 firstlineno;
	__u32 pad;
	/*
	 * The file string's length, hash and state (its length 0: nothing
	 * copied), and file_tail its last LP_PY_FILE_TAIL characters when it
	 * is a compact ASCII string (from its first when shorter, then what
	 * follows it too): a process that exits right after its last sample
	 * (a script's one slow call) is gone before user space reads it.
	 */
	__u8 file_hdr[LP_PY_FILE_HDR];
	/*
	 * The name string itself from its length member on (length, hash,
	 * state, then a compact ASCII string's characters): the name of a code
	 * object that is freed soon after, such as a module body's "<module>"
	 * or a comprehension's, is freed with it.
	 */
	__u8 name_raw[LP_PY_NAME_RAW];
	__u8 file_tail[LP_PY_FILE_TAIL];
};

/* One Python frame: its code object and where in it (see symbolize/pycode.h). */
struct lp_py_frame {
	__u64 code;
	__u64 instr;			/* f_lasti, or the instruction pointer (3.11+) */
	struct lp_py_code_ref ref;
};

enum lp_py_walk {
	LP_PY_WALK_NONE = 0,		/* not a Python process (or not walked) */
	LP_PY_WALK_OK,			/* py_nr frames, down to the thread's first */
	LP_PY_WALK_TRUNCATED,		/* more than LP_PY_MAX_FRAMES */
	LP_PY_WALK_NO_THREAD,		/* no PyThreadState for this thread (yet) */
	LP_PY_WALK_READ_FAILED,		/* interpreter memory unreadable */
	LP_PY_WALK_NR,
};

/*
 * A user stack captured for DWARF unwinding in user space ("copy + unwind
 * later"): the registers and the top of the user stack, sent through the
 * ustacks ring buffer with only stack_len bytes of stack[]. Every collector
 * that wants a complete user stack sends one of these.
 */
struct lp_ustack_sample {
	__u32 kind;		/* enum lp_sample_kind */
	__u32 tgid;
	__u32 tid;
	__u32 gen;
	__s32 kstack_id;	/* kernel stack: stack map id, or -errno */
	__u32 stack_len;	/* bytes of stack[] copied from regs[7] (sp) up */
	__u64 value;		/* CPU: samples; SYSCALL: ns in a slow syscall */
	__u64 blocked_ns;	/* off CPU, waiting for an event (voluntary) */
	__u64 preempted_ns;	/* off CPU, runnable but not running */
	__s32 nr;		/* syscall number, -1 for none */
	__u32 flags;		/* enum lp_ustack_flag */
	char comm[LP_COMM_LEN];
	__u64 regs[LP_NR_REGS];	/* user registers, x86-64 DWARF numbering */
	__u32 py_walk;		/* enum lp_py_walk */
	__u32 py_nr;		/* frames in py[] */
	__u64 py_entry;		/* bit i: Python frame i is the first frame of an
				 * eval loop call (it replaces one native frame) */
	__u64 ts;		/* bpf_ktime_get_ns() at the copy: user space re-reads
				 * the maps for a stack newer than its snapshot */
	/*
	 * stack_len bytes of stack, then, from the next multiple of 8
	 * (lp_ustack_py), py_nr struct lp_py_frame: a sample without Python
	 * frames costs the ring nothing for them.
	 */
	__u8 stack[LP_MAX_STACK_COPY + LP_PY_MAX_FRAMES * sizeof(struct lp_py_frame)];
};

#define LP_USTACK_HDR_SIZE 232	/* offsetof(struct lp_ustack_sample, stack) */

/* Where the Python frames of @s start in stack[]. */
#define LP_USTACK_PY_OFF(s) (((s)->stack_len + 7) & ~7u)

/*
 * Key of the in-kernel aggregation of timed events with frame-pointer user
 * stacks: slow syscalls with --unwind fp, off-CPU intervals outside syscalls.
 */
struct lp_timed_key {
	__u32 tgid;
	__u32 gen;
	__s32 ustack_id;
	__s32 kstack_id;
	__s32 nr;		/* syscall number, -1 for none */
	__u32 wait;		/* enum lp_wait */
	char comm[LP_COMM_LEN];
};

struct lp_timed_value {
	__u64 count;		/* slow syscalls */
	__u64 latency_ns;	/* their total duration */
	__u64 max_ns;		/* the slowest of them */
	__u64 blocked_ns;
	__u64 preempted_ns;
};

/*
 * serve's shared session (cfg_task_counts): CPU samples and off-CPU time per
 * (process, thread name), counted as they happen and taken out by serve's
 * drain every second, while the samples by stack wait for the history's cut.
 */
struct lp_task_count_key {
	__u32 tgid;
	char comm[LP_COMM_LEN];
};

struct lp_task_count {
	__u64 samples;
	__u64 blocked_ns;
	__u64 preempted_ns;
};

/* Per (process, syscall): every syscall is counted here, slow or not. */
struct lp_sys_key {
	__u32 tgid;
	__s32 nr;
};

/* One log2 latency bucket: its calls and their summed duration (its mean). */
struct lp_hist_bucket {
	__u64 count;
	__u64 sum_ns;
};

/*
 * hist[0] counts calls under 1 us, hist[i] calls in [2^(i-1), 2^i) us; the
 * last slot also takes everything longer. The count and the total are the
 * sums over the buckets: two fewer updates per syscall, and a bucket's two
 * fields share a cache line.
 */
struct lp_sys_stat {
	__u64 errors;		/* returned -4095..-1 */
	__u64 max_ns;
	__u64 in_flight;	/* counted at stop, with their time so far */
	__u64 pad;
	struct lp_hist_bucket hist[LP_HIST_SLOTS];
};

/*
 * The histogram slot of @ns: the bit length of us = ns / 1000, without the
 * division (a 64-bit div costs tens of cycles per syscall). With b the bit
 * length of ns, us lies in [2^(b-1)/1000, 2^b/1000), so its bit length is
 * b - 10 or b - 9, the latter exactly when ns >= 1000 << (b - 10).
 */
static inline __u32 lp_hist_slot(__u64 ns)
{
	__u64 v = ns;
	__u32 b = 0, slot;

	if (v >> 32) { v >>= 32; b += 32; }
	if (v >> 16) { v >>= 16; b += 16; }
	if (v >> 8) { v >>= 8; b += 8; }
	if (v >> 4) { v >>= 4; b += 4; }
	if (v >> 2) { v >>= 2; b += 2; }
	if (v >> 1) { v >>= 1; b += 1; }
	b += v;
	if (b < 10)
		return 0;
	slot = ns >= 1000ULL << (b - 10) ? b - 9 : b - 10;
	return slot < LP_HIST_SLOTS ? slot : LP_HIST_SLOTS - 1;
}

/*
 * Request tracking (record --requests): where a thread's or a process's time
 * went, as cumulative counters; a request's breakdown is the difference of
 * two snapshots. Syscall time by category: the categories of docs/syscalls.md,
 * with memory, process and ipc folded into other.
 */
enum lp_req_cat {
	LP_REQ_CAT_NETWORK,
	LP_REQ_CAT_FILE,
	LP_REQ_CAT_SYNC,
	LP_REQ_CAT_SLEEP,
	LP_REQ_CAT_OTHER,
	LP_REQ_CAT_NR,
};

struct lp_times {
	__u64 cpu_ns;			/* on CPU, user + kernel (sum_exec_runtime) */
	__u64 utime_ns;			/* tick-sampled user and system time: their */
	__u64 stime_ns;			/* ratio splits cpu_ns (as cputime_adjust does) */
	__u64 cat_ns[LP_REQ_CAT_NR];	/* in syscalls (wall time), by enum lp_req_cat */
};

/* Per-thread state of the syscall and off-CPU collectors (struct lp_task_slot). */
struct lp_task {
	__u64 sys_start;	/* ktime at sys_enter, 0 when not in a syscall */
	__u64 off_start;	/* ktime at switch-out, 0 when on CPU */
	__u64 pend_blocked;	/* off-CPU time inside the current syscall */
	__u64 pend_preempted;
	__s32 sys_nr;
	__s32 off_kstack;	/* kernel stack at switch-out */
	__s32 off_ustack;	/* frame-pointer user stack at switch-out */
	__u32 off_preempted;	/* switched out while runnable */
	__s32 pend_kstack;	/* kernel stack of the longest pending block */
	__s32 fast_base;	/* first index of its process's block in the
				 * per-CPU stats array, -1: use the hash map */
	__u64 pend_max;		/* that block's length */
	__u32 tgid;		/* 0 until the state is initialized */
	__u32 track_flags;	/* enum lp_task_flag */
	__u32 wait;		/* enum lp_wait of the wait in progress */
	__u32 stamp;		/* its process's struct lp_proc.stamp */
	/* only written with --requests, --files or --net (arg0 also for
	 * the syscalls of bpf/waits.bpf.h with --mode syscall): */
	__u64 sys_arg0;		/* first two syscall arguments, saved at sys_enter */
	__u64 sys_arg1;
	/*
	 * Descriptors 0-63 this thread saw are no conversation (a file, a
	 * pipe: bpf/waits.bpf.h), a bit each, while its process has closed
	 * nothing since (plain_epoch): their reads and writes skip convs.
	 */
	__u64 plain_fds;
	__u32 plain_epoch;
	__u32 loop_ready;	/* ktime >> 10 (| 1) when its last readiness wait
				 * returned, 0: none since (bpf/stalls.bpf.h) */
	__s32 loop_fd;		/* that wait's epoll descriptor, -1: a poll */
	__u32 loop_pad;
	/*
	 * Its process's GIL (struct lp_py_proc's gil, gil_size) as py_procs
	 * had it when lp_gil_epoch was gil_epoch: a futex call looks py_procs
	 * up only after user space changed it (bpf/gil.bpf.h).
	 */
	__u64 gil;
	__u32 gil_size;
	__u32 gil_epoch;
	__u64 cpu_seen;		/* sum_exec_runtime when last charged to the process */
	__u64 utime_seen;	/* utime and stime at that charge */
	__u64 stime_seen;
	struct lp_times times;	/* this thread's cumulative times (--requests) */
};

/*
 * A slot of the task_slots array (task.bpf.h, task_slot_probe): the state
 * of one target thread, at its tid modulo LP_TASK_SLOTS or one of the
 * LP_TASK_PROBES slots after it, found with inlined array lookups.
 */
#define LP_TASK_SLOTS 16384
#define LP_TASK_PROBES 4

/*
 * What the syscall hooks decided about a thread, cached by the address of
 * its syscall registers (struct pt_regs at the top of its kernel stack: the
 * hooks' first argument, distinct for every live thread): that it is not a
 * target, or which task_slots slot is its state. A hit spares the hooks
 * bpf_get_current_task_btf, the one helper call of the path that every
 * syscall on the machine takes (docs/performance.md, "The syscall registers
 * as the thread's identity"). Direct-mapped (a collision overwrites: the
 * loser only takes the slower path), one 64-bit word an entry so that
 * concurrent writers cannot tear it: the key above LP_REGS_VAL_BITS, the
 * value below. A new thread's entry is cleared when it forks, before it
 * runs, so a kernel stack reused after its thread exited starts afresh; and
 * a cached slot is used only while it is owned (tid) and the slot names the
 * same kernel stack (regs_owner), so an entry that outlived its thread can
 * never lead to another thread's state.
 */
#define LP_REGS_CACHE_SLOTS 32768
#define LP_REGS_VAL_BITS 16
#define LP_REGS_NOT_TARGET 0xffff	/* else the task_slots index + 1 */
struct lp_task_slot {
	__u32 tid;		/* owner, 0: free */
	__u32 regs_owner;	/* low 32 bits of the regs cache key (pt_regs >> 14)
				 * of the thread that cached this slot, 0: none */
	__u64 start_time;	/* the owner's task_struct.start_time: a tid reused
				 * by another thread does not match */
	struct lp_task t;
};

enum lp_task_flag {
	LP_TASK_ACCEPTS = 1,	/* accepted a connection: an event loop if it also reads */
	LP_TASK_LOOP_WAIT = 2,	/* in a readiness wait that ends a stretch (stalls.bpf.h) */
	LP_TASK_GIL_WAIT = 4,	/* in a futex wait on its process's GIL (gil.bpf.h) */
};

/*
 * GIL waits (bpf/gil.bpf.h): per Python thread of a GIL build, its time in
 * futex waits on the GIL and what CPU samples saw of it, kept for the whole
 * recording (the gil_threads map, read at its end).
 */

struct lp_gil_key {
	__u32 tgid;
	__u32 tid;
};

struct lp_gil_thread {
	__u64 wait_ns;		/* in futex waits on the GIL, sys_enter to sys_exit */
	__u64 waits;		/* those calls */
	__u64 samples;		/* CPU samples of the thread, with its PyThreadState */
	__u64 held;		/* of them, those that found it holding the GIL */
};

/* A tracked descriptor: key of the conns and fdstats maps. */
struct lp_fd_key {
	__u32 tgid;
	__s32 fd;
};

enum lp_req_flag {
	LP_REQ_SHARED = 1,	/* read by a thread that also accepts (event loop), or
				 * answered by another thread: the thread snapshots
				 * are not this request's alone */
};

/*
 * A connection from accept/accept4 and its current request. A request opens
 * at the exit of the first read that returns bytes while none is open and
 * ends at the exit of its last response write, known when the next request's
 * first bytes arrive or the descriptor is closed.
 */
struct lp_conn {
	__u64 start_ns;		/* 0: no request open */
	__u64 end_ns;		/* last response write so far, 0: none yet */
	__u64 bytes_in;
	__u64 bytes_out;
	__u32 read_tid;		/* the thread whose read opened the request */
	__u32 write_tid;	/* the thread of the last response write */
	__u32 flags;		/* enum lp_req_flag */
	__u32 pad;
	struct lp_times t_start;	/* read_tid's times at start_ns */
	struct lp_times t_end;		/* write_tid's times at end_ns */
	struct lp_times p_start;	/* the process's times (struct lp_proc_times) */
	struct lp_times p_end;
};

/* Cumulative times of a process, charged at its threads' sys_exit. */
struct lp_proc_times {
	struct lp_times times;
	__u64 mark_ns;		/* last snapshot: later charges are clipped to it */
};

enum lp_fd_kind {
	LP_FD_FILE = 1,		/* opened by path */
	LP_FD_NET,		/* an inet socket from connect or accept */
};

/* I/O on a tracked descriptor (--files, --net), sent when it is closed. */
struct lp_fdstat {
	__u64 id;		/* the open or connection it came from (dup keeps it) */
	__u32 kind;		/* enum lp_fd_kind */
	__u32 pad;
	__u64 bytes_in;		/* read/received */
	__u64 bytes_out;	/* written/sent */
	__u64 io_ns;		/* time in syscalls on the descriptor */
	__u64 ops;		/* those syscalls */
};

#define LP_PATH_LEN 256

enum lp_track_type {
	LP_TRACK_REQUEST = 1,	/* struct lp_req_event */
	LP_TRACK_OPEN,		/* struct lp_open_event */
	LP_TRACK_PEER,		/* struct lp_peer_event */
	LP_TRACK_FDSTAT,	/* struct lp_fd_event */
};

/* Ring buffer records of the track ring; each starts with its type. */
struct lp_req_event {
	__u32 type;
	__u32 tgid;
	__s32 fd;
	__u32 pad;
	struct lp_conn conn;
};

struct lp_open_event {
	__u32 type;
	__u32 tgid;
	__s32 fd;
	__s32 dirfd;		/* openat's directory, -100 (AT_FDCWD) for the cwd */
	__u64 id;
	__u64 time_ns;
	char path[LP_PATH_LEN];	/* as passed, NUL-terminated, maybe cut */
};

struct lp_peer_event {
	__u32 type;
	__u32 tgid;
	__s32 fd;
	__u32 accepted;		/* 1: from accept, 0: from connect */
	__u64 id;
	__u16 family;		/* AF_INET or AF_INET6 */
	__u16 port;		/* host order */
	__u32 pad;
	__u8 addr[16];		/* network order; IPv4 in the first 4 bytes */
};

struct lp_fd_event {
	__u32 type;
	__u32 tgid;
	__s32 fd;
	__u32 pad;
	struct lp_fdstat st;
};

/* Counters in the per-CPU stats array: nothing is lost silently. */
enum lp_stat {
	LP_STAT_SAMPLES,		/* samples of targets */
	LP_STAT_USTACK_FULL,		/* stacks map full: a new user stack lost */
	LP_STAT_USTACK_EFAULT,		/* user stack not readable */
	LP_STAT_USTACK_OTHER,
	LP_STAT_KSTACK_FULL,
	LP_STAT_KSTACK_EFAULT,
	LP_STAT_KSTACK_OTHER,
	LP_STAT_SAMPLES_DROPPED,	/* sample map full */
	LP_STAT_PROCS_DROPPED,		/* procs map full: a new target not traced */
	LP_STAT_EVENTS,			/* events sent */
	LP_STAT_EVENTS_LOST,		/* ring buffer full */
	LP_STAT_USTACKS_LOST,		/* ustacks ring buffer full: sample lost */
	LP_STAT_SYS_STATS_DROPPED,	/* per-syscall stats map full: counted in sys_spill */
	LP_STAT_TIMED_DROPPED,		/* timed sample map full */
	LP_STAT_TASK_STATE_FAILED,	/* no free task slot: the thread is not timed */
	LP_STAT_TRACK_LOST,		/* track ring buffer full: request/file event lost */
	LP_STAT_CONNS_DROPPED,		/* conns or fdstats map full: descriptor not tracked */
	LP_STAT_SYS_STATS_NOMEM,	/* per-syscall stats entry not allocated: in sys_spill */
	LP_STAT_OFFCPU_UNMATCHED,	/* an off-CPU interval whose switch-in was never seen */
	LP_STAT_PROC_TIMES_DROPPED,	/* proc_times full: a process's times not kept */
	LP_STAT_GIL_DROPPED,		/* gil_threads full: a thread's GIL times not kept */
	LP_STAT_NR,
};

#endif
