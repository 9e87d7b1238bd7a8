// SPDX-License-Identifier: GPL-2.0-only
/*
 * ELF binaries through libdwfl. Each binary gets its own Dwfl session holding
 * one module reported at base 0 with add_p_vaddr, so module addresses are the
 * file's own virtual addresses (plus a bias we still apply, should libdwfl
 * ever choose one). The session keeps the file descriptor open, which is what
 * lets a process that exited, or a file that was deleted, still be resolved.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* memfd_create */
#endif
#include "symbolize/binary.h"
#include "symbolize/debuginfo.h"
#include "symbolize/demangle.h"
#include "symbolize/scopes.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "src/lib/strtab.h"
#include "src/lib/hashmap.h"
#include "src/lib/util.h"

/* A function symbol, in module addresses. */
struct binary_sym {
	uint64_t start;
	uint64_t end;		/* start + size, or the section's end if sizeless */
	const char *name;	/* in libdwfl's copy of the string table */
	uint32_t rank;		/* alias preference */
	bool sized;
};

/* An address range of a compile unit, for binaries without .debug_aranges. */
struct binary_cu {
	uint64_t low, high;	/* DWARF addresses */
	Dwarf_Die die;
};

/* A PT_LOAD segment. */
struct binary_seg {
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
	bool exec;
};

struct binary {
	int fd;			/* our own descriptor of the file, -1 if none */
	Dwfl *dwfl;
	Dwfl_Module *mod;	/* NULL: not an ELF file libdwfl can read */
	GElf_Addr bias;
	const char *build_id;
	uint64_t vdso_size;
	struct { struct binary_seg *items; size_t nr, alloc; } segs;
	struct { struct binary_sym *items; size_t nr, alloc; } syms;	/* by start */
	bool syms_loaded;
	struct { struct binary_cu *items; size_t nr, alloc; } cus;	/* by low */
	Dwarf_Addr cu_bias;
	bool cus_loaded;
	struct hashmap scopes;	/* (NULL, CU DIE offset, 0) -> struct scope_index */
	struct { struct scope_index **items; size_t nr, alloc; } scope_list;
};

static int binary_read_segments(struct binary *b, Elf *elf)
{
	struct binary_seg *seg;
	GElf_Phdr mem, *ph;
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return 0;	/* no program headers: nothing translates */
	for (i = 0; i < n; i++) {
		ph = gelf_getphdr(elf, i, &mem);
		if (!ph || ph->p_type != PT_LOAD)
			continue;
		if (array_grow(&b->segs, b->segs.nr + 1))
			return -ENOMEM;
		seg = &b->segs.items[b->segs.nr++];
		seg->offset = ph->p_offset;
		seg->vaddr = ph->p_vaddr;
		seg->filesz = ph->p_filesz;
		seg->exec = ph->p_flags & PF_X;
	}
	return 0;
}

static const char *hex_intern(struct strtab *strs, const unsigned char *bits, int len)
{
	char buf[2 * 64 + 1];

	/* GNU build-ids are 20 bytes; never overflow */
	hex_encode(bits, len > 64 ? 64 : len, buf, sizeof(buf));
	return strtab_intern(strs, buf);
}

static int binary_report(struct binary *b, int fd, const char *path,
			 const struct debuginfo *di, struct strtab *strs)
{
	const unsigned char *bits;
	const char *name = strrchr(path, '/');
	GElf_Addr vaddr;
	Elf *elf;
	int len;

	b->dwfl = dwfl_begin(debuginfo_callbacks(di));
	if (!b->dwfl) {
		close(fd);
		return -ENOMEM;
	}
	/* the unwinder reports the same file again, at its load address */
	b->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	b->mod = dwfl_report_elf(b->dwfl, name ? name + 1 : path, path, fd, 0, true);
	if (!b->mod) {
		close(fd);	/* libdwfl only takes the descriptor on success */
		return 0;
	}
	dwfl_report_end(b->dwfl, NULL, NULL);
	debuginfo_attach(di, b->mod);
	elf = dwfl_module_getelf(b->mod, &b->bias);
	if (!elf) {
		b->mod = NULL;
		return 0;
	}
	len = dwfl_module_build_id(b->mod, &bits, &vaddr);
	if (len > 0) {
		b->build_id = hex_intern(strs, bits, len);
		if (!b->build_id)
			return -ENOMEM;
	}
	return binary_read_segments(b, elf);
}

