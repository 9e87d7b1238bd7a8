// SPDX-License-Identifier: GPL-2.0-only
/*
 * The process tree of a recording and its metadata encoding (proctree.h).
 * A pid can be reused within a recording: the index maps a pid to its latest
 * process, and parents are found among the processes that started before
 * their child. A full table folds ended processes into per-name totals; the
 * index has no removal, so a fold builds it anew.
 */
#include "src/proctree.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/util.h"

#define META_PREFIX "process."
#define FOLDED_PREFIX "process_folded."
#define FOLDED_OTHER "[other]"	/* how the "" name is stored */

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
static struct proc_info *proc_tree_append(struct proc_tree *t, uint32_t pid)
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
static void comm_keys(const char *comm, uint64_t *a, uint64_t *b)
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

	comm_keys(comm, &a, &b);
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

static uint64_t rel(uint64_t t, uint64_t base)
{
	return t > base ? t - base : 0;
}

/* "T:RSS:PSS,..." ("-" for a PSS not read). */
static char *memory_str(const struct proc_info *pi, uint64_t base_ns)
{
	char *s = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&s, &len);

	for (i = 0; f && i < pi->mem.nr; i++) {
		const struct proc_mem_sample *m = &pi->mem.items[i];

		fprintf(f, "%s%" PRIu64 ":%" PRIu64 ":", i ? "," : "", rel(m->time_ns, base_ns),
			m->rss_kb);
		if (m->pss_kb >= 0)
			fprintf(f, "%" PRId64, m->pss_kb);
		else
			fputc('-', f);
	}
	if (!f || fclose(f)) {
		free(s);
		return NULL;
	}
	return s;
}

static int store_one(const struct proc_info *pi, size_t seq, struct profile *p, uint64_t base_ns)
{
	char key[64], val[320], *mem;
	int n, err;

	n = snprintf(val, sizeof(val), "pid=%" PRIu32 " ppid=%" PRIu32 " start_ns=%" PRIu64,
		     pi->pid, pi->ppid, rel(pi->start_ns, base_ns));
	if (pi->ended)
		n += snprintf(val + n, sizeof(val) - n, " end_ns=%" PRIu64, rel(pi->end_ns, base_ns));
	if (pi->has_status)
		n += snprintf(val + n, sizeof(val) - n, " status=%" PRId32, pi->status);
	snprintf(val + n, sizeof(val) - n, " execs=%" PRIu32 " peak_rss_kb=%" PRIu64
		 " peak_pss_kb=%" PRIu64 " exit_rss_kb=%" PRIu64, pi->execs, pi->peak_rss_kb,
		 pi->peak_pss_kb, pi->exit_rss_kb);
	snprintf(key, sizeof(key), META_PREFIX "%zu", seq);
	err = profile_set_meta(p, key, val);
	snprintf(key, sizeof(key), META_PREFIX "%zu.comm", seq);
	if (!err)
		err = profile_set_meta(p, key, pi->comm);
	snprintf(key, sizeof(key), META_PREFIX "%zu.cmdline", seq);
	if (!err)
		err = profile_set_meta(p, key, pi->cmdline ? pi->cmdline : "");
	if (err || !pi->mem.nr)
		return err;
	mem = memory_str(pi, base_ns);
	if (!mem)
		return -ENOMEM;
	snprintf(key, sizeof(key), META_PREFIX "%zu.memory", seq);
	err = profile_set_meta(p, key, mem);
	free(mem);
	return err;
}

static int store_folded(const struct proc_folded *f, size_t seq, struct profile *p,
			uint64_t base_ns)
{
	char key[64], val[320];
	int err;

	snprintf(val, sizeof(val), "processes=%" PRIu64 " life_ns=%" PRIu64 " max_life_ns=%" PRIu64
		 " peak_rss_kb=%" PRIu64 " failed=%" PRIu64 " first_start_ns=%" PRIu64
		 " last_end_ns=%" PRIu64, f->processes, f->life_ns, f->max_life_ns, f->peak_rss_kb,
		 f->failed, rel(f->first_start_ns, base_ns), rel(f->last_end_ns, base_ns));
	snprintf(key, sizeof(key), FOLDED_PREFIX "%zu", seq);
	err = profile_set_meta(p, key, val);
	snprintf(key, sizeof(key), FOLDED_PREFIX "%zu.comm", seq);
	if (!err)
		err = profile_set_meta(p, key, f->comm[0] ? f->comm : FOLDED_OTHER);
	return err;
}

