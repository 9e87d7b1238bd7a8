/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The BPF half of Python frames: at the moment a user stack is copied (CPU
 * sample, slow syscall, off-CPU interval), walk the current thread's CPython
 * frames and record (code object, instruction) pairs, innermost first, with
 * the frames that began an eval loop call marked. No strings here: user
 * space reads names and line tables from the process (symbolize/pycode.h)
 * and puts each run of Python frames in place of its eval loop frame.
 *
 * Memory is read with bpf_probe_read_user for the current task (kernel
 * 5.5+), and with bpf_copy_from_user_task (5.18+, sleepable programs only)
 * by the in-flight iterator, which walks other tasks (@remote). The
 * thread's PyThreadState is cached per thread in an LRU map and checked
 * against the thread's id on every use, so a stale entry is never followed.
 * Maps and configuration are defined in ustack.bpf.c.
 */
#ifndef LATPROF_PYTHON_BPF_H
#define LATPROF_PYTHON_BPF_H

#include "common.bpf.h"

/*
 * A frame whose owner is at least this is no Python code but a shim that an
 * eval loop call put below its first frame: FRAME_OWNED_BY_CSTACK (3) in
 * 3.12 and 3.13 (Include/internal/pycore_frame.h, where 3 is the largest
 * owner); FRAME_OWNED_BY_INTERPRETER (3) and FRAME_OWNED_BY_CSTACK (4) in
 * 3.14, FRAME_OWNED_BY_INTERPRETER (3) in 3.15, also the thread's base
 * frame (Include/internal/pycore_interpframe_structs.h; CPython's own test
 * is _PyFrame_IsIncomplete's owner >= FRAME_OWNED_BY_INTERPRETER).
 */
#define PY_FRAME_OWNED_BY_SHIM 3

extern const volatile __u32 cfg_python;	/* walk Python frames of py_procs */

struct py_procs_map {	/* tgid -> where its interpreter keeps frames */
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct lp_py_proc);
};

struct py_tstates_map {	/* tid -> its PyThreadState, checked on use */
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
};

extern struct py_procs_map py_procs SEC(".maps");
extern struct py_tstates_map py_tstates SEC(".maps");

/* Read @size bytes at @addr of @task: the current task, or any with @remote. */
static __always_inline long py_read(void *dst, __u32 size, __u64 addr, struct task_struct *task,
				    const bool remote)
{
	if (remote)
		return bpf_copy_from_user_task(dst, size, (void *)addr, task, 0);
	return bpf_probe_read_user(dst, size, (void *)addr);
}

static __always_inline int py_read_ptr(__u64 *v, __u64 addr, struct task_struct *task,
				       const bool remote)
{
	*v = 0;
	return py_read(v, sizeof(*v), addr, task, remote);
}

/* What the thread's PyThreadState holds as its id: gettid() or pthread_self(). */
static __always_inline __u64 py_thread_key(const struct lp_py_proc *pp, struct task_struct *task)
{
	if (pp->match_native)
		return BPF_CORE_READ(task, pid);
	/* x86-64: pthread_self() is the thread's TCB, which %fs points at */
	return BPF_CORE_READ(task, thread.fsbase);
}

/* The search of an interpreter's thread list for the thread whose id is @key. */
struct py_tstate_search {
	const struct lp_py_proc *pp;
	struct task_struct *task;
	__u64 key;
	__u64 ts;		/* the next thread state to look at; 0: the end */
	__u64 found;
};

/* One step of the search: 1 to stop (found, the end, or a failed read). */
static __always_inline long py_tstate_step(struct py_tstate_search *c, const bool remote)
{
	__u64 id;

	if (!c->ts)
		return 1;
	if (py_read_ptr(&id, c->ts + c->pp->tstate_id, c->task, remote))
		return 1;
	if (id == c->key) {
		c->found = c->ts;
		return 1;
	}
	if (py_read_ptr(&c->ts, c->ts + c->pp->tstate_next, c->task, remote))
		c->ts = 0;
	return 0;
}

