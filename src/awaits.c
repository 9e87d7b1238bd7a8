// SPDX-License-Identifier: GPL-2.0-only
/*
 * Await attribution (awaits.h): per traced 3.14+ Python process, its
 * asyncio structures found once (the AsyncioDebug section, which 3.14
 * maps only when asyncio is imported: looked for again every second
 * until then), then a walk of its tasks each period. A walk's own time
 * paces the next: at most 1/AWAITS_MAX_SHARE of the time goes to walking,
 * and each walk charges the time since the last, so a slower pace moves
 * no time, it only samples more coarsely.
 */
#include "src/awaits.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "bpf/latprof.h"
#include "src/lib/hashmap.h"
#include "src/lib/strtab.h"
#include "src/lib/util.h"
#include "src/profile.h"
#include "src/pystacks.h"
#include "src/stackagg.h"
#include "symbolize/pyasync.h"
#include "symbolize/python.h"

/*
 * Looks for asyncio in a process: often at first (a script imports it at
 * once, and its first awaits follow), then every second.
 */
#define AWAITS_FIND_FIRST_NS (2 * NSEC_PER_SEC)
#define AWAITS_FIND_FIRST_EVERY_NS (NSEC_PER_SEC / 100)
#define AWAITS_FIND_EVERY_NS NSEC_PER_SEC
#define AWAITS_MAX_SHARE 50			/* walks take 1/50 of the time at most */
#define AWAITS_MAX_GAP_NS NSEC_PER_SEC		/* longest time one walk charges */
#define AWAITS_MAX_TASKS 4096			/* tasks looked at per process and walk */
/*
 * Task names kept apart per process: a service that names each request's
 * task uniquely would otherwise grow a frame per request. asyncio's own
 * names ("Task-N", an int until asked for) are one name, "Task-*".
 */
#define AWAITS_MAX_NAMES 256
#define AWAITS_OTHER_NAME "(other names)"
#define AWAITS_AUTO_NAME "Task-*"
#define AWAITS_MAX_CACHED 65536			/* task names remembered per process */

enum aw_state {
	AW_STATE_LOOKING,	/* asyncio not found (yet) */
	AW_STATE_READY,		/* walked */
	AW_STATE_DONE,		/* never walked again: why says why, when it is to be said */
};

struct aw_proc {
	int pid;
	uint32_t gen;
	enum aw_state state;
	char why[96];			/* DONE without a walk: why, for the metadata ("": nothing
					 * to say, e.g. asyncio never imported) */
	struct pyasync pa;
	uint64_t added_ns;		/* when found to run Python */
	uint64_t next_ns;		/* the next walk or look */
	uint64_t first_ns;		/* the first walk (CLOCK_MONOTONIC) */
	uint64_t last_ns;		/* the last walk */
	uint64_t pace_ns;		/* the time between the last walk and the next */
	uint64_t max_gap_ns;		/* the most one walk charged: an await's error bound */
	uint64_t walks, charged_ns;
	struct pyasync_stats st;
	struct hashmap names;		/* (NULL, task, name object) -> interned name */
	struct hashmap distinct;	/* (NULL, name hash, length) -> interned name: names kept */
	struct hashmap comms;		/* (NULL, tid, 0) -> interned thread name */
};

struct awaits {
	struct pystacks *ps;
	struct stackagg *agg;
	struct strtab *strs;
	uint64_t period_ns;
	unsigned int hz;
	struct { struct aw_proc **items; size_t nr, alloc; } procs;
	uint64_t walks, walk_ns;	/* every process's walks and their time */
	uint64_t charged_ns;
	int err;			/* a callback's ENOMEM */
	/* the walk in progress */
	struct aw_proc *cur;
	uint64_t dt_ns;
};

struct awaits *awaits_new(struct pystacks *ps, struct stackagg *agg, unsigned int hz)
{
	struct awaits *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->strs = strtab_new();
	if (!a->strs) {
		free(a);
		errno = ENOMEM;
		return NULL;
	}
	a->ps = ps;
	a->agg = agg;
	a->hz = hz;
	a->period_ns = NSEC_PER_SEC / hz;
	return a;
}

