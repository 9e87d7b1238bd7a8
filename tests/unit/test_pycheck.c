// SPDX-License-Identifier: GPL-2.0-only
/*
 * symbolize/pycheck: a table layout is checked against a live interpreter.
 * For each pyenv 3.8-3.13 on the machine, a child python runs a loop three
 * calls deep and a second thread that sleeps; the interpreter is found as
 * latprof finds it (its DWARF), then:
 *   - the table's layout for its release passes the check;
 *   - the same layout with one offset moved (thread list, a thread state's
 *     interpreter, thread id, frame, code object, ob_type as in a
 *     Py_TRACE_REFS build, names) never passes: it is refused with a
 *     reason, or (a thread state whose frame pointer reads NULL) stays
 *     "too early to tell", so it is never walked either; at most two of
 *     the moves per interpreter may end that way.
 * Needs only process_vm_readv on a child of our own, not root.
 */
#include "symbolize/pycheck.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/check.h"

static const char child_code[] =
	"import sys, threading, time\n"
	"def deep3():\n"
	"    while True:\n"
	"        pass\n"
	"def deep2():\n"
	"    deep3()\n"
	"def deep1():\n"
	"    deep2()\n"
	"threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
	"print('ready', flush=True)\n"
	"deep1()\n";

/*
 * One offset moved by a word: onto a neighbour that holds something else.
 * (interpreters.head + 8 is interpreters.main, the same pointer in a
 * process of one interpreter, and 3.11's co_name + 8 is co_qualname: moves
 * onto an equal value are not tried, they are not wrong.)
 */
struct moved {
	const char *name;
	size_t off;
	int32_t by;	/* added; 0: set to 24 (Py_TRACE_REFS's ob_type) */
};

#define MOVED(field, by) { #field, offsetof(struct py_offsets, field), by }
static const struct moved moves[] = {
	MOVED(runtime_interp_head, -8), MOVED(interp_threads_head, -8), MOVED(tstate_interp, 8),
	MOVED(tstate_next, 8), MOVED(tstate_thread_id, 8), MOVED(tstate_native_thread_id, 8),
	MOVED(tstate_frame, 8), MOVED(tstate_cframe, 8), MOVED(frame_back, 8),
	MOVED(frame_code, 8), MOVED(object_type, 0), MOVED(code_name, -8),
	MOVED(code_filename, 8), MOVED(code_linetable, 8), MOVED(frame_instr, 8),
};

/* Start @python on child_code; its pid, 0 if it cannot run. */
static int start_child(const char *python)
{
	char line[16] = "";
	int fds[2];
	FILE *f;
	int pid;

	if (access(python, X_OK) || pipe(fds))
		return 0;
	pid = fork();
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(python, python, "-c", child_code, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (!f || !fgets(line, sizeof(line), f) || strcmp(line, "ready\n")) {
		fprintf(stderr, "%s did not start\n", python);
		check_failures++;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = 0;
	}
	if (f)
		fclose(f);
	return pid;
}

/* The check, asked again while too early (the loop not yet entered). */
static int check_settled(const struct py_interp *in, int pid, char *why, size_t size)
{
	int err = -EAGAIN, i;

	for (i = 0; i < 200 && err == -EAGAIN; i++) {
		err = pycheck_layout(in, pid, why, size);
		if (err == -EAGAIN)
			usleep(10000);
	}
	return err;
}

static void check_python(struct py_finder *finder, const char *python)
{
	struct py_interp in, moved;
	char why[160];
	int pid = start_child(python), err, undecided = 0;
	size_t i;

	if (!pid) {
		fprintf(stderr, "skip: %s\n", python);
		return;
	}
	CHECK(!py_finder_find(finder, pid, true, &in));
	CHECK(in.status == PY_STATUS_OK && in.micro_known);
	if (in.status != PY_STATUS_OK)
		goto out;
	CHECK(!pyoffsets_from_table(in.version, true, &in.off));
	err = check_settled(&in, pid, why, sizeof(why));
	if (err) {
		fprintf(stderr, "%s: table layout refused: %s (%s)\n", python, strerror(-err),
			err == -EINVAL ? why : "");
		check_failures++;
	}
	for (i = 0; i < sizeof(moves) / sizeof(moves[0]); i++) {
		int32_t *field;

		moved = in;
		field = (int32_t *)((char *)&moved.off + moves[i].off);
		if (*field < 0)
			continue;	/* not in this version */
		/* 3.11+ names frames by co_qualname: co_name is not read */
		if (!strcmp(moves[i].name, "code_name") &&
		    PY_MM(in.version) >= PY_VERSION_OF(3, 11, 0))
			continue;
		*field = moves[i].by ? *field + moves[i].by : 24;
		why[0] = 0;
		err = check_settled(&moved, pid, why, sizeof(why));
		if (err == -EAGAIN && ++undecided <= 2) {
			fprintf(stderr, "%s: %s moved: still too early to tell\n", python,
				moves[i].name);
			continue;
		}
		if (err != -EINVAL || !why[0]) {
			fprintf(stderr, "%s: %s moved: %s, not refused\n", python, moves[i].name,
				err ? strerror(-err) : "passed");
			check_failures++;
		}
	}
	fprintf(stderr, "%u.%u.%u: table layout checked; %s moved: \"%s\"\n", PY_MAJOR(in.version),
		PY_MINOR(in.version), PY_MICRO(in.version), moves[i - 1].name, why);
out:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int main(void)
{
	static const char *const minors[] = { "3.8", "3.9", "3.10", "3.11", "3.12", "3.13" };
	struct py_finder *finder = py_finder_new(NULL, 0);
	char path[512], root[256] = "";
	FILE *f = popen("pyenv root 2>/dev/null", "r");
	int tested = 0;
	size_t i;

	if (f) {
		if (!fgets(root, sizeof(root), f))
			root[0] = 0;
		root[strcspn(root, "\n")] = 0;
		pclose(f);
	}
	CHECK(finder);
	for (i = 0; finder && root[0] && i < sizeof(minors) / sizeof(minors[0]); i++) {
		FILE *ls;

		snprintf(path, sizeof(path), "ls -d %s/versions/%s.*/bin/python%s 2>/dev/null",
			 root, minors[i], minors[i]);
		ls = popen(path, "r");
		if (ls && fgets(path, sizeof(path), ls)) {
			path[strcspn(path, "\n")] = 0;
			check_python(finder, path);
			tested++;
		}
		if (ls)
			pclose(ls);
	}
	py_finder_free(finder);
	if (!tested && !check_failures) {
		fprintf(stderr, "skip: no pyenv CPython 3.8-3.13\n");
		return 77;
	}
	return check_exit();
}
