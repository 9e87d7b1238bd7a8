/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * symbolize: addresses in, frames out.
 *
 * A symbolizer turns user-space addresses of a process and kernel addresses
 * into function names, file:line and the mapping they belong to, using libdwfl
 * for ELF/DWARF and /proc/kallsyms for the kernel. It is a library: it never
 * prints and never exits; failures come back as -errno or as frames without a
 * function name.
 *
 * Processes are snapshotted: symbolizer_snapshot() reads /proc/PID/maps at the
 * moment it is called and keeps what it needs, so addresses of a process that
 * exited afterwards still resolve (as long as its files still exist). ELF files
 * are opened once per binary (identified by device and inode) and shared by
 * every process that maps them; results are cached per binary address, so an
 * address is resolved once per binary, not once per sample.
 *
 * Everything a symbolizer returns is borrowed: valid until symbolizer_free().
 */
#ifndef LATPROF_SYMBOLIZE_H
#define LATPROF_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symbolizer;
struct sym_process;

/* One file-backed or special region of an address space. */
struct sym_mapping {
	uint64_t start;		/* first address, in the process (or kernel) */
	uint64_t limit;		/* one past the last address */
	uint64_t offset;	/* file offset of @start */
	const char *path;	/* "/usr/lib/x86_64-linux-gnu/libc.so.6", "[vdso]",
				 * "[kernel.kallsyms]", "[anon]" ... */
	const char *build_id;	/* lower-case hex GNU build-id, "" if none */
	bool kernel;		/* the kernel image or a kernel module */
};

/* One source-level frame at an address. */
struct sym_frame {
	const char *function;	/* NULL when the address has no symbol; C++ and
				 * Rust names demangled */
	const char *system_name;	/* the name as in the binary (mangled);
					 * == function when it is not mangled */
	const char *file;	/* source file, NULL without line info */
	uint32_t line;		/* 0 without line info */
	uint64_t offset;	/* address - start of function (0 if unknown) */
	bool inlined;		/* this frame was inlined into the next one */
};

/*
 * The result for one address. @frames is innermost first: frames[0] is the
 * deepest inlined function (if any), frames[nr_frames - 1] the real
 * (out-of-line) function. nr_frames >= 1; frames[0].function is NULL when
 * nothing is known, and @map is NULL when the address is in no mapping.
 */
struct sym_location {
	const struct sym_mapping *map;
	uint64_t address;		/* the address asked for */
	uint64_t rel_address;		/* address in the ELF file's own vaddr space
					 * (for MODULE+0xOFFSET display) */
	size_t nr_frames;
	const struct sym_frame *frames;
};

/* About 25 MB of resolved addresses; a profile rarely has more than 50,000. */
#define SYM_DEFAULT_MAX_CACHED 262144

struct symbolizer_opts {
	bool no_kernel;		/* don't load /proc/kallsyms (or kallsyms_path) */
	bool no_lines;		/* skip DWARF line lookups (faster) */
	const char *kallsyms_path;	/* NULL: /proc/kallsyms (and /proc/modules);
					 * else a saved copy, without module sizes */
	size_t max_cached;	/* resolved addresses kept (0: SYM_DEFAULT_MAX_CACHED);
				 * past it results are computed per call */
	/*
	 * Extra roots searched for separate debuginfo before /usr/lib/debug,
	 * like it: ROOT/.build-id/xx/yyyy.debug and the .gnu_debuglink name
	 * under ROOT/<the binary's directory>/. Absolute paths without ':';
	 * copied by symbolizer_new(). debuginfod is asked only when
	 * DEBUGINFOD_URLS is set when the symbolizer is made.
	 */
	const char *const *debug_dirs;
	size_t nr_debug_dirs;
};

/*
 * A new symbolizer, or NULL with errno set (EINVAL: a debug_dirs entry is
 * relative or has a ':'). @opts may be NULL.
 */
struct symbolizer *symbolizer_new(const struct symbolizer_opts *opts);
/* Frees everything the symbolizer returned. NULL is a no-op. */
void symbolizer_free(struct symbolizer *s);

/*
 * Read /proc/@pid/maps now and remember it. Each call makes a new snapshot
 * (call again after an exec). Only executable mappings are kept; the ELF file
 * of each is opened now (through /proc/@pid/map_files when permitted, so
 * deleted files work too) and stays open until symbolizer_free(). Files that
 * cannot be opened leave mappings without symbols, not an error. Returns the
 * snapshot (owned by @s) or NULL with errno set (ESRCH: the process is gone,
 * a zombie or in the middle of an exec, so that no executable mapping was
 * listed; EACCES, ENOMEM). A deleted file's path loses its " (deleted)".
 */