static void proc_free_maps(struct aw_proc *p)
{
	pyasync_release(&p->pa);
	hashmap_release(&p->names);
	hashmap_release(&p->distinct);
	hashmap_release(&p->comms);
}

static void proc_free(struct aw_proc *p)
{
	proc_free_maps(p);
	free(p);
}

void awaits_free(struct awaits *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->procs.nr; i++)
		proc_free(a->procs.items[i]);
	free(a->procs.items);
	strtab_free(a->strs);
	free(a);
}

void awaits_forget(struct awaits *a, int pid, uint32_t new_gen)
{
	size_t i = 0;

	while (i < a->procs.nr) {
		struct aw_proc *p = a->procs.items[i];

		if (p->pid != pid || (new_gen && p->gen == new_gen)) {
			i++;
			continue;
		}
		/* one never walked has nothing for the metadata but why not */
		if (!p->walks && (p->state == AW_STATE_LOOKING || !p->why[0])) {
			proc_free(p);
			a->procs.items[i] = a->procs.items[--a->procs.nr];
			continue;
		}
		p->state = AW_STATE_DONE;
		proc_free_maps(p);
		i++;
	}
}

void awaits_add(struct awaits *a, int pid, uint32_t gen)
{
	struct aw_proc *p;
	size_t i;

	for (i = 0; i < a->procs.nr; i++)
		if (a->procs.items[i]->pid == pid && a->procs.items[i]->gen == gen)
			return;
	/* one walker per process: two charged every await twice */
	awaits_forget(a, pid, gen);
	p = calloc(1, sizeof(*p));
	if (!p || array_grow(&a->procs, a->procs.nr + 1)) {
		free(p);
		return;	/* this process goes without: nothing else depends on it */
	}
	p->pid = pid;
	p->gen = gen;
	p->added_ns = now_ns();
	a->procs.items[a->procs.nr++] = p;
}

int awaits_due_ms(const struct awaits *a, uint64_t now_ns)
{
	uint64_t due = UINT64_MAX;
	size_t i;

	for (i = 0; i < a->procs.nr; i++)
		if (a->procs.items[i]->state != AW_STATE_DONE && a->procs.items[i]->next_ns < due)
			due = a->procs.items[i]->next_ns;
	if (due == UINT64_MAX)
		return -1;
	return due <= now_ns ? 0 : (int)((due - now_ns + 999999) / 1000000);
}

/* @p is not walked, for reason @why ("": none to give). */
static void proc_done(struct aw_proc *p, const char *why)
{
	p->state = AW_STATE_DONE;
	snprintf(p->why, sizeof(p->why), "%s", why);
}

/* Find @p's asyncio structures; still LOOKING when asyncio is not loaded yet. */
static void proc_find(struct awaits *a, struct aw_proc *p)
{
	const struct py_interp *in = pystacks_interp(a->ps, p->pid, p->gen);
	uint64_t addr, size;
	char why[96];
	int err;

	if (!in) {
		proc_done(p, "no walkable Python");
		return;
	}
	if (PY_MM(in->version) < PY_VERSION_OF(3, 14, 0)) {
		snprintf(why, sizeof(why), "CPython %u.%u: needs 3.14+", PY_MAJOR(in->version),
			 PY_MINOR(in->version));
		proc_done(p, why);
		return;
	}
	p->pa = (struct pyasync){
		.read = py_read_process, .readv = py_readv_process,
		.arg = (void *)(intptr_t)p->pid,
		.version = in->version, .runtime = in->runtime, .off = in->off,
		.types = in->types,
	};
	err = pyoffsets_gen_from_debug(py_read_process, p->pa.arg, in->runtime, in->version,
				       &p->pa.gen);
	if (!err) {
		err = py_find_section(p->pid, PYASYNC_SECTION, "_asyncio", &addr, &size);
		if (err == -ENOENT)
			return;		/* asyncio not imported (yet) */
		if (!err)
			err = pyasync_offsets_read(py_read_process, p->pa.arg, addr, size,
						   &p->pa.aio);
		if (!err)
			err = pyasync_check(&p->pa);
	}
	if (err == -ESRCH) {
		proc_done(p, "");	/* exited: its exit event follows */
	} else if (err) {
		snprintf(why, sizeof(why), "%s or generator offsets unusable: %s", PYASYNC_SECTION,
			 strerror(-err));
		proc_done(p, why);
	} else {
		p->state = AW_STATE_READY;
	}
}

