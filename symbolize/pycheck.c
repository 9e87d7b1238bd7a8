// SPDX-License-Identifier: GPL-2.0-only
/*
 * A table layout checked against the live process (pycheck.h). Everything
 * read is the target's word: pointers are followed a bounded number of
 * times, and a value is only ever compared with what the layout says it
 * must be, never used to size a read. The process is not stopped: a
 * thread state freed or a frame popped under the reads can make one
 * attempt fail, which is why a failure is only believed when three
 * attempts in a row fail, and only once the interpreter is up: right after
 * the exec, libpython's segments may still be being mapped.
 */
#include "symbolize/pycheck.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/pycode.h"

#define MM(minor) PY_VERSION_OF(3, minor, 0)

#define CHECK_ATTEMPTS 3
#define CHECK_TORN_ROUNDS 8	/* rounds of attempts when every chain was torn */
#define CHECK_TORN_GAP_US 2000	/* between them: the thread moves on */
#define CHECK_MAX_THREADS 4096	/* a longer list is a loop through garbage */
#define CHECK_FRAME_THREADS 8	/* threads whose frames are checked */
#define CHECK_MAX_FRAMES 64	/* frames checked per thread */
#define CHECK_MAX_CODES 32	/* code objects read in full per attempt */
/* _PyInterpreterFrame.owner: FRAME_OWNED_BY_THREAD..FRAME_OWNED_BY_CSTACK */
#define FRAME_OWNED_BY_CSTACK 3

struct check {
	const struct py_interp *in;
	const struct py_offsets *o;
	uint32_t mm;
	int32_t flag;		/* frame_is_entry (3.11), frame_owner (3.12+) */
	int pid;
	char *why;
	size_t size;
	unsigned int bound;	/* thread states bound to a thread */
	unsigned int frames;	/* frames whose code object was checked */
	unsigned int codes;	/* code objects read in full */
	unsigned int lines;	/* frames past their first instruction, on a line */
	unsigned int files;	/* code objects whose co_filename looks like a file name */
	unsigned int torn;	/* frame chains that went wrong (why has the last) */
};

static int rd(struct check *c, uint64_t addr, void *buf, size_t len)
{
	return py_read_process((void *)(intptr_t)c->pid, addr, buf, len);
}

static int rd_u64(struct check *c, uint64_t addr, uint64_t *v)
{
	return rd(c, addr, v, sizeof(*v));
}

/* -EINVAL with @why set, or the process's -ESRCH: a vanished process is no mismatch. */
static int __attribute__((format(printf, 2, 3))) mismatch(struct check *c, const char *fmt, ...)
{
	va_list ap;
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d", c->pid);
	if (access(path, F_OK))
		return -ESRCH;
	va_start(ap, fmt);
	vsnprintf(c->why, c->size, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool is_task(int pid, uint64_t tid)
{
	char path[64];

	if (!tid || tid > INT32_MAX)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task/%" PRIu64, pid, tid);
	return !access(path, F_OK);
}

/* The parent of process @pid, 0 if unknown. */
static int parent_of(int pid)
{
	char path[64], line[128];
	int ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "PPid: %d", &ppid) == 1)
			break;
	fclose(f);
	return ppid;
}

/* Instruction @instr of a frame of code @code is past its start, on a line of that code. */
static bool frame_on_line(struct check *c, uint64_t instr, uint64_t code,
			  const struct py_code *pc)
{
	int64_t off;
	uint32_t line;

	off = py_code_offset(c->o, code, instr);
	/* a wrong offset often reads a small int (f_iblock): 0 proves nothing */
	if (off <= 0)
		return false;
	line = py_code_line(pc, c->o->version, off);
	return line && line >= pc->firstlineno;
}

/*
 * A file name as co_filename has them, not a function name read from the
 * wrong member: "app.py", "/usr/lib/python3.11/threading.py", "<string>",
 * "<frozen importlib._bootstrap>". co_name is an identifier or "<module>",
 * "<lambda>", "<listcomp>"...
 */
static bool looks_like_file(const char *s)
{
	size_t len = strlen(s);

	return strchr(s, '/') || (len > 3 && !strcmp(s + len - 3, ".py")) ||
	       !strcmp(s, "<string>") || !strcmp(s, "<stdin>") || !strncmp(s, "<frozen ", 8);
}

