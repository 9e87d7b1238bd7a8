// SPDX-License-Identifier: GPL-2.0-only
/*
 * eu-addr2line's output from the symbolizer (addr2line.h): the address
 * parsed strictly, the file checked whole before any address is looked up.
 */
#include "src/addr2line.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>

#include "src/lib/util.h"

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static void print_location(const struct addr2line_opts *o, const struct sym_location *loc,
			   FILE *out)
{
	size_t i, n = o->inlines ? loc->nr_frames : 1;

	if (o->addresses)
		fprintf(out, "0x%016" PRIx64 "\n", loc->address);
	for (i = 0; i < n; i++) {
		const struct sym_frame *f = &loc->frames[i];

		fprintf(out, "%s\n%s:%" PRIu32 "\n", f->function ? f->function : "??",
			f->file ? (o->basenames ? base_name(f->file) : f->file) : "??",
			f->file ? f->line : 0);
	}
}

/* Do the @n entries of @entsize bytes at @off lie inside a file of @size bytes? */
static bool table_fits(uint64_t off, uint64_t n, uint64_t entsize, uint64_t size)
{
	return off <= size && (!entsize || n <= (size - off) / entsize);
}

/* Do @e's header tables and the contents of every section lie inside the file? */
static bool elf_fits(Elf *e, uint64_t size)
{
	Elf_Scn *scn = NULL;
	size_t nsec, nph;
	GElf_Ehdr eh;
	GElf_Shdr sh;

	if (!gelf_getehdr(e, &eh) || elf_getshdrnum(e, &nsec) || elf_getphdrnum(e, &nph))
		return false;
	/* libelf counts no sections when their table is cut off: trust the header */
	if (eh.e_shnum)
		nsec = eh.e_shnum;
	else if (eh.e_shoff && !nsec)
		return false;
	if (eh.e_phnum != PN_XNUM)
		nph = eh.e_phnum;
	if (!table_fits(eh.e_shoff, nsec, eh.e_shentsize, size) ||
	    !table_fits(eh.e_phoff, nph, eh.e_phentsize, size))
		return false;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			return false;
		if (sh.sh_type != SHT_NOBITS && !table_fits(sh.sh_offset, sh.sh_size, 1, size))
			return false;
	}
	return true;
}

int addr2line_check_file(const char *path, const char **why)
{
	struct stat st;
	Elf *e = NULL;
	int fd, err = -EINVAL;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*why = "not a regular file";
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		goto out;
	*why = "not an ELF file";
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF)
		goto out;
	*why = "truncated or corrupt ELF file";
	if (elf_fits(e, st.st_size))
		err = 0;
out:
	elf_end(e);
	close(fd);
	return err;
}

int addr2line_resolve(const struct addr2line_opts *o, struct symbolizer *s, const char *arg,
		      FILE *out)
{
	size_t len = strcspn(arg, "\n");
	const struct sym_location *loc;
	uint64_t addr;
	char *end;

	errno = 0;
	addr = strtoull(arg, &end, 16);
	/* strtoull would also take " 10" and "-1" (as 2^64 - 1) */
	if (!isxdigit((unsigned char)*arg) || errno || (*end && *end != '\n')) {
		/* one line, of bounded length, whatever was read */
		pr_err("invalid address '%.*s': want hexadecimal", (int)(len < 64 ? len : 64), arg);
		return -EINVAL;
	}
	loc = symbolizer_file(s, o->file, addr);
	if (!loc) {
		pr_err("cannot read %s: %s", o->file, strerror(errno));
		return errno == ENOMEM ? -ENOMEM : -ENOENT;
	}
	print_location(o, loc, out);
	return 0;
}

int addr2line_resolve_lines(const struct addr2line_opts *o, struct symbolizer *s, FILE *in,
			    FILE *out)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int err = 0;

	while (!err && (n = getline(&line, &cap, in)) > 0) {
		/* a NUL would end the address early: "10\0junk" is not 0x10 */
		if (memchr(line, '\0', n)) {
			pr_err("invalid address: NUL byte in standard input");
			err = -EINVAL;
		} else if (line[0] != '\n') {
			err = addr2line_resolve(o, s, line, out);
		}
	}
	free(line);
	return err;
}