int proc_tree_store(const struct proc_tree *t, struct profile *p, uint64_t base_ns)
{
	size_t i, seq = 0;
	int err = 0;

	for (i = 0; !err && i < t->procs.nr; i++)
		err = store_one(&t->procs.items[i], i + 1, p, base_ns);
	/* a name made by a fold that then failed has no processes */
	for (i = 0; !err && i < t->folded.nr; i++)
		if (t->folded.items[i].processes)
			err = store_folded(&t->folded.items[i], ++seq, p, base_ns);
	if (!err)
		err = profile_set_meta_u64(p, "count.processes_tracked", t->procs.nr);
	if (!err)
		err = profile_set_meta_u64(p, "count.processes_folded", t->procs_folded);
	if (!err)
		err = profile_set_meta_u64(p, "lost.processes_untracked", t->procs_dropped);
	if (!err)
		err = profile_set_meta_u64(p, "lost.memory_samples", t->mem_dropped);
	return err;
}

/* The value of "NAME=" in the space-separated @s, or false. */
static bool field_u64(const char *s, const char *name, uint64_t *out)
{
	size_t n = strlen(name);
	const char *q;

	for (q = s; (q = strstr(q, name)); q += n) {
		if ((q == s || q[-1] == ' ') && q[n] == '=') {
			*out = strtoull(q + n + 1, NULL, 10);
			return true;
		}
	}
	return false;
}

static void parse_main(struct proc_info *pi, const char *v)
{
	uint64_t x;

	if (field_u64(v, "ppid", &x))
		pi->ppid = x;
	if (field_u64(v, "start_ns", &x))
		pi->start_ns = x;
	if (field_u64(v, "end_ns", &x)) {
		pi->end_ns = x;
		pi->ended = true;
	}
	if (field_u64(v, "status", &x)) {
		pi->status = (int32_t)x;
		pi->has_status = true;
	}
	if (field_u64(v, "execs", &x))
		pi->execs = x;
	if (field_u64(v, "peak_rss_kb", &x))
		pi->peak_rss_kb = x;
	if (field_u64(v, "peak_pss_kb", &x))
		pi->peak_pss_kb = x;
	if (field_u64(v, "exit_rss_kb", &x))
		pi->exit_rss_kb = x;
}

static int parse_memory(struct proc_info *pi, const char *v)
{
	unsigned long long t, rss;
	long long pss;
	const char *q = v;
	int n;

	while (*q) {
		/*
		 * sscanf counts conversions, not literals: "1:2:x" is 2 for the
		 * second format too, without reaching %n. n < 0 says so.
		 */
		n = -1;
		if (sscanf(q, "%llu:%llu:%lld%n", &t, &rss, &pss, &n) != 3 || n < 0) {
			n = -1;
			pss = -1;
			if (sscanf(q, "%llu:%llu:-%n", &t, &rss, &n) != 2 || n < 0)
				break;
		}
		if (array_grow(&pi->mem, pi->mem.nr + 1))
			return -ENOMEM;
		pi->mem.items[pi->mem.nr++] = (struct proc_mem_sample){ t, rss, pss };
		q += n;
		if (*q == ',')
			q++;
	}
	return 0;
}