/* The frame thread state @ts runs, by the layout's model; 0: none. */
static int top_frame(struct check *c, uint64_t ts, uint64_t *f)
{
	uint64_t cframe = 0;

	*f = 0;
	if (c->mm == MM(11) || c->mm == MM(12)) {
		if (rd_u64(c, ts + c->o->tstate_cframe, &cframe))
			return mismatch(c, "thread state 0x%" PRIx64 ": cframe unreadable", ts);
		if (cframe && rd_u64(c, cframe + c->o->cframe_current_frame, f))
			return mismatch(c, "thread state 0x%" PRIx64 ": cframe 0x%" PRIx64
					" unreadable", ts, cframe);
		return 0;
	}
	if (rd_u64(c, ts + c->o->tstate_frame, f))
		return mismatch(c, "thread state 0x%" PRIx64 ": frame unreadable", ts);
	return 0;
}

/*
 * Whether frame @f, running @code, is still in the chain of thread state @ts,
 * read again from its top. A frame popped under a torn chain is not, or runs
 * other code now; a frame that is, holds a reference to its code object.
 */
static bool frame_live(struct check *c, uint64_t ts, uint64_t f, uint64_t code)
{
	uint64_t g, now;
	unsigned int i;

	if (top_frame(c, ts, &g))
		return false;
	for (i = 0; g && i < CHECK_MAX_FRAMES; i++) {
		if (g == f)
			return !rd_u64(c, f + c->o->frame_code, &now) && now == code;
		if (rd_u64(c, g + c->o->frame_back, &g))
			return false;
	}
	return false;
}

/* The code object of frame @f of thread state @ts: its type, and in full for the first ones. */
static int check_code(struct check *c, uint64_t ts, uint64_t f, uint64_t code, uint64_t instr)
{
	struct py_code pc;
	uint64_t type = 0;
	int err;

	if (rd_u64(c, code + c->o->object_type, &type) || type != c->in->types.code)
		return mismatch(c, "frame 0x%" PRIx64 ": its code 0x%" PRIx64
				" is not a code object", f, code);
	c->frames++;
	if (c->codes >= CHECK_MAX_CODES)
		return 0;
	err = py_code_read_typed(c->o, &c->in->types, py_read_process,
				 (void *)(intptr_t)c->pid, code, &pc);
	/*
	 * A code object, by its type, read wrong: the layout, unless it was
	 * freed under a torn chain (a popped frame, not yet reused, points at
	 * it: its type stays, its name and file are gone, the allocator's
	 * free-list link overwrites its reference count: an address, mangled
	 * by glibc's safe-linking, so any number), or is being made in reused
	 * memory. Either way its frame is no longer in the thread's chain, read
	 * again; a frame that is holds a reference to the code it runs, which
	 * a right layout reads. (CI's ASan run refused a right 3.11 table for
	 * Debian's python3.11: "references 361068383", a free-list link.)
	 */
	if (err) {
		bool live = frame_live(c, ts, f, code);
		uint64_t refcnt = 0;

		c->frames--;
		if (rd_u64(c, code, &refcnt))
			refcnt = UINT64_MAX;
		err = mismatch(c, "code object 0x%" PRIx64 " (references %" PRIu64 ") of frame 0x%"
			       PRIx64 "%s: no name, file or line table where the layout puts them",
			       code, refcnt, f, live ? "" : ", popped since");
		return err == -EINVAL && live ? -EPROTO : err;
	}
	c->codes++;
	c->lines += frame_on_line(c, instr, code, &pc);
	c->files += looks_like_file(pc.filename);
	py_code_release(&pc);
	return 0;
}

/*
 * The frames of thread state @ts. The thread runs while they are read, so a
 * chain can change under the reader (a frame popped and its memory reused):
 * a chain that goes wrong is counted (torn) and left, not a verdict by
 * itself; check_once weighs the torn chains against the good frames.
 */
