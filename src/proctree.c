// SPDX-License-Identifier: GPL-2.0-only
/*
 * The process tree of a recording (proctree.h): starts, folds, parents and
 * memory samples. A pid can be reused within a recording: the index maps a
 * pid to its latest process, and parents are found among the processes that
 * started before their child. A full table folds ended processes into
 * per-name totals; the index has no removal, so a fold builds it anew. Its
 * metadata encoding is proctree_meta.c's.
 */
#include "src/proctree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/proctree_priv.h"
#include "src/lib/util.h"

/* An ended process a fold may take. */
struct fold_cand {
	uint64_t life_ns;
	size_t i;		/* in t->procs */
	size_t name;		/* in t->folded */
};

_Static_assert(PROC_COMM_LEN == 16, "a name is hashed as two u64 keys");

void proc_tree_init(struct proc_tree *t, size_t max_procs, size_t max_mem_samples)
{
	memset(t, 0, sizeof(*t));
	t->max_procs = max_procs;
	t->max_mem_samples = max_mem_samples;
}

void proc_tree_release(struct proc_tree *t)
{
	size_t i;

	for (i = 0; i < t->procs.nr; i++) {
		free(t->procs.items[i].cmdline);
		free(t->procs.items[i].mem.items);
	}
	free(t->procs.items);
	hashmap_release(&t->idx);
	free(t->folded.items);
	hashmap_release(&t->folded_idx);
	proc_tree_init(t, t->max_procs, t->max_mem_samples);
}

struct proc_info *proc_tree_find(struct proc_tree *t, uint32_t pid)
{
	uint64_t i = HASHMAP_TO_NUM(hashmap_get(&t->idx, NULL, pid, 0));

	return i ? &t->procs.items[i - 1] : NULL;
}

/* Append an entry for @pid and index it; NULL with errno ENOMEM. */
struct proc_info *proc_tree_append(struct proc_tree *t, uint32_t pid)
{
	struct proc_info *pi;

	if (array_grow(&t->procs, t->procs.nr + 1) ||
	    hashmap_put(&t->idx, NULL, pid, 0, HASHMAP_NUM(t->procs.nr + 1))) {
		errno = ENOMEM;
		return NULL;
	}
	pi = &t->procs.items[t->procs.nr++];
	memset(pi, 0, sizeof(*pi));
	pi->pid = pid;
	return pi;
}

/* @comm's PROC_COMM_LEN bytes, zero-padded, as the two keys of folded_idx. */
void proc_tree_comm_keys(const char *comm, uint64_t *a, uint64_t *b)
{
	char c[PROC_COMM_LEN] = { 0 };

	memcpy(c, comm, strnlen(comm, PROC_COMM_LEN));
	memcpy(a, c, 8);
	memcpy(b, c + 8, 8);
}

/*
 * The index in t->folded of name @comm in *@i, added with no processes when
 * new; past PROC_FOLDED_MAX_NAMES names, a new one is "". 0 or -ENOMEM.
 */
static int folded_name(struct proc_tree *t, const char *comm, size_t *i)
{
	struct proc_folded *f;
	uint64_t a, b, n;

	proc_tree_comm_keys(comm, &a, &b);
	n = HASHMAP_TO_NUM(hashmap_get(&t->folded_idx, NULL, a, b));
	if (!n && t->folded.nr >= PROC_FOLDED_MAX_NAMES) {
		comm = "";
		a = b = 0;
		n = HASHMAP_TO_NUM(hashmap_get(&t->folded_idx, NULL, a, b));
	}
	if (!n) {
		if (array_grow(&t->folded, t->folded.nr + 1) ||
		    hashmap_put(&t->folded_idx, NULL, a, b, HASHMAP_NUM(t->folded.nr + 1)))
			return -ENOMEM;
		f = &t->folded.items[t->folded.nr];
		memset(f, 0, sizeof(*f));
		snprintf(f->comm, sizeof(f->comm), "%.*s", PROC_COMM_LEN, comm);
		n = ++t->folded.nr;
	}
	*i = n - 1;
	return 0;
}

