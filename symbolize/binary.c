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

#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "src/strtab.h"
#include "src/util.h"

/* A PT_LOAD segment. */
struct binary_seg {
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
	bool exec;
};

struct binary {
	Dwfl *dwfl;
	Dwfl_Module *mod;	/* NULL: not an ELF file libdwfl can read */
	GElf_Addr bias;
	const char *build_id;
	uint64_t vdso_size;
	struct { struct binary_seg *items; size_t nr, alloc; } segs;
};

static const Dwfl_Callbacks binary_callbacks = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
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
	static const char digits[] = "0123456789abcdef";
	char buf[2 * 64 + 1];
	int i;

	if (len > 64)
		len = 64;	/* GNU build-ids are 20 bytes; never overflow */
	for (i = 0; i < len; i++) {
		buf[2 * i] = digits[bits[i] >> 4];
		buf[2 * i + 1] = digits[bits[i] & 15];
	}
	buf[2 * len] = '\0';
	return strtab_intern(strs, buf);
}

static int binary_report(struct binary *b, int fd, const char *path, struct strtab *strs)
{
	const unsigned char *bits;
	const char *name = strrchr(path, '/');
	GElf_Addr vaddr;
	Elf *elf;
	int len;

	b->dwfl = dwfl_begin(&binary_callbacks);
	if (!b->dwfl) {
		close(fd);
		return -ENOMEM;
	}
	b->mod = dwfl_report_elf(b->dwfl, name ? name + 1 : path, path, fd, 0, true);
	if (!b->mod) {
		close(fd);	/* libdwfl only takes the descriptor on success */
		return 0;
	}
	dwfl_report_end(b->dwfl, NULL, NULL);
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

struct binary *binary_new(int fd, const char *path, struct strtab *strs)
{
	struct binary *b = calloc(1, sizeof(*b));
	int err;

	if (!b) {
		close(fd);
		return NULL;
	}
	b->build_id = "";
	err = binary_report(b, fd, path, strs);
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

struct binary *binary_new_vdso(struct strtab *strs)
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
	b = binary_new(fd, "[vdso]", strs);
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
	free(b->segs.items);
	free(b);
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

	if (array_grow(out, out->nr + 1))
		return -ENOMEM;
	f = &out->items[out->nr];
	memset(f, 0, sizeof(*f));
	if (!intern(strs, function, &f->function) || !intern(strs, file, &f->file))
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
 * Walk the DWARF scopes at @pc, innermost first: each inlined subroutine is a
 * frame at the current position, and its call site is the position in the
 * frame around it. The subprogram that ends the walk is the real function.
 */
static int resolve_scopes(Dwarf_Die *cudie, Dwarf_Addr cu_pc, const char *symname,
			  uint64_t offset, const char *file, int line, struct strtab *strs,
			  struct sym_frames *out)
{
	Dwarf_Die *scopes = NULL;
	int i, n, tag, err = 0;

	n = dwarf_getscopes(cudie, cu_pc, &scopes);
	for (i = 0; i < n && !err; i++) {
		tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram) {
			if (!symname)
				symname = die_function_name(&scopes[i]);
			break;
		}
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		err = frame_push(out, strs, die_function_name(&scopes[i]), file, line, 0, true);
		die_call_site(&scopes[i], cudie, &file, &line);
	}
	free(scopes);
	if (err)
		return err;
	return frame_push(out, strs, symname, file, line, symname ? offset : 0, false);
}

int binary_resolve(struct binary *b, uint64_t vaddr, bool is_return, bool no_lines,
		   struct strtab *strs, struct sym_frames *out)
{
	GElf_Addr pc = vaddr - is_return + b->bias;
	const char *name = NULL, *file = NULL;
	Dwarf_Addr dwbias;
	Dwarf_Die *cudie;
	Dwfl_Line *l;
	GElf_Off off = 0;
	GElf_Sym sym;
	int line = 0;

	if (!b->mod)
		return frame_push(out, strs, NULL, NULL, 0, 0, false);
	name = dwfl_module_addrinfo(b->mod, pc, &off, &sym, NULL, NULL, NULL);
	/* offsets are reported for the return address itself, like perf does */
	off += is_return;
	if (no_lines)
		return frame_push(out, strs, name, NULL, 0, name ? off : 0, false);
	l = dwfl_module_getsrc(b->mod, pc);
	if (l)
		file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	cudie = dwfl_module_addrdie(b->mod, pc, &dwbias);
	if (!cudie)
		return frame_push(out, strs, name, file, line, name ? off : 0, false);
	return resolve_scopes(cudie, pc - dwbias, name, off, file, line, strs, out);
}