static long py_tstate_step_local(__u32 i, void *c)
{
	return py_tstate_step(c, false);
}

static long py_tstate_step_remote(__u32 i, void *c)
{
	return py_tstate_step(c, true);
}

/*
 * The PyThreadState of thread @tid, whose id field must be @key; 0 if none.
 * Searching up to LP_PY_MAX_THREADS thread states, unrolled, made the
 * verifier go through the loop's body for each of them in every program
 * that copies stacks (30,000 instructions and 40 ms of load time each):
 * with bpf_loop (5.17) the body is verified once. Older kernels get the
 * unrolled loop (cfg_bpf_loop is 0 in the fallback load, see src/collect/load.c).
 */
static __always_inline __u64 py_tstate(const struct lp_py_proc *pp, __u32 tid, __u64 key,
				       struct task_struct *task, const bool remote)
{
	__u64 *cached = bpf_map_lookup_elem(&py_tstates, &tid);
	struct py_tstate_search c = { .pp = pp, .task = task, .key = key };
	__u64 interp, id;
	__u32 i;

	if (cached && *cached && !py_read_ptr(&id, *cached + pp->tstate_id, task, remote) && id == key)
		return *cached;
	if (py_read_ptr(&interp, pp->runtime + pp->runtime_interp_head, task, remote) || !interp ||
	    py_read_ptr(&c.ts, interp + pp->interp_threads_head, task, remote))
		return 0;
	if (cfg_bpf_loop)
		bpf_loop(LP_PY_MAX_THREADS, remote ? py_tstate_step_remote : py_tstate_step_local,
			 &c, 0);
	else
		for (i = 0; i < LP_PY_MAX_THREADS; i++)
			if (py_tstate_step(&c, remote))
				break;
	if (c.found)
		bpf_map_update_elem(&py_tstates, &tid, &c.found, BPF_ANY);
	return c.found;
}

static __always_inline __u64 py_field(const __u8 *buf, __u32 off)
{
	return *(const __u64 *)(buf + (off & (LP_PY_FRAME_READ - 1)));
}

/* The innermost frame of thread state @ts, 0 when it runs none; -1 on a failed read. */
static __always_inline int py_top_frame(const struct lp_py_proc *pp, __u64 ts, __u64 *frame,
					struct task_struct *task, const bool remote)
{
	if (py_read_ptr(frame, ts + pp->tstate_frame, task, remote))
		return -1;
	if (pp->model == LP_PY_CFRAME && *frame &&
	    py_read_ptr(frame, *frame + pp->cframe_current_frame, task, remote))
		return -1;
	return 0;
}

/*
 * The walk keeps its state (frames so far, entry bits) in the record, read
 * and written through volatile accesses: in registers the verifier would
 * track every value and follow each combination of branches through every
 * iteration (a million instructions); from memory they are unknown, so the
 * states at the top of the loop differ only in the counter.
 */
static __always_inline bool py_record(struct lp_ustack_sample *s, struct lp_py_frame *py,
				      __u64 code, __u64 instr, bool entry)
{
	__u32 n = *(volatile __u32 *)&s->py_nr;

	if (n >= LP_PY_MAX_FRAMES)
		return false;
	py[n & (LP_PY_MAX_FRAMES - 1)].code = code;
	py[n & (LP_PY_MAX_FRAMES - 1)].instr = instr;
	__builtin_memset(&py[n & (LP_PY_MAX_FRAMES - 1)].ref, 0,
			 offsetof(struct lp_py_code_ref, name_raw) + 8);
	if (entry)
		*(volatile __u64 *)&s->py_entry |= 1ULL << (n & 63);
	*(volatile __u32 *)&s->py_nr = n + 1;
	return true;
}

/*
 * Copy the header of @ref's file string and its last LP_PY_FILE_TAIL
 * characters (user space checks it is compact ASCII; a string shorter than
 * that is read from its start, past its end). A failed read leaves the
 * length 0.
 */
