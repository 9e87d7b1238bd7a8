// SPDX-License-Identifier: GPL-2.0-only
/*
 * symbolize: this test symbolizes itself. Its own functions give known names
 * and lines (including an inline chain), libc gives a shared library without
 * DWARF, a forked child and an exec'd copy that is deleted give processes
 * that exit before symbolization, and saved kallsyms files give the kernel
 * side with modules. Runs without root; parts that need a tool or a kernel
 * feature say "skip" and pass.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "symbolize/procroot.h"
#include "symbolize/symbolize.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gelf.h>

#include "src/lib/util.h"
#include "tests/unit/check.h"

#define barrier() __asm__ __volatile__("" ::: "memory")
#ifdef __clang__
#define NOIPA __attribute__((noinline))
#else
#define NOIPA __attribute__((noipa))	/* no inlining, cloning or IPA-SRA renames */
#endif

/* --- functions with known names and lines --------------------------------- */

NOIPA uint64_t get_caller_pc(void);
NOIPA uint64_t target_fn(int *line);
NOIPA uint64_t outer_fn(int *inl_line, int *call_line);

uint64_t get_caller_pc(void)
{
	uint64_t pc = (uint64_t)__builtin_return_address(0);

	barrier();
	return pc;
}

enum { TARGET_FN_LINE = __LINE__ + 1 };
uint64_t target_fn(int *line)
{
	uint64_t pc;

	pc = get_caller_pc(); *line = __LINE__;
	barrier();
	return pc;
}

static inline __attribute__((always_inline)) uint64_t inl_fn(int *line)
{
	uint64_t pc;

	pc = get_caller_pc(); *line = __LINE__;
	return pc;
}

uint64_t outer_fn(int *inl_line, int *call_line)
{
	uint64_t pc;

	pc = inl_fn(inl_line); *call_line = __LINE__;
	barrier();
	return pc;
}

/* --- helpers ---------------------------------------------------------------- */

static bool is_hex(const char *s)
{
	return *s && strspn(s, "0123456789abcdef") == strlen(s);
}

static const char *fallback(const struct sym_location *loc, char *buf, size_t size)
{
	sym_location_fallback_name(loc, buf, size);
	return buf;
}

/* The line in "FILE:LINE" or "FILE:LINE:COLUMN"; -1 if none. */
static int parse_line(char *out)
{
	char *last, *prev;

	out[strcspn(out, "\n")] = '\0';
	last = strrchr(out, ':');
	if (!last)
		return -1;
	*last = '\0';
	prev = strrchr(out, ':');
	if (prev && prev[1] && strspn(prev + 1, "0123456789") == strlen(prev + 1))
		return atoi(prev + 1);
	return strspn(last + 1, "0123456789") ? atoi(last + 1) : -1;
}

/* eu-addr2line's line for @addr in @exe (-1 if it is not installed or fails). */
static int addr2line_line(const char *exe, uint64_t addr)
{
	char cmd[PATH_MAX + 64], out[1024];
	FILE *f;
	int line = -1;

	snprintf(cmd, sizeof(cmd), "eu-addr2line -e '%s' 0x%" PRIx64 " 2>/dev/null", exe, addr);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (fgets(out, sizeof(out), f))
		line = parse_line(out);
	if (pclose(f) || line <= 0)
		line = -1;	/* "??:0": it cannot read this binary's DWARF */
	return line;
}

/* --- tests ------------------------------------------------------------------- */

static void test_fallback_format(void)
{
	struct sym_mapping lib = { .path = "/usr/lib/libfoo.so.1", .build_id = "" };
	struct sym_mapping vdso = { .path = "[vdso]", .build_id = "" };
	struct sym_location loc = { .rel_address = 0x1234 };
	char buf[64];

	CHECK_STR(fallback(&loc, buf, sizeof(buf)), "[unknown]");
	CHECK_STR(fallback(NULL, buf, sizeof(buf)), "[unknown]");
	loc.map = &lib;
	CHECK_STR(fallback(&loc, buf, sizeof(buf)), "libfoo.so.1+0x1234");
	loc.map = &vdso;
	CHECK_STR(fallback(&loc, buf, sizeof(buf)), "[vdso]+0x1234");
	/* like snprintf: truncated, but the full length comes back */
	CHECK(sym_location_fallback_name(&loc, buf, 4) == 13);
	CHECK_STR(buf, "[vd");
}

