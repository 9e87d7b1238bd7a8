// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Python view (src/pyview.h) on stacks built the way src/collect/build.c
 * stores them: each stack is checked as folded output names it, in the view
 * and with STACKS_FLAG_NATIVE (which must be the stack as recorded); then
 * the same view in the pprof and speedscope exports, and the report's slow
 * call site of a Python program. The stacks are those of real recordings
 * (docs/python.md), cut to the frames that matter:
 * - s.py under pyenv's 3.12: _start ... _PyEval_EvalFrame, three Python
 *   frames, the call dispatch, time_sleep, libc, the kernel, the syscall;
 * - a model server's thread: clone3 ... pythread_wrapper, asyncio's task
 *   step (a lib-dynload module) and Context.run between Python frames,
 *   numpy's BLAS between two more (kept), sock_recv of _socket (kept);
 * - a C program that links libpython but runs no Python code (untouched);
 * - a program that embeds the interpreter (its own frames kept at the root);
 * - 3.12's perf trampolines (-X perf), the interpreter's too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/export_formats.h"
#include "src/export_pprof.h"
#include "src/weight.h"
#include "src/profile.h"
#include "src/pyview.h"
#include "src/report.h"
#include "src/stacks.h"
#include "src/lib/strtab.h"
#include "tests/unit/check.h"

enum { COL_SYSCALLS, COL_LATENCY, COL_NR };

/* Mappings by the letter a frame spec starts with. */
static const struct {
	char letter;
	const char *file;
} files[] = {
	{ 'x', "/root/.pyenv/versions/3.12.1/bin/python3.12" },
	{ 'l', "/root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0" },
	{ 'c', "/usr/lib/x86_64-linux-gnu/libc.so.6" },
	{ 'n', "/venv/lib/python3.12/site-packages/numpy/core/"
	       "_multiarray_umath.cpython-312-x86_64-linux-gnu.so" },
	{ 'a', "/root/.pyenv/versions/3.12.1/lib/python3.12/lib-dynload/"
	       "_asyncio.cpython-312-x86_64-linux-gnu.so" },
	{ 's', "/root/.pyenv/versions/3.12.1/lib/python3.12/lib-dynload/"
	       "_socket.cpython-312-x86_64-linux-gnu.so" },
	{ 'k', PROFILE_KERNEL_MAPPING },
	{ 'p', PROFILE_PYTHON_MAPPING },
	{ 'e', "/usr/bin/embedder" },
	{ 'j', "[anon]" },
};

struct fixture {
	struct profile *p;
	uint64_t map[sizeof(files) / sizeof(files[0])];
	const char *specs[64];	/* interned: location spec_loc[i] */
	uint64_t spec_loc[64];
	size_t nr_specs;
};

/*
 * The location of "M:outer|inlined|..." (mapping letter M, the out-of-line
 * function first); a Python frame is "p:FUNCTION@FILE".
 */
static uint64_t location(struct fixture *fx, const char *spec)
{
	struct profile_line lines[4] = { 0 };
	char buf[256], *names[4], *save = NULL, *at;
	size_t i, m, n = 0;

	for (i = 0; i < fx->nr_specs; i++)
		if (!strcmp(fx->specs[i], spec))
			return fx->spec_loc[i];
	for (m = 0; files[m].letter != spec[0]; m++)
		;
	snprintf(buf, sizeof(buf), "%s", spec + 2);
	for (char *t = strtok_r(buf, "|", &save); t && n < 4; t = strtok_r(NULL, "|", &save))
		names[n++] = t;
	/* lines[] innermost first: the spec's last name is lines[0] */
	for (i = 0; i < n; i++) {
		const char *name = names[n - 1 - i], *file = "";

		at = strchr(names[n - 1 - i], '@');
		if (at) {
			*at = 0;
			file = at + 1;
		}
		lines[i].function_id = profile_function_id(fx->p, name, name, file, 0);
		CHECK(lines[i].function_id);
	}
	CHECK(fx->nr_specs < 64);
	fx->specs[fx->nr_specs] = profile_str(fx->p, spec);
	fx->spec_loc[fx->nr_specs] = profile_add_location(fx->p, fx->map[m],
							  0x1000 * (fx->nr_specs + 1), lines, n);
	CHECK(fx->spec_loc[fx->nr_specs]);
	return fx->spec_loc[fx->nr_specs++];
}