struct binary *binary_new(int fd, const char *path, const struct debuginfo *di,
			  struct strtab *strs)
{
	struct binary *b = calloc(1, sizeof(*b));
	int err;

	if (!b) {
		close(fd);
		return NULL;
	}
	b->build_id = "";
	b->fd = -1;
	err = binary_report(b, fd, path, di, strs);
	if (err) {
		binary_free(b);
		errno = -err;
		return NULL;
	}
	return b;
}

/* Bytes of the ELF image at @ehdr: program segments and section headers. */
static uint64_t elf_image_size(const ElfW(Ehdr) *eh)
{
	const ElfW(Phdr) *ph = (const void *)((const char *)eh + eh->e_phoff);
	uint64_t size = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
	int i;

	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > size)
			size = ph[i].p_offset + ph[i].p_filesz;
	}
	return size;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

struct binary *binary_new_vdso(const struct debuginfo *di, struct strtab *strs)
{
	const ElfW(Ehdr) *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	uint64_t size, page = sysconf(_SC_PAGESIZE);
	struct binary *b;
	int fd, err;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG)) {
		errno = ENOENT;
		return NULL;
	}
	size = elf_image_size(eh);
	/*
	 * libdwfl wants a file descriptor, and a memfd copy of the image is one
	 * that no other process can change or delete.
	 */
	fd = memfd_create("latprof-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	err = write_all(fd, eh, size);
	if (err) {
		close(fd);
		errno = -err;
		return NULL;
	}
	b = binary_new(fd, "[vdso]", di, strs);
	if (b)
		b->vdso_size = (size + page - 1) / page * page;
	return b;
}

void binary_free(struct binary *b)
{
	if (!b)
		return;
	if (b->dwfl)
		dwfl_end(b->dwfl);
	if (b->fd >= 0)
		close(b->fd);
	free(b->segs.items);
	free(b->syms.items);
	free(b->cus.items);
	while (b->scope_list.nr)
		scope_index_free(b->scope_list.items[--b->scope_list.nr]);
	free(b->scope_list.items);
	hashmap_release(&b->scopes);
	free(b);
}

int binary_fd(const struct binary *b)
{
	return b->fd;
}

bool binary_refused(const struct binary *b)
{
	return !b->mod;
}

const char *binary_build_id(const struct binary *b)
{
	return b->build_id;
}

uint64_t binary_vdso_size(const struct binary *b)
{
	return b->vdso_size;
}

bool binary_file_to_vaddr(const struct binary *b, uint64_t file_offset, uint64_t *vaddr)
{
	const struct binary_seg *seg;
	size_t i;
	int pass;

	/*
	 * A mapping starts at the page holding p_offset, so an executable
	 * segment also owns the bytes just before it (up to 64 KiB pages).
	 * Other segments are tried exactly, as a last resort.
	 */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < b->segs.nr; i++) {
			seg = &b->segs.items[i];
			if (pass == 0 && (!seg->exec || file_offset < (seg->offset & ~0xffffULL)))
				continue;
			if (pass == 1 && file_offset < seg->offset)
				continue;
			if (file_offset >= seg->offset + seg->filesz)
				continue;
			*vaddr = file_offset - seg->offset + seg->vaddr;
			return true;
		}
	}
	return false;
}

/*
 * libdwfl's dwfl_module_addrinfo() scans the whole symbol table on every
 * call (tens of thousands of symbols for libc with debuginfo), and was most
 * of the time spent symbolizing. So the
 * function symbols are copied once into a sorted array and searched here,
 * following the same rules: a sized symbol containing the address first,
 * else the closest sizeless one before it in the same section.
 */
static uint32_t sym_rank(const GElf_Sym *sym, const char *name)
{
	uint32_t underscores = 0, bind, clean;
	const char *dot, *at;

	while (name[underscores] == '_' && underscores < 15)
		underscores++;
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		bind = 3;
		break;
	case STB_WEAK:
		bind = 2;
		break;
	default:
		bind = 1;
		break;
	}
	/* glibc's hidden __GI_ aliases and .localalias/.isra clones name no API */
	dot = strchr(name, '.');
	at = strchr(name, '@');	/* a dot in "@GLIBC_2.2.5" is fine */
	clean = strncmp(name, "__GI_", 5) && (!dot || (at && dot > at));
	return bind * 64 + (sym->st_size ? 32 : 0) + clean * 16 + 15 - underscores;
}

