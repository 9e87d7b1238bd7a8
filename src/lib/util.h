/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Leaf utilities shared by every module: logging for the program (src/ only;
 * libraries never print), the one growable-array idiom, and writing an output
 * file completely or not at all.
 */
#ifndef LATPROF_UTIL_H
#define LATPROF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NSEC_PER_SEC 1000000000ULL

enum log_level {
	LOG_LEVEL_QUIET,
	LOG_LEVEL_ERROR,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
	LOG_LEVEL_TRACE,	/* -vv: library internals (libbpf) */
};

/* The program's verbosity; set once by main() from -q/-v. */
extern enum log_level log_level;

/* Print "latprof: MESSAGE\n" on stderr if @level is enabled. src/ only. */
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pr_err(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define pr_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define pr_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

/*
 * Make room for @need items in a growable array {items, nr, alloc} whose
 * elements are @size bytes. Returns 0 or -ENOMEM (also on size overflow); on
 * failure the array is unchanged.
 */
int array_grow_(void **items, size_t *alloc, size_t need, size_t size);
#define array_grow(a, need) \
	array_grow_((void **)&(a)->items, &(a)->alloc, (need), sizeof(*(a)->items))

/*
 * qsort() and qsort_r() that accept an empty array: glibc declares their base
 * nonnull, and an array never grown has items == NULL. Cannot fail.
 */
static inline void array_sort(void *base, size_t nr, size_t size,
			      int (*cmp)(const void *, const void *))
{
	if (nr)
		qsort(base, nr, size, cmp);
}

static inline void array_sort_r(void *base, size_t nr, size_t size,
				int (*cmp)(const void *, const void *, void *), void *arg)
{
	if (nr)
		qsort_r(base, nr, size, cmp, arg);
}

/* array_sort's comparison of uint64_t values, ascending. */
int array_cmp_u64(const void *a, const void *b);

typedef int (*write_fn)(FILE *f, void *arg);

/*
 * Write a file completely or not at all: @fn writes into "PATH.tmp.XXXXXX" in
 * the same directory, which is renamed to @path only if @fn, fflush and fclose
 * all succeeded. "-" writes to stdout. Returns 0, @fn's negative error, or
 * -errno; a write error @fn reports as -EIO comes back as the errno the flush
 * gives (-ENOSPC on a full disk). On failure no file is left behind. A
 * @path that exists and is neither a regular file nor a directory (a device,
 * a FIFO) is written as it is, never replaced.
 */
int write_file_atomic(const char *path, write_fn fn, void *arg);

/*
 * Can an output be written at @path? Creates and removes a temporary file next
 * to it, so a missing or read-only directory, a directory as @path, or a
 * pseudo filesystem is refused before any work is done. "-" is always fine;
 * a device or a FIFO must be writable. 0 or -errno.
 */
int output_check(const char *path);

/*
 * Raise the soft limit of open files to the hard one: a symbolizer keeps
 * every mapped binary open (so exited processes still resolve), and
 * system-wide recordings see hundreds. Best effort, cannot fail.
 */
void raise_nofile_limit(void);

/* @argv[0..@argc) joined by spaces, malloc'ed; NULL on ENOMEM. */
char *join_args(int argc, char **argv);

/* Read a whole file into a malloc'ed buffer (NUL-terminated). 0 or -errno. */
int read_file(const char *path, char **buf, size_t *len);

/*
 * The same for descriptor @fd, which is closed; more than @max bytes is
 * -EFBIG (a file someone else controls cannot make us allocate without end).
 */
int read_fd(int fd, size_t max, char **buf, size_t *len);

/* Parse a decimal number in [min, max]; the whole string must be used. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* CLOCK_MONOTONIC / CLOCK_REALTIME in nanoseconds. Cannot fail. */
uint64_t now_ns(void);
/* CLOCK_THREAD_CPUTIME_ID in ns: the calling thread's CPU time. */
uint64_t thread_cpu_ns(void);
uint64_t wall_ns(void);

/*
 * Report getopt_long's failure for @verb in one line, e.g.
 * "latprof: record: unknown option '--bogus' (see 'latprof record --help')".
 * Call with opterr = 0 when getopt_long returned '?' or ':'.
 */
void pr_option_error(const char *verb, char *const argv[], int c);

/* Does s end with suffix? */
bool str_has_suffix(const char *s, const char *suffix);

/*
 * latprof's cache directory (minimized BTF, inflated debuginfo):
 * $LATPROF_CACHE_DIR, or /var/cache/latprof when that is unset; NULL when
 * it is set and empty (the caches are off). Cannot fail.
 */
const char *cache_dir(void);

/*
 * @len bytes of @bits in lower-case hex, NUL-terminated, into @out of
 * @size bytes; false (and "") when it does not fit.
 */
bool hex_encode(const void *bits, size_t len, char *out, size_t size);

#endif
