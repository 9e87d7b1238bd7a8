// SPDX-License-Identifier: GPL-2.0-only
/*
 * The CPython interpreter of a process (python.h): its file from
 * /proc/PID/maps (libpython* or python* with a _PyRuntime symbol), its
 * version (Py_Version from 3.11, else the PY_VERSION that Py_GetVersion
 * formats, else the file name), symbols from .symtab or .dynsym (a stripped
 * Debian python3.11 still exports them), and offsets. Results per file are
 * cached by device and inode; the load bias is per process, and so is the
 * check of a table layout against the process (pycheck.h).
 */
#include "symbolize/python.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <libelf.h>

#include "src/lib/hashmap.h"
#include "src/lib/util.h"
#include "symbolize/pycheck.h"
#include "symbolize/pyeval.h"
#include "symbolize/pyversion.h"

#define DEFAULT_DEBUG_DIR "/usr/lib/debug"

/* What one interpreter file gives, whatever process maps it. */
struct py_file {
	enum py_status status;
	char why[160];
	uint32_t version;
	enum pyoffsets_source source;
	struct py_offsets off;
	uint64_t runtime_vaddr;		/* _PyRuntime, 0: none */
	uint64_t eval_vaddr, eval_size;
	uint64_t eval_cold_vaddr, eval_cold_size;	/* its split-off part; 0: none */
	struct py_types types;		/* file addresses; 0: symbol not found */
	bool micro_known;		/* the version from the binary, not the file name */
	bool prerelease;		/* an alpha, beta or candidate: no table */
	bool free_threaded;		/* refused: Py_GIL_DISABLED */
	char offsets[64];		/* where the offsets come from, for the report */
	bool pending;			/* queued for the reader thread */
};

/* The two symbols that tell the release: Py_Version (3.11+), Py_GetVersion. */
struct py_version_syms {
	uint64_t version;
	uint64_t getversion, getversion_size;
};

/* A file for the reader thread to inspect. */
struct py_job {
	int fd;
	struct py_file *pf;	/* where the result goes (pending until then) */
	char path[256];
};

/*
 * Reading an interpreter's DWARF can take 0.2 s of CPU (python3.11-dbg's is
 * zlib-compressed): files met in running processes are read by a thread of
 * its own at nice 19 (SCHED_BATCH), so the session's event loop never waits
 * for it and the traced programs lose at most a sliver of a CPU to it. Not
 * SCHED_IDLE: with every CPU busy (a build beside) that never ran, and a
 * chroot's python3.15 went 618 samples (1.2 s) unwalked. @lock guards
 * @files, @owned, every py_file's contents and the queue.
 */
struct py_finder {
	char **dirs;
	size_t nr_dirs;
	struct hashmap files;		/* (NULL, dev, inode) -> struct py_file */
	struct { struct py_file **items; size_t nr, alloc; } owned;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct { struct py_job *items; size_t nr, alloc; } jobs;
	pthread_t reader;
	pid_t reader_tid;		/* for its nice value */
	bool reader_started, stop;
};

/* One file mapping of /proc/PID/maps. */
struct py_map {
	uint64_t start, end, offset, inode;
	unsigned int dev_major, dev_minor;
	char path[256];
};

struct py_finder *py_finder_new(const char *const *debug_dirs, size_t nr)
{
	struct py_finder *f = calloc(1, sizeof(*f));
	size_t i;

	if (!f)
		return NULL;
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->wake, NULL);
	f->dirs = calloc(nr + 1, sizeof(*f->dirs));
	for (i = 0; f->dirs && i < nr; i++)
		if (!(f->dirs[f->nr_dirs++] = strdup(debug_dirs[i])))
			break;
	if (!f->dirs || i < nr) {
		py_finder_free(f);
		errno = ENOMEM;
		return NULL;
	}
	return f;
}

