// SPDX-License-Identifier: GPL-2.0-only
/*
 * serve's cumulative counters (see metrics.h): three tables with a hash
 * index each, per (comm, syscall), per comm, and pid -> comm. The hash map
 * has no removal, so removing is rebuilding: the pid table is rebuilt
 * without the exited processes at the end of each window, and the two
 * series tables, with their names, are copied without the idle series into
 * new ones that replace them only once complete. The tables' layout is in
 * metrics_priv.h; writing them for a scrape is metrics_prom.c's.
 */
#include "src/metrics.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "src/lib/hashmap.h"
#include "src/metrics_priv.h"
#include "src/lib/strtab.h"
#include "src/lib/util.h"

/* A table of this many live processes is dropped and refilled from /proc. */
#define METRICS_MAX_PROCS 65536
/* Idle series are looked for every ttl / 4, and at least this often. */
#define METRICS_MAX_SWEEP_NS (10 * NSEC_PER_SEC)

static int series_init(struct metrics_series *s)
{
	*s = (struct metrics_series){ .names = strtab_new() };
	return s->names ? 0 : -ENOMEM;
}

static void series_release(struct metrics_series *s)
{
	strtab_free(s->names);
	free(s->sys.items);
	free(s->tasks.items);
	hashmap_release(&s->sys_idx);
	hashmap_release(&s->task_idx);
	*s = (struct metrics_series){ 0 };
}

struct metrics *metrics_new(size_t max_series, uint64_t ttl_ns)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (series_init(&m->series)) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	m->max_series = max_series;
	m->ttl_ns = ttl_ns;
	return m;
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	series_release(&m->series);
	free(m->procs.items);
	hashmap_release(&m->proc_idx);
	free(m);
}

static struct metrics_proc *proc_find(struct metrics *m, pid_t pid)
{
	uint64_t i = HASHMAP_TO_NUM(hashmap_get(&m->proc_idx, NULL, (uint64_t)pid, 0));

	return i ? &m->procs.items[i - 1] : NULL;
}

static void proc_forget_all(struct metrics *m)
{
	m->procs.nr = 0;
	hashmap_release(&m->proc_idx);
}

static struct metrics_proc *proc_add(struct metrics *m, pid_t pid)
{
	struct metrics_proc *p = proc_find(m, pid);