static void test_own_functions(struct symbolizer *s, struct sym_process *p, const char *exe)
{
	const struct sym_location *loc, *again;
	int line, inl_line, call_line, want;
	uint64_t pc;

	/* a function's entry: no pc-1, offset 0, line at the definition */
	loc = symbolizer_user(s, p, (uint64_t)&target_fn, false);
	CHECK(loc && loc->map && loc->nr_frames == 1);
	if (!loc || !loc->map)
		return;
	CHECK_STR(loc->frames[0].function, "target_fn");
	CHECK(loc->frames[0].offset == 0);
	CHECK(!loc->frames[0].inlined);
	CHECK(loc->frames[0].file && str_has_suffix(loc->frames[0].file, "test_symbolize.c"));
	CHECK(loc->frames[0].line == TARGET_FN_LINE || loc->frames[0].line == TARGET_FN_LINE + 1);
	CHECK_STR(loc->map->path, exe);
	CHECK(!loc->map->kernel);
	CHECK(strlen(loc->map->build_id) == 40 && is_hex(loc->map->build_id));
	want = addr2line_line(exe, loc->rel_address);
	if (want > 0)
		CHECK((int)loc->frames[0].line == want);
	else
		fprintf(stderr, "skip: eu-addr2line cross-check\n");
	again = symbolizer_user(s, p, (uint64_t)&target_fn, false);
	CHECK(again == loc);	/* cached */

	/* a return address: the call's line, the offset of the return address */
	pc = target_fn(&line);
	loc = symbolizer_user(s, p, pc, true);
	CHECK(loc && loc->nr_frames == 1 && loc->address == pc);
	if (!loc)
		return;
	CHECK_STR(loc->frames[0].function, "target_fn");
	CHECK(loc->frames[0].offset == pc - (uint64_t)&target_fn);
	CHECK((int)loc->frames[0].line == line);
	want = addr2line_line(exe, loc->rel_address - 1);
	if (want > 0)
		CHECK((int)loc->frames[0].line == want);
	/* the same address as a non-return address is another cache entry */
	CHECK(symbolizer_user(s, p, pc, false) != loc);

	/* an inline chain, innermost first */
	pc = outer_fn(&inl_line, &call_line);
	loc = symbolizer_user(s, p, pc, true);
	CHECK(loc && loc->nr_frames == 2);
	if (!loc || loc->nr_frames != 2)
		return;
	CHECK_STR(loc->frames[0].function, "inl_fn");
	CHECK(loc->frames[0].inlined);
	CHECK((int)loc->frames[0].line == inl_line);
	CHECK(loc->frames[0].file && str_has_suffix(loc->frames[0].file, "test_symbolize.c"));
	CHECK_STR(loc->frames[1].function, "outer_fn");
	CHECK(!loc->frames[1].inlined);
	CHECK((int)loc->frames[1].line == call_line);
	CHECK(loc->frames[1].offset == pc - (uint64_t)&outer_fn);
	CHECK(loc->frames[1].file && str_has_suffix(loc->frames[1].file, "test_symbolize.c"));
}