void py_finder_free(struct py_finder *f)
{
	size_t i;

	if (!f)
		return;
	if (f->reader_started) {
		struct sched_param normal = { .sched_priority = 0 };

		pthread_mutex_lock(&f->lock);
		f->stop = true;
		pthread_cond_signal(&f->wake);
		pthread_mutex_unlock(&f->lock);
		/*
		 * At nice 19 on CPUs the traced programs keep busy, the file
		 * being read could take long: finish it at the session's
		 * priority (the queue's other files are dropped).
		 */
		pthread_setschedparam(f->reader, SCHED_OTHER, &normal);
		if (f->reader_tid > 0)
			setpriority(PRIO_PROCESS, f->reader_tid, getpriority(PRIO_PROCESS, 0));
		pthread_join(f->reader, NULL);
	}
	for (i = 0; i < f->jobs.nr; i++)
		close(f->jobs.items[i].fd);
	free(f->jobs.items);
	pthread_cond_destroy(&f->wake);
	pthread_mutex_destroy(&f->lock);
	for (i = 0; f->dirs && i < f->nr_dirs; i++)
		free(f->dirs[i]);
	free(f->dirs);
	for (i = 0; i < f->owned.nr; i++)
		free(f->owned.items[i]);
	free(f->owned.items);
	hashmap_release(&f->files);
	free(f);
}

int py_read_process(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n = process_vm_readv((pid_t)(intptr_t)arg, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

int py_readv_process(void *arg, const struct py_iov *iov, size_t n)
{
	struct iovec *local, *remote;
	size_t i, done = 0;
	ssize_t got = 0;
	int err = 0;

	if (!n)
		return 0;
	local = malloc(n * sizeof(*local));
	remote = malloc(n * sizeof(*remote));
	if (!local || !remote) {
		free(local);
		free(remote);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		local[i] = (struct iovec){ .iov_base = iov[i].buf, .iov_len = iov[i].len };
		remote[i] = (struct iovec){ .iov_base = (void *)(uintptr_t)iov[i].addr,
					    .iov_len = iov[i].len };
	}
	/* IOV_MAX pieces a call; the transfer stops at the first it cannot read whole */
	while (done < n && !err) {
		size_t k = n - done < IOV_MAX ? n - done : IOV_MAX, whole;

		got = process_vm_readv((pid_t)(intptr_t)arg, local + done, k, remote + done, k, 0);
		if (got < 0) {
			err = errno == EFAULT ? 1 : -errno;
			break;
		}
		for (whole = 0; whole < k && (size_t)got >= iov[done + whole].len; whole++)
			got -= iov[done + whole].len;
		done += whole;
		if (whole < k)
			break;
	}
	free(local);
	free(remote);
	return err < 0 ? err : (int)done;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* "libpython3.11.so.1.0", "python3.8", "libpython3.6m.so": the version, 0 if none. */
static uint32_t version_from_name(const char *path)
{
	const char *s = strstr(base_name(path), "python");
	unsigned int major, minor;

	if (!s || sscanf(s + 6, "%u.%u", &major, &minor) != 2 || major > 9 || minor > 99)
		return 0;
	return PY_VERSION_OF(major, minor, 0);
}

static bool is_candidate(const char *path)
{
	const char *b = base_name(path);

	return !strncmp(b, "libpython", 9) || !strncmp(b, "python", 6);
}

/* The file offset of virtual address @vaddr, through its PT_LOAD. */
static bool vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

/* The symbols, from .symtab and .dynsym. */
static void read_symbols(Elf *elf, struct py_file *pf, struct py_version_syms *vs)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || (name[0] != '_' && name[0] != 'P'))
				continue;
			if (!strcmp(name, "_PyRuntime")) {
				pf->runtime_vaddr = sym.st_value;
			} else if (!strcmp(name, "_PyEval_EvalFrameDefault")) {
				pf->eval_vaddr = sym.st_value;
				pf->eval_size = sym.st_size;
			} else if (!strcmp(name, "Py_Version")) {
				vs->version = sym.st_value;
			} else if (!strcmp(name, "Py_GetVersion")) {
				vs->getversion = sym.st_value;
				vs->getversion_size = sym.st_size;
			} else if (!strcmp(name, "PyCode_Type")) {
				pf->types.code = sym.st_value;
			} else if (!strcmp(name, "PyUnicode_Type")) {
				pf->types.unicode = sym.st_value;
			} else if (!strcmp(name, "PyBytes_Type")) {
				pf->types.bytes = sym.st_value;
			}
		}
	}
}

