/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * CPython code objects read from another process's memory, private to
 * symbolize/ and the record session: the qualified name, the file, the first
 * line and the line table of one code object, and the line of an instruction
 * in it for each version's line table format (co_lnotab in 3.8 and 3.9,
 * PEP 626 co_linetable in 3.10, PEP 657 location table from 3.11).
 *
 * The memory is the target's and may change under us or be garbage: every
 * read is bounded (strings, tables), nothing is followed twice, and bad
 * memory gives an error, never a crash or an endless loop.
 */
#ifndef LATPROF_SYMBOLIZE_PYCODE_H
#define LATPROF_SYMBOLIZE_PYCODE_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/pyoffsets.h"

#define PY_CODE_MAX_NAME 1024		/* bytes of a name or file kept (UTF-8) */
#define PY_CODE_MAX_LINETABLE (256 * 1024)	/* longer tables: no line numbers */

struct py_code {
	char *qualname;		/* owned, UTF-8, NUL-terminated: co_qualname (3.11+),
				 * else co_name */
	char *filename;		/* owned: co_filename as the interpreter has it */
	uint32_t firstlineno;	/* co_firstlineno */
	uint8_t *linetable;	/* owned copy of the line table bytes, NULL if none */
	size_t linetable_len;
};

/*
 * Where the interpreter's type objects are in the process: an object whose
 * ob_type is not the expected one is not read as that type (memory reused
 * since the sample was taken). 0: not checked.
 */
struct py_types {
	uint64_t code;		/* &PyCode_Type */
	uint64_t unicode;	/* &PyUnicode_Type */
	uint64_t bytes;		/* &PyBytes_Type */
};

/*
 * The members of a code object that name it, as the BPF walk copied them
 * at the sample (bpf/latprof.h struct lp_py_code_ref): the code object
 * itself may be gone by the time its name is read (a module body after its
 * import), its name and file strings rarely are.
 */
struct py_code_ref {
	uint64_t type;		/* its ob_type, checked against py_types.code */
	uint64_t name;		/* co_qualname (3.11+) or co_name */
	uint64_t file;		/* co_filename */
	uint64_t table;		/* co_linetable or co_lnotab, 0: no line numbers */
	uint32_t firstlineno;
	/*
	 * The name string's bytes from its length member on, copied at the
	 * sample (NULL: none): a compact ASCII name that fits is taken from
	 * here, so a name freed since is still known.
	 */
	const uint8_t *name_raw;
	size_t name_raw_len;
	/*
	 * The file string's bytes from its length member on (its length, hash
	 * and state: NULL or length 0, none) and its last characters (from its
	 * first when shorter): py_code_file_from_ref.
	 */
	const uint8_t *file_hdr;
	size_t file_hdr_len;
	const uint8_t *file_tail;
	size_t file_tail_len;
};

/*
 * Read the code object at @addr through @read with the offsets @o (whose
 * version picks the layouts). Returns 0 and fills @out (release it with
 * py_code_release), or -errno: the read's error, -EINVAL for contents that
 * cannot be a code object (a string too long or of a kind that makes no
 * sense, a negative size). A linetable that cannot be read or is longer
 * than PY_CODE_MAX_LINETABLE leaves linetable NULL, not an error.
 */
int py_code_read(const struct py_offsets *o, py_read_fn read, void *arg, uint64_t addr,
		 struct py_code *out);

/*
 * py_code_read, and every object read must have the type @t says (-EINVAL
 * otherwise): the code object, its name and file strings, its line table.
 * Needs o->object_type.
 *
 * Both refuse (-EINVAL) a name that is not identifiers, dots and <...>
 * (spaces, control characters, ';') or a file name with control
 * characters; a ';' in a file name becomes '?'.
 */
int py_code_read_typed(const struct py_offsets *o, const struct py_types *t, py_read_fn read,
		       void *arg, uint64_t addr, struct py_code *out);

/*
 * py_code_read_typed from the members @ref copied at the sample instead of
 * the code object's memory: the same checks (its type as copied, then the
 * strings' and table's types as read now). -EINVAL when @ref is empty.
 */
int py_code_read_ref(const struct py_offsets *o, const struct py_types *t, py_read_fn read,
		     void *arg, const struct py_code_ref *ref, struct py_code *out);

/*
 * The name alone from @ref's copy of its string (no memory read): 0 and
 * *out (malloc'ed), -EINVAL when the copy holds no whole compact ASCII name.
 * For a process gone before its names were read.
 */
int py_code_name_from_ref(const struct py_offsets *o, const struct py_code_ref *ref, char **out);

/*
 * The file name from @ref's copy of its string (no memory read): 0 and
 * *out (malloc'ed): the whole name, or "..." and its last file_tail_len
 * characters when it is longer; -EINVAL when the copy holds no compact
 * ASCII string.
 */
int py_code_file_from_ref(const struct py_offsets *o, const struct py_code_ref *ref, char **out);

/*
 * The str object at @addr as UTF-8 (*out malloc'ed, at most
 * PY_CODE_MAX_NAME characters), its type checked against t->unicode when
 * @t gives one. 0, -EINVAL (not a compact str), or the read's -errno.
 */
int py_str_read(const struct py_offsets *o, const struct py_types *t, py_read_fn read,
		void *arg, uint64_t addr, char **out);

/* Free what @c owns and zero it. NULL is a no-op. */
void py_code_release(struct py_code *c);

/*
 * The byte offset, in the code's instructions, of the instruction a frame
 * was running, from what the BPF walk recorded: @instr is f_lasti (3.8, 3.9:
 * a byte offset; 3.10: an index of 2-byte code units) or, from 3.11, the
 * instruction pointer (prev_instr, instr_ptr), turned into an offset from
 * @code_addr + o->code_adaptive. Returns -1 when @instr is not in the code
 * (before the first instruction, f_lasti -1).
 */
int64_t py_code_offset(const struct py_offsets *o, uint64_t code_addr, uint64_t instr);

/*
 * The source line of the instruction at byte offset @offset of @c, decoded
 * from its line table in @version's format (CPython's own PyCode_Addr2Line
 * rules). 0 when unknown (no table, no line for that instruction, offset
 * past the table). Never reads outside c->linetable.
 */
uint32_t py_code_line(const struct py_code *c, uint32_t version, int64_t offset);

#endif