static void test_libc_and_unknown(struct symbolizer *s, struct sym_process *p, const char *exe)
{
	const struct sym_location *loc;
	char buf[64];

	/*
	 * Sanitizers interpose both ("__interceptor_qsort" in libasan), and a
	 * non-PIE executable's &qsort is its own PLT entry, which has no symbol.
	 */
	loc = symbolizer_user(s, p, (uint64_t)&qsort, false);
	CHECK(loc && loc->map);
	if (loc && loc->map && strstr(loc->map->path, "/libc.so")) {
		CHECK_STR(loc->frames[0].function, "qsort");
		CHECK(is_hex(loc->map->build_id));
	} else if (loc && loc->map && strcmp(loc->map->path, exe)) {
		CHECK(loc->frames[0].function && strstr(loc->frames[0].function, "qsort"));
	}
	/* versioned: "pthread_create@@GLIBC_2.34" in the symbol table */
	loc = symbolizer_user(s, p, (uint64_t)&pthread_create + 1, true);
	CHECK(loc && loc->map);
	if (loc && loc->map && strstr(loc->map->path, "/libc.so"))
		CHECK_STR(loc->frames[0].function, "pthread_create");

	/* no snapshot (the process was gone before it was seen) */
	loc = symbolizer_user(s, NULL, (uint64_t)&target_fn, false);
	CHECK(loc && !loc->map && !loc->frames[0].function);
	CHECK(loc == symbolizer_user(s, NULL, (uint64_t)&target_fn, false));

	/* nothing is mapped at 16 */
	loc = symbolizer_user(s, p, 16, true);
	CHECK(loc && !loc->map && loc->nr_frames == 1 && !loc->frames[0].function);
	if (loc)
		CHECK_STR(fallback(loc, buf, sizeof(buf)), "[unknown]");
}

/* Executable anonymous memory: "[anon]+0xOFFSET", or a perf-PID.map symbol. */
static void test_anon(struct symbolizer *s, uint64_t base)
{
	const struct sym_location *loc;
	struct sym_process *p;
	char path[64], buf[64];
	FILE *f;

	if (!root_open_supported()) {
		/* a live process's perf map is only read through its root */
		fprintf(stderr, "skip: perf map: no openat2\n");
		return;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "skip: cannot write %s\n", path);
		return;
	}
	fprintf(f, "%" PRIx64 " 40 old_code\n", base + 0x100);
	fprintf(f, "%" PRIx64 " 100 jitted code(int)\n", base + 0x100);	/* newer wins */
	fclose(f);
	p = symbolizer_snapshot(s, getpid());
	CHECK(p);
	if (p) {
		loc = symbolizer_user(s, p, base + 0x110, false);
		CHECK(loc && loc->map && loc->nr_frames == 1);
		if (loc && loc->map) {
			CHECK_STR(loc->map->path, "[anon]");
			CHECK_STR(loc->frames[0].function, "jitted code(int)");
			CHECK(loc->frames[0].offset == 0x10);
		}
		loc = symbolizer_user(s, p, base + 0x20, false);
		CHECK(loc && loc->map && !loc->frames[0].function);
		if (loc)
			CHECK_STR(fallback(loc, buf, sizeof(buf)), "[anon]+0x20");
	}
	unlink(path);
}

/* A file that is mapped executable but is not ELF: "NAME+0xFILEOFFSET". */
static void test_not_elf(struct symbolizer *s)
{
	char path[] = "/tmp/latprof-test-XXXXXX", want[64], buf[64];
	const struct sym_location *loc;
	struct sym_process *p;
	void *mem = MAP_FAILED;
	int fd;

	fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, 8192) ||
	    (mem = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 4096)) == MAP_FAILED) {
		fprintf(stderr, "skip: executable file mapping: %s\n", strerror(errno));
		goto out;
	}
	p = symbolizer_snapshot(s, getpid());
	CHECK(p);
	/* libdwfl refused the file: counted, once */
	CHECK(p && sym_process_modules_refused(p) == 1);
	loc = p ? symbolizer_user(s, p, (uint64_t)mem + 0x20, true) : NULL;
	CHECK(loc && loc->map && !loc->frames[0].function);
	if (loc && loc->map) {
		CHECK_STR(loc->map->path, path);
		CHECK_STR(loc->map->build_id, "");
		CHECK(loc->map->offset == 4096);
		snprintf(want, sizeof(want), "%s+0x1020", strrchr(path, '/') + 1);
		CHECK_STR(fallback(loc, buf, sizeof(buf)), want);
	}
out:
	if (mem != MAP_FAILED)
		munmap(mem, 4096);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
}