/* A file's initialised memory by virtual address (a py_read_fn), through PT_LOAD. */
struct file_image {
	Elf *elf;
	int fd;
};

static int read_file_image(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct file_image *img = arg;
	uint64_t off, end;

	if (!vaddr_to_offset(img->elf, addr, &off) ||
	    !vaddr_to_offset(img->elf, addr + len - 1, &end) || end != off + len - 1)
		return -EFAULT;
	return pread(img->fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -EIO;
}

/*
 * PY_VERSION_HEX as built, read from the file: Py_Version (3.11+), else
 * the PY_VERSION string of Py_GetVersion (pyversion.h), whose major.minor
 * must be the file name's when that has one. 0: neither.
 */
static uint32_t read_py_version(Elf *elf, int fd, const struct py_version_syms *vs,
				uint32_t name_version)
{
	struct file_image img = { .elf = elf, .fd = fd };
	uint32_t hex;

	if (vs->version && !read_file_image(&img, vs->version, &hex, sizeof(hex)))
		return hex;
	return pyversion_from_getversion(read_file_image, &img, vs->getversion,
					 vs->getversion_size, PY_MM(name_version));
}

/*
 * A free-threaded build (Py_GIL_DISABLED, 3.13+): its file is named
 * python3.14t or libpython3.14t.so, and the _Py_DebugOffsets that starts
 * its initialised _PyRuntime says so. Its structs differ from the ones the
 * walk knows whatever source the offsets would come from, so every source
 * is refused for it.
 */
static bool file_free_threaded(Elf *elf, int fd, const char *path, const struct py_file *pf)
{
	struct file_image img = { .elf = elf, .fd = fd };
	const char *s = strstr(base_name(path), "python");
	unsigned int major, minor;
	uint32_t carried;
	bool free_threaded = false;
	int n = 0;

	if (s && sscanf(s + 6, "%u.%u%n", &major, &minor, &n) == 2 && n && s[6 + n] == 't')
		return true;
	return pf->runtime_vaddr &&
	       !pyoffsets_debug_header(read_file_image, &img, pf->runtime_vaddr, &carried,
				       &free_threaded) &&
	       free_threaded;
}

/* Separate debuginfo by build-id under each directory; NULL if none. */
static Dwarf *open_separate_dwarf(const struct py_finder *f, Elf *elf, int *fd_out)
{
	const void *id;
	char hex[128], path[512];
	ssize_t len = dwelf_elf_gnu_build_id(elf, &id);
	size_t i;

	if (len <= 1 || len > 60)
		return NULL;
	hex_encode(id, len, hex, sizeof(hex));
	for (i = 0; i <= f->nr_dirs; i++) {
		const char *dir = i < f->nr_dirs ? f->dirs[i] : DEFAULT_DEBUG_DIR;
		Dwarf *dw;
		int fd;

		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		dw = dwarf_begin(fd, DWARF_C_READ);
		if (dw) {
			*fd_out = fd;
			return dw;
		}
		close(fd);
	}
	return NULL;
}

static void file_offsets_dwarf(const struct py_finder *f, Elf *elf, struct py_file *pf)
{
	const char *missing = NULL;
	int fd = -1, err = -ENOENT;
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);

	if (dw) {
		err = pyoffsets_from_dwarf(dw, pf->version, &pf->off, &missing);
		dwarf_end(dw);
	}
	if (err) {
		dw = open_separate_dwarf(f, elf, &fd);
		if (dw) {
			err = pyoffsets_from_dwarf(dw, pf->version, &pf->off, &missing);
			dwarf_end(dw);
			close(fd);
		}
	}
	if (!err)
		pf->source = PYOFFSETS_DWARF;
}

/*
 * The DWARF offsets against the table's for the same release: either says
 * so in the report, so a table that goes wrong for a release shows where
 * that release has DWARF.
 */