static uint64_t proc_life_ns(const struct proc_info *pi)
{
	return pi->end_ns > pi->start_ns ? pi->end_ns - pi->start_ns : 0;
}

/* Shortest lives first; equal ones oldest first, so a fold is deterministic. */
static int cmp_cand_life(const void *a, const void *b)
{
	const struct fold_cand *x = a, *y = b;

	if (x->life_ns != y->life_ns)
		return x->life_ns < y->life_ns ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int cmp_cand_index(const void *a, const void *b)
{
	const struct fold_cand *x = a, *y = b;

	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * How many of the @ended ended processes a fold takes: the shorter-lived
 * half, at least one; more when that would leave the table above 3/4 of
 * max_procs, so the next fold is at least max_procs/4 starts away.
 */
static size_t fold_count(const struct proc_tree *t, size_t ended)
{
	size_t k = (ended + 1) / 2, keep = t->max_procs - t->max_procs / 4;

	if (t->procs.nr > keep && t->procs.nr - keep > k)
		k = t->procs.nr - keep;
	return k < ended ? k : ended;
}

/*
 * The processes a fold takes, in table order, their number in *@k, and their
 * names made; NULL with errno ENOSPC (none has ended) or ENOMEM.
 */
static struct fold_cand *fold_choose(struct proc_tree *t, size_t *k)
{
	struct fold_cand *c;
	size_t i, n = 0;

	for (i = 0; i < t->procs.nr; i++)
		n += t->procs.items[i].ended;
	c = n ? calloc(n, sizeof(*c)) : NULL;
	if (!c) {
		errno = n ? ENOMEM : ENOSPC;
		return NULL;
	}
	for (i = 0, n = 0; i < t->procs.nr; i++)
		if (t->procs.items[i].ended)
			c[n++] = (struct fold_cand){ proc_life_ns(&t->procs.items[i]), i, 0 };
	array_sort(c, n, sizeof(*c), cmp_cand_life);
	*k = fold_count(t, n);
	array_sort(c, *k, sizeof(*c), cmp_cand_index);
	/* before anything moves: a name not made leaves the table as it was */
	for (i = 0; i < *k; i++) {
		if (folded_name(t, t->procs.items[c[i].i].comm, &c[i].name)) {
			free(c);
			errno = ENOMEM;
			return NULL;
		}
	}
	return c;
}

/*
 * Into @idx, the pid index of t->procs without the @k processes of @c: each
 * pid to its latest kept process, as the table will be. 0 or -ENOMEM.
 */
static int fold_index(const struct proc_tree *t, const struct fold_cand *c, size_t k,
		      struct hashmap *idx)
{
	size_t i, j = 0, pos = 0;

	for (i = 0; i < t->procs.nr; i++) {
		if (j < k && c[j].i == i) {
			j++;
			continue;
		}
		if (hashmap_put(idx, NULL, t->procs.items[i].pid, 0, HASHMAP_NUM(++pos)))
			return -ENOMEM;
	}
	return 0;
}

static void folded_add(struct proc_folded *f, const struct proc_info *pi)
{
	uint64_t life = proc_life_ns(pi);

	if (!f->processes || pi->start_ns < f->first_start_ns)
		f->first_start_ns = pi->start_ns;
	if (pi->end_ns > f->last_end_ns)
		f->last_end_ns = pi->end_ns;
	f->processes++;
	f->life_ns += life;
	if (life > f->max_life_ns)
		f->max_life_ns = life;
	if (pi->peak_rss_kb > f->peak_rss_kb)
		f->peak_rss_kb = pi->peak_rss_kb;
	f->failed += pi->has_status && pi->status;
}

/* Add the @k processes of @c to their names, free them and close the gaps. */
static void fold_apply(struct proc_tree *t, const struct fold_cand *c, size_t k)
{
	size_t i, j = 0, pos = 0;

	for (i = 0; i < t->procs.nr; i++) {
		struct proc_info *pi = &t->procs.items[i];

		if (j < k && c[j].i == i) {
			folded_add(&t->folded.items[c[j++].name], pi);
			t->nr_mem_samples -= pi->mem.nr < t->nr_mem_samples ? pi->mem.nr :
					     t->nr_mem_samples;
			free(pi->cmdline);
			free(pi->mem.items);
			continue;
		}
		if (pos != i)
			t->procs.items[pos] = *pi;
		pos++;
	}
	t->procs.nr = pos;
	t->procs_folded += k;
}

/*
 * Make room in a full table (proc_tree_start says which processes go).
 * 0, -ENOSPC when none has ended, or -ENOMEM with the processes unchanged
 * (names may have been added, with no processes yet).
 */
static int proc_tree_fold(struct proc_tree *t)
{
	struct hashmap idx = { 0 };
	struct fold_cand *c;
	size_t k;

	c = fold_choose(t, &k);
	if (!c)
		return -errno;
	if (fold_index(t, c, k, &idx)) {
		hashmap_release(&idx);
		free(c);
		return -ENOMEM;
	}
	fold_apply(t, c, k);
	hashmap_release(&t->idx);
	t->idx = idx;
	free(c);
	return 0;
}

struct proc_info *proc_tree_start(struct proc_tree *t, uint32_t pid, uint32_t ppid,
				  uint64_t time_ns, const char *comm)
{
	struct proc_info *pi = proc_tree_find(t, pid);
	int err;

	if (pi && !pi->ended)
		return pi;
	if (t->max_procs && t->procs.nr >= t->max_procs) {
		err = proc_tree_fold(t);
		if (err == -ENOSPC)
			t->procs_dropped++;
		if (err) {
			errno = -err;
			return NULL;
		}
	}
	pi = proc_tree_append(t, pid);
	if (!pi)
		return NULL;
	pi->ppid = ppid;
	pi->start_ns = time_ns;
	if (comm)
		snprintf(pi->comm, sizeof(pi->comm), "%.*s", PROC_COMM_LEN, comm);
	return pi;
}

int proc_info_set_cmdline(struct proc_info *pi, const char *args, size_t len)
{
	char *s;
	size_t i;

	while (len && !args[len - 1])
		len--;		/* the last argument's terminator */
	if (len > PROC_CMDLINE_MAX)
		len = PROC_CMDLINE_MAX;
	s = malloc(len + 1);
	if (!s)
		return -ENOMEM;
	for (i = 0; i < len; i++) {
		unsigned char ch = args[i];

		s[i] = !ch ? ' ' : ch < 0x20 || ch == 0x7f ? '?' : ch;
	}
	s[len] = '\0';
	free(pi->cmdline);
	pi->cmdline = s;
	return 0;
}

int proc_tree_add_memory(struct proc_tree *t, struct proc_info *pi, uint64_t time_ns,
			 uint64_t rss_kb, int64_t pss_kb)
{
	if (rss_kb > pi->peak_rss_kb)
		pi->peak_rss_kb = rss_kb;
	if (pss_kb > 0 && (uint64_t)pss_kb > pi->peak_pss_kb)
		pi->peak_pss_kb = pss_kb;
	if (t->max_mem_samples && t->nr_mem_samples >= t->max_mem_samples) {
		t->mem_dropped++;
		return 0;
	}
	if (array_grow(&pi->mem, pi->mem.nr + 1))
		return -ENOMEM;
	pi->mem.items[pi->mem.nr++] = (struct proc_mem_sample){ time_ns, rss_kb, pss_kb };
	t->nr_mem_samples++;
	return 0;
}

unsigned int proc_tree_alive_at(const struct proc_tree *t, uint64_t time_ns)
{
	unsigned int n = 0;
	size_t i;

	for (i = 0; i < t->procs.nr; i++) {
		const struct proc_info *pi = &t->procs.items[i];

		if (pi->start_ns <= time_ns && (!pi->ended || pi->end_ns >= time_ns))
			n++;
	}
	return n;
}

long proc_tree_parent(const struct proc_tree *t, size_t i)
{
	const struct proc_info *c = &t->procs.items[i];
	long j;

	if (!c->ppid)
		return -1;
	for (j = (long)i - 1; j >= 0; j--)
		if (t->procs.items[j].pid == c->ppid)
			return j;
	return -1;
}