static void test_no_lines(void)
{
	struct symbolizer_opts opts = { .no_lines = true, .no_kernel = true };
	struct symbolizer *s = symbolizer_new(&opts);
	const struct sym_location *loc;
	struct sym_process *p;
	int line;
	uint64_t pc;

	CHECK(s);
	if (!s)
		return;
	p = symbolizer_snapshot(s, getpid());
	CHECK(p);
	pc = outer_fn(&line, &line);
	loc = p ? symbolizer_user(s, p, pc, true) : NULL;
	CHECK(loc && loc->nr_frames == 1);
	if (loc) {
		CHECK_STR(loc->frames[0].function, "outer_fn");
		CHECK(!loc->frames[0].file && loc->frames[0].line == 0);
	}
	symbolizer_free(s);
}

/* Find the ELF symbol @name in the in-memory vDSO image. */
static uint64_t vdso_symbol(const char *name)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	uint64_t addr = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Sym sym;
	Elf_Data *data;
	Elf *elf;
	size_t i;

	if (!eh || elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	elf = elf_memory((char *)eh, eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize);
	while (elf && !addr && (scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNSYM)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; data && i < shdr.sh_size / shdr.sh_entsize; i++) {
			if (gelf_getsym(data, i, &sym) &&
			    !strcmp(elf_strptr(elf, shdr.sh_link, sym.st_name), name))
				addr = (uint64_t)eh + sym.st_value;
		}
	}
	elf_end(elf);
	return addr;
}

static void test_vdso(struct symbolizer *s, struct sym_process *p)
{
	uint64_t addr = vdso_symbol("__vdso_clock_gettime");
	const struct sym_location *loc;

	if (!addr) {
		fprintf(stderr, "skip: no vdso\n");
		return;
	}
	loc = symbolizer_user(s, p, addr + 1, false);
	CHECK(loc && loc->map);
	if (!loc || !loc->map)
		return;
	CHECK_STR(loc->map->path, "[vdso]");
	CHECK(loc->frames[0].function && strstr(loc->frames[0].function, "clock_gettime"));
	CHECK(loc->frames[0].offset == 1);
}

/* A forked child, snapshotted while alive, symbolized after it was reaped. */
static void test_exited_child(void)
{
	struct symbolizer *s = symbolizer_new(NULL);
	const struct sym_location *loc;
	struct sym_process *p;
	int go[2], status;
	pid_t pid;
	char c;

	CHECK(s && !pipe(go));
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(go[0]);
	CHECK(pid > 0);
	p = symbolizer_snapshot(s, pid);
	CHECK(p);
	close(go[1]);		/* let it exit */
	waitpid(pid, &status, 0);
	CHECK(!symbolizer_snapshot(s, pid) && errno == ESRCH);
	CHECK(!symbolizer_snapshot(s, INT_MAX) && errno == ESRCH);
	loc = p ? symbolizer_user(s, p, (uint64_t)&target_fn, false) : NULL;
	CHECK(loc && loc->map);
	if (loc)
		CHECK_STR(loc->frames[0].function, "target_fn");
	loc = p ? symbolizer_user(s, p, (uint64_t)&get_caller_pc + 1, true) : NULL;
	CHECK(loc && loc->map);
	if (loc)
		CHECK_STR(loc->frames[0].function, "get_caller_pc");
	symbolizer_free(s);
}

static int copy_file(const char *from, int to)
{
	char *buf = NULL;
	size_t len;
	int err;

	err = read_file(from, &buf, &len);
	if (!err && write(to, buf, len) != (ssize_t)len)
		err = -EIO;
	free(buf);
	return err;
}

/*
 * A truncated copy of a library (its ELF header and part of its program
 * headers: libdwfl takes a copy cut anywhere after those) mapped executable
 * twice: libdwfl refuses it, and the snapshot counts it once, also after an unwind
 * (the unwinder is not handed a file refused already).
 */