static int check_frames(struct check *c, uint64_t ts)
{
	uint64_t f, code;
	unsigned int i;
	int err = top_frame(c, ts, &f);

	for (i = 0; !err && f && i < CHECK_MAX_FRAMES; i++) {
		uint64_t instr = 0;
		uint8_t flag = 0;

		/*
		 * The instruction with the code, before the code object is
		 * read: the thread runs on meanwhile (an int before 3.11).
		 */
		if (rd_u64(c, f + c->o->frame_code, &code) ||
		    rd(c, f + c->o->frame_instr, &instr, c->mm <= MM(10) ? 4 : 8) ||
		    (c->mm >= MM(11) && rd(c, f + c->flag, &flag, 1)))
			err = mismatch(c, "frame 0x%" PRIx64 " unreadable", f);
		else if (c->mm == MM(11) && flag > 1)
			err = mismatch(c, "frame 0x%" PRIx64 ": is_entry is %u", f, flag);
		else if (c->mm >= MM(12) && flag > FRAME_OWNED_BY_CSTACK)
			err = mismatch(c, "frame 0x%" PRIx64 ": owner is %u", f, flag);
		/* the entry shim of 3.12+ runs no code of the program's (3.13: None) */
		else if (c->mm < MM(12) || flag != FRAME_OWNED_BY_CSTACK)
			err = check_code(c, ts, f, code, instr);
		if (!err && rd_u64(c, f + c->o->frame_back, &f))
			err = mismatch(c, "frame 0x%" PRIx64 ": previous frame unreadable", f);
	}
	if (err == -EPROTO)
		return -EINVAL;
	if (err != -EINVAL)
		return err;
	c->torn++;	/* why says what went wrong */
	return 0;
}

/* One thread state of the list: its interpreter, its thread, its frames. */
static int check_thread(struct check *c, uint64_t interp, uint64_t ts, unsigned int nr)
{
	uint64_t back = 0, pthread = 0, self = 0, tid = 0, cframe = 0;

	if (rd_u64(c, ts + c->o->tstate_interp, &back) || back != interp)
		return mismatch(c, "thread state 0x%" PRIx64 " belongs to interpreter 0x%" PRIx64
				", not to 0x%" PRIx64, ts, back, interp);
	if (rd_u64(c, ts + c->o->tstate_thread_id, &pthread))
		return mismatch(c, "thread state 0x%" PRIx64 ": thread_id unreadable", ts);
	/* 0 until the new thread binds its state (3.12+) */
	if (!pthread)
		return 0;
	if (rd_u64(c, pthread, &self) || self != pthread)
		return mismatch(c, "thread state 0x%" PRIx64 ": thread_id 0x%" PRIx64
				" is not a thread pointer", ts, pthread);
	if (c->o->tstate_native_thread_id >= 0) {
		if (rd(c, ts + c->o->tstate_native_thread_id, &tid, sizeof(unsigned long)))
			return mismatch(c, "thread state 0x%" PRIx64
					": native_thread_id unreadable", ts);
		/* both are set when the thread binds its state */
		if (!tid)
			return mismatch(c, "thread state 0x%" PRIx64 ": thread_id 0x%" PRIx64
					" but no native_thread_id", ts, pthread);
		/*
		 * A child between fork and PyOS_AfterFork_Child still holds
		 * its parent's thread states: not a verdict yet.
		 */
		if (!is_task(c->pid, tid) && is_task(parent_of(c->pid), tid))
			return -EAGAIN;
		if (!is_task(c->pid, tid))
			return mismatch(c, "thread state 0x%" PRIx64 ": native_thread_id %" PRIu64
					" is no thread of the process", ts, tid);
	}
	/* 3.11 and 3.12 point a bound thread state at its root _PyCFrame at least */
	if ((c->mm == MM(11) || c->mm == MM(12)) &&
	    (rd_u64(c, ts + c->o->tstate_cframe, &cframe) || !cframe))
		return mismatch(c, "thread state 0x%" PRIx64 ": no cframe", ts);
	c->bound++;
	return nr < CHECK_FRAME_THREADS ? check_frames(c, ts) : 0;
}

/*
 * Whether Py_Initialize has finished (the main thread state exists by then,
 * and Py_Finalize clears the flag before it deletes thread states); false
 * when the layout does not say where the flag is (_Py_DebugOffsets).
 */
static bool runtime_initialized(struct check *c)
{
	int32_t v = 0;

	return c->o->runtime_initialized >= 0 &&
	       !rd(c, c->in->runtime + c->o->runtime_initialized, &v, sizeof(v)) && v == 1;
}