	if (p)
		return p;
	if (m->procs.nr >= METRICS_MAX_PROCS)
		proc_forget_all(m);
	if (array_grow(&m->procs, m->procs.nr + 1) ||
	    hashmap_put(&m->proc_idx, NULL, (uint64_t)pid, 0, HASHMAP_NUM(m->procs.nr + 1)))
		return NULL;
	p = &m->procs.items[m->procs.nr++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

void metrics_proc_event(struct metrics *m, int type, pid_t pid, const char *comm)
{
	struct metrics_proc *p = type == 3 ? proc_find(m, pid) : proc_add(m, pid);

	if (!p)
		return;
	if (type == 3) {
		p->exited_in = m->window + 1;
		return;
	}
	p->exited_in = 0;	/* a new process may reuse a pid */
	if (comm && *comm)
		snprintf(p->comm, sizeof(p->comm), "%.*s", METRICS_COMM_LEN, comm);
}

static void read_proc_comm(pid_t pid, char *buf, size_t size)
{
	char path[48], *data = NULL;
	size_t len = 0;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (read_file(path, &data, &len))
		return;
	while (len && (data[len - 1] == '\n'))
		data[--len] = 0;
	snprintf(buf, size, "%.*s", METRICS_COMM_LEN, data);
	free(data);
}

const char *metrics_comm_of(struct metrics *m, pid_t pid, char *buf, size_t size)
{
	struct metrics_proc *p = proc_find(m, pid);

	if (p && p->comm[0]) {
		snprintf(buf, size, "%s", p->comm);
		return buf;
	}
	read_proc_comm(pid, buf, size);
	/* remember it: the process may be gone at the next drain */
	if (buf[0] && (p || (p = proc_add(m, pid))))
		snprintf(p->comm, sizeof(p->comm), "%s", buf);
	return buf;
}

/* Series past the limit are counted under one name. */
static const char *other_comm(struct metrics *m)
{
	return strtab_intern(m->series.names, METRICS_OTHER);
}

/* The series of (@comm, @name), both interned in s->names: index + 1, or 0. */
static uint64_t sys_find(const struct metrics_series *s, const char *comm, const char *name)
{
	return HASHMAP_TO_NUM(hashmap_get(&s->sys_idx, comm, (uint64_t)(uintptr_t)name, 0));
}

/* A new zeroed series of (@comm, @name), interned in s->names, or NULL (ENOMEM). */
static struct metrics_sys *sys_new(struct metrics_series *s, const char *comm, const char *name)
{
	struct metrics_sys *x;

	if (array_grow(&s->sys, s->sys.nr + 1) ||
	    hashmap_put(&s->sys_idx, comm, (uint64_t)(uintptr_t)name, 0,
			HASHMAP_NUM(s->sys.nr + 1)))
		return NULL;
	x = &s->sys.items[s->sys.nr++];
	memset(x, 0, sizeof(*x));
	x->comm = comm;
	snprintf(x->st.name, SYS_NAME_LEN, "%s", name);
	return x;
}

int metrics_add_sys(struct metrics *m, const struct sys_stat *s)
{
	struct metrics_series *t = &m->series;
	char buf[METRICS_COMM_LEN + 1];
	const char *comm = metrics_comm_of(m, s->pid, buf, sizeof(buf)), *name;
	struct metrics_sys *x;
	uint64_t i;

	comm = strtab_intern(t->names, comm[0] ? comm : "unknown");
	name = strtab_intern(t->names, s->name);
	if (!comm || !name)
		return -ENOMEM;
	i = sys_find(t, comm, name);
	if (!i && t->sys.nr >= m->max_series) {
		comm = other_comm(m);
		if (!comm)
			return -ENOMEM;
		i = sys_find(t, comm, name);
	}
	x = i ? &t->sys.items[i - 1] : sys_new(t, comm, name);
	if (!x)
		return -ENOMEM;
	sys_stat_merge(&x->st, s);
	x->updated_ns = m->now_ns;
	return 0;
}

/* A new zeroed per-comm series, @comm interned in s->names, or NULL (ENOMEM). */
static struct metrics_task *task_new(struct metrics_series *s, const char *comm)
{
	struct metrics_task *x;

	if (array_grow(&s->tasks, s->tasks.nr + 1) ||
	    hashmap_put(&s->task_idx, comm, 0, 0, HASHMAP_NUM(s->tasks.nr + 1)))
		return NULL;
	x = &s->tasks.items[s->tasks.nr++];
	*x = (struct metrics_task){ .comm = comm };
	return x;
}

static struct metrics_task *task_of(struct metrics *m, pid_t pid, const char *thread_comm)
{
	struct metrics_series *t = &m->series;
	char buf[METRICS_COMM_LEN + 1];
	const char *comm = metrics_comm_of(m, pid, buf, sizeof(buf));
	struct metrics_task *x;
	uint64_t i;

	comm = strtab_intern(t->names, comm[0] ? comm : thread_comm[0] ? thread_comm : "unknown");
	if (!comm)
		return NULL;
	i = HASHMAP_TO_NUM(hashmap_get(&t->task_idx, comm, 0, 0));
	if (!i && t->tasks.nr >= m->max_series) {
		comm = other_comm(m);
		i = comm ? HASHMAP_TO_NUM(hashmap_get(&t->task_idx, comm, 0, 0)) : 0;
		if (!comm)
			return NULL;
	}
	x = i ? &t->tasks.items[i - 1] : task_new(t, comm);
	if (x)
		x->updated_ns = m->now_ns;
	return x;
}

int metrics_add_cpu(struct metrics *m, pid_t pid, const char *comm, uint64_t samples)
{
	struct metrics_task *t = task_of(m, pid, comm);

	if (!t)
		return -ENOMEM;
	t->samples += samples;
	return 0;
}

int metrics_add_offcpu(struct metrics *m, pid_t pid, const char *comm, uint64_t blocked_ns,
		       uint64_t preempted_ns)
{
	struct metrics_task *t = task_of(m, pid, comm);

	if (!t)
		return -ENOMEM;
	t->blocked_ns += blocked_ns;
	t->preempted_ns += preempted_ns;
	return 0;
}

int metrics_add_stall(struct metrics *m, pid_t pid, const char *comm, uint64_t ns)
{
	struct metrics_task *t = task_of(m, pid, comm);

	if (!t)
		return -ENOMEM;
	sys_stat_add(&t->stall, ns);
	return 0;
}

/*
 * A process that exited in this window may still have counts in the maps
 * that the next drain takes out: it is forgotten one window later.
 */
static int proc_end_window(struct metrics *m)
{
	struct hashmap idx = { 0 };
	size_t i, n = 0;
	int err = 0;

	for (i = 0; i < m->procs.nr && !err; i++) {
		struct metrics_proc *p = &m->procs.items[i];

		if (p->exited_in && p->exited_in <= m->window)
			continue;
		m->procs.items[n] = *p;
		err = hashmap_put(&idx, NULL, (uint64_t)p->pid, 0, HASHMAP_NUM(n + 1));
		n++;
	}
	if (err) {
		/* entries were already moved: start over, from /proc */
		hashmap_release(&idx);
		proc_forget_all(m);
		return err;
	}
	hashmap_release(&m->proc_idx);
	m->proc_idx = idx;
	m->procs.nr = n;
	m->window++;
	return 0;
}

static bool series_is_idle(const struct metrics *m, uint64_t updated_ns)
{
	return m->now_ns >= updated_ns && m->now_ns - updated_ns >= m->ttl_ns;
}

static size_t count_live(const struct metrics *m, size_t *nr_tasks)
{
	const struct metrics_series *s = &m->series;
	size_t i, n = 0;

	for (i = 0; i < s->sys.nr; i++)
		n += !series_is_idle(m, s->sys.items[i].updated_ns);
	*nr_tasks = 0;
	for (i = 0; i < s->tasks.nr; i++)
		*nr_tasks += !series_is_idle(m, s->tasks.items[i].updated_ns);
	return n;
}

/* Copy the (comm, syscall) series still counting into @next. 0 or -ENOMEM. */
static int copy_live_sys(const struct metrics *m, struct metrics_series *next)
{
	const struct metrics_sys *x;
	struct metrics_sys *y;
	const char *comm, *name;

	for (x = m->series.sys.items; x < m->series.sys.items + m->series.sys.nr; x++) {
		if (series_is_idle(m, x->updated_ns))
			continue;
		comm = strtab_intern(next->names, x->comm);
		name = strtab_intern(next->names, x->st.name);
		y = comm && name ? sys_new(next, comm, name) : NULL;
		if (!y)
			return -ENOMEM;
		*y = *x;
		y->comm = comm;
	}
	return 0;
}

/* The same for the per-comm series. */
static int copy_live_tasks(const struct metrics *m, struct metrics_series *next)
{
	const struct metrics_task *x;
	struct metrics_task *y;
	const char *comm;

	for (x = m->series.tasks.items; x < m->series.tasks.items + m->series.tasks.nr; x++) {
		if (series_is_idle(m, x->updated_ns))
			continue;
		comm = strtab_intern(next->names, x->comm);
		y = comm ? task_new(next, comm) : NULL;
		if (!y)
			return -ENOMEM;
		*y = *x;
		y->comm = comm;
	}
	return 0;
}

/*
 * Remove the idle series: the others are copied into new tables, allocated
 * for what remains (so a burst of names does not keep its memory) with a new
 * strtab (so do names no series uses any more), which replace the old ones
 * only once complete. 0 or -ENOMEM, nothing changed.
 */
static int series_expire(struct metrics *m)
{
	struct metrics_series next;
	size_t nr_sys, nr_tasks;
	int err;

	nr_sys = count_live(m, &nr_tasks);
	/* names counted under "other" pile up in the strtab: rebuilt too */
	if (nr_sys == m->series.sys.nr && nr_tasks == m->series.tasks.nr &&
	    strtab_size(m->series.names) <= 4 * m->max_series)
		return 0;
	err = series_init(&next);
	if (!err)
		err = array_grow(&next.sys, nr_sys);
	if (!err)
		err = array_grow(&next.tasks, nr_tasks);
	if (!err)
		err = copy_live_sys(m, &next);
	if (!err)
		err = copy_live_tasks(m, &next);
	if (err) {
		series_release(&next);
		return err;
	}
	m->expired += m->series.sys.nr - nr_sys + m->series.tasks.nr - nr_tasks;
	series_release(&m->series);
	m->series = next;
	return 0;
}

static void series_end_window(struct metrics *m, uint64_t now_ns)
{
	uint64_t every_ns = m->ttl_ns / 4 < METRICS_MAX_SWEEP_NS ? m->ttl_ns / 4 :
				 METRICS_MAX_SWEEP_NS;
	size_t i;

	if (!m->dated) {
		/* added before any drain had a time: they date from this one */
		for (i = 0; i < m->series.sys.nr; i++)
			m->series.sys.items[i].updated_ns = now_ns;
		for (i = 0; i < m->series.tasks.nr; i++)
			m->series.tasks.items[i].updated_ns = now_ns;
		m->swept_ns = now_ns;
		m->dated = true;
	}
	/*
	 * Idle is judged at the previous drain's time, the date of what this
	 * window added: a gap of the TTL between two drains expires nothing
	 * that was counted in between. A failed copy leaves the tables as
	 * they were; the next drain tries again.
	 */
	if (m->ttl_ns && now_ns - m->swept_ns >= every_ns && !series_expire(m))
		m->swept_ns = now_ns;
	m->now_ns = now_ns;
}

int metrics_end_window(struct metrics *m, uint64_t now_ns)
{
	series_end_window(m, now_ns);
	return proc_end_window(m);
}

size_t metrics_nr_procs(const struct metrics *m)
{
	return m->procs.nr;
}

size_t metrics_nr_series(const struct metrics *m)
{
	return m->series.sys.nr;
}

size_t metrics_nr_tasks(const struct metrics *m)
{
	return m->series.tasks.nr;
}

size_t metrics_sys_sum(const struct metrics *m, const char *syscall, const char *comm,
		       struct sys_stat *out)
{
	const struct metrics_sys *ms;
	size_t i, n = 0;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < m->series.sys.nr; i++) {
		ms = &m->series.sys.items[i];
		if (strcmp(ms->st.name, syscall) || (comm && strcmp(ms->comm, comm)))
			continue;
		sys_stat_merge(out, &ms->st);
		n++;
	}
	return n;
}
