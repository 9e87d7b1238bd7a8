// SPDX-License-Identifier: GPL-2.0-only
/*
 * DWARF unwinding of copied user stacks with libdwfl. One Dwfl per process
 * snapshot holds its executable mappings at their load addresses and is
 * attached once with callbacks that read registers and memory from the
 * sample being unwound (u->in), so libdwfl's CFI caches live as long as the
 * snapshot instead of one sample (perf sets a Dwfl up per sample).
 *
 * Only .eh_frame (and .debug_frame in the file itself) is used: separate
 * debuginfo is not looked up for unwinding, it costs a file search per
 * process and .eh_frame is what the ABI guarantees.
 *
 * Code without CFI (JIT code in anonymous memory, Python's perf trampolines)
 * is passed with a checked frame-pointer or thin-frame step of our own, after
 * which libdwfl resumes from the recovered registers: libdwfl's own fallback
 * trusts %rbp blindly and cannot take a frame that keeps no frame pointer.
 * Nothing here reads the process's memory but the stack copy; the code bytes
 * that confirm a return address come from the module files, and the
 * executable mappings from /proc/PID/maps, read once per snapshot.
 */
#include "symbolize/unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "src/lib/util.h"

/* An executable mapping [start, limit) of the process. */
struct unw_range {
	uint64_t start, limit;
	bool jit;		/* anonymous or memfd: code generated at run time */
	bool no_module;		/* a file's code libdwfl has no module for: a
				 * second copy of a file at another bias (node
				 * remaps its hot .text to huge pages), or one
				 * libdwfl refused; stepped like JIT code */
};

/*
 * What a step of ours reads of a frame, or recovers of its caller: the
 * other registers are where that frame saved them, which nothing tells.
 */
struct unw_regs {
	uint64_t ip, sp, bp;
	bool has_sp, has_bp;	/* libdwfl may not know them */
	bool at_call;		/* @ip is a return address, the frame sits at a
				 * call; else it is the leaf or was interrupted
				 * by a signal, at any instruction */
};

struct unwinder {
	Dwfl *dwfl;
	int pid;		/* the Dwfl's process and thread: 1 without one */
	struct { struct unw_range *items; size_t nr, alloc; } exec;	/* x mappings */
	size_t nr_refused;	/* modules dwfl_report_elf did not take */
	/* the sample being unwound, valid during unwinder_run() */
	const struct sym_unwind_input *in;
	uint64_t *pcs;
	size_t max, nr;
	bool read_past_copy, bad_read, depth;
	/* one libdwfl walk: from the sample's registers or, resumed, from @resume */
	bool resumed;
	struct unw_regs resume;
	size_t run_nr;		/* frames of this walk */
	struct unw_regs last;	/* the last frame seen */
	bool no_cfi;		/* the walk ended at @last, which has no CFI */
};

static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	return -1;
}

static const Dwfl_Callbacks unwind_callbacks = {
	.find_debuginfo = no_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static pid_t unw_next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	struct unwinder *u = dwfl_arg;

	if (*thread_argp)
		return 0;	/* one thread: the one whose stack we copied */
	*thread_argp = u;
	return u->pid;
}

/* Read the word at @addr from the stack copy; false if it lies outside. */
static bool unw_read(const struct unwinder *u, uint64_t addr, uint64_t *val)
{
	uint64_t sp = u->in->regs[SYM_REG_SP];

	if (addr < sp || addr - sp > u->in->stack_len ||
	    u->in->stack_len - (addr - sp) < sizeof(*val))
		return false;
	memcpy(val, (const char *)u->in->stack + (addr - sp), sizeof(*val));
	return true;
}

static bool unw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	struct unwinder *u = dwfl_arg;
	uint64_t val;

	if (unw_read(u, addr, &val)) {
		*result = val;
		return true;
	}
	if (addr >= u->in->regs[SYM_REG_SP])
		u->read_past_copy = true;
	else
		u->bad_read = true;
	return false;
}

