// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cold part of CPython's eval loop (pyeval.h). GCC's profile-guided
 * builds split _PyEval_EvalFrameDefault: Debian testing's python3.13 to
 * 3.15 keep a 1 KB entry under the exported name and run the interpreter
 * loop from an 84 KB _PyEval_EvalFrameDefault.cold that only .symtab names,
 * and those executables are stripped. The part is found from the code and
 * the unwind tables alone: the entry's rel32 jumps that leave it, whose
 * target is inside a function body (its CFA is not the entry state rsp+8,
 * which tells a tail call to another function apart), grouped by the
 * .eh_frame FDE (through .eh_frame_hdr's search table) that holds them.
 * The FDE that at least two such jumps reach is the cold part; anything
 * less certain gives none. No instruction decoder: a byte pattern that is
 * no jump lands in a random place and does not hit one FDE twice.
 */
#include "symbolize/pyeval.h"

#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

/* An entry larger than this is no PGO stub: it is the whole loop. */
#define EVAL_ENTRY_MAX (256 * 1024)
/* Distinct jump targets looked at, at most. */
#define TARGETS_MAX 64

#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30
#define X86_64_RSP 7
/* Bytes of a CIE read: its header up to the "zR" augmentation's encoding. */
#define CIE_READ 32

/* A section's bytes and address. */
struct section {
	const uint8_t *data;
	size_t size;
	uint64_t addr;
};

static bool section_by_name(Elf *elf, const char *name, struct section *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!n || strcmp(n, name) || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		out->data = d->d_buf;
		out->size = d->d_size;
		out->addr = sh.sh_addr;
		return true;
	}
	return false;
}

/* The section holding [@addr, @addr + @len), with its bytes there. */
static const uint8_t *bytes_at(Elf *elf, uint64_t addr, size_t len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || addr < sh.sh_addr ||
		    addr - sh.sh_addr > sh.sh_size || len > sh.sh_size - (addr - sh.sh_addr))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size != sh.sh_size)
			return NULL;
		return (const uint8_t *)d->d_buf + (addr - sh.sh_addr);
	}
	return NULL;
}

static int32_t s32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * The FDE covering @pc, by .eh_frame_hdr's sorted (start, FDE) table:
 * [*start, *end). Only the encodings GCC and binutils write for x86-64.
 */
static bool fde_range(Elf *elf, const struct section *hdr, uint64_t pc, uint64_t *start,
		      uint64_t *end)
{
	const uint8_t *h = hdr->data, *fde, *cie, *aug;
	size_t lo = 0, hi, n;
	uint64_t fde_addr, cie_addr;
	uint8_t enc = 0;

	if (hdr->size < 12 || h[0] != 1 || h[2] != DW_EH_PE_udata4 ||
	    h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return false;
	n = (uint32_t)s32(h + 8);
	if (n > (hdr->size - 12) / 8)
		return false;
	hi = n;
	while (lo < hi) {	/* the last entry starting at or before @pc */
		size_t mid = lo + (hi - lo) / 2;

		if (hdr->addr + s32(h + 12 + 8 * mid) <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	fde_addr = hdr->addr + s32(h + 12 + 8 * (lo - 1) + 4);
	fde = bytes_at(elf, fde_addr, 16);
	if (!fde || !s32(fde + 4))
		return false;
	/* the CIE's augmentation says how the FDE's addresses are encoded: "zR" */
	cie_addr = fde_addr + 4 - (uint32_t)s32(fde + 4);
	cie = bytes_at(elf, cie_addr, CIE_READ);
	if (!cie || s32(cie + 4) || cie[8] != 1 || strncmp((const char *)cie + 9, "zR", 3))
		return false;
	/* code and data alignment (LEB128), return register (a byte in version 1) */
	aug = cie + 12;
	for (int i = 0; i < 3; i++)
		while (aug < cie + CIE_READ - 2 && *aug++ & 0x80)
			;
	/* the augmentation data's length, then R's encoding */
	enc = aug[1];
	if (aug[0] != 1 || (enc != (DW_EH_PE_pcrel | DW_EH_PE_sdata4) && enc != DW_EH_PE_sdata4))
		return false;
	*start = (enc & DW_EH_PE_pcrel ? fde_addr + 8 : 0) + s32(fde + 8);
	*end = *start + (uint32_t)s32(fde + 12);
	return pc >= *start && pc < *end;
}

/* Whether @pc is inside a function body: its CFA is not rsp+8, the state at entry. */
static bool in_body(Dwarf_CFI *cfi, uint64_t pc)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Op *ops;
	size_t nops;
	bool body = false;

	if (dwarf_cfi_addrframe(cfi, pc, &frame) || !frame)
		return false;
	if (!dwarf_frame_cfa(frame, &ops, &nops))
		body = !(nops == 1 && ops[0].atom == DW_OP_bregx && ops[0].number == X86_64_RSP &&
			 ops[0].number2 == 8);
	free(frame);
	return body;
}

/* The rel32 jump targets (jmp, jcc) found in @code at @addr that leave it. */
static size_t jump_targets(const uint8_t *code, uint64_t addr, size_t len, uint64_t *out)
{
	size_t i, n = 0;

	for (i = 0; i + 5 <= len && n < TARGETS_MAX; i++) {
		size_t at;
		uint64_t t;

		if (code[i] == 0xe9)
			at = i + 1;
		else if (code[i] == 0x0f && i + 6 <= len && (code[i + 1] & 0xf0) == 0x80)
			at = i + 2;
		else
			continue;
		t = addr + at + 4 + (int64_t)s32(code + at);
		if (t < addr || t >= addr + len)
			out[n++] = t;
	}
	return n;
}

int py_eval_cold_part(Elf *elf, uint64_t vaddr, uint64_t size, uint64_t *start, uint64_t *end)
{
	uint64_t targets[TARGETS_MAX], s, e, best_s = 0, best_e = 0;
	struct section hdr;
	const uint8_t *code;
	Dwarf_CFI *cfi;
	size_t n, i, j;
	int best = 0;

	if (!size || size > EVAL_ENTRY_MAX || !(code = bytes_at(elf, vaddr, size)) ||
	    !section_by_name(elf, ".eh_frame_hdr", &hdr) || !(cfi = dwarf_getcfi_elf(elf)))
		return -ENOENT;
	n = jump_targets(code, vaddr, size, targets);
	for (i = 0; i < n; i++) {
		int hits = 0;

		if (!in_body(cfi, targets[i]) || !fde_range(elf, &hdr, targets[i], &s, &e) ||
		    (s < vaddr + size && e > vaddr))
			continue;
		for (j = 0; j < n; j++)
			hits += targets[j] >= s && targets[j] < e;
		if (hits > best) {
			best = hits;
			best_s = s;
			best_e = e;
		}
	}
	dwarf_cfi_end(cfi);
	if (best < 2)
		return -ENOENT;
	*start = best_s;
	*end = best_e;
	return 0;
}
