/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where the eval loop of a CPython executable or libpython lies when its
 * compiler split it, private to symbolize/: the entry keeps the exported
 * _PyEval_EvalFrameDefault name, and the loop proper runs from a ".cold"
 * part that a stripped file does not name. Found from the file's code and
 * .eh_frame alone; x86-64 only.
 */
#ifndef LATPROF_SYMBOLIZE_PYEVAL_H
#define LATPROF_SYMBOLIZE_PYEVAL_H

#include <stdint.h>

#include <libelf.h>

/*
 * The part of the function at [@vaddr, @vaddr + @size) of @elf (file
 * addresses) that its own jumps continue into: [*start, *end), an .eh_frame
 * FDE of its own that at least two of the entry's jumps reach inside a
 * function body. 0, or -ENOENT when there is none or it is not certain.
 * Reads only @elf; cannot fail otherwise.
 */
int py_eval_cold_part(Elf *elf, uint64_t vaddr, uint64_t size, uint64_t *start, uint64_t *end);

#endif