/* The end of section @shndx in module addresses, for sizeless symbols. */
static uint64_t section_end(Elf *elf, GElf_Word shndx, GElf_Addr bias, bool *exec)
{
	GElf_Shdr mem, *sh = gelf_getshdr(elf_getscn(elf, shndx), &mem);

	*exec = sh && (sh->sh_flags & SHF_EXECINSTR);
	return sh ? sh->sh_addr + sh->sh_size + bias : UINT64_MAX;
}

static int binary_add_sym(struct binary *b, int i)
{
	struct binary_sym *bs;
	const char *name;
	GElf_Addr addr, bias;
	GElf_Word shndx;
	GElf_Sym sym;
	bool exec = false;
	uint64_t end;
	Elf *elf;
	int type;

	name = dwfl_module_getsym_info(b->mod, i, &sym, &addr, &shndx, &elf, &bias);
	if (!name || !*name || shndx == SHN_UNDEF || shndx == SHN_ABS || shndx == SHN_COMMON)
		return 0;
	type = GELF_ST_TYPE(sym.st_info);
	if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
		return 0;
	end = section_end(elf, shndx, bias, &exec);
	if (type == STT_NOTYPE && !exec)
		return 0;	/* a label outside code */
	if (array_grow(&b->syms, b->syms.nr + 1))
		return -ENOMEM;
	bs = &b->syms.items[b->syms.nr++];
	bs->start = addr;
	bs->sized = sym.st_size != 0;
	bs->end = bs->sized ? addr + sym.st_size : end;
	bs->name = name;
	bs->rank = sym_rank(&sym, name);
	return 0;
}

static int binary_sym_cmp(const void *a, const void *b)
{
	const struct binary_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if (strlen(x->name) != strlen(y->name))
		return strlen(x->name) < strlen(y->name) ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int binary_load_syms(struct binary *b)
{
	struct binary_sym *syms;
	size_t i, n = 0;
	int nr, err;

	b->syms_loaded = true;
	nr = dwfl_module_getsymtab(b->mod);
	for (i = 1; (int)i < nr; i++) {
		err = binary_add_sym(b, i);
		if (err)
			return err;
	}
	syms = b->syms.items;
	if (b->syms.nr > 1)
		array_sort(syms, b->syms.nr, sizeof(*syms), binary_sym_cmp);
	for (i = 0; i < b->syms.nr; i++) {
		if (n && syms[n - 1].start == syms[i].start)
			continue;	/* an alias of a better name */
		syms[n++] = syms[i];
	}
	b->syms.nr = n;
	return 0;
}

static const struct binary_sym *binary_find_sym(const struct binary *b, uint64_t addr)
{
	const struct binary_sym *syms = b->syms.items;
	size_t lo = 0, hi = b->syms.nr, mid, i;

	while (lo < hi) {	/* first symbol starting above addr */
		mid = lo + (hi - lo) / 2;
		if (syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* a few symbols back, for a sized one around a nested label */
	for (i = lo; i > 0 && lo - i < 8; i--) {
		if (syms[i - 1].sized && addr < syms[i - 1].end)
			return &syms[i - 1];
	}
	if (lo && !syms[lo - 1].sized && addr < syms[lo - 1].end)
		return &syms[lo - 1];
	return NULL;
}

/*
 * libdw 0.188 finds a compile unit by address only through .debug_aranges,
 * which clang (and so Rust) no longer emits. Without it, the CUs' own
 * address ranges are collected once and searched here instead.
 */
static int binary_add_cu_ranges(struct binary *b, Dwarf_Die *cudie)
{
	Dwarf_Addr base, low, high;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(cudie, off, &base, &low, &high)) > 0) {
		if (array_grow(&b->cus, b->cus.nr + 1))
			return -ENOMEM;
		b->cus.items[b->cus.nr++] = (struct binary_cu){ low, high, *cudie };
	}
	return 0;
}

static int binary_cu_cmp(const void *a, const void *b)
{
	const struct binary_cu *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return 0;
}

static int binary_load_cus(struct binary *b)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Die cudie;
	uint8_t type;
	Dwarf *dw;
	int err;

	b->cus_loaded = true;
	dw = dwfl_module_getdwarf(b->mod, &b->cu_bias);
	while (dw && !dwarf_get_units(dw, cu, &next, NULL, &type, &cudie, NULL)) {
		cu = next;
		if (dwarf_tag(&cudie) != DW_TAG_compile_unit)
			continue;
		err = binary_add_cu_ranges(b, &cudie);
		if (err)
			return err;
	}
	if (b->cus.nr > 1)
		array_sort(b->cus.items, b->cus.nr, sizeof(*b->cus.items), binary_cu_cmp);
	return 0;
}