static void file_cross_check(struct py_file *pf)
{
	struct py_offsets t;
	const char *diff;

	if (pf->prerelease || pyoffsets_from_table(pf->version, pf->micro_known, &t)) {
		snprintf(pf->offsets, sizeof(pf->offsets), "dwarf");
		return;
	}
	diff = pyoffsets_diff(&pf->off, &t);
	snprintf(pf->offsets, sizeof(pf->offsets), "dwarf, table %u.%u %s%s",
		 PY_MAJOR(pf->version), PY_MINOR(pf->version), diff ? "differs at " : "agrees",
		 diff ? diff : "");
}

/*
 * The table's layout for the file's minor version, to be checked against
 * each process (interp_from_file). Final releases only: pre-releases
 * changed layouts between alphas. 0 or -errno of pyoffsets_from_table.
 */
static int file_offsets_table(struct py_file *pf)
{
	int err = pf->prerelease ? -ENOENT : pyoffsets_from_table(pf->version, pf->micro_known,
								   &pf->off);

	if (!err) {
		pf->source = PYOFFSETS_TABLE;
		snprintf(pf->offsets, sizeof(pf->offsets), "table %u.%u", PY_MAJOR(pf->version),
			 PY_MINOR(pf->version));
	}
	return err;
}

/* Everything but the per-process parts, for the file open on @fd. */
static void file_inspect(const struct py_finder *f, int fd, const char *path, struct py_file *pf)
{
	struct py_version_syms vs = { .version = 0 };
	uint32_t v;
	int err;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		return;
	}
	read_symbols(elf, pf, &vs);
	if (pf->eval_vaddr && !py_eval_cold_part(elf, pf->eval_vaddr, pf->eval_size,
						 &pf->eval_cold_vaddr, &pf->eval_cold_size))
		pf->eval_cold_size -= pf->eval_cold_vaddr;
	v = read_py_version(elf, fd, &vs, version_from_name(path));
	pf->version = v ? v & 0xffffff00u : version_from_name(path);
	pf->micro_known = v != 0;
	/* PY_RELEASE_LEVEL_FINAL is 0xf */
	pf->prerelease = v && (v & 0xf0) != 0xf0;
	if (!pf->runtime_vaddr && !pf->version)
		goto out;	/* named like python, but no interpreter in it */
	if (pf->version && PY_MAJOR(pf->version) == 2) {
		pf->status = PY_STATUS_NO_OFFSETS;
		snprintf(pf->why, sizeof(pf->why),
			 "Python %u.%u: frames are walked for 3.8 to 3.15 only",
			 PY_MAJOR(pf->version), PY_MINOR(pf->version));
		goto out;
	}
	if (!pf->runtime_vaddr)
		goto out;	/* an executable that links libpython */
	pf->status = PY_STATUS_NO_OFFSETS;
	if (!pf->version) {
		snprintf(pf->why, sizeof(pf->why), "Python of unknown version");
	} else if (pf->version < PY_VERSION_MIN || PY_MM(pf->version) > PY_MM(PY_VERSION_MAX)) {
		snprintf(pf->why, sizeof(pf->why),
			 "Python %u.%u: frames are walked for 3.8 to 3.15 only",
			 PY_MAJOR(pf->version), PY_MINOR(pf->version));
	} else if (PY_MM(pf->version) >= PY_VERSION_OF(3, 13, 0) &&
		   file_free_threaded(elf, fd, path, pf)) {
		snprintf(pf->why, sizeof(pf->why), "free-threaded build (%u.%ut): not walked",
			 PY_MAJOR(pf->version), PY_MINOR(pf->version));
		pf->free_threaded = true;
	} else if (!pf->eval_vaddr) {
		snprintf(pf->why, sizeof(pf->why), "no _PyEval_EvalFrameDefault symbol");
	} else {
		file_offsets_dwarf(f, elf, pf);
		err = 0;
		if (pf->source == PYOFFSETS_DWARF)
			file_cross_check(pf);
		else
			err = file_offsets_table(pf);
		if (pf->source != PYOFFSETS_NONE)
			pf->status = PY_STATUS_OK;
		else if (pf->prerelease)
			snprintf(pf->why, sizeof(pf->why),
				 "Python %u.%u.%u pre-release: no DWARF (install its -dbg"
				 " package), and the table is for final releases only",
				 PY_MAJOR(pf->version), PY_MINOR(pf->version),
				 PY_MICRO(pf->version));
		else if (err == -ERANGE)
			snprintf(pf->why, sizeof(pf->why),
				 "Python %u.%u: no DWARF (install its -dbg package); its"
				 " release is unknown, and the %u.%u table differs between"
				 " releases", PY_MAJOR(pf->version), PY_MINOR(pf->version),
				 PY_MAJOR(pf->version), PY_MINOR(pf->version));
		else
			snprintf(pf->why, sizeof(pf->why),
				 "Python %u.%u: no DWARF (install its -dbg package), no"
				 " _Py_DebugOffsets and no table for this version",
				 PY_MAJOR(pf->version), PY_MINOR(pf->version));
	}