static void test_truncated_elf(struct symbolizer *s, const char *lib)
{
	char path[] = "/tmp/latprof-test-XXXXXX";
	struct sym_unwind_input in = { 0 };
	enum sym_unwind_status status;
	void *mem[2] = { MAP_FAILED, MAP_FAILED };
	uint64_t pcs[4], stack[4] = { 0 };
	struct sym_process *p;
	char *buf = NULL;
	size_t len, nr;
	int fd, i;

	fd = mkstemp(path);
	if (fd < 0 || read_file(lib, &buf, &len) || len < 256 || write(fd, buf, 256) != 256) {
		fprintf(stderr, "skip: truncated copy of %s\n", lib);
		goto out;
	}
	for (i = 0; i < 2; i++)
		mem[i] = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	CHECK(mem[0] != MAP_FAILED && mem[1] != MAP_FAILED);
	p = symbolizer_snapshot(s, getpid());
	CHECK(p && sym_process_modules_refused(p) == 1);
	in.regs[SYM_REG_IP] = (uint64_t)mem[0] + 0x10;
	in.regs[SYM_REG_SP] = (uint64_t)stack;
	in.stack = stack;
	in.stack_len = sizeof(stack);
	if (p) {
		symbolizer_unwind(s, p, &in, pcs, 4, &nr, &status);
		CHECK(sym_process_modules_refused(p) == 1);
	}
out:
	for (i = 0; i < 2; i++)
		if (mem[i] != MAP_FAILED)
			munmap(mem[i], 4096);
	free(buf);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
}

/* The child side of test_deleted_exe: report where target_fn is, then wait. */
static int child_main(int fd)
{
	uint64_t addr = (uint64_t)&target_fn;
	char c;

	if (write(fd, &addr, sizeof(addr)) != sizeof(addr))
		return 1;
	close(fd);
	while (read(0, &c, 1) < 0 && errno == EINTR)
		;
	return 0;
}

/*
 * An exec'd copy of this binary whose file is deleted before the snapshot and
 * whose process exits before symbolization: resolved through map_files (root)
 * or /proc/PID/exe.
 */
