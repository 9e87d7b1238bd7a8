// SPDX-License-Identifier: GPL-2.0-only
/*
 * The process tree in a profile's metadata (proctree.h, docs/formats.md):
 * stored, each process as "process.SEQ" (pid, parent, times relative to the
 * recording's start, exit status, peaks) with its .comm, .cmdline and
 * .memory, each folded name as "process_folded.SEQ" with its .comm, and the
 * tree's counters; and loaded back into a tree, malformed entries skipped.
 */
#include "src/proctree_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/lib/hashmap.h"
#include "src/profile.h"
#include "src/lib/util.h"

#define META_PREFIX "process."
#define FOLDED_PREFIX "process_folded."
#define FOLDED_OTHER "[other]"	/* how the "" name is stored */

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
		proc_tree_comm_keys(t->folded.items[i].comm, &a, &b);
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