static int check_once(struct check *c)
{
	uint64_t interp = 0, ts = 0;
	unsigned int nr = 0;
	int err = 0;

	c->bound = c->frames = c->codes = c->lines = c->files = c->torn = 0;
	if (rd_u64(c, c->in->runtime + c->o->runtime_interp_head, &interp))
		return mismatch(c, "_PyRuntime unreadable");
	if (!interp)
		return runtime_initialized(c) ? mismatch(c, "initialized, but no interpreter") :
						-EAGAIN;
	if (rd_u64(c, interp + c->o->interp_threads_head, &ts))
		return mismatch(c, "interpreters.head 0x%" PRIx64 " unreadable", interp);
	if (!ts && runtime_initialized(c))
		return mismatch(c, "interpreter 0x%" PRIx64 " has no thread state", interp);
	for (; !err && ts && nr < CHECK_MAX_THREADS; nr++) {
		err = check_thread(c, interp, ts, nr);
		if (!err && rd_u64(c, ts + c->o->tstate_next, &ts))
			return mismatch(c, "thread state 0x%" PRIx64 ": next unreadable", ts);
	}
	if (err)
		return err;
	if (ts)
		return mismatch(c, "more than %d thread states", CHECK_MAX_THREADS);
	/*
	 * A chain torn by the running thread is rare; a wrong layout tears
	 * them all, every time (pycheck_layout looks again a while later).
	 */
	if (c->torn && c->torn >= c->frames)
		return -ESTALE;
	if (!c->bound || !c->frames)
		return -EAGAIN;		/* no thread running Python code yet */
	/*
	 * All but a frame that has just started are past their first
	 * instruction. With two frames, that one frame is half of them (a
	 * program that mostly waits, caught calling): look again later.
	 */
	if (c->lines * 2 <= c->codes && c->codes - c->lines <= 1)
		return -EAGAIN;
	if (c->lines * 2 <= c->codes)
		return mismatch(c, "%u of %u frames' instructions are on a line of their code",
				c->lines, c->codes);
	if (!c->files)
		return mismatch(c, "no code object's co_filename looks like a file name");
	return 0;
}

/*
 * Whether @addr of @pid lies in a writable mapping, as _PyRuntime does once
 * the loader has mapped libpython's data segment: until then it lies in the
 * loader's first, read-only mapping of the whole file, and reads as
 * whatever bytes of the file are there.
 */
static bool in_writable_map(int pid, uint64_t addr)
{
	char path[32], line[512], perms[8];
	uint64_t start, end;
	bool writable = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s", &start, &end, perms) != 3 ||
		    addr < start || addr >= end)
			continue;
		writable = perms[1] == 'w';
		break;
	}
	fclose(f);
	return writable;
}

int pycheck_layout(const struct py_interp *in, int pid, char *why, size_t size)
{
	struct check c = {
		.in = in, .o = &in->off, .mm = PY_MM(in->version), .pid = pid,
		.why = why, .size = size,
	};
	int err = 0, i;

	c.flag = c.mm == MM(11) ? in->off.frame_is_entry : in->off.frame_owner;
	if (!in_writable_map(pid, in->runtime))
		return -EAGAIN;
	if (!in->types.code) {
		snprintf(why, size, "no PyCode_Type symbol to check it with");
		return -EINVAL;
	}
	/*
	 * Rounds of three attempts; another round, a while later, only when
	 * the last attempt found torn chains only: a thread state or frame
	 * being made or freed as it was read (a fork child, a thread starting
	 * or ending on a loaded machine) can stay so for three attempts in a
	 * row, while a wrong layout is torn whenever it is read.
	 */
	for (i = 0; i < CHECK_ATTEMPTS * CHECK_TORN_ROUNDS; i++) {
		if (i && i % CHECK_ATTEMPTS == 0) {
			if (err != -ESTALE)
				break;
			usleep(CHECK_TORN_GAP_US);
		}
		err = check_once(&c);
		if (err != -EINVAL && err != -ESTALE)
			break;
	}
	if (err == -ESTALE)
		err = -EINVAL;	/* why says how the last chain tore */
	/*
	 * Right after the exec the loader may still be mapping libpython's
	 * segments over its first, contiguous mapping of the file, and
	 * _PyRuntime reads as whatever bytes lie there: a mismatch counts
	 * once Py_Initialize has finished.
	 */
	if (err == -EINVAL && !runtime_initialized(&c))
		err = -EAGAIN;
	return err;
}
