// SPDX-License-Identifier: GPL-2.0-only
/*
 * `latprof symbolize -e FILE [ADDR...]`: the symbolizer on its own, offline,
 * in the output format of `eu-addr2line -f -i`, so it can be compared with
 * the tools users know and benchmarked against them (bench/symbolize_speed.sh).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>

#include "src/util.h"
#include "src/verbs.h"
#include "symbolize/symbolize.h"

struct symbolize_opts {
	const char *file;
	bool inlines;		/* -i: every inlined frame, innermost first */
	bool basenames;		/* -s: file names without directories */
	bool addresses;		/* -a: each address first, as 0x%016x */
};

static const char symbolize_usage[] =
	"usage: latprof symbolize -e FILE [-i] [-s] [-a] [ADDR...]\n"
	"\n"
	"Resolve addresses of an ELF file (its own virtual addresses, as\n"
	"addr2line takes them) to function and file:line, one address per\n"
	"argument or, without any, per line of standard input. Output as\n"
	"`eu-addr2line -f`: a line with the function (two question marks if unknown), then\n"
	"FILE:LINE (same for the file, line 0).\n"
	"\n"
	"  -e, --exe FILE       the ELF file (separate debuginfo is found by build-id\n"
	"                       and .gnu_debuglink)\n"
	"  -i, --inlines        also the frames inlined at the address, innermost first\n"
	"  -s, --basenames      file names without their directories\n"
	"  -a, --addresses      print each address (0x%016x) before its frames\n"
	"  -h, --help           this help\n";

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static void print_location(const struct symbolize_opts *o, const struct sym_location *loc)
{
	size_t i, n = o->inlines ? loc->nr_frames : 1;

	if (o->addresses)
		printf("0x%016" PRIx64 "\n", loc->address);
	for (i = 0; i < n; i++) {
		const struct sym_frame *f = &loc->frames[i];

		printf("%s\n%s:%" PRIu32 "\n", f->function ? f->function : "??",
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

/*
 * Is @path a whole ELF file? A truncated or damaged one is bad input, said
 * so, rather than a file in which no address resolves. 0, -EINVAL with *why
 * set, or -errno when it cannot be opened.
 */
static int elf_check(const char *path, const char **why)
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

/* One address (hex, with or without 0x); 0 or -errno after a message. */
static int symbolize_one(const struct symbolize_opts *o, struct symbolizer *s, const char *arg)
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
	print_location(o, loc);
	return 0;
}

int cmd_symbolize(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "exe", required_argument, NULL, 'e' },
		{ "inlines", no_argument, NULL, 'i' },
		{ "basenames", no_argument, NULL, 's' },
		{ "addresses", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct symbolizer_opts so = { .no_kernel = true };
	struct symbolize_opts o = { 0 };
	struct symbolizer *s;
	const char *why = NULL;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int c, err = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":e:isah", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			o.file = optarg;
			break;
		case 'i':
			o.inlines = true;
			break;
		case 's':
			o.basenames = true;
			break;
		case 'a':
			o.addresses = true;
			break;
		case 'h':
			fputs(symbolize_usage, stdout);
			return EXIT_STATUS_OK;
		default:
			pr_option_error("symbolize", argv, c);
			return EXIT_STATUS_USAGE;
		}
	}
	if (!o.file) {
		pr_err("missing -e FILE");
		return EXIT_STATUS_USAGE;
	}
	err = elf_check(o.file, &why);
	if (err) {
		pr_err("cannot read %s: %s", o.file, err == -EINVAL ? why : strerror(-err));
		return EXIT_STATUS_USAGE;
	}
	s = symbolizer_new(&so);
	if (!s) {
		pr_err("cannot create symbolizer: %s", strerror(errno));
		return EXIT_STATUS_FAILURE;
	}
	if (optind < argc) {
		for (; !err && optind < argc; optind++)
			err = symbolize_one(&o, s, argv[optind]);
	} else {
		while (!err && (n = getline(&line, &cap, stdin)) > 0) {
			/* a NUL would end the address early: "10\0junk" is not 0x10 */
			if (memchr(line, '\0', n)) {
				pr_err("invalid address: NUL byte in standard input");
				err = -EINVAL;
			} else if (line[0] != '\n') {
				err = symbolize_one(&o, s, line);
			}
		}
	}
	free(line);
	symbolizer_free(s);
	if (fflush(stdout))
		err = -EIO;
	return !err ? EXIT_STATUS_OK : err == -EINVAL || err == -ENOENT ? EXIT_STATUS_USAGE :
		EXIT_STATUS_FAILURE;
}