out:
	elf_end(elf);
}

/* The file of @m as @pid maps it; pid 0: @m's path in latprof's own view. */
static int open_mapped(int pid, const struct py_map *m)
{
	char path[512];
	int fd;

	if (!pid)
		return open(m->path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, m->start,
		 m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	snprintf(path, sizeof(path), "/proc/%d/root%s", pid, m->path);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* The reader thread: inspects queued files at nice 19 until told to stop. */
static void *reader_main(void *arg)
{
	struct py_finder *f = arg;
	struct sched_param batch = { .sched_priority = 0 };

	/* best effort: without it the thread runs at the session's priority */
	pthread_setschedparam(pthread_self(), SCHED_BATCH, &batch);
	pthread_mutex_lock(&f->lock);
	f->reader_tid = gettid();
	pthread_mutex_unlock(&f->lock);
	setpriority(PRIO_PROCESS, f->reader_tid, 19);
	pthread_mutex_lock(&f->lock);
	for (;;) {
		struct py_file result = { .status = PY_STATUS_NONE };
		struct py_job job;

		while (!f->stop && !f->jobs.nr)
			pthread_cond_wait(&f->wake, &f->lock);
		if (f->stop)
			break;
		job = f->jobs.items[0];
		memmove(f->jobs.items, f->jobs.items + 1, --f->jobs.nr * sizeof(job));
		pthread_mutex_unlock(&f->lock);
		file_inspect(f, job.fd, job.path, &result);
		close(job.fd);
		pthread_mutex_lock(&f->lock);
		*job.pf = result;
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

/* Queue @fd for the reader thread (started on first use); @f->lock held. */
static int queue_locked(struct py_finder *f, int fd, const char *path, struct py_file *pf)
{
	struct py_job *j;

	if (!f->reader_started) {
		if (pthread_create(&f->reader, NULL, reader_main, f))
			return -EAGAIN;
		f->reader_started = true;
	}
	if (array_grow(&f->jobs, f->jobs.nr + 1))
		return -ENOMEM;
	j = &f->jobs.items[f->jobs.nr++];
	j->fd = fd;
	j->pf = pf;
	snprintf(j->path, sizeof(j->path), "%s", path);
	pf->pending = true;
	pthread_cond_signal(&f->wake);
	return 0;
}

/*
 * What the file of @m holds, into @out: from the cache, else inspected now
 * (@now) or by the reader thread, in which case @out->pending is set and a
 * later call has the answer. 0 or -ENOMEM.
 */
static int finder_file(struct py_finder *f, int pid, const struct py_map *m, bool now,
		       struct py_file *out)
{
	uint64_t dev = (uint64_t)m->dev_major << 32 | m->dev_minor;
	struct py_file *pf;
	int fd;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&f->lock);
	pf = hashmap_get(&f->files, NULL, dev, m->inode);
	if (pf) {
		*out = *pf;
		pthread_mutex_unlock(&f->lock);
		return 0;
	}
	pthread_mutex_unlock(&f->lock);
	/* an unreadable file is retried with the next process that maps it */
	fd = open_mapped(pid, m);
	if (fd < 0)
		return 0;
	pf = calloc(1, sizeof(*pf));
	if (!pf) {
		close(fd);
		return -ENOMEM;
	}
	if (now) {
		file_inspect(f, fd, m->path, pf);
		close(fd);
		fd = -1;
	}
	pthread_mutex_lock(&f->lock);
	if (array_grow(&f->owned, f->owned.nr + 1) ||
	    hashmap_put(&f->files, NULL, dev, m->inode, pf)) {
		pthread_mutex_unlock(&f->lock);
		free(pf);
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	f->owned.items[f->owned.nr++] = pf;
	if (fd >= 0 && !queue_locked(f, fd, m->path, pf))
		fd = -1;
	*out = *pf;
	pthread_mutex_unlock(&f->lock);
	if (fd >= 0) {
		/* no thread or no room in the queue: read it now */
		file_inspect(f, fd, m->path, out);
		close(fd);
		pthread_mutex_lock(&f->lock);
		*pf = *out;
		pthread_mutex_unlock(&f->lock);
	}
	return 0;
}

/* Inspect the file at @path now, in this thread, into the cache and @pf. */
static int prepare_file(struct py_finder *f, const char *path, struct py_file *pf)
{
	struct py_map m = { .inode = 0 };
	struct stat st;

	if (stat(path, &st))
		return -errno;
	m.dev_major = major(st.st_dev);
	m.dev_minor = minor(st.st_dev);
	m.inode = st.st_ino;
	snprintf(m.path, sizeof(m.path), "%s", path);
	return finder_file(f, 0, &m, true, pf);
}

/*
 * @needed in the first directory of the ':'-separated @dirs (NULL: none;
 * "$ORIGIN" is the directory of the executable at @path) that has it, into
 * @out. False when none has it.
 */
static bool find_in_dirs(const char *dirs, const char *path, const char *needed, char *out,
			 size_t size)
{
	const char *slash = strrchr(path, '/');

	while (dirs && *dirs) {
		size_t len = strcspn(dirs, ":");

		if (!strncmp(dirs, "$ORIGIN", 7) && slash)
			snprintf(out, size, "%.*s%.*s/%s", (int)(slash - path), path, (int)len - 7,
				 dirs + 7, needed);
		else
			snprintf(out, size, "%.*s/%s", (int)len, dirs, needed);
		if (len && !access(out, R_OK))
			return true;
		dirs += len + (dirs[len] == ':');
	}
	return false;
}

/*
 * The libpython that the executable @elf at @path needs, found the way the
 * dynamic loader will for the command latprof starts with its own
 * environment: DT_RPATH (when there is no DT_RUNPATH), LD_LIBRARY_PATH
 * (a stripped or patched libpython run that way is the one to read ahead,
 * not the one the executable names), DT_RUNPATH ($ORIGIN expanded), then
 * the system's library directories. Into @out; false when it needs none or
 * none is found.
 */
static bool needed_libpython(Elf *elf, const char *path, char *out, size_t size)
{
	static const char *const system_dirs[] = {
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/usr/local/lib", "/usr/lib",
		"/lib",
	};
	const char *needed = NULL, *runpath = NULL;
	bool rpath = false;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Dyn dyn;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize && gelf_getdyn(data, i, &dyn); i++) {
			const char *s;

			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RUNPATH && dyn.d_tag != DT_RPATH)
				continue;
			s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			if (dyn.d_tag == DT_NEEDED && !strncmp(s, "libpython", 9)) {
				needed = s;
			} else if (dyn.d_tag != DT_NEEDED && (!runpath || dyn.d_tag == DT_RUNPATH)) {
				runpath = s;
				rpath = dyn.d_tag == DT_RPATH;
			}
		}
	}
	if (!needed || strchr(needed, '/'))
		return false;
	if ((rpath && find_in_dirs(runpath, path, needed, out, size)) ||
	    find_in_dirs(getenv("LD_LIBRARY_PATH"), path, needed, out, size) ||
	    (!rpath && find_in_dirs(runpath, path, needed, out, size)))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(system_dirs); i++) {
		snprintf(out, size, "%s/%s", system_dirs[i], needed);
		if (!access(out, R_OK))
			return true;
	}
	return false;
}