/* The thread name of @tid of @p (the process's for 0), from /proc. */
static const char *thread_comm(struct awaits *a, struct aw_proc *p, uint32_t tid)
{
	const char *s = hashmap_get(&p->comms, NULL, tid, 0);
	char path[64], comm[LP_COMM_LEN + 1] = "";
	FILE *f;

	if (s)
		return s;
	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%u/comm", p->pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/comm", p->pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	s = strtab_intern(a->strs, comm);
	if (s && hashmap_put(&p->comms, NULL, tid, 0, (void *)s))
		return NULL;
	return s;
}

/* FNV-1a of @s: the name's key in aw_proc.distinct. */
static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	return h;
}

/* The interned name @name is shown under: itself, or AWAITS_OTHER_NAME past the cap. */
static const char *kept_name(struct awaits *a, struct aw_proc *p, const char *name)
{
	uint64_t h = name_hash(name), len = strlen(name);
	const char *s = hashmap_get(&p->distinct, NULL, h, len);

	if (s && !strcmp(s, name))
		return s;
	/* past the cap, or (rarely) another name with the same hash and length */
	if (s || p->distinct.nr >= AWAITS_MAX_NAMES)
		return strtab_intern(a->strs, AWAITS_OTHER_NAME);
	s = strtab_intern(a->strs, name);
	return s && !hashmap_put(&p->distinct, NULL, h, len, (void *)s) ? s : NULL;
}

/* The name @t is shown under; NULL on ENOMEM. */
static const char *task_name(struct awaits *a, struct aw_proc *p, const struct pyasync_task *t)
{
	const char *s = hashmap_get(&p->names, NULL, t->addr, t->name);
	char *name = NULL;

	if (s)
		return s;
	if (pyasync_task_name(&p->pa, t->name, &name))
		return "?";
	if (!strncmp(name, "Task-", 5) && name[5] >= '0' && name[5] <= '9' &&
	    strspn(name + 5, "0123456789") == strlen(name + 5))
		s = strtab_intern(a->strs, AWAITS_AUTO_NAME);
	else
		s = kept_name(a, p, name);
	free(name);
	/* by task and name object: a task or name freed, its address reused, is read anew */
	if (p->names.nr >= AWAITS_MAX_CACHED)
		hashmap_release(&p->names);
	return s && !hashmap_put(&p->names, NULL, t->addr, t->name, (void *)s) ? s : NULL;
}

static void charge(void *arg, const struct pyasync_task *t)
{
	struct awaits *a = arg;
	struct aw_proc *p = a->cur;
	struct stackagg_key key = {
		.tgid = (uint32_t)p->pid, .gen = p->gen, .kstack_id = -ENOENT,
		.kind = LP_SAMPLE_AWAIT, .nr = -1,
	};
	struct stackagg_values v = { .await_ns = a->dt_ns };
	uint64_t pcs[PYASYNC_MAX_FRAMES + 1];
	const char *comm = thread_comm(a, p, t->tid), *name = task_name(a, p, t);
	size_t n;

	if (!comm || !name) {
		a->err = -ENOMEM;
		return;
	}
	memcpy(key.comm, comm, strnlen(comm, sizeof(key.comm)));
	n = pystacks_await_pcs(a->ps, p->pid, p->gen, t, name, pcs, ARRAY_SIZE(pcs));
	if (!n)
		return;
	if (stackagg_add(a->agg, &key, pcs, n, &v)) {
		a->err = -ENOMEM;
		return;
	}
	p->charged_ns += a->dt_ns;
	a->charged_ns += a->dt_ns;
}