/*
 * A resumed walk starts in the caller of a frame without CFI, at a return
 * address. libdwfl looks the first frame's CFI up at its pc itself, not at
 * pc - 1 as for a return address, so it is given the call's last byte: after
 * a call to a noreturn function the return address is already in the next
 * function. unw_frame() reports the return address.
 */
static bool unw_set_resumed_registers(Dwfl_Thread *thread, const struct unw_regs *r)
{
	Dwarf_Word sp = r->sp, bp = r->bp;

	if (!dwfl_thread_state_registers(thread, SYM_REG_SP, 1, &sp) ||
	    (r->has_bp && !dwfl_thread_state_registers(thread, SYM_REG_BP, 1, &bp)))
		return false;
	dwfl_thread_state_register_pc(thread, r->ip - 1);
	return true;
}

static bool unw_set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct unwinder *u = thread_arg;
	Dwarf_Word regs[SYM_NR_REGS];
	int i;

	if (u->resumed)
		return unw_set_resumed_registers(thread, &u->resume);
	for (i = 0; i < SYM_NR_REGS; i++)
		regs[i] = u->in->regs[i];
	dwfl_thread_state_register_pc(thread, u->in->regs[SYM_REG_IP]);
	return dwfl_thread_state_registers(thread, 0, SYM_NR_REGS, regs);
}

static const Dwfl_Thread_Callbacks unwind_thread_callbacks = {
	.next_thread = unw_next_thread,
	.memory_read = unw_memory_read,
	.set_initial_registers = unw_set_initial_registers,
};

/*
 * Report each file once, at the bias of its first mapping (its segments
 * share it). u->exec.items[i] is mods[i]'s range: a mapping of a reported
 * file at another bias, or of a file libdwfl refused, is marked no_module.
 */
static void report_modules(struct unwinder *u, const struct unwind_module *mods, size_t nr)
{
	size_t i, j;
	int fd;

	dwfl_report_begin(u->dwfl);
	for (i = 0; i < nr; i++) {
		if (mods[i].fd < 0)
			continue;
		for (j = 0; j < i; j++)	/* a file mapped twice is one module */
			if (mods[j].fd >= 0 && !strcmp(mods[j].path, mods[i].path))
				break;
		if (j < i) {
			/* the same file elsewhere: libdwfl cannot hold two copies */
			if (mods[j].start - mods[j].offset != mods[i].start - mods[i].offset ||
			    u->exec.items[j].no_module)
				u->exec.items[i].no_module = true;
			continue;
		}
		fd = fcntl(mods[i].fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0) {
			u->nr_refused++;
			u->exec.items[i].no_module = true;
			continue;
		}
		/* like perf: an ET_DYN file is biased by start - offset */
		if (!dwfl_report_elf(u->dwfl, mods[i].path, mods[i].path, fd,
				     mods[i].start - mods[i].offset, false)) {
			close(fd);	/* libdwfl keeps the descriptor only on success */
			u->nr_refused++;
			u->exec.items[i].no_module = true;
		}
	}
	dwfl_report_end(u->dwfl, NULL, NULL);
}

struct unwinder *unwinder_new(int pid, const struct unwind_module *mods, size_t nr)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	size_t i;

	if (!u)
		return NULL;
	u->pid = pid > 0 ? pid : 1;
	u->dwfl = dwfl_begin(&unwind_callbacks);
	if (!u->dwfl || array_grow(&u->exec, nr)) {
		unwinder_free(u);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < nr; i++)
		u->exec.items[u->exec.nr++] = (struct unw_range){
			.start = mods[i].start, .limit = mods[i].limit, .jit = mods[i].jit,
		};
	report_modules(u, mods, nr);
	if (!dwfl_attach_state(u->dwfl, NULL, u->pid, &unwind_thread_callbacks, u)) {
		unwinder_free(u);
		errno = ENOEXEC;	/* no module libdwfl could take the machine from */
		return NULL;
	}
	return u;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	if (u->dwfl)
		dwfl_end(u->dwfl);
	free(u->exec.items);
	free(u);
}

size_t unwinder_nr_refused(const struct unwinder *u)
{
	return u->nr_refused;
}