/* Add a sample of @frames (root first, NULL-terminated) taking @ns in @syscall. */
static void add_stack(struct fixture *fx, const char *comm, const char *syscall, int64_t ns,
		      const char *const *frames)
{
	struct profile_label labels[2] = {
		{ .key = "comm", .str = comm }, { .key = "syscall", .str = syscall },
	};
	uint64_t locs[64];
	int64_t values[COL_NR] = { 1, ns };
	size_t n = 0, i;

	while (frames[n])
		n++;
	for (i = 0; i < n; i++)
		locs[n - 1 - i] = location(fx, frames[i]);
	CHECK(profile_add_sample(fx->p, locs, n, values, labels, 2) == 0);
}

static const char *const sleep_stack[] = {
	"x:_start", "c:__libc_start_main", "l:Py_BytesMain", "l:Py_RunMain",
	"l:PyEval_EvalCode", "l:_PyEval_Vector|_PyEval_EvalFrame",
	"p:<module>@/tmp/s.py", "p:outer@/tmp/s.py", "p:inner@/tmp/s.py",
	"l:PyObject_Vectorcall|_PyObject_VectorcallTstate", "l:cfunction_vectorcall_O",
	"l:time_sleep|pysleep", "c:clock_nanosleep", "k:do_nanosleep", NULL,
};

static const char *const thread_stack[] = {
	"c:clone3", "c:start_thread", "l:pythread_wrapper", "l:thread_run",
	"l:_PyObject_Call", "l:_PyEval_Vector|_PyEval_EvalFrame",
	"p:Thread._bootstrap@/usr/lib/threading.py", "p:Thread.run@/usr/lib/threading.py",
	"l:context_run", "a:task_step|task_step_impl", "l:PyIter_Send", "l:gen_send_ex2",
	"p:handler@/srv/app.py", "l:PyObject_Vectorcall", "n:cblas_dgemm",
	"l:method_vectorcall_O", "l:slot_tp_call", "p:Model.predict@/srv/model.py",
	"l:method_vectorcall_VARARGS", "s:sock_recv|sock_call", "c:recv", NULL,
};

static const char *const c_stack[] = {
	"e:_start", "c:__libc_start_main", "e:main", "l:PyObject_Vectorcall", "c:read", NULL,
};

static const char *const embed_stack[] = {
	"e:_start", "c:__libc_start_main", "e:main", "e:run_plugin", "l:PyObject_Call",
	"l:_PyEval_Vector", "p:plugin@/etc/plugin.py", "l:PyNumber_Add", "l:long_add", NULL,
};

static const char *const perf_stack[] = {
	"x:_start", "l:Py_RunMain", "p:<module>@/tmp/s.py", "j:py::<module>:/tmp/s.py",
	"l:_PyEval_Vector", "p:inner@/tmp/s.py", "l:cfunction_vectorcall_O",
	"l:time_sleep", "c:clock_nanosleep", NULL,
};

/* A stripped interpreter (Debian testing's python3.15): its static functions unnamed. */
static const char *const stripped_stack[] = {
	"x:_start", "x:python3.12+0x2f4b0", "p:<module>@/tmp/w.py", "x:python3.12+0x1d2e40",
	"p:nap@/tmp/w.py", "x:python3.12+0x5def1b", "x:python3.12+0x7c65dd",
	"c:clock_nanosleep", NULL,
};