static Dwarf_Die *binary_find_cu(struct binary *b, uint64_t pc, Dwarf_Addr *bias)
{
	struct binary_cu *cus;
	size_t lo = 0, hi, mid;

	if (!b->cus_loaded && binary_load_cus(b))
		return NULL;
	cus = b->cus.items;
	hi = b->cus.nr;
	*bias = b->cu_bias;
	while (lo < hi) {	/* first range starting above pc */
		mid = lo + (hi - lo) / 2;
		if (cus[mid].low <= pc - *bias)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc - *bias >= cus[lo - 1].high)
		return NULL;
	return &cus[lo - 1].die;
}

/*
 * The compile unit around module address @pc, and the line-table position of
 * @pc in @at. NULL without DWARF.
 */
static Dwarf_Die *binary_position(struct binary *b, uint64_t pc, Dwarf_Addr *bias,
				  struct sym_frame *at)
{
	Dwarf_Die *cudie = dwfl_module_addrdie(b->mod, pc, bias);
	Dwfl_Line *l = cudie ? dwfl_module_getsrc(b->mod, pc) : NULL;
	Dwarf_Line *dl = NULL;
	int line = 0;

	if (l) {
		at->file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	} else {
		if (!cudie)
			cudie = binary_find_cu(b, pc, bias);
		dl = cudie ? dwarf_getsrc_die(cudie, pc - *bias) : NULL;
		at->file = dl ? dwarf_linesrc(dl, NULL, NULL) : NULL;
		if (dl)
			dwarf_lineno(dl, &line);
	}
	at->line = at->file && line > 0 ? line : 0;
	return cudie;
}

/* Intern @s (NULL stays NULL); false on ENOMEM. */
static bool intern(struct strtab *strs, const char *s, const char **out)
{
	*out = s ? strtab_intern(strs, s) : NULL;
	return !s || *out;
}

static int frame_push(struct sym_frames *out, struct strtab *strs, const char *function,
		      const char *file, int line, uint64_t offset, bool inlined)
{
	struct sym_frame *f;
	size_t len;

	if (array_grow(out, out->nr + 1))
		return -ENOMEM;
	f = &out->items[out->nr];
	memset(f, 0, sizeof(*f));
	if (function) {
		/* "pthread_create@@GLIBC_2.34": the version is not part of the name */
		len = strcspn(function, "@");
		f->system_name = strtab_intern_len(strs, function, len ? len : strlen(function));
		if (!f->system_name)
			return -ENOMEM;
		f->function = f->system_name;
		if (sym_is_mangled(f->system_name)) {
			char *d = sym_demangle(f->system_name);

			if (d)
				f->function = strtab_intern(strs, d);
			free(d);
			if (!f->function)
				return -ENOMEM;
		}
	}
	if (!intern(strs, file, &f->file))
		return -ENOMEM;
	f->line = file && line > 0 ? line : 0;
	f->offset = offset;
	f->inlined = inlined;
	out->nr++;
	return 0;
}

/* The name a function DIE is known by to the linker, else its source name. */
static const char *die_function_name(Dwarf_Die *die)
{
	Dwarf_Attribute mem, *attr;
	const char *name;

	attr = dwarf_attr_integrate(die, DW_AT_linkage_name, &mem);
	if (!attr)
		attr = dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &mem);
	name = attr ? dwarf_formstring(attr) : NULL;
	return name ? name : dwarf_diename(die);
}