static void proc_walk(struct awaits *a, struct aw_proc *p, uint64_t now)
{
	/* its CPU time, not the wall's: a busy machine's preemption is no cost of ours */
	uint64_t took, start = thread_cpu_ns();
	int err;

	a->cur = p;
	/* a slower pace moves no time: up to the pace chosen last, and a second more */
	a->dt_ns = p->last_ns ? now - p->last_ns : a->period_ns;
	if (a->dt_ns > p->pace_ns + AWAITS_MAX_GAP_NS)
		a->dt_ns = p->pace_ns + AWAITS_MAX_GAP_NS;
	if (a->dt_ns > p->max_gap_ns)
		p->max_gap_ns = a->dt_ns;
	p->last_ns = now;
	if (!p->first_ns)
		p->first_ns = now;
	err = pyasync_walk(&p->pa, AWAITS_MAX_TASKS, charge, a, &p->st);
	/*
	 * Not yet readable is no reason to stop: a 3.15 executable has the
	 * section before its interpreter exists (no interpreter yet: -ENOENT).
	 */
	if (err == -ENOMEM)
		a->err = err;
	else if (err == -ESRCH)
		proc_done(p, "");	/* gone: its exit event follows */
	else if (err)
		p->st.unreadable++;
	took = thread_cpu_ns() - start;
	p->walks++;
	a->walks++;
	a->walk_ns += took;
	p->pace_ns = took * AWAITS_MAX_SHARE;
	if (p->pace_ns < a->period_ns)
		p->pace_ns = a->period_ns;
	p->next_ns = now + p->pace_ns;
}

int awaits_tick(struct awaits *a, uint64_t now_ns)
{
	size_t i;

	for (i = 0; i < a->procs.nr && !a->err; i++) {
		struct aw_proc *p = a->procs.items[i];

		if (p->state == AW_STATE_DONE || p->next_ns > now_ns)
			continue;
		if (p->state == AW_STATE_LOOKING) {
			proc_find(a, p);
			p->next_ns = now_ns + (now_ns - p->added_ns < AWAITS_FIND_FIRST_NS ?
					       AWAITS_FIND_FIRST_EVERY_NS : AWAITS_FIND_EVERY_NS);
		}
		if (p->state == AW_STATE_READY)
			proc_walk(a, p, now_ns);
	}
	return a->err;
}

static int meta_proc(struct profile *pr, const struct aw_proc *p, const char *what, uint64_t v)
{
	char key[64];

	snprintf(key, sizeof(key), "proc.%d.awaits_%s", p->pid, what);
	return profile_set_meta_u64(pr, key, v);
}

int awaits_store(const struct awaits *a, struct profile *pr)
{
	char key[64], val[128];
	size_t i;
	int err = profile_set_meta_u64(pr, "awaits.hz", a->hz);

	err = err ?: profile_set_meta_u64(pr, "awaits.walks", a->walks);
	err = err ?: profile_set_meta_u64(pr, "awaits.walk_ns", a->walk_ns);
	err = err ?: profile_set_meta_u64(pr, "awaits.charged_ns", a->charged_ns);
	for (i = 0; !err && i < a->procs.nr; i++) {
		const struct aw_proc *p = a->procs.items[i];

		if (!p->walks && !p->why[0])
			continue;	/* still looking (asyncio never imported), or exited */
		snprintf(key, sizeof(key), "proc.%d.awaits", p->pid);
		snprintf(val, sizeof(val), "%s", p->walks ? "asyncio" : p->why);
		err = profile_set_meta(pr, key, val);
		if (!err && p->walks) {
			err = meta_proc(pr, p, "walks", p->walks);
			err = err ?: meta_proc(pr, p, "tasks", p->st.tasks);
			err = err ?: meta_proc(pr, p, "suspended", p->st.suspended);
			err = err ?: meta_proc(pr, p, "unreadable", p->st.unreadable);
			err = err ?: meta_proc(pr, p, "cut", p->st.cut);
			err = err ?: meta_proc(pr, p, "truncated", p->st.truncated);
			err = err ?: meta_proc(pr, p, "charged_ns", p->charged_ns);
			err = err ?: meta_proc(pr, p, "since_ns", p->first_ns);
			err = err ?: meta_proc(pr, p, "max_gap_ns", p->max_gap_ns);
		}
	}
	return err;
}