static struct fixture *fixture_new(void)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	size_t i;

	CHECK(fx && (fx->p = profile_new()));
	if (!fx || !fx->p)
		exit(1);
	CHECK(profile_add_type(fx->p, PROFILE_TYPE_SYSCALLS, "count") == COL_SYSCALLS);
	CHECK(profile_add_type(fx->p, PROFILE_TYPE_LATENCY, "nanoseconds") == COL_LATENCY);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct profile_mapping m = { .start = 0x100000 * (i + 1),
					     .limit = 0x100000 * (i + 2), .file = files[i].file,
					     .build_id = "" };

		if (files[i].letter == 'k') {
			m.start = 0xffffffff81000000;
			m.limit = 0xffffffff82000000;
		}
		fx->map[i] = profile_add_mapping(fx->p, &m);
		CHECK(fx->map[i]);
	}
	add_stack(fx, "python3.12", "clock_nanosleep", 800000000, sleep_stack);
	add_stack(fx, "python3.12", "recvfrom", 30000000, thread_stack);
	add_stack(fx, "capp", "read", 5000000, c_stack);
	add_stack(fx, "embedder", "write", 2000000, embed_stack);
	add_stack(fx, "python3.12", "clock_nanosleep", 1000000, perf_stack);
	return fx;
}

static void fixture_free(struct fixture *fx)
{
	profile_free(fx->p);
	free(fx);
}

/* Sample @i as folded output names it, and its innermost Python frame's name. */
static char *names_of(const struct fixture *fx, size_t i, unsigned int flags,
		      const char **python_leaf)
{
	struct stack_names st = { 0 };
	struct strtab *tab = strtab_new();
	char *out = calloc(1, 4096);
	size_t j, len = 0;

	CHECK(tab && out);
	CHECK(stack_names_of(fx->p, &fx->p->samples.items[i], flags, tab, &st) == 0);
	for (j = 0; j < st.nr; j++)
		len += snprintf(out + len, 4096 - len, "%s%s", j ? ";" : "", st.items[j]);
	if (python_leaf)
		*python_leaf = st.python_leaf ? strdup(st.items[st.python_leaf - 1]) : NULL;
	free(st.items);
	strtab_free(tab);
	return out;
}

#define CHECK_NAMES(fx, i, flags, want)                                  \
	do {                                                             \
		char *got_ = names_of(fx, i, flags, NULL);              \
		CHECK_STR(got_, want);                                   \
		free(got_);                                              \
	} while (0)

static void check_view(void)
{
	struct fixture *fx = fixture_new();
	const char *leaf;
	char *s;

	/* glue above <module> and the call dispatch below inner folded; time_sleep kept */
	CHECK_NAMES(fx, 0, STACKS_FLAG_SYSCALL_LEAF,
		    "python3.12;<module> (s.py);outer (s.py);inner (s.py);time_sleep;"
		    "pysleep_[i];clock_nanosleep;syscall:clock_nanosleep");
	CHECK_NAMES(fx, 0, 0,
		    "python3.12;<module> (s.py);outer (s.py);inner (s.py);time_sleep;"
		    "pysleep_[i];clock_nanosleep;do_nanosleep_[k]");
	/* --native: the stack as recorded */
	CHECK_NAMES(fx, 0, STACKS_FLAG_NATIVE | STACKS_FLAG_SYSCALL_LEAF,
		    "python3.12;_start;__libc_start_main;Py_BytesMain;Py_RunMain;"
		    "PyEval_EvalCode;_PyEval_Vector;_PyEval_EvalFrame_[i];<module> (s.py);"
		    "outer (s.py);inner (s.py);PyObject_Vectorcall;"
		    "_PyObject_VectorcallTstate_[i];cfunction_vectorcall_O;time_sleep;"
		    "pysleep_[i];clock_nanosleep;syscall:clock_nanosleep");
	s = names_of(fx, 0, STACKS_FLAG_NO_COMM, &leaf);
	CHECK_STR(leaf, "inner (s.py)");
	free((char *)leaf);
	free(s);

	/*
	 * A thread: from its first Python frame; asyncio's C task step and
	 * Context.run (the interpreter's) out, numpy's BLAS in, the dispatch
	 * below predict out, _socket's sock_recv in.
	 */
	CHECK_NAMES(fx, 1, STACKS_FLAG_SYSCALL_LEAF,
		    "python3.12;Thread._bootstrap (threading.py);Thread.run (threading.py);"
		    "handler (app.py);cblas_dgemm;Model.predict (model.py);sock_recv;"
		    "sock_call_[i];recv;syscall:recvfrom");
	/* no Python frame: untouched, even through libpython */
	CHECK_NAMES(fx, 2, STACKS_FLAG_SYSCALL_LEAF,
		    "capp;_start;__libc_start_main;main;PyObject_Vectorcall;read;syscall:read");
	s = names_of(fx, 2, 0, &leaf);
	CHECK(leaf == NULL);
	free(s);
	/* an embedder keeps its own frames; work below the Python frame stays */
	CHECK_NAMES(fx, 3, STACKS_FLAG_SYSCALL_LEAF,
		    "embedder;_start;main;run_plugin;plugin (plugin.py);PyNumber_Add;long_add;"
		    "syscall:write");
	/* -X perf trampolines are the interpreter's */
	CHECK_NAMES(fx, 4, STACKS_FLAG_SYSCALL_LEAF,
		    "python3.12;<module> (s.py);inner (s.py);time_sleep;clock_nanosleep;"
		    "syscall:clock_nanosleep");
	fixture_free(fx);
}