int py_finder_prepare(struct py_finder *f, const char *path)
{
	struct py_file pf;
	char lib[4096];
	bool found = false;
	Elf *elf;
	int fd, err;

	if (!is_candidate(path))
		return 0;
	err = prepare_file(f, path, &pf);
	if (err || pf.runtime_vaddr)
		return err;
	/* an executable that links libpython: that is the file to read */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf)
		found = needed_libpython(elf, path, lib, sizeof(lib));
	if (elf)
		elf_end(elf);
	close(fd);
	return found ? prepare_file(f, lib, &pf) : 0;
}

static bool parse_map_line(const char *line, struct py_map *m)
{
	char perms[8];
	int n = 0;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
		   &m->start, &m->end, perms, &m->offset, &m->dev_major, &m->dev_minor,
		   &m->inode, &n) < 7 || !n || line[n] != '/')
		return false;
	snprintf(m->path, sizeof(m->path), "%.*s", (int)strcspn(line + n, "\n"), line + n);
	return true;
}

/* The load bias of the file of @m in the process, from the mapping's file offset. */
static bool map_bias(int pid, const struct py_map *m, uint64_t *bias)
{
	int fd = open_mapped(pid, m);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	bool ok = false;
	size_t i, n;
	GElf_Phdr ph;

	if (elf && !elf_getphdrnum(elf, &n)) {
		for (i = 0; i < n && !ok; i++) {
			uint64_t page_off;

			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
				continue;
			page_off = ph.p_offset & ~(uint64_t)0xfff;
			if (m->offset < page_off || m->offset >= ph.p_offset + ph.p_filesz)
				continue;
			*bias = m->start - ((ph.p_vaddr & ~(uint64_t)0xfff) + (m->offset - page_off));
			ok = true;
		}
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * A table layout, for @pid: 3.13+ reads its own _Py_DebugOffsets first;
 * else the layout must pass the check against the process. False: too
 * early to tell, look again later (@out is then PY_STATUS_NONE).
 */
static bool interp_table(int pid, struct py_interp *out)
{
	char why[112];
	int err;

	if (PY_MM(out->version) >= PY_VERSION_OF(3, 13, 0) &&
	    !pyoffsets_from_debug(py_read_process, (void *)(intptr_t)pid, out->runtime,
				  out->version, &out->off)) {
		out->source = PYOFFSETS_DEBUG_OFFSETS;
		snprintf(out->offsets, sizeof(out->offsets), "debug_offsets");
		return true;
	}
	err = pycheck_layout(out, pid, why, sizeof(why));
	if (err == -EAGAIN) {
		out->status = PY_STATUS_NONE;
		return false;
	}
	if (err) {
		out->status = PY_STATUS_NO_OFFSETS;
		snprintf(out->why, sizeof(out->why), "%u.%u table does not match this process: %s",
			 PY_MAJOR(out->version), PY_MINOR(out->version),
			 err == -EINVAL ? why : strerror(-err));
		return true;
	}
	snprintf(out->offsets, sizeof(out->offsets), "table %u.%u (checked)",
		 PY_MAJOR(out->version), PY_MINOR(out->version));
	return true;
}

/* @pid's interpreter in file @pf mapped at @m; false: look again later. */
static bool interp_from_file(int pid, const struct py_map *m, const struct py_file *pf,
			     struct py_interp *out)
{
	uint64_t bias = 0;
	int err;

	memset(out, 0, sizeof(*out));
	out->status = pf->status;
	snprintf(out->why, sizeof(out->why), "%s", pf->why);
	snprintf(out->path, sizeof(out->path), "%s", m->path);
	out->version = pf->version;
	out->micro_known = pf->micro_known;
	out->source = pf->source;
	out->off = pf->off;
	snprintf(out->offsets, sizeof(out->offsets), "%s", pf->offsets);
	if (pf->status != PY_STATUS_OK && PY_MM(pf->version) < PY_MM(PY_VERSION_OF(3, 13, 0)))
		return true;
	if (!map_bias(pid, m, &bias)) {
		out->status = PY_STATUS_NO_OFFSETS;
		snprintf(out->why, sizeof(out->why), "cannot place %.120s in the process",
			 m->path);
		return true;
	}
	out->runtime = pf->runtime_vaddr + bias;
	out->eval_start = pf->eval_vaddr + bias;
	out->eval_end = out->eval_start + (pf->eval_size ? pf->eval_size : 1);
	if (pf->eval_cold_size) {
		out->eval_cold_start = pf->eval_cold_vaddr + bias;
		out->eval_cold_end = out->eval_cold_start + pf->eval_cold_size;
	}
	out->types.code = pf->types.code ? pf->types.code + bias : 0;
	out->types.unicode = pf->types.unicode ? pf->types.unicode + bias : 0;
	out->types.bytes = pf->types.bytes ? pf->types.bytes + bias : 0;
	if (pf->source == PYOFFSETS_TABLE)
		return interp_table(pid, out);
	/* 3.13+ without DWARF or table: the process's own _Py_DebugOffsets */
	if (pf->status == PY_STATUS_OK || !pf->runtime_vaddr || !pf->eval_vaddr ||
	    pf->free_threaded)
		return true;
	err = pyoffsets_from_debug(py_read_process, (void *)(intptr_t)pid, out->runtime,
				   pf->version, &out->off);
	if (!err) {
		out->status = PY_STATUS_OK;
		out->source = PYOFFSETS_DEBUG_OFFSETS;
		snprintf(out->offsets, sizeof(out->offsets), "debug_offsets");
		out->why[0] = 0;
	} else if (err == -EPROTONOSUPPORT) {
		snprintf(out->why, sizeof(out->why), "free-threaded build (%u.%ut): not walked",
			 PY_MAJOR(pf->version), PY_MINOR(pf->version));
	}
	return true;
}

int py_finder_find(struct py_finder *f, int pid, bool wait, struct py_interp *out)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *maps;
	struct py_map m;
	uint64_t last_inode = 0;
	bool pending = false;
	int err = 0;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = fopen(path, "re");
	if (!maps)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getline(&line, &cap, maps) > 0) {
		struct py_file pf;

		if (!parse_map_line(line, &m) || m.inode == last_inode || !is_candidate(m.path))
			continue;
		last_inode = m.inode;	/* one look per file, at its first mapping */
		err = finder_file(f, pid, &m, wait, &pf);
		if (err)
			break;
		/* being read, or an executable that links libpython: look again */
		if (pf.pending || pf.status == PY_STATUS_NONE) {
			pending |= !pf.pending;
			continue;
		}
		/* a table layout that cannot be checked yet: look again */
		if (!interp_from_file(pid, &m, &pf, out)) {
			pending = true;
			continue;
		}
		if (out->status == PY_STATUS_OK)
			break;
	}
	free(line);
	fclose(maps);
	out->pending = out->status == PY_STATUS_NONE && pending;
	return err;
}