struct sym_process *symbolizer_snapshot(struct symbolizer *s, int pid);

/*
 * symbolizer_snapshot() again for a process last seen as @prev (NULL: none),
 * keeping each executable mapping of @prev that no mapping listed now
 * overlaps. Samples queued before a region was unmapped are unwound and
 * symbolized with the newest snapshot, so the code they ran must stay in it:
 * a JIT that frees its code space as the process exits, a dlclose. Where a
 * new mapping overlaps an old one, the new one wins.
 */
struct sym_process *symbolizer_snapshot_after(struct symbolizer *s, int pid,
					      const struct sym_process *prev);

/*
 * A digest of the executable mappings listed in @maps, the text of a
 * /proc/PID/maps: equal digests, same layout of code. Cannot fail.
 */
uint64_t sym_maps_digest(const char *maps);

/* sym_maps_digest() of the maps text snapshot @p was made from. */
uint64_t sym_process_maps_digest(const struct sym_process *p);

/*
 * Whether an executable mapping of snapshot @p holds user address @addr: a
 * stack that ends at an address none holds met code mapped after the
 * snapshot was read (a library the loader or dlopen mapped since). Cannot
 * fail.
 */
bool sym_process_maps_code(const struct sym_process *p, uint64_t addr);

/*
 * Executable files of snapshot @p that libdwfl refused to read (not ELF,
 * truncated, corrupt), each counted once: their addresses resolve to
 * "MODULE+0xOFFSET" and DWARF unwinding stops in them. Files refused by
 * the unwinder count once it is made (the first symbolizer_unwind() of
 * @p). Cannot fail.
 */
size_t sym_process_modules_refused(const struct sym_process *p);

/*
 * Why the perf map of snapshot @p was refused once a lookup tried it (the
 * first address in anonymous memory): -EPERM (owned by neither the process's
 * user nor root: anyone can create /tmp/perf-PID.map), -ELOOP (a symlink),
 * -EINVAL (not a regular file: a FIFO, a device), -EFBIG (over 256 MiB) or
 * the -errno of a failed read. 0 when it was read, none was written, or it
 * was not tried. Its JIT frames stay "[anon]+0xOFFSET". Cannot fail.
 */
int sym_process_perfmap_refused(const struct sym_process *p);

/*
 * Processes that hold an unwinder at once (each maps every file of its
 * process): past it, the least recently used is trimmed (sym_process_trim).
 * Each costs its process's files' unwind tables as mapped pages: 0.38 MB a
 * pyenv 3.12 process. 16, not 32: `record -a` beside 60 idle-ish ones
 * peaked at 41.3 MB, not 54.4 (36.4 beside 10). Rebuilding one costs about
 * 150 us (8 beside 10 processes took 0.15 s more CPU for 1,000 stacks),
 * and beside 60 processes sampled in turn the LRU missed on every stack
 * with 32 too: no more CPU there. Between 17 and 32 busy processes, a
 * share of their stacks now pays that rebuild (not measured).
 */
#define SYM_MAX_UNWINDERS 16

/*
 * Free what unwinding with @p built (its libdwfl session, which maps every
 * file of the process): for a snapshot a newer one replaced, or a process
 * that exited once its queued stacks are unwound. @p still symbolizes, and
 * a later symbolizer_unwind() with it builds that again. Cannot fail.
 */
void sym_process_trim(struct sym_process *p);

/*
 * sym_process_trim() for every process holding an unwinder: once the
 * recording ended and every copied stack is unwound, so that up to
 * SYM_MAX_UNWINDERS mappings of each file (libc mapped 17 times beside
 * shell loops) are gone before symbolizing loads DWARF. Cannot fail.
 */
void symbolizer_trim_unwinders(struct symbolizer *s);

/* Whether @p holds an unwinder (sym_process_trim() would free something). */
bool sym_process_has_unwinder(const struct sym_process *p);

/*
 * Resolve user address @addr of a snapshotted process. @is_return: @addr is a
 * return address (every frame of a stack but the first), so the call
 * instruction at addr - 1 is what is looked up (offsets are still reported
 * for @addr). Anonymous executable memory is mapped as "[anon]" and resolved
 * through /tmp/perf-PID.map if a JIT wrote one (read at the first such
 * lookup). Function names lose ELF symbol versions ("@@GLIBC_2.34"). @p may
 * be NULL (a process that could not be snapshotted): every address is then
 * unknown. Returns a borrowed location, the same pointer for the same (@p,
 * @addr, @is_return), valid until symbolizer_free(); once opts.max_cached
 * addresses are cached, a new address's location is valid only until the
 * next call. Never NULL except on ENOMEM (errno set).
 */