/*
 * A sample taken as a Python call enters or leaves: the callee's trampoline
 * is on the stack, its frame not (yet, or any more) in the walked chain.
 * The trampoline is the interpreter's below the innermost Python frame too.
 */
static const char *const perf_entry_stack[] = {
	"x:_start", "l:Py_RunMain", "p:<module>@/tmp/s.py", "j:py::<module>:/tmp/s.py",
	"l:_PyEval_Vector", "p:outer@/tmp/s.py", "j:py::inner:/tmp/s.py", NULL,
};

static void check_perf_entry(void)
{
	struct fixture *fx = fixture_new();
	size_t i = fx->p->samples.nr;

	add_stack(fx, "python3.12", "clock_nanosleep", 100000000, perf_entry_stack);
	CHECK_NAMES(fx, i, STACKS_FLAG_SYSCALL_LEAF,
		    "python3.12;<module> (s.py);outer (s.py);syscall:clock_nanosleep");
	fixture_free(fx);
}

/* Below the innermost Python frame, a stripped interpreter's unnamed frames go too. */
static void check_stripped(void)
{
	struct fixture *fx = fixture_new();
	size_t i = fx->p->samples.nr;

	add_stack(fx, "python3.15", "clock_nanosleep", 100000000, stripped_stack);
	CHECK_NAMES(fx, i, STACKS_FLAG_SYSCALL_LEAF,
		    "python3.15;<module> (w.py);nap (w.py);clock_nanosleep;"
		    "syscall:clock_nanosleep");
	CHECK_NAMES(fx, i, STACKS_FLAG_NATIVE | STACKS_FLAG_SYSCALL_LEAF,
		    "python3.15;_start;python3.12+0x2f4b0;<module> (w.py);python3.12+0x1d2e40;"
		    "nap (w.py);python3.12+0x5def1b;python3.12+0x7c65dd;clock_nanosleep;"
		    "syscall:clock_nanosleep");
	fixture_free(fx);
}

static void check_interpreter_files(void)
{
	CHECK(pyview_is_interpreter("/usr/bin/python3.11"));
	CHECK(pyview_is_interpreter("/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"));
	CHECK(pyview_is_interpreter("/usr/lib/python3.11/lib-dynload/_json.cpython-311.so"));
	CHECK(!pyview_is_interpreter("/usr/lib/python3/dist-packages/numpy/_core.so"));
	CHECK(!pyview_is_interpreter("/usr/lib/x86_64-linux-gnu/libc.so.6"));
	CHECK(!pyview_is_interpreter(PROFILE_PYTHON_MAPPING));
	CHECK(!pyview_is_interpreter(NULL));
}

/* Write format @format of @fx into memory. */
static char *export_of(struct fixture *fx, int format, unsigned int flags)
{
	struct profile_weight w;
	struct export_opts o = { .w = &w, .stack_flags = flags, .top = 10 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f && profile_weight_get(fx->p, "latency", &w) == 0);
	CHECK(export_write(f, format, fx->p, &o) == 0);
	fclose(f);
	return buf;
}

