// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/procimg: the files libdwfl refused in a process image are counted,
 * and a re-read of the maps after the file was unmapped does not forget
 * them (the samples taken before were resolved without it).
 */
#include "src/procimg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/unit/check.h"

int main(void)
{
	char path[] = "/tmp/latprof-test-XXXXXX";
	struct proc_images m = { 0 };
	struct proc_image *img;
	void *mem = MAP_FAILED;
	int fd;

	m.sym = symbolizer_new(NULL);
	CHECK(m.sym);
	if (!m.sym)
		return check_exit();
	CHECK(proc_images_snapshot(&m, getpid(), 0) == 0);
	img = proc_images_find(&m, getpid(), 0);
	CHECK(img && proc_image_modules_refused(img) == 0);

	/* not ELF, mapped executable: libdwfl refuses it */
	fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, 8192) ||
	    (mem = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		fprintf(stderr, "skip: executable file mapping: %s\n", strerror(errno));
		goto out;
	}
	CHECK(proc_images_snapshot(&m, getpid(), 0) == 0);
	img = proc_images_find(&m, getpid(), 0);
	CHECK(img && proc_image_modules_refused(img) == 1);

	munmap(mem, 4096);
	mem = MAP_FAILED;
	CHECK(proc_images_snapshot(&m, getpid(), 0) == 0);
	img = proc_images_find(&m, getpid(), 0);
	CHECK(img && img->sym && sym_process_modules_refused(img->sym) == 0);
	CHECK(img && proc_image_modules_refused(img) == 1);

	/* a new exec generation starts from its own files */
	CHECK(proc_images_snapshot(&m, getpid(), 1) == 0);
	img = proc_images_find(&m, getpid(), 1);
	CHECK(img && proc_image_modules_refused(img) == 0);
out:
	if (mem != MAP_FAILED)
		munmap(mem, 4096);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	proc_images_release(&m);
	symbolizer_free(m.sym);
	return check_exit();
}