static __always_inline void py_record_file(struct lp_py_code_ref *ref,
					   const struct lp_py_code_ref *prev,
					   const struct lp_py_proc *pp,
					   struct task_struct *task, const bool remote)
{
	__u64 len, from;

	/* the frame walked before (its callee) in the same file: its copy, not two reads */
	if (prev && ref->file && prev->file == ref->file) {
		__builtin_memcpy(ref->file_hdr, prev->file_hdr, sizeof(ref->file_hdr));
		__builtin_memcpy(ref->file_tail, prev->file_tail, sizeof(ref->file_tail));
		return;
	}
	if (!ref->file || !pp->str_data ||
	    py_read(ref->file_hdr, sizeof(ref->file_hdr), ref->file + pp->name_raw, task, remote))
		return;
	len = *(__u64 *)ref->file_hdr;
	from = len > LP_PY_FILE_TAIL ? len - LP_PY_FILE_TAIL : 0;
	if (len > 1 << 16 || py_read(ref->file_tail, sizeof(ref->file_tail),
				     ref->file + pp->name_raw + pp->str_data + from, task, remote))
		*(__u64 *)ref->file_hdr = 0;
}

/*
 * Copy the members of code object @code that name it into the frame recorded
 * last (@buf is free again: the frame's members were taken out of it). A
 * failed read leaves them 0: user space then reads the code object itself.
 */
static __always_inline void py_record_code(struct lp_ustack_sample *s, struct lp_py_frame *py,
					   const struct lp_py_proc *pp, __u8 *buf, __u64 code,
					   struct task_struct *task, const bool remote)
{
	__u32 n = *(volatile __u32 *)&s->py_nr, len = pp->code_read;
	struct lp_py_code_ref *ref;

	barrier_var(len);
	len &= 2 * LP_PY_FRAME_READ - 1;
	if (n == 0 || n > LP_PY_MAX_FRAMES || len == 0 || len > LP_PY_FRAME_READ || !code)
		return;
	if (py_read(buf, len, code + pp->code_first, task, remote))
		return;
	ref = &py[(n - 1) & (LP_PY_MAX_FRAMES - 1)].ref;
	ref->type = py_field(buf, pp->code_type);
	ref->name = py_field(buf, pp->code_name);
	ref->file = py_field(buf, pp->code_file);
	ref->table = py_field(buf, pp->code_table);
	ref->firstlineno = (__u32)py_field(buf, pp->code_firstlineno);
	if (ref->name && py_read(ref->name_raw, sizeof(ref->name_raw), ref->name + pp->name_raw,
				 task, remote))
		ref->name_raw[0] = ref->name_raw[1] = 0;
	py_record_file(ref, n > 1 ? &py[(n - 2) & (LP_PY_MAX_FRAMES - 1)].ref : NULL, pp, task,
		       remote);
}

/* 3.12+ shim frame: the frame recorded last was its eval loop call's first. */
static __always_inline void py_mark_entry(struct lp_ustack_sample *s)
{
	__u32 n = *(volatile __u32 *)&s->py_nr;

	if (n > 0)
		*(volatile __u64 *)&s->py_entry |= 1ULL << ((n - 1) & 63);
}

/* A frame walk in progress: what each step needs, and the next frame. */
struct py_walk_state {
	struct lp_ustack_sample *s;
	struct lp_py_frame *py;		/* the frames, LP_PY_MAX_FRAMES of them */
	const struct lp_py_proc *pp;
	struct task_struct *task;
	__u8 *buf;
	__u64 frame;		/* the next frame to read; 0: the end */
	__u32 len;		/* bytes of a frame to read */
};