/* The executable mapping holding @addr, or NULL (maps lists them sorted). */
static const struct unw_range *unw_exec_mapping(struct unwinder *u, uint64_t addr)
{
	size_t lo = 0, hi = u->exec.nr, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (addr < u->exec.items[mid].start)
			hi = mid;
		else if (addr >= u->exec.items[mid].limit)
			lo = mid + 1;
		else
			return &u->exec.items[mid];
	}
	return NULL;
}

/*
 * Length of an x86-64 memory or register operand from its ModRM byte @m on:
 * ModRM, SIB and displacement. @n bytes are readable from @m. 0 if @n is too
 * short to tell.
 */
static size_t modrm_len(const unsigned char *m, size_t n)
{
	unsigned int mod = m[0] >> 6, rm = m[0] & 7;
	size_t len = 1;

	if (mod == 3)
		return 1;
	if (rm == 4) {			/* a SIB byte follows */
		if (n < 2)
			return 0;
		len++;
		if (mod == 0 && (m[1] & 7) == 5)
			len += 4;	/* no base: disp32 */
	} else if (mod == 0 && rm == 5) {
		len += 4;		/* %rip + disp32 */
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return len;
}

/* The instruction a return address follows. */
enum unw_call {
	UNW_CALL_NONE,		/* not a call: not a return address */
	UNW_CALL_UNKNOWN,	/* in executable memory we have no bytes of (JIT) */
	UNW_CALL_INDIRECT,	/* call *%reg, call *mem: ff /2 */
	UNW_CALL_DIRECT,	/* call rel32: e8 */
};

/*
 * Which call ends at @end, of which @avail bytes before are readable? REX
 * and other prefixes before an ff /2 do not change where it ends. An
 * indirect call is preferred when both encodings fit, since it names no
 * target to be judged by. Data that merely points into code (a function
 * pointer, a jump table) is rarely preceded by either.
 */
static enum unw_call code_call_before(const unsigned char *end, size_t avail, int32_t *rel32)
{
	size_t n;

	for (n = 2; n <= 7 && n <= avail; n++)
		if (end[-n] == 0xff && ((end[-n + 1] >> 3) & 7) == 2 &&
		    modrm_len(end - n + 1, n - 1) == n - 1)
			return UNW_CALL_INDIRECT;
	if (avail >= 5 && end[-5] == 0xe8) {
		memcpy(rel32, end - 4, sizeof(*rel32));
		return UNW_CALL_DIRECT;
	}
	return UNW_CALL_NONE;
}

/* The call before @ra, inside module @mod, read from the module's file. */
static enum unw_call module_call_before(Dwfl_Module *mod, uint64_t ra, uint64_t *target)
{
	Dwarf_Addr off = ra - 1, bias;
	Elf_Scn *scn = dwfl_module_address_section(mod, &off, &bias);
	Elf_Data *data = NULL;
	enum unw_call call;
	int32_t rel32;
	GElf_Shdr shdr;

	/* a module spans its data too: code is in an executable section */
	if (scn && gelf_getshdr(scn, &shdr) && (shdr.sh_flags & SHF_EXECINSTR))
		data = elf_getdata(scn, NULL);
	/* off is now the offset of the call's last byte in its section */
	if (!data || !data->d_buf || off >= data->d_size)
		return UNW_CALL_NONE;
	call = code_call_before((const unsigned char *)data->d_buf + off + 1, off + 1, &rel32);
	if (call == UNW_CALL_DIRECT)
		*target = ra + rel32;
	return call;
}

/*
 * Can @ra be the return address of a frame, and after which call? Inside a
 * module it must follow a call instruction; elsewhere (JIT code, whose bytes
 * we do not have) it must lie in an executable mapping. *@target is set for
 * a direct call.
 */
static enum unw_call unw_call_before(struct unwinder *u, uint64_t ra, uint64_t *target)
{
	Dwfl_Module *mod;

	if (ra < 4096 || ra >= 1ULL << 56)
		return UNW_CALL_NONE;
	mod = dwfl_addrmodule(u->dwfl, ra - 1);
	if (mod)
		return module_call_before(mod, ra, target);
	return unw_exec_mapping(u, ra - 1) ? UNW_CALL_UNKNOWN : UNW_CALL_NONE;
}

static bool unw_is_return_address(struct unwinder *u, uint64_t ra)
{
	uint64_t target;

	return unw_call_before(u, ra, &target) != UNW_CALL_NONE;
}

/* Does libdwfl have CFI for @pc (already pc - 1 for a return address)? */
static bool unw_has_cfi(struct unwinder *u, Dwarf_Addr pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(u->dwfl, pc);
	Dwarf_CFI *cfis[2];
	Dwarf_Frame *frame;
	Dwarf_Addr bias[2];
	int i;

	if (!mod)
		return false;
	cfis[0] = dwfl_module_eh_cfi(mod, &bias[0]);
	cfis[1] = dwfl_module_dwarf_cfi(mod, &bias[1]);
	for (i = 0; i < 2; i++) {
		if (cfis[i] && !dwarf_cfi_addrframe(cfis[i], pc - bias[i], &frame)) {
			free(frame);
			return true;
		}
	}
	return false;
}

/*
 * The caller of frame @f when %rbp is @f's frame pointer: [rbp] holds the
 * caller's rbp, [rbp + 8] the return address. %rbp must lie in the copy, at
 * or above the frame's sp (a frame pointer points into its own frame),
 * 8-aligned, and the return address must be one.
 */
static bool unw_step_fp(struct unwinder *u, const struct unw_regs *f, struct unw_regs *next)
{
	uint64_t saved_fp, ra;

	if (f->bp < f->sp || f->bp % 8 || !unw_read(u, f->bp, &saved_fp) ||
	    !unw_read(u, f->bp + 8, &ra) || !unw_is_return_address(u, ra))
		return false;
	*next = (struct unw_regs){
		.ip = ra, .sp = f->bp + 16, .bp = saved_fp, .has_sp = true, .has_bp = true,
		.at_call = true,
	};
	return true;
}

/*
 * The caller of frame @f, stopped at a call, when @f keeps no frame pointer:
 * a thin frame of one word under the return address, as Python's perf
 * trampolines (3.12, 3.13: sub $8,%rsp; call *%rcx; add $8,%rsp; ret) build.
 * A call keeps %rsp 16-aligned, so the slot can only be 16 bytes up, and
 * %rbp passes through unchanged. Without a frame pointer to vouch for the
 * frame, the word there must return into native code with CFI, after a call
 * through a pointer (how JIT code is entered: a direct call cannot reach
 * it); anything else is a spilled value, and the walk stops.
 */
static bool unw_step_thin(struct unwinder *u, const struct unw_regs *f, struct unw_regs *next)
{
	uint64_t ra, target;

	if (f->sp % 16 || !unw_read(u, f->sp + 8, &ra) ||
	    unw_call_before(u, ra, &target) != UNW_CALL_INDIRECT || !unw_has_cfi(u, ra - 1))
		return false;
	*next = (struct unw_regs){
		.ip = ra, .sp = f->sp + 16, .bp = f->bp, .has_sp = true, .has_bp = f->has_bp,
		.at_call = true,
	};
	return true;
}

/*
 * A leaf (or a frame a signal interrupted) may be at any instruction. Past
 * its prologue, %rbp is its frame pointer; before `mov %rsp,%rbp` it is
 * still the caller's, and a frame-pointer step would skip the caller. The
 * top of the stack tells those apart: the caller's rbp just pushed (before
 * `mov`), or the return address (before `push %rbp`, or after the
 * epilogue's pop). A frameless leaf with locals looks past its prologue; no
 * unwinder without its code can tell, and its caller is then skipped.
 */
static bool unw_leaf_past_prologue(struct unwinder *u, const struct unw_regs *f)
{
	uint64_t top, target;

	if (!unw_read(u, f->sp, &top) || top == f->bp)
		return false;
	switch (unw_call_before(u, top, &target)) {
	case UNW_CALL_NONE:
		return true;
	case UNW_CALL_DIRECT:
		/*
		 * Return addresses of earlier calls linger in a frame's slots
		 * (V8's optimized loops keep one on top). A direct call into a
		 * module did not enter code outside any module, bar a tail
		 * jump, so such a one is stale.
		 */
		return !dwfl_addrmodule(u->dwfl, f->ip) && dwfl_addrmodule(u->dwfl, target);
	default:
		return false;
	}
}

/*
 * Step from @f, a frame whose code has no CFI, to its caller. Outside any
 * module that code must be JIT code or a mapping of a file libdwfl has no
 * module for (no_module): any other file there is a library the snapshot
 * missed, which the caller's next snapshot will unwind with its CFI. At a
 * call, a frame whose rbp points into the stack above it is taken as a
 * frame-pointer frame (JIT code, Python >= 3.14 trampolines) and nothing
 * else; one whose rbp does not, as a thin frame. A leaf gets the
 * frame-pointer step only past its prologue, never the thin one: where its
 * slot is, is unknown.
 */
static bool unw_step_no_cfi(struct unwinder *u, const struct unw_regs *f, struct unw_regs *next)
{
	const struct unw_range *m;
	uint64_t word;
	bool fp_in_stack;

	if (!f->has_sp)
		return false;
	if (!dwfl_addrmodule(u->dwfl, f->ip - f->at_call)) {
		m = unw_exec_mapping(u, f->ip - f->at_call);
		if (!m || !(m->jit || m->no_module))
			return false;
	}
	fp_in_stack = f->has_bp && f->bp >= f->sp && unw_read(u, f->bp, &word);
	if (!f->at_call)
		return fp_in_stack && unw_leaf_past_prologue(u, f) && unw_step_fp(u, f, next);
	if (fp_in_stack)
		return unw_step_fp(u, f, next);
	return unw_step_thin(u, f, next);
}

/* Keep @frame's registers in u->last, for a step of our own from it. */
static void unw_keep_regs(struct unwinder *u, Dwfl_Frame *frame, Dwarf_Addr pc, bool at_call)
{
	struct unw_regs *r = &u->last;
	Dwarf_Word sp, bp;

	r->has_sp = dwfl_frame_reg(frame, SYM_REG_SP, &sp) == 0;
	r->has_bp = dwfl_frame_reg(frame, SYM_REG_BP, &bp) == 0;
	r->sp = r->has_sp ? sp : 0;
	r->bp = r->has_bp ? bp : 0;
	r->ip = pc;
	r->at_call = at_call;
}

/*
 * Is @frame, at @pc, the caller at a call (its pc a return address)? The
 * leaf is not, and neither is a frame a signal interrupted (libdwfl calls
 * both activations); the first frame of a resumed walk is, though libdwfl
 * calls it initial. Asking libdwfl unwinds the frame once, which in code
 * without CFI means its frame-pointer guess and reads that say nothing about
 * the copy: the read flags are put back.
 */
static bool unw_frame_at_call(struct unwinder *u, Dwfl_Frame *frame, bool *ok)
{
	bool past = u->read_past_copy, bad = u->bad_read, activation;
	Dwarf_Addr pc;

	*ok = true;
	if (u->run_nr == 0)
		return u->resumed;
	if (!dwfl_frame_pc(frame, &pc, &activation)) {
		*ok = false;
		return false;
	}
	if (!dwfl_addrmodule(u->dwfl, activation ? pc : pc - 1)) {
		u->read_past_copy = past;
		u->bad_read = bad;
	}
	return !activation;
}

static int unw_frame(Dwfl_Frame *frame, void *arg)
{
	struct unwinder *u = arg;
	Dwarf_Addr pc;
	bool at_call, ok;

	if (!dwfl_frame_pc(frame, &pc, NULL))
		return DWARF_CB_ABORT;
	at_call = unw_frame_at_call(u, frame, &ok);
	if (!ok)
		return DWARF_CB_ABORT;
	if (u->nr == u->max) {
		u->depth = true;
		return DWARF_CB_ABORT;
	}
	if (u->resumed && u->run_nr == 0)
		pc++;	/* see unw_set_resumed_registers() */
	/* past the first frame, a pc that is no return address was interrupted: exact */
	u->pcs[u->nr] = u->nr && !at_call ? pc | SYM_PC_EXACT : pc;
	u->nr++;
	u->run_nr++;
	unw_keep_regs(u, frame, pc, at_call);
	/*
	 * In no module there is no CFI, and libdwfl would go on with a frame
	 * pointer it does not check: stop and step with ours instead.
	 */
	if (!dwfl_addrmodule(u->dwfl, at_call ? pc - 1 : pc)) {
		u->no_cfi = true;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

/*
 * Bytes from a module's ELF entry point that its outermost code may span:
 * the dynamic loader's _start and _dl_start_user (RTLD_START, 61 bytes in
 * glibc 2.36) have no CFI, and every stack taken while ld.so maps the
 * program or runs the libraries' constructors ends there.
 */
#define UNW_ENTRY_CODE 64

/*
 * Is @pc (a pc - at_call address) in the start-up code at its module's entry
 * point, where a walk that finds no CFI has reached the outermost frame?
 */
static bool unw_at_entry(struct unwinder *u, Dwarf_Addr pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(u->dwfl, pc);
	GElf_Ehdr ehdr;
	Dwarf_Addr bias;
	Elf *elf;

	if (!mod || !(elf = dwfl_module_getelf(mod, &bias)) || !gelf_getehdr(elf, &ehdr) ||
	    !ehdr.e_entry)
		return false;
	return pc >= ehdr.e_entry + bias && pc - (ehdr.e_entry + bias) < UNW_ENTRY_CODE;
}

/*
 * One libdwfl walk from the sample's registers or from u->resume. Returns
 * dwfl_getthread_frames()'s result; u->no_cfi says the walk ended at a frame
 * without CFI (u->last).
 */
static int unw_walk(struct unwinder *u)
{
	int r;

	u->run_nr = 0;
	u->no_cfi = false;
	u->read_past_copy = u->bad_read = false;
	r = dwfl_getthread_frames(u->dwfl, u->pid, unw_frame, u);
	/*
	 * libdwfl gave up inside a module, its own frame-pointer guess failed
	 * too: if the pc has no CFI, our step may still do.
	 */
	if (r < 0 && !u->depth && !u->no_cfi && u->run_nr &&
	    !unw_has_cfi(u, u->last.ip - u->last.at_call))
		u->no_cfi = true;
	return r;
}

int unwinder_run(struct unwinder *u, const struct sym_unwind_input *in, uint64_t *pcs,
		 size_t max, size_t *nr, enum sym_unwind_status *status)
{
	int r;

	u->in = in;
	u->pcs = pcs;
	u->max = max;
	u->nr = 0;
	u->depth = u->resumed = false;
	r = unw_walk(u);
	/* a resumed walk records its first frame at least: u->max ends this */
	while (u->no_cfi && !u->depth && unw_step_no_cfi(u, &u->last, &u->resume)) {
		u->resumed = true;
		r = unw_walk(u);
	}
	if (u->no_cfi && !u->depth && unw_at_entry(u, u->last.ip - u->last.at_call)) {
		u->no_cfi = false;	/* the outermost frame */
		r = 0;
	}
	*nr = u->nr;
	/*
	 * libdwfl also ends "normally" when the return address lies past the
	 * copy. A failed read below the stack pointer is harmless when the
	 * unwind completes: it is a callee-saved register whose slot an
	 * epilogue already popped, which libdwfl then leaves undefined.
	 */
	if (r == 0 && !u->read_past_copy && !u->no_cfi)
		*status = SYM_UNWIND_COMPLETE;
	else if (u->depth)
		*status = SYM_UNWIND_TRUNCATED_DEPTH;
	else if (u->no_cfi)
		/* a frame without CFI that no checked step could pass */
		*status = SYM_UNWIND_NO_UNWIND_INFO;
	else if (u->read_past_copy)
		*status = SYM_UNWIND_TRUNCATED_COPY;
	else if (u->bad_read)
		*status = SYM_UNWIND_BAD_READ;
	else
		*status = SYM_UNWIND_NO_UNWIND_INFO;
	u->in = NULL;
	return 0;
}
