// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run's metadata that the builder writes beside the samples: the
 * kernel's counters (count.*, lost.*), each process's unwinding and refused
 * files (proc.PID.*), and the frames in JIT-compiled code.
 */
#include "src/collect/priv.h"

/*
 * Files libdwfl refused in @img. Not in the command's generation 0: that is
 * latprof's own fork (its samples are dropped), and a re-read of it racing
 * with the exec event sees the new program's files, counted in generation 1.
 */
static uint64_t builder_modules_refused(struct builder *b, const struct proc_image *img)
{
	if (img->pid == b->c->command_pid && img->gen == 0)
		return 0;
	return proc_image_modules_refused(img);
}

/*
 * Why the perf map of @img was not trusted (its JIT frames stay
 * [anon]+0x...), said once per image with -v. With its name: the image of
 * an exec generation can refuse a map the next one reads (setpriv, still
 * root, refuses the map of the program it runs as nobody).
 */
static void builder_perfmap_refused(const struct proc_image *img)
{
	int why = img->sym ? sym_process_perfmap_refused(img->sym) : 0;

	if (!why)
		return;
	pr_debug("pid %d (%.16s): perf map refused: %s", img->pid, img->comm,
		 why == -EPERM ? "owned by neither the process's user nor root" :
		 why == -ELOOP ? "a symbolic link" :
		 why == -EINVAL ? "not a regular file" : strerror(-why));
}

/* proc.PID.* metadata: unwinding mode and stack quality of each process. */
/*
 * How the stacks of an exited process past the first COLLECT_UNWIND_KEPT
 * sampled ones were unwound: added to its name's, under the pseudo pid of
 * src/sysexited.h, so a busy machine's thousands of short processes are not
 * six keys each. 0 or -ENOMEM.
 */
static int builder_unwind_fold(struct builder *b, const struct proc_image *img,
			       uint64_t **folded, size_t *nr)
{
	ssize_t n = sys_exited_name(&b->c->exited, img->comm);
	size_t j;
	uint64_t *p;

	if (n < 0)
		return -ENOMEM;
	if ((size_t)n >= *nr) {
		p = realloc(*folded, (n + 1) * SYM_UNWIND_NR * sizeof(*p));
		if (!p)
			return -ENOMEM;
		memset(p + *nr * SYM_UNWIND_NR, 0, (n + 1 - *nr) * SYM_UNWIND_NR * sizeof(*p));
		*folded = p;
		*nr = n + 1;
	}
	for (j = 0; j < SYM_UNWIND_NR; j++)
		(*folded)[n * SYM_UNWIND_NR + j] += img->unwind[j];
	return 0;
}

int builder_proc_meta(struct builder *b)
{
	uint64_t *folded = NULL;
	size_t i, j, nr_folded = 0, sampled = 0;
	char key[96];
	int err = 0;

	for (i = 0; !err && i < b->c->images.list.nr; i++) {
		const struct proc_image *img = &b->c->images.list.items[i];
		uint64_t v, refused = builder_modules_refused(b, img);

		for (v = 0, j = 0; j < SYM_UNWIND_NR; j++)
			v += img->unwind[j];
		sampled += v != 0;
		if (v && img->ended && b->c->o.cli.unwind_dwarf && sampled > COLLECT_UNWIND_KEPT) {
			err = builder_unwind_fold(b, img, &folded, &nr_folded);
			v = 0;	/* its keys are its name's */
		}
		/* with DWARF, one never sampled has nothing to say (most of -a's) */
		snprintf(key, sizeof(key), "proc.%d.unwind", img->pid);
		if (v || !b->c->o.cli.unwind_dwarf)
			err = profile_set_meta(b->p, key,
					       b->c->o.cli.unwind_dwarf ? "dwarf" : "fp");
		if (!err && img->comm[0]) {
			snprintf(key, sizeof(key), "proc.%d.comm", img->pid);
			err = profile_set_meta(b->p, key, img->comm);
		}
		builder_perfmap_refused(img);
		snprintf(key, sizeof(key), "proc.%d.modules_refused", img->pid);
		if (!err && refused)
			err = profile_set_meta_u64(b->p, key, profile_get_meta_u64(b->p, key) +
						   refused);
		for (j = 0; !err && v && b->c->o.cli.unwind_dwarf && j < SYM_UNWIND_NR; j++) {
			/* images of one pid (exec generations) add up */
			snprintf(key, sizeof(key), "proc.%d.%s", img->pid, collect_unwind_names[j]);
			err = profile_set_meta_u64(b->p, key, profile_get_meta_u64(b->p, key) +
						   img->unwind[j]);
		}
	}
	/* the names exited processes were folded into, under their pseudo pids */
	for (i = 0; !err && i < b->c->exited.names.nr; i++) {
		const struct sys_exited_name *n = &b->c->exited.names.items[i];
		uint32_t pid = sys_exited_name_pid(i);

		snprintf(key, sizeof(key), "proc.%" PRIu32 ".comm", pid);
		err = profile_set_meta(b->p, key, n->comm[0] ? n->comm : "[other]");
		snprintf(key, sizeof(key), "proc.%" PRIu32 ".processes_folded", pid);
		if (!err && n->processes)
			err = profile_set_meta_u64(b->p, key, n->processes);
		if (!err && i < nr_folded) {
			snprintf(key, sizeof(key), "proc.%" PRIu32 ".unwind", pid);
			err = profile_set_meta(b->p, key, "dwarf");
		}
		for (j = 0; !err && i < nr_folded && j < SYM_UNWIND_NR; j++) {
			snprintf(key, sizeof(key), "proc.%" PRIu32 ".%s", pid, collect_unwind_names[j]);
			err = profile_set_meta_u64(b->p, key, folded[i * SYM_UNWIND_NR + j]);
		}
	}
	free(folded);
	return err;
}