/* The address and size of section @name in the file @m maps; false: none. */
static bool mapped_section(int pid, const struct py_map *m, const char *name, uint64_t *addr,
			   uint64_t *size)
{
	int fd = open_mapped(pid, m);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;
	GElf_Shdr sh;

	if (elf && !elf_getshdrstrndx(elf, &shstrndx))
		while (!found && (scn = elf_nextscn(elf, scn))) {
			const char *s;

			if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
				continue;
			s = elf_strptr(elf, shstrndx, sh.sh_name);
			if (s && !strcmp(s, name)) {
				*addr = sh.sh_addr;
				*size = sh.sh_size;
				found = true;
			}
		}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return found;
}

int py_find_section(int pid, const char *name, const char *file_part, uint64_t *addr,
		    uint64_t *size)
{
	char path[64], *line = NULL;
	uint64_t last_inode = 0, bias;
	size_t cap = 0;
	struct py_map m;
	int err = -ENOENT;
	FILE *maps;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = fopen(path, "re");
	if (!maps)
		return errno == ENOENT ? -ESRCH : -errno;
	while (err == -ENOENT && getline(&line, &cap, maps) > 0) {
		if (!parse_map_line(line, &m) || m.inode == last_inode ||
		    (!is_candidate(m.path) && !strstr(base_name(m.path), file_part)))
			continue;
		last_inode = m.inode;	/* one look per file, at its first mapping */
		if (mapped_section(pid, &m, name, addr, size) && map_bias(pid, &m, &bias)) {
			*addr += bias;
			err = 0;
		}
	}
	free(line);
	fclose(maps);
	return err;
}