/* Apply one "process.SEQ[.FIELD]" entry. */
static int load_one(struct proc_tree *t, struct hashmap *seqs, const char *key, const char *v)
{
	char *end;
	unsigned long seq = strtoul(key, &end, 10);
	uint64_t i = HASHMAP_TO_NUM(hashmap_get(seqs, NULL, seq, 0));
	struct proc_info *pi;
	uint64_t pid;

	if (end == key || !seq)
		return 0;
	if (!*end) {
		if (i || !field_u64(v, "pid", &pid))
			return 0;
		pi = proc_tree_append(t, pid);
		if (!pi || hashmap_put(seqs, NULL, seq, 0, HASHMAP_NUM(t->procs.nr)))
			return -ENOMEM;
		parse_main(pi, v);
		return 0;
	}
	if (!i)
		return 0;
	pi = &t->procs.items[i - 1];
	if (!strcmp(end, ".comm"))
		snprintf(pi->comm, sizeof(pi->comm), "%s", v);
	else if (!strcmp(end, ".cmdline"))
		return proc_info_set_cmdline(pi, v, strlen(v));
	else if (!strcmp(end, ".memory"))
		return parse_memory(pi, v);
	return 0;
}

static void parse_folded(struct proc_folded *f, const char *v)
{
	field_u64(v, "life_ns", &f->life_ns);
	field_u64(v, "max_life_ns", &f->max_life_ns);
	field_u64(v, "peak_rss_kb", &f->peak_rss_kb);
	field_u64(v, "failed", &f->failed);
	field_u64(v, "first_start_ns", &f->first_start_ns);
	field_u64(v, "last_end_ns", &f->last_end_ns);
}

/* Apply one "process_folded.SEQ[.FIELD]" entry. */
static int load_folded(struct proc_tree *t, struct hashmap *seqs, const char *key, const char *v)
{
	char *end;
	unsigned long seq = strtoul(key, &end, 10);
	uint64_t i = HASHMAP_TO_NUM(hashmap_get(seqs, NULL, seq, 0)), n;
	struct proc_folded *f;

	if (end == key || !seq)
		return 0;
	if (!*end) {
		if (i || !field_u64(v, "processes", &n) || !n)
			return 0;
		if (array_grow(&t->folded, t->folded.nr + 1) ||
		    hashmap_put(seqs, NULL, seq, 0, HASHMAP_NUM(t->folded.nr + 1)))
			return -ENOMEM;
		f = &t->folded.items[t->folded.nr++];
		memset(f, 0, sizeof(*f));
		f->processes = n;
		parse_folded(f, v);
		return 0;
	}
	if (i && !strcmp(end, ".comm"))
		snprintf(t->folded.items[i - 1].comm, sizeof(t->folded.items[0].comm), "%s", v);
	return 0;
}

/* The name index of the folded names loaded (a duplicate name: the last). */
static int index_folded(struct proc_tree *t)
{
	uint64_t a, b;
	size_t i;

	for (i = 0; i < t->folded.nr; i++) {
		comm_keys(t->folded.items[i].comm, &a, &b);
		if (hashmap_put(&t->folded_idx, NULL, a, b, HASHMAP_NUM(i + 1)))
			return -ENOMEM;
	}
	return 0;
}

int proc_tree_load(struct proc_tree *t, const struct profile *p)
{
	struct hashmap seqs = { 0 }, folded_seqs = { 0 };
	size_t i, n = strlen(META_PREFIX), nf = strlen(FOLDED_PREFIX);
	int err = 0;

	for (i = 0; !err && i < p->meta.nr; i++) {
		const struct profile_meta *m = &p->meta.items[i];

		if (!strncmp(m->key, META_PREFIX, n))
			err = load_one(t, &seqs, m->key + n, m->value);
		else if (!strncmp(m->key, FOLDED_PREFIX, nf))
			err = load_folded(t, &folded_seqs, m->key + nf, m->value);
	}
	if (!err)
		err = index_folded(t);
	hashmap_release(&seqs);
	hashmap_release(&folded_seqs);
	t->procs_folded = profile_get_meta_u64(p, "count.processes_folded");
	t->procs_dropped = profile_get_meta_u64(p, "lost.processes_untracked");
	t->mem_dropped = profile_get_meta_u64(p, "lost.memory_samples");
	return err;
}