/* The metadata key of counter @stat of enum lp_stat: "count.NAME" or "lost.NAME". */
static void stat_meta_key(int stat, char *key, size_t size)
{
	snprintf(key, size, "%s.%s",
		 stat == LP_STAT_SAMPLES || stat == LP_STAT_EVENTS ? "count" : "lost",
		 collect_stat_names[stat]);
}

/*
 * stats_unreadable: the keys of the counters in @unread (a bit per enum
 * lp_stat), whose 0 means "not known", not "nothing lost".
 */
static int builder_unreadable_meta(struct builder *b, uint32_t unread)
{
	char key[64], *list = NULL;
	size_t len = 0;
	bool first = true;
	FILE *f;
	int i, err;

	if (!unread)
		return 0;
	pr_warn("cannot read %d of the kernel's %d loss counters: reported as unknown",
		__builtin_popcount(unread), LP_STAT_NR);
	f = open_memstream(&list, &len);
	if (!f)
		return -ENOMEM;
	for (i = 0; i < LP_STAT_NR; i++) {
		if (!(unread & (1U << i)))
			continue;
		stat_meta_key(i, key, sizeof(key));
		fprintf(f, "%s%s", first ? "" : ",", key);
		first = false;
	}
	err = fclose(f) ? -ENOMEM : profile_set_meta(b->p, "stats_unreadable", list);
	free(list);
	return err;
}

/* lost.modules_refused: executable files libdwfl refused, over every image. */
static int builder_refused_meta(struct builder *b)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < b->c->images.list.nr; i++)
		n += builder_modules_refused(b, &b->c->images.list.items[i]);
	return profile_set_meta_u64(b->p, "lost.modules_refused", n);
}

int builder_meta(struct builder *b)
{
	struct collect_stats st;
	uint32_t unread = collect_read_stats(b->c, &st);
	uint64_t nstacks = 0;
	char key[64];
	int err = 0, i;

	for (i = 0; !err && i < LP_STAT_NR; i++) {
		stat_meta_key(i, key, sizeof(key));
		err = profile_set_meta_u64(b->p, key, st.stat[i]);
	}
	if (!err)
		err = builder_unreadable_meta(b, unread);
	if (!err)
		err = profile_set_meta_u64(b->p, "lost.samples_process_vanished",
					   b->vanished_samples);
	if (!err)
		err = profile_set_meta_u64(b->p, "lost.kstack_missing", b->kstack_missing);
	if (!err)
		err = profile_set_meta_u64(b->p, "lost.ustack_missing", b->ustack_missing);
	if (!err)
		err = profile_set_meta_u64(b->p, "lost.events_unread", b->c->events_unread);
	if (!err)
		err = profile_set_meta_u64(b->p, "lost.ustacks_unread", b->c->ustacks_unread);
	if (!err)
		err = builder_refused_meta(b);
	if (!err)
		err = profile_set_meta_u64(b->p, "count.processes", st.procs_seen);
	for (i = 0; i < (int)b->c->stacks.nr; i++)
		nstacks += b->c->stacks.items[i].ips != NULL;
	if (!err)
		err = profile_set_meta_u64(b->p, "count.stacks", nstacks);
	if (!err)
		err = profile_set_meta_u64(b->p, "count.stacks_max", b->c->skel->rodata->cfg_max_stacks);
	if (!err && (b->c->sys_hooks || b->c->o.cli.modes.offcpu))
		err = profile_set_meta_u64(b->p, "count.in_flight_at_stop",
					   b->c->in_flight_reported);
	return err;
}

/*
 * Frames in anonymous executable memory, JIT-compiled code: those a perf
 * map named, and those left "[anon]+0x..." (no map, or none found: a
 * runtime without --perf-basic-prof, a map gone with its container). Each
 * CPU sample's frames count once per sample; without CPU samples, each
 * stack's once. Not a lost.* counter: the frames are in the profile, only
 * unnamed (the report says so apart).
 */
int builder_jit_meta(struct builder *b, const struct builder_cols *cols)
{
	const struct profile *p = b->p;
	uint64_t all = 0, unnamed = 0, w;
	size_t i, j;
	int err;

	for (i = 0; i < p->samples.nr; i++) {
		const struct profile_sample *s = &p->samples.items[i];

		w = cols->samples >= 0 ? (uint64_t)s->values[cols->samples] : 1;
		for (j = 0; w && j < s->nr_locs; j++) {
			const struct profile_location *l = profile_location(p, s->locs[j]);
			const struct profile_mapping *m = l ? profile_mapping(p, l->mapping_id) : NULL;
			const struct profile_function *f;

			if (!m || strcmp(m->file, "[anon]") || !l->nr_lines)
				continue;
			f = profile_function(p, l->lines[0].function_id);
			all += w;
			if (!f || !strncmp(f->name, "[anon]+0x", 9))
				unnamed += w;
		}
	}
	if (!all)
		return 0;
	err = profile_set_meta_u64(b->p, "count.jit_frames", all);
	return err ? err : profile_set_meta_u64(b->p, "count.jit_frames_unnamed", unnamed);
}