/* Where inlined-subroutine @die was called from: its DW_AT_call_file/line. */
static void die_call_site(Dwarf_Die *die, Dwarf_Die *cudie, const char **file, int *line)
{
	Dwarf_Attribute mem;
	Dwarf_Files *files;
	Dwarf_Word idx, l;
	size_t nr;

	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &mem), &idx) ||
	    dwarf_getsrcfiles(cudie, &files, &nr) || idx >= nr)
		return;
	*file = dwarf_filesrc(files, idx, NULL, NULL);
	if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &mem), &l))
		*line = l;
}

/*
 * Walk the DWARF scopes at @cu_pc, innermost first, starting from @at (the
 * symbol and the line-table position): each inlined subroutine is a frame at
 * the current position, and its call site becomes the position in the frame
 * around it. The subprogram that ends the walk is the real function.
 */
/*
 * The function scopes at @cu_pc, innermost first, from the CU's scope index
 * (built on first use). The concrete chain matters: dwarf_getscopes goes on
 * past an inlined subroutine with its abstract definition's scopes, losing
 * the middle levels of a nested inline, and walks the CU's DIEs per address.
 * Returns how many DIEs are in @scopes (malloc'ed), 0 if none, -ENOMEM.
 */
static int cu_scopes(struct binary *b, Dwarf_Die *cudie, Dwarf_Addr cu_pc, Dwarf_Die **scopes)
{
	Dwarf_Off cu = dwarf_dieoffset(cudie), offs[64];
	Dwarf *dbg = dwarf_cu_getdwarf(cudie->cu);
	struct scope_index *x = hashmap_get(&b->scopes, NULL, cu, 0);
	size_t i, n;

	*scopes = NULL;
	if (!x) {
		x = scope_index_build(cudie);
		if (!x || array_grow(&b->scope_list, b->scope_list.nr + 1)) {
			scope_index_free(x);
			return -ENOMEM;
		}
		b->scope_list.items[b->scope_list.nr++] = x;
		if (hashmap_put(&b->scopes, NULL, cu, 0, x))
			return -ENOMEM;
	}
	n = scope_index_lookup(x, cu_pc, offs, ARRAY_SIZE(offs));
	if (!n)
		return 0;
	*scopes = calloc(n, sizeof(**scopes));
	if (!*scopes)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (!dwarf_offdie(dbg, offs[i], &(*scopes)[i]))
			break;
	return i;
}

static int resolve_scopes(struct binary *b, Dwarf_Die *cudie, Dwarf_Addr cu_pc,
			  struct sym_frame at, struct strtab *strs, struct sym_frames *out)
{
	Dwarf_Die *scopes = NULL;
	int i, n, tag, line = at.line, err = 0;

	n = cu_scopes(b, cudie, cu_pc, &scopes);
	if (n < 0)
		return n;
	for (i = 0; i < n && !err; i++) {
		tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram) {
			if (!at.function)
				at.function = die_function_name(&scopes[i]);
			break;
		}
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		err = frame_push(out, strs, die_function_name(&scopes[i]), at.file, line, 0, true);
		die_call_site(&scopes[i], cudie, &at.file, &line);
	}
	free(scopes);
	if (err)
		return err;
	return frame_push(out, strs, at.function, at.file, line, at.offset, false);
}

int binary_resolve(struct binary *b, uint64_t vaddr, bool is_return, bool no_lines,
		   struct strtab *strs, struct sym_frames *out)
{
	GElf_Addr pc = vaddr - is_return + b->bias;
	const struct binary_sym *sym;
	struct sym_frame at = { 0 };
	Dwarf_Addr dwbias;
	Dwarf_Die *cudie;

	if (!b->mod)
		return frame_push(out, strs, NULL, NULL, 0, 0, false);
	if (!b->syms_loaded && binary_load_syms(b))
		return -ENOMEM;
	sym = binary_find_sym(b, pc);
	if (sym) {
		at.function = sym->name;
		/* offsets are reported for the return address itself, like perf does */
		at.offset = pc - sym->start + is_return;
	}
	if (no_lines)
		return frame_push(out, strs, at.function, NULL, 0, at.offset, false);
	cudie = binary_position(b, pc, &dwbias, &at);
	if (!cudie)
		return frame_push(out, strs, at.function, at.file, at.line, at.offset, false);
	return resolve_scopes(b, cudie, pc - dwbias, at, strs, out);
}