/* Record one frame and move to the one below: 1 to stop. */
static __always_inline long py_walk_step(struct py_walk_state *w, const bool remote)
{
	struct lp_ustack_sample *s = w->s;
	const struct lp_py_proc *pp = w->pp;
	__u32 len = w->len, flag;
	__u64 back;

	if (!w->frame) {
		*(volatile __u32 *)&s->py_walk = LP_PY_WALK_OK;
		return 1;
	}
	barrier_var(len);
	len &= 2 * LP_PY_FRAME_READ - 1;
	if (len == 0 || len > LP_PY_FRAME_READ)
		return 1;
	if (py_read(w->buf, len, w->frame, w->task, remote)) {
		*(volatile __u32 *)&s->py_walk = LP_PY_WALK_READ_FAILED;
		return 1;
	}
	flag = (__u8)py_field(w->buf, pp->frame_flag);
	back = py_field(w->buf, pp->frame_back);
	if (pp->entry == LP_PY_ENTRY_SHIM && flag >= PY_FRAME_OWNED_BY_SHIM) {
		py_mark_entry(s);
	} else {
		/* 3.14+: f_executable is a _PyStackRef, its low bits a tag */
		__u64 code = py_field(w->buf, pp->frame_code) & ~(__u64)pp->code_tag;

		/* past the 64th frame nothing is recorded, nor copied over the last one */
		if (py_record(s, w->py, code, py_field(w->buf, pp->frame_instr),
			      pp->entry == LP_PY_ENTRY_ALL ||
			      (pp->entry == LP_PY_ENTRY_FLAG && flag)))
			py_record_code(s, w->py, pp, w->buf, code, w->task, remote);
	}
	w->frame = back;
	return 0;
}

static long py_walk_step_local(__u32 i, void *w)
{
	return py_walk_step(w, false);
}

static long py_walk_step_remote(__u32 i, void *w)
{
	return py_walk_step(w, true);
}

/*
 * Fill s->py_* and @py (LP_PY_MAX_FRAMES frames) for thread @task of
 * process @tgid (the current one unless @remote: then s->tid must be
 * @task's); @buf is scratch of
 * LP_PY_FRAME_READ + 8 bytes. Returns the thread's PyThreadState, 0 when
 * none was found. Shim frames (3.12+) are not recorded: they mark
 * the frame above them as an eval loop's first. The steps run in bpf_loop
 * (5.17), whose body the verifier goes through once: unrolled, the walk's
 * 96 steps were 20,000 of the instructions it processed and 40 ms of
 * load time in each program that copies stacks.
 */
static __always_inline __u64 py_walk(struct lp_ustack_sample *s, struct lp_py_frame *py,
				     struct task_struct *task, __u32 tgid, __u8 *buf,
				     const bool remote)
{
	struct py_walk_state w = { .s = s, .py = py, .task = task, .buf = buf };
	struct lp_py_proc *pp;
	__u64 ts;
	__u32 i;

	s->py_walk = LP_PY_WALK_NONE;
	s->py_nr = 0;
	s->py_entry = 0;
	pp = cfg_python ? bpf_map_lookup_elem(&py_procs, &tgid) : NULL;
	if (!pp)
		return 0;
	ts = py_tstate(pp, s->tid, py_thread_key(pp, task), task, remote);
	if (!ts) {
		s->py_walk = LP_PY_WALK_NO_THREAD;
		return 0;
	}
	if (py_top_frame(pp, ts, &w.frame, task, remote)) {
		s->py_walk = LP_PY_WALK_READ_FAILED;
		return ts;
	}
	w.pp = pp;
	w.len = pp->frame_read;
	*(volatile __u32 *)&s->py_walk = LP_PY_WALK_TRUNCATED;
	if (cfg_bpf_loop) {
		bpf_loop(LP_PY_MAX_FRAMES + LP_PY_MAX_FRAMES / 2,
			 remote ? py_walk_step_remote : py_walk_step_local, &w, 0);
		return ts;
	}
	for (i = 0; i < LP_PY_MAX_FRAMES + LP_PY_MAX_FRAMES / 2; i++)
		if (py_walk_step(&w, remote))
			break;
	return ts;
}

#endif