const struct sym_location *symbolizer_user(struct symbolizer *s, struct sym_process *p,
					   uint64_t addr, bool is_return);

/*
 * The same for a kernel address, via /proc/kallsyms (read at the first call),
 * without file:line. The mapping is "[kernel.kallsyms]" or "[MODULE]" with
 * kernel set; rel_address is the address itself for the kernel image and the
 * offset from the module's start for a module. If kallsyms shows no addresses
 * (kptr_restrict, no_kernel), every address is in a "[kernel.kallsyms]"
 * mapping without a function; addresses outside the kernel and its modules
 * get no mapping.
 */
const struct sym_location *symbolizer_kernel(struct symbolizer *s, uint64_t addr,
					     bool is_return);

/*
 * Free the kernel symbol table symbolizer_kernel() read (6 MB on a 6.18
 * kernel). Called once every kernel address is looked up and before user
 * symbolization loads DWARF, the two never take memory at the same time.
 * Locations returned stay valid and cached; a later lookup the cache misses
 * reads /proc/kallsyms again.
 */
void symbolizer_kernel_unload(struct symbolizer *s);

/* x86-64 DWARF register numbers: 0 rax .. 6 rbp, 7 rsp, 8-15 r8-r15, 16 rip. */
#define SYM_NR_REGS 17
#define SYM_REG_BP 6
#define SYM_REG_SP 7
#define SYM_REG_IP 16

/* Flag in an unwound pc: not a return address (x86-64 user pcs are < 2^47). */
#define SYM_PC_EXACT (1ULL << 63)

/* A user stack captured at a sample: registers + the bytes from the SP up. */
struct sym_unwind_input {
	uint64_t regs[SYM_NR_REGS];
	const void *stack;	/* stack_len bytes copied from regs[SYM_REG_SP] */
	size_t stack_len;
};

/* How an unwind ended. */
enum sym_unwind_status {
	SYM_UNWIND_COMPLETE,		/* reached the outermost frame (_start, clone) */
	SYM_UNWIND_TRUNCATED_COPY,	/* needed stack beyond the copied bytes */
	SYM_UNWIND_TRUNCATED_DEPTH,	/* more frames than the caller's array */
	SYM_UNWIND_NO_UNWIND_INFO,	/* a pc without CFI, or outside any module */
	SYM_UNWIND_BAD_READ,		/* a read below the stack pointer or garbage */
	SYM_UNWIND_NR,
};

/*
 * Unwind the user stack of @in for process snapshot @p with DWARF CFI
 * (.eh_frame, .debug_frame) through every module of the snapshot, libraries
 * loaded by dlopen included if the snapshot saw them. Fills @pcs[0..*nr) with
 * the pc of each frame, leaf first (the first is the sampled ip; the others
 * are return addresses, except frames interrupted by a signal, whose pc is
 * exact and which carry SYM_PC_EXACT: look those up with is_return false). *status says how it ended; frames found before a
 * truncation are kept. Returns 0, or -ENOMEM / -errno when no unwinder could be
 * set up for the process (then *nr is 0).
 */
int symbolizer_unwind(struct symbolizer *s, struct sym_process *p,
		      const struct sym_unwind_input *in, uint64_t *pcs, size_t max, size_t *nr,
		      enum sym_unwind_status *status);

/*
 * Format @loc's outermost frame the way folded output names it when no
 * function is known: "MODULE+0xOFFSET" (basename of the mapping, offset in the
 * file's vaddr space) or "[unknown]". Returns the number of characters that
 * would have been written, like snprintf. Cannot fail.
 */
int sym_location_fallback_name(const struct sym_location *loc, char *buf, size_t size);

/*
 * Offline use, without a process: the frames of ELF virtual address @vaddr
 * of the file at @path (as `addr2line -e PATH` takes it). The file is opened
 * once and cached like a mapped one; frames are resolved once per address.
 * loc->map is NULL. Returns NULL with errno set: ENOENT/EACCES when the file
 * cannot be opened, ENOMEM.
 */
const struct sym_location *symbolizer_file(struct symbolizer *s, const char *path,
					   uint64_t vaddr);

#endif
