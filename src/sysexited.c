// SPDX-License-Identifier: GPL-2.0-only
/* Exited processes' syscall statistics in bounded memory (see sysexited.h). */
#include "src/sysexited.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "src/lib/util.h"

uint32_t sys_exited_name_pid(size_t i)
{
	return SYS_EXITED_PID_BASE + (uint32_t)i;
}

ssize_t sys_exited_name(struct sys_exited *x, const char *comm)
{
	char c[SYS_EXITED_COMM_LEN] = { 0 };
	uint64_t a, b, i;

	memcpy(c, comm, strnlen(comm, SYS_EXITED_COMM_LEN));
	memcpy(&a, c, 8);
	memcpy(&b, c + 8, 8);
	i = HASHMAP_TO_NUM(hashmap_get(&x->by_comm, NULL, a, b));
	if (!i && x->names.nr >= SYS_EXITED_MAX_NAMES) {
		/* a new name past the cap: in the "" entry */
		memset(c, 0, sizeof(c));
		a = b = 0;
		i = HASHMAP_TO_NUM(hashmap_get(&x->by_comm, NULL, a, b));
	}
	if (i)
		return (ssize_t)i - 1;
	if (array_grow(&x->names, x->names.nr + 1) ||
	    hashmap_put(&x->by_comm, NULL, a, b, HASHMAP_NUM(x->names.nr + 1)))
		return -1;
	memset(&x->names.items[x->names.nr], 0, sizeof(x->names.items[0]));
	memcpy(x->names.items[x->names.nr].comm, c, SYS_EXITED_COMM_LEN);
	return (ssize_t)x->names.nr++;
}

/* Add @s to the folded statistics of name @i. 0 or -ENOMEM. */
static int fold_into(struct sys_exited *x, size_t i, const struct sys_exited_stat *s)
{
	uint32_t pid = sys_exited_name_pid(i);
	uint64_t k = HASHMAP_TO_NUM(hashmap_get(&x->folded_idx, NULL, pid, (uint32_t)s->nr));
	struct sys_exited_stat *f;

	if (!k) {
		if (array_grow(&x->folded, x->folded.nr + 1) ||
		    hashmap_put(&x->folded_idx, NULL, pid, (uint32_t)s->nr,
				HASHMAP_NUM(x->folded.nr + 1)))
			return -ENOMEM;
		k = ++x->folded.nr;
		f = &x->folded.items[k - 1];
		memset(f, 0, sizeof(*f));
		f->nr = s->nr;
		f->st.pid = pid;
		memcpy(f->st.name, s->st.name, sizeof(f->st.name));
	}
	sys_stat_merge(&x->folded.items[k - 1].st, &s->st);
	return 0;
}

/* Fold the @n statistics of one process named @comm, and count it. */
static int fold_process(struct sys_exited *x, const char *comm,
			const struct sys_exited_stat *stats, size_t n)
{
	ssize_t i = sys_exited_name(x, comm);
	size_t j;
	int err = 0;

	if (i < 0)
		return -ENOMEM;
	x->names.items[i].processes++;
	for (j = 0; !err && j < n; j++)
		err = fold_into(x, i, &stats[j]);
	return err;
}

int sys_exited_fold(struct sys_exited *x, const char *comm, const struct sys_exited_stat *s)
{
	ssize_t i = sys_exited_name(x, comm);

	return i < 0 ? -ENOMEM : fold_into(x, i, s);
}

/*
 * A process kept apart whose pid @p reuses: @p's statistics are added to
 * its, so each (pid, syscall) is stored once. 0, or -ENOMEM (nothing done).
 */
static int merge_kept(struct sys_exited_proc *k, struct sys_exited_proc *p)
{
	struct sys_exited_stat *all;
	size_t i, j, extra = 0;

	for (i = 0; i < p->nr; i++) {
		for (j = 0; j < k->nr && k->stats[j].nr != p->stats[i].nr; j++)
			;
		extra += j == k->nr;
	}
	all = realloc(k->stats, (k->nr + extra + 1) * sizeof(*all));
	if (!all)
		return -ENOMEM;
	k->stats = all;
	for (i = 0; i < p->nr; i++) {
		for (j = 0; j < k->nr && k->stats[j].nr != p->stats[i].nr; j++)
			;
		if (j == k->nr)
			k->stats[k->nr++] = p->stats[i];
		else
			sys_stat_merge(&k->stats[j].st, &p->stats[i].st);
	}
	k->calls += p->calls;
	free(p->stats);
	return 0;
}

int sys_exited_add(struct sys_exited *x, uint32_t pid, const char *comm,
		   struct sys_exited_stat *stats, size_t n)
{
	struct sys_exited_proc p = { .pid = pid, .stats = stats, .nr = n }, *least = NULL;
	size_t i;
	int err;

	memcpy(p.comm, comm, strnlen(comm, SYS_EXITED_COMM_LEN));
	for (i = 0; i < n; i++)
		p.calls += stats[i].st.count;
	for (i = 0; i < x->kept.nr; i++)
		if (x->kept.items[i].pid == pid && !merge_kept(&x->kept.items[i], &p))
			return 0;
	if (x->kept.nr < SYS_EXITED_KEPT && !array_grow(&x->kept, x->kept.nr + 1)) {
		x->kept.items[x->kept.nr++] = p;
		return 0;
	}
	for (i = 0; i < x->kept.nr; i++)
		if (!least || x->kept.items[i].calls < least->calls)
			least = &x->kept.items[i];
	/* the busier one stays apart; the other is folded into its name */
	if (least && least->calls < p.calls) {
		struct sys_exited_proc out = *least;

		*least = p;
		p = out;
	}
	err = fold_process(x, p.comm, p.stats, p.nr);
	free(p.stats);
	return err;
}

int sys_exited_each(const struct sys_exited *x,
		    int (*fn)(void *arg, const struct sys_exited_stat *s), void *arg)
{
	size_t i, j;
	int err = 0;

	for (i = 0; !err && i < x->kept.nr; i++)
		for (j = 0; !err && j < x->kept.items[i].nr; j++)
			err = fn(arg, &x->kept.items[i].stats[j]);
	for (i = 0; !err && i < x->folded.nr; i++)
		err = fn(arg, &x->folded.items[i]);
	return err;
}

void sys_exited_release(struct sys_exited *x)
{
	size_t i;

	for (i = 0; i < x->kept.nr; i++)
		free(x->kept.items[i].stats);
	free(x->kept.items);
	free(x->names.items);
	hashmap_release(&x->by_comm);
	free(x->folded.items);
	hashmap_release(&x->folded_idx);
	memset(x, 0, sizeof(*x));
}