static void test_deleted_exe(const char *self_build_id)
{
	char path[] = "/tmp/latprof-test-exe-XXXXXX", fdarg[16];
	const struct sym_location *loc = NULL;
	struct symbolizer *s = NULL;
	struct sym_process *p = NULL;
	int fd, out[2] = { -1, -1 }, in[2] = { -1, -1 };
	uint64_t addr = 0;
	pid_t pid = -1;

	fd = mkstemp(path);
	if (fd < 0 || copy_file("/proc/self/exe", fd) || fchmod(fd, 0755) || close(fd) ||
	    pipe(out) || pipe(in)) {
		fprintf(stderr, "skip: deleted executable: cannot copy\n");
		goto out;
	}
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		close(in[1]);
		close(out[0]);
		snprintf(fdarg, sizeof(fdarg), "%d", out[1]);
		execl(path, path, "--child", fdarg, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	close(in[0]);
	if (pid < 0 || read(out[0], &addr, sizeof(addr)) != sizeof(addr)) {
		fprintf(stderr, "skip: deleted executable: cannot run %s\n", path);
		goto out;
	}
	unlink(path);
	s = symbolizer_new(NULL);
	p = s ? symbolizer_snapshot(s, pid) : NULL;
	CHECK(p);
	close(in[1]);
	in[1] = -1;
	waitpid(pid, NULL, 0);
	pid = -1;
	loc = p ? symbolizer_user(s, p, addr, false) : NULL;
	CHECK(loc && loc->map);
	if (loc && loc->map) {
		CHECK_STR(loc->frames[0].function, "target_fn");
		CHECK_STR(loc->map->path, path);
		CHECK_STR(loc->map->build_id, self_build_id);
	}
out:
	if (in[1] >= 0)
		close(in[1]);
	if (out[0] >= 0)
		close(out[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	unlink(path);
	symbolizer_free(s);
}

/* A T symbol of the running kernel and every name at its address. */
static uint64_t kernel_symbol(const char *want, char names[][128], int max, int *nr)
{
	char line[512], name[128], type;
	uint64_t addr = 0, a;
	FILE *f = fopen("/proc/kallsyms", "r");

	*nr = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %127s", &a, &type, name) == 3 && a &&
		    type == 'T' && !strcmp(name, want))
			addr = a;
	}
	if (f && addr) {
		rewind(f);
		while (fgets(line, sizeof(line), f) && *nr < max) {
			if (sscanf(line, "%" SCNx64 " %c %127s", &a, &type, name) == 3 &&
			    a == addr && strchr("tTwW", type))
				strcpy(names[(*nr)++], name);
		}
	}
	if (f)
		fclose(f);
	return addr;
}

static void test_kernel_live(void)
{
	struct symbolizer *s = symbolizer_new(NULL);
	const struct sym_location *loc;
	char names[8][128];
	uint64_t addr;
	int i, nr, found = 0;

	CHECK(s);
	addr = kernel_symbol("schedule", names, 8, &nr);
	if (!s || !addr) {
		fprintf(stderr, "skip: kallsyms addresses hidden or no schedule\n");
		symbolizer_free(s);
		return;
	}
	loc = symbolizer_kernel(s, addr + 4, true);
	CHECK(loc && loc->map && loc->map->kernel && loc->frames[0].function);
	if (loc && loc->frames[0].function) {
		CHECK_STR(loc->map->path, "[kernel.kallsyms]");
		for (i = 0; i < nr; i++)
			found |= !strcmp(names[i], loc->frames[0].function);
		CHECK(found);
		CHECK(loc->frames[0].offset == 4);
		CHECK(loc->rel_address == addr + 4);
	}
	symbolizer_free(s);
}

static const char saved_kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 t startup_64\n"
	"ffffffff81000100 T __foo\n"
	"ffffffff81000100 T foo\n"
	"ffffffff81000180 D not_text\n"
	"ffffffff81000190 T __entry_text_end\n"
	"ffffffff810001a0 T __foo_text_end\n"
	"ffffffff810001a0 t after_foo_text\n"
	"ffffffff81000200 t bar\n"
	"ffffffff81000300 T _etext\n"
	"ffffffff82000000 T _sinittext\n"
	"ffffffff82000010 t init_fn\n"
	"ffffffff82000100 T _einittext\n"
	"ffffffffc0001000 t mod_fn\t[mymod]\n"
	"ffffffffc0001100 T mod_fn2\t[mymod]\n"
	"ffffffffc0001200 d mod_data\t[mymod]\n"
	"ffffffffc0002000 t bpf_prog_6deef7357e7b4530_x\t[bpf]\n";

/*
 * The same symbols out of order: aliases the other way round, the
 * modules' and BPF's reversed (sorted after the kernel's, above them) with
 * a worse alias of bar after them; then the init text below those, and
 * bar itself after its worse alias (merged into the kernel's run).
 */
static const char saved_kallsyms_shuffled[] =
	"ffffffff81000000 t startup_64\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 T foo\n"
	"ffffffff81000100 T __foo\n"
	"ffffffff81000180 D not_text\n"
	"ffffffff81000190 T __entry_text_end\n"
	"ffffffff810001a0 t after_foo_text\n"
	"ffffffff810001a0 T __foo_text_end\n"
	"ffffffff81000200 t bar\n"
	"ffffffff81000300 T _etext\n"
	"ffffffff82000000 T _sinittext\n"
	"ffffffff82000010 t init_fn\n"
	"ffffffff82000100 T _einittext\n"
	"ffffffffc0002000 t bpf_prog_6deef7357e7b4530_x\t[bpf]\n"
	"ffffffffc0001200 d mod_data\t[mymod]\n"
	"ffffffffc0001100 T mod_fn2\t[mymod]\n"
	"ffffffffc0001000 t mod_fn\t[mymod]\n"
	"ffffffff81000200 t __bar\n";

static const char saved_kallsyms_init_last[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 t startup_64\n"
	"ffffffff81000100 T __foo\n"
	"ffffffff81000100 T foo\n"
	"ffffffff81000180 D not_text\n"
	"ffffffff81000190 T __entry_text_end\n"
	"ffffffff810001a0 T __foo_text_end\n"
	"ffffffff810001a0 t after_foo_text\n"
	"ffffffff81000200 t __bar\n"
	"ffffffff81000300 T _etext\n"
	"ffffffffc0001100 T mod_fn2\t[mymod]\n"
	"ffffffffc0001000 t mod_fn\t[mymod]\n"
	"ffffffffc0001200 d mod_data\t[mymod]\n"
	"ffffffffc0002000 t bpf_prog_6deef7357e7b4530_x\t[bpf]\n"
	"ffffffff82000100 T _einittext\n"
	"ffffffff82000010 t init_fn\n"
	"ffffffff82000000 T _sinittext\n"
	"ffffffff81000200 t bar\n";

static const struct sym_location *kloc(struct symbolizer *s, uint64_t addr, bool is_return,
				       char *buf)
{
	const struct sym_location *loc = symbolizer_kernel(s, addr, is_return);

	CHECK(loc && loc->nr_frames == 1);
	if (!loc)
		return NULL;
	sym_location_fallback_name(loc, buf, 64);
	return loc;
}

static struct symbolizer *saved_kernel_symbolizer(const char *text, char *path)
{
	struct symbolizer_opts opts = { .kallsyms_path = path };
	int fd = mkstemp(path);

	if (fd < 0)
		return NULL;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		return NULL;
	}
	close(fd);
	return symbolizer_new(&opts);
}

static void test_kernel_saved(const char *text)
{
	char path[] = "/tmp/latprof-kallsyms-XXXXXX", buf[64];
	const struct sym_location *loc;
	struct symbolizer *s;

	s = saved_kernel_symbolizer(text, path);
	CHECK(s);
	if (!s)
		goto out;
	loc = kloc(s, 0xffffffff81000110, false, buf);
	if (loc) {
		CHECK_STR(loc->frames[0].function, "foo");	/* global, fewer underscores */
		CHECK(loc->frames[0].offset == 0x10);
		CHECK(loc->map && loc->map->kernel && !strcmp(loc->map->path, "[kernel.kallsyms]"));
		CHECK_STR(buf, "[kernel.kallsyms]+0xffffffff81000110");
	}
	loc = kloc(s, 0xffffffff81000100, true, buf);	/* pc-1 is in the function before */
	if (loc) {
		CHECK_STR(loc->frames[0].function, "_stext");
		CHECK(loc->frames[0].offset == 0x100);
	}
	loc = kloc(s, 0xffffffff81000188, false, buf);	/* data symbols don't end functions */
	if (loc)
		CHECK_STR(loc->frames[0].function, "foo");
	loc = kloc(s, 0xffffffff81000194, false, buf);	/* but ends of text sections do */
	if (loc)
		CHECK(loc->map && !loc->frames[0].function);
	loc = kloc(s, 0xffffffff810001a4, false, buf);	/* unless a function starts there */
	if (loc)
		CHECK_STR(loc->frames[0].function, "after_foo_text");
	loc = kloc(s, 0xffffffff81000310, false, buf);	/* after _etext: no function */
	if (loc) {
		CHECK(loc->map && !loc->frames[0].function);
		CHECK_STR(buf, "[kernel.kallsyms]+0xffffffff81000310");
	}
	loc = kloc(s, 0xffffffff82000020, false, buf);
	if (loc)
		CHECK_STR(loc->frames[0].function, "init_fn");
	loc = kloc(s, 0xffffffff82000110, false, buf);	/* after _einittext */
	if (loc)
		CHECK(!loc->map && !loc->frames[0].function && !strcmp(buf, "[unknown]"));
	loc = kloc(s, 0xffffffffc0001010, true, buf);
	if (loc) {
		CHECK_STR(loc->frames[0].function, "mod_fn");
		CHECK(loc->map && loc->map->kernel && !strcmp(loc->map->path, "[mymod]"));
		CHECK(loc->rel_address == 0x10);
	}
	loc = kloc(s, 0xffffffffc0001210, false, buf);
	if (loc)
		CHECK_STR(loc->frames[0].function, "mod_fn2");
	loc = kloc(s, 0xffffffffc0002004, false, buf);
	if (loc) {
		CHECK_STR(loc->frames[0].function, "bpf_prog_6deef7357e7b4530_x");
		CHECK(loc->map && !strcmp(loc->map->path, "[bpf]"));
	}
	loc = kloc(s, 0x1000, false, buf);	/* below every symbol */
	if (loc)
		CHECK(!loc->map && !strcmp(buf, "[unknown]"));
	CHECK(symbolizer_kernel(s, 0xffffffff81000110, false) ==
	      symbolizer_kernel(s, 0xffffffff81000110, false));
	/* unloaded: what was looked up stays (its mapping too), a miss reloads */
	loc = symbolizer_kernel(s, 0xffffffffc0001010, true);
	symbolizer_kernel_unload(s);
	symbolizer_kernel_unload(s);	/* twice: nothing loaded, nothing done */
	CHECK(symbolizer_kernel(s, 0xffffffffc0001010, true) == loc);
	if (loc)
		CHECK(loc->map && !strcmp(loc->map->path, "[mymod]") && loc->rel_address == 0x10);
	loc = kloc(s, 0xffffffff81000204, false, buf);
	if (loc) {
		CHECK_STR(loc->frames[0].function, "bar");
		CHECK(loc->map && !strcmp(loc->map->path, "[kernel.kallsyms]"));
	}
out:
	unlink(path);
	symbolizer_free(s);
}

/* kptr_restrict shows zeros: every address is "[kernel.kallsyms]+0xADDR". */
static void test_kernel_hidden(void)
{
	char path[] = "/tmp/latprof-kallsyms-XXXXXX", buf[64];
	struct symbolizer_opts opts = { .no_kernel = true };
	const struct sym_location *loc;
	struct symbolizer *s;

	s = saved_kernel_symbolizer("0000000000000000 T _stext\n0000000000000000 T foo\n", path);
	CHECK(s);
	loc = s ? kloc(s, 0xffffffff81000110, true, buf) : NULL;
	if (loc) {
		CHECK(loc->map && loc->map->kernel && !loc->frames[0].function);
		CHECK_STR(buf, "[kernel.kallsyms]+0xffffffff81000110");
	}
	unlink(path);
	symbolizer_free(s);

	s = symbolizer_new(&opts);
	CHECK(s);
	loc = s ? kloc(s, 0xffffffff81000110, false, buf) : NULL;
	if (loc)
		CHECK(loc->map && !loc->frames[0].function);
	symbolizer_free(s);
}

int main(int argc, char **argv)
{
	struct symbolizer *s;
	struct sym_process *p;
	const struct sym_location *loc;
	char exe[PATH_MAX];
	ssize_t n;
	void *anon;

	if (argc == 3 && !strcmp(argv[1], "--child"))
		return child_main(atoi(argv[2]));
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return 77;
	exe[n] = '\0';

	test_fallback_format();

	anon = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	s = symbolizer_new(NULL);
	CHECK(s);
	if (!s)
		return check_exit();
	p = symbolizer_snapshot(s, getpid());
	CHECK(p);
	if (p) {
		/* every file of a normal process is read */
		CHECK(sym_process_modules_refused(p) == 0);
		test_own_functions(s, p, exe);
		test_libc_and_unknown(s, p, exe);
		test_vdso(s, p);
	}
	if (anon != MAP_FAILED)
		test_anon(s, (uint64_t)anon);
	else
		fprintf(stderr, "skip: executable anonymous memory\n");
	test_not_elf(s);
	test_truncated_elf(s, "/usr/lib/x86_64-linux-gnu/libz.so.1");
	test_no_lines();
	loc = p ? symbolizer_user(s, p, (uint64_t)&target_fn, false) : NULL;
	test_exited_child();
	test_deleted_exe(loc && loc->map ? loc->map->build_id : "");
	test_kernel_live();
	test_kernel_saved(saved_kallsyms);
	test_kernel_saved(saved_kallsyms_shuffled);
	test_kernel_saved(saved_kallsyms_init_last);
	test_kernel_hidden();
	symbolizer_free(s);
	if (anon != MAP_FAILED)
		munmap(anon, 4096);
	return check_exit();
}
