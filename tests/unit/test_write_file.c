// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/lib/util write_file_atomic: a file is written completely or not at all.
 * A write that fails part-way (here: past RLIMIT_FSIZE, as a full disk
 * would) leaves neither the file nor its temporary behind, and the error is
 * the one the kernel gave (-EFBIG), not the writer's generic -EIO. A FIFO
 * (as a device such as /dev/null) is written as it is: a temporary renamed
 * over it replaced it with a regular file (as root, /dev/null itself).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/lib/util.h"
#include "tests/unit/check.h"

/* Writes 1 MiB and, as every latprof writer does, reports a stream error as -EIO. */
static int write_big(FILE *f, void *arg)
{
	static const char line[] = "0123456789abcdef0123456789abcdef0123456789abcdef012345678\n";
	int i;

	(void)arg;
	for (i = 0; i < (1 << 20) / (int)(sizeof(line) - 1); i++)
		fputs(line, f);
	return ferror(f) ? -EIO : 0;
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static int write_hello(FILE *f, void *arg)
{
	(void)arg;
	fputs("hello\n", f);
	return ferror(f) ? -EIO : 0;
}

/* A FIFO with a reader gets the bytes and stays a FIFO; nothing else appears. */
static void check_fifo(const char *dir)
{
	char path[64], buf[16] = "";
	struct stat st;
	int rd;

	snprintf(path, sizeof(path), "%s/fifo", dir);
	CHECK(mkfifo(path, 0600) == 0);
	rd = open(path, O_RDONLY | O_NONBLOCK);
	CHECK(rd >= 0);
	CHECK(output_check(path) == 0);
	CHECK(write_file_atomic(path, write_hello, NULL) == 0);
	CHECK(stat(path, &st) == 0 && S_ISFIFO(st.st_mode));
	CHECK(read(rd, buf, sizeof(buf) - 1) == 6 && !strcmp(buf, "hello\n"));
	CHECK(entries(dir) == 1);
	close(rd);
	unlink(path);
}

int main(void)
{
	struct rlimit rl;
	char dir[] = "/tmp/latprof-unit-write.XXXXXX";
	char path[64];
	int err;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	CHECK(write_file_atomic(path, write_big, NULL) == 0);
	CHECK(entries(dir) == 1);
	CHECK(unlink(path) == 0);
	check_fifo(dir);

	/* beyond 64 KiB write(2) fails with EFBIG instead of raising SIGXFSZ */
	signal(SIGXFSZ, SIG_IGN);
	CHECK(getrlimit(RLIMIT_FSIZE, &rl) == 0);
	rl.rlim_cur = 64 << 10;
	CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	err = write_file_atomic(path, write_big, NULL);
	CHECK(err == -EFBIG);
	CHECK(entries(dir) == 0);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_FSIZE, &rl);
	rmdir(dir);
	return check_exit();
}
