// SPDX-License-Identifier: GPL-2.0-only
/* Leaf utilities: logging, array growth, atomic file writes, small parsers. */
#include "src/lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum log_level log_level = LOG_LEVEL_INFO;

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return;
	fputs("latprof: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int array_grow_(void **items, size_t *alloc, size_t need, size_t size)
{
	size_t n = *alloc ? *alloc : 16;
	void *p;

	if (need <= *alloc)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (n > SIZE_MAX / size)
		return -ENOMEM;
	p = realloc(*items, n * size);
	if (!p)
		return -ENOMEM;
	*items = p;
	*alloc = n;
	return 0;
}

static int write_stdout(write_fn fn, void *arg)
{
	int err = fn(stdout, arg);

	if (fflush(stdout) && (!err || err == -EIO))
		err = -errno;
	return err;
}

/* Is @path something other than a regular file: a device, a FIFO? */
static bool is_special(const char *path)
{
	struct stat st;

	return !stat(path, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

/*
 * Write into @path as it is: a device or a FIFO (-o /dev/null, -o
 * /dev/stdout, a shell's >(...)) cannot be replaced by a temporary file
 * renamed over it (as root, that made /dev/null a regular file), and it is
 * never left half-written on disk either.
 */
static int write_special(const char *path, write_fn fn, void *arg)
{
	FILE *f = fopen(path, "we");
	int err;

	if (!f)
		return -errno;
	err = fn(f, arg);
	if (fflush(f) && (!err || err == -EIO))
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

int write_file_atomic(const char *path, write_fn fn, void *arg)
{
	char *tmp = NULL;
	FILE *f = NULL;
	int fd, err;

	if (!strcmp(path, "-"))
		return write_stdout(fn, arg);
	if (is_special(path))
		return write_special(path, fn, arg);
	if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0) {
		tmp = NULL;
		err = -ENOMEM;
		goto out;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		free(tmp);
		tmp = NULL;
		goto out;
	}
	/* mkstemp makes 0600; outputs are ordinary files */
	fchmod(fd, 0644 & ~umask(umask(0)));
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto out;
	}
	err = fn(f, arg);
	/* writers report a stream error as -EIO; flushing again says why (ENOSPC, EFBIG) */
	if (fflush(f) && (!err || err == -EIO))
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	f = NULL;
	if (!err && rename(tmp, path))
		err = -errno;
out:
	if (err && tmp)
		unlink(tmp);	/* never leave a partial file behind */
	free(tmp);
	return err;
}

int output_check(const char *path)
{
	struct stat st;
	char *tmp;
	int fd, err = 0;

	if (!strcmp(path, "-"))
		return 0;
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return -EISDIR;
	if (is_special(path))	/* written as it is (write_special) */
		return access(path, W_OK) ? -errno : 0;
	if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
	} else {
		close(fd);
		unlink(tmp);
	}
	free(tmp);
	return err;
}

int read_file(const char *path, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return read_fd(fd, SIZE_MAX, buf, len);
}

int read_fd(int fd, size_t max, char **buf, size_t *len)
{
	size_t n = 0, alloc = 0;
	char *p = NULL, *q;
	int err = 0;
	ssize_t r;

	for (;;) {
		if (n > max) {
			err = -EFBIG;
			break;
		}
		if (alloc - n < 4096) {
			alloc = alloc ? alloc * 2 : 65536;
			q = realloc(p, alloc + 1);
			if (!q) {
				err = -ENOMEM;
				break;
			}
			p = q;
		}
		r = read(fd, p + n, alloc - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		n += r;
	}
	close(fd);
	if (err) {
		free(p);
		return err;
	}
	p[n] = '\0';
	*buf = p;
	if (len)
		*len = n;
	return 0;
}

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

void pr_option_error(const char *verb, char *const argv[], int c)
{
	const char *opt = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, 0 };

	if (optopt && strncmp(opt, "--", 2))
		opt = shortopt;
	pr_err("%s: %s option '%s' (see 'latprof %s --help')", verb,
	       c == ':' ? "missing argument for" : "unknown", opt, verb);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t wall_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

bool str_has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

void raise_nofile_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

char *join_args(int argc, char **argv)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	int i;

	for (i = 0; f && i < argc; i++)
		fprintf(f, "%s%s", i ? " " : "", argv[i]);
	if (!f || fclose(f)) {
		free(s);
		return NULL;
	}
	return s;
}

const char *cache_dir(void)
{
	const char *dir = getenv("LATPROF_CACHE_DIR");

	if (!dir)
		return "/var/cache/latprof";
	return *dir ? dir : NULL;
}

bool hex_encode(const void *bits, size_t len, char *out, size_t size)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *b = bits;
	size_t i;

	if (!size)
		return false;
	if (len > (size - 1) / 2) {
		out[0] = 0;
		return false;
	}
	for (i = 0; i < len; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * len] = 0;
	return true;
}

int array_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}
