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
 */
#include "symbolize/unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdwfl.h>

struct unwinder {
	Dwfl *dwfl;
	int pid;
	/* the sample being unwound, valid during unwinder_run() */
	const struct sym_unwind_input *in;
	uint64_t *pcs;
	size_t max, nr;
	bool read_past_copy, bad_read, depth;
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

static bool unw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	struct unwinder *u = dwfl_arg;
	uint64_t sp = u->in->regs[SYM_REG_SP];

	if (addr >= sp && addr - sp <= u->in->stack_len &&
	    u->in->stack_len - (addr - sp) >= sizeof(*result)) {
		memcpy(result, (const char *)u->in->stack + (addr - sp), sizeof(*result));
		return true;
	}
	if (addr >= sp)
		u->read_past_copy = true;
	else
		u->bad_read = true;
	return false;
}

static bool unw_set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct unwinder *u = thread_arg;
	Dwarf_Word regs[SYM_NR_REGS];
	int i;

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

static void report_modules(struct unwinder *u, const struct unwind_module *mods, size_t nr)
{
	size_t i, j;
	int fd;

	dwfl_report_begin(u->dwfl);
	for (i = 0; i < nr; i++) {
		for (j = 0; j < i; j++)	/* a file mapped twice is one module */
			if (!strcmp(mods[j].path, mods[i].path))
				break;
		if (j < i || mods[i].fd < 0)
			continue;
		fd = fcntl(mods[i].fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			continue;
		/* like perf: an ET_DYN file is biased by start - offset */
		if (!dwfl_report_elf(u->dwfl, mods[i].path, mods[i].path, fd,
				     mods[i].start - mods[i].offset, false))
			close(fd);	/* libdwfl keeps the descriptor only on success */
	}
	dwfl_report_end(u->dwfl, NULL, NULL);
}

struct unwinder *unwinder_new(int pid, const struct unwind_module *mods, size_t nr)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->pid = pid > 0 ? pid : 1;
	u->dwfl = dwfl_begin(&unwind_callbacks);
	if (!u->dwfl) {
		free(u);
		errno = ENOMEM;
		return NULL;
	}
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
	dwfl_end(u->dwfl);
	free(u);
}

static int unw_frame(Dwfl_Frame *frame, void *arg)
{
	struct unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT;
	if (u->nr == u->max) {
		u->depth = true;
		return DWARF_CB_ABORT;
	}
	/* after the first frame, an activation is code a signal interrupted */
	u->pcs[u->nr] = u->nr && activation ? pc | SYM_PC_EXACT : pc;
	u->nr++;
	return DWARF_CB_OK;
}

int unwinder_run(struct unwinder *u, const struct sym_unwind_input *in, uint64_t *pcs,
		 size_t max, size_t *nr, enum sym_unwind_status *status)
{
	int r;

	u->in = in;
	u->pcs = pcs;
	u->max = max;
	u->nr = 0;
	u->read_past_copy = u->bad_read = u->depth = false;
	r = dwfl_getthread_frames(u->dwfl, u->pid, unw_frame, u);
	*nr = u->nr;
	/*
	 * libdwfl also ends "normally" when the return address lies past the
	 * copy. A failed read below the stack pointer is harmless when the
	 * unwind completes: it is a callee-saved register whose slot an
	 * epilogue already popped, which libdwfl then leaves undefined.
	 */
	if (r == 0 && !u->read_past_copy)
		*status = SYM_UNWIND_COMPLETE;
	else if (u->depth)
		*status = SYM_UNWIND_TRUNCATED_DEPTH;
	else if (u->nr && !dwfl_addrmodule(u->dwfl, u->pcs[u->nr - 1] - (u->nr > 1)))
		/* the frame-pointer fallback may have read garbage first: the
		 * cause is the pc in no known module (JIT, or a new dlopen) */
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