/* Every export shows the same view; the total latency stays. */
static void check_exports(void)
{
	struct fixture *fx = fixture_new();
	char *folded = export_of(fx, EXPORT_FORMAT_FOLDED, 0);
	char *native = export_of(fx, EXPORT_FORMAT_FOLDED, STACKS_FLAG_NATIVE);
	char *ss = export_of(fx, EXPORT_FORMAT_SPEEDSCOPE, 0);
	char *ss_native = export_of(fx, EXPORT_FORMAT_SPEEDSCOPE, STACKS_FLAG_NATIVE);
	struct profile_weight w;
	struct profile *n;

	CHECK(folded && strstr(folded, "python3.12;<module> (s.py);outer (s.py);inner (s.py);"
				       "time_sleep;pysleep_[i];clock_nanosleep;"
				       "syscall:clock_nanosleep 800000000\n"));
	/* the C program's PyObject_Vectorcall is the only one left */
	CHECK(folded && !strstr(folded, "_PyEval_") &&
	      strstr(folded, "PyObject_Vectorcall") ==
	      strstr(folded, "main;PyObject_Vectorcall;read") + strlen("main;"));
	CHECK(native && strstr(native, ";PyObject_Vectorcall;_PyObject_VectorcallTstate_[i];"));
	/* speedscope lists only the frames its samples use */
	CHECK(ss && strstr(ss, "\"time_sleep\"") && !strstr(ss, "cfunction_vectorcall_O") &&
	      !strstr(ss, "_PyEval_") && !strstr(ss, "context_run"));
	CHECK(ss_native && strstr(ss_native, "\"cfunction_vectorcall_O\""));

	CHECK(profile_weight_get(fx->p, "latency", &w) == 0);
	n = profile_for_weight(fx->p, &w, 0);
	CHECK(n && n->samples.nr == 5);
	/* 14 locations recorded, 6 shown: _start .. _PyEval_Vector and the dispatch out */
	CHECK(n && n->samples.items[0].nr_locs == 6);
	CHECK(n && n->samples.items[2].nr_locs == fx->p->samples.items[2].nr_locs);
	profile_free(n);
	n = profile_for_weight(fx->p, &w, STACKS_FLAG_NATIVE);
	CHECK(n && n->samples.items[0].nr_locs == 14);
	profile_free(n);
	free(folded);
	free(native);
	free(ss);
	free(ss_native);
	fixture_free(fx);
}

static char *slow_sites(struct fixture *fx, unsigned int flags)
{
	struct report_opts o = { .weight = "latency", .weight_unit = "nanoseconds", .top = 5,
				 .stack_flags = flags };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f && profile_set_meta(fx->p, "min_duration_us", "1000") == 0);
	CHECK(report_slow_sites(f, &o, fx->p) == 0);
	fclose(f);
	return buf;
}

/*
 * The slow call site of a Python stack is its innermost Python frames and
 * the C function they called, not three anonymous frames of that function.
 */
static void check_slow_sites(void)
{
	struct fixture *fx = fixture_new();
	char *got = slow_sites(fx, 0), *native = slow_sites(fx, STACKS_FLAG_NATIVE);

	CHECK_STR(got,
		  "\nSlow call sites (syscalls >= 1000 us, innermost frames)\n"
		  "    total   calls    max  site\n"
		  "    800ms       1    0ns  syscall:clock_nanosleep\n"
		  "                          <module> (s.py);outer (s.py);inner (s.py);time_sleep\n"
		  "     30ms       1    0ns  syscall:recvfrom\n"
		  "                          cblas_dgemm;Model.predict (model.py);sock_recv\n"
		  "    5.0ms       1    0ns  syscall:read\n"
		  "                          _start;main;PyObject_Vectorcall\n"
		  "    2.0ms       1    0ns  syscall:write\n"
		  "                          main;run_plugin;plugin (plugin.py);PyNumber_Add\n"
		  "    1.0ms       1    0ns  syscall:clock_nanosleep\n"
		  "                          <module> (s.py);inner (s.py);time_sleep\n");
	/* --native: the innermost frames, as before the Python view */
	CHECK(native && strstr(native, "\n                          "
					 "cfunction_vectorcall_O;time_sleep;pysleep_[i]\n"));
	free(got);
	free(native);
	fixture_free(fx);
}

int main(void)
{
	check_view();
	check_stripped();
	check_perf_entry();
	check_interpreter_files();
	check_exports();
	check_slow_sites();
	return check_exit();
}
