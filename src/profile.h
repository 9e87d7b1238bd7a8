/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * struct profile: latprof's in-memory profile, shaped like pprof's
 * profile.proto so that reading and writing latprof.pb.gz is a plain mapping.
 * It owns its strings (a strtab), deduplicates functions and locations, and
 * keeps run metadata as key=value pairs (stored as pprof comments).
 *
 * Ids are 1-based indexes: mappings.items[id - 1] is mapping @id, and the same
 * for functions and locations. The pprof reader renumbers foreign files.
 */
#ifndef LATPROF_PROFILE_H
#define LATPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/lib/strtab.h"

/* The value columns latprof writes (pprof sample types). */
#define PROFILE_TYPE_SAMPLES "samples"		/* unit "count" */
#define PROFILE_TYPE_CPU "cpu"			/* unit "nanoseconds" */
#define PROFILE_TYPE_SYSCALLS "syscalls"	/* unit "count": slow syscalls */
#define PROFILE_TYPE_LATENCY "latency"		/* unit "nanoseconds" in slow syscalls */
#define PROFILE_TYPE_OFFCPU "offcpu"		/* unit "nanoseconds" off CPU */
#define PROFILE_TYPE_STALL "stall"		/* unit "nanoseconds" in event-loop stalls */
#define PROFILE_TYPE_AWAIT "await"		/* unit "nanoseconds" asyncio tasks suspended */

/* Kernel mappings are named "[kernel.kallsyms]" and "[kernel.kallsyms]/MODULE". */
/*
 * The labels of a sample, as the collector writes them (src/collect/build.c)
 * and the readers look them up (profile_sample_label).
 */
#define PROFILE_LABEL_PID "pid"			/* number: the process */
#define PROFILE_LABEL_TID "tid"			/* number: the thread */
#define PROFILE_LABEL_COMM "comm"		/* the process's name */
#define PROFILE_LABEL_SYSCALL "syscall"		/* "read", "syscall_451" */
#define PROFILE_LABEL_CATEGORY "category"	/* the syscall's category */
#define PROFILE_LABEL_MAX_NS "max_ns"		/* number: the slowest call */
/* the slow calls' log2 histogram, "SLOT:COUNT:SUM_NS,..." (src/sysstats.h) */
#define PROFILE_LABEL_LATENCY_HIST "latency_hist"
#define PROFILE_LABEL_OFFCPU "offcpu"		/* PROFILE_OFFCPU_* */
#define PROFILE_OFFCPU_BLOCKED "blocked"	/* off CPU waiting */
#define PROFILE_OFFCPU_PREEMPTED "preempted"	/* runnable, another task ran */

/* The profile record writes and the reading verbs read when given none. */
#define PROFILE_DEFAULT_PATH "latprof.pb.gz"

#define PROFILE_KERNEL_MAPPING "[kernel.kallsyms]"
/* The mapping of Python frames (src/pystacks.h): address = frame id + 1 */
#define PROFILE_PYTHON_MAPPING "[python]"

struct profile_value_type {
	const char *type;	/* interned */
	const char *unit;
};

struct profile_mapping {
	uint64_t start, limit, offset;
	const char *file;
	const char *build_id;	/* hex, "" if unknown */
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

struct profile_function {
	const char *name;
	const char *system_name;
	const char *file;	/* source file, "" if unknown */
	int64_t start_line;
};

struct profile_line {
	uint64_t function_id;
	int64_t line;
};

/* lines[] innermost first: lines[nr_lines - 1] is the out-of-line function. */
struct profile_location {
	uint64_t mapping_id;	/* 0: none */
	uint64_t address;
	size_t nr_lines;
	struct profile_line *lines;
};

struct profile_label {
	const char *key;
	const char *str;	/* NULL for numeric labels */
	int64_t num;
	const char *num_unit;	/* NULL if none */
};

/* locs[] leaf first; values[] has one entry per sample type. */
struct profile_sample {
	size_t nr_locs;
	uint64_t *locs;
	int64_t *values;
	size_t nr_labels;
	struct profile_label *labels;
};

struct profile_meta {
	const char *key;
	const char *value;
};

struct profile_idx;

struct profile {
	struct strtab *strs;
	struct { struct profile_value_type *items; size_t nr, alloc; } types;
	struct { struct profile_sample *items; size_t nr, alloc; } samples;
	struct { struct profile_mapping *items; size_t nr, alloc; } mappings;
	struct { struct profile_location *items; size_t nr, alloc; } locations;
	struct { struct profile_function *items; size_t nr, alloc; } functions;
	struct { struct profile_meta *items; size_t nr, alloc; } meta;
	struct { const char **items; size_t nr, alloc; } comments;	/* foreign */
	struct profile_value_type period_type;
	const char *default_type;	/* column pprof shows first; NULL: the last */
	int64_t period;
	int64_t time_ns;		/* start of recording, wall clock */
	int64_t duration_ns;
	struct profile_idx *idx;	/* dedup indexes */
};

/* A new empty profile, or NULL with errno set. */
struct profile *profile_new(void);
/* NULL is a no-op. */
void profile_free(struct profile *p);

/* Intern @s in the profile's strings; NULL on ENOMEM. NULL @s gives "". */
const char *profile_str(struct profile *p, const char *s);

/* Append a value column. Returns its index or -ENOMEM. */
int profile_add_type(struct profile *p, const char *type, const char *unit);
/* Index of the column named @type, or -1. Cannot fail. */
int profile_type_index(const struct profile *p, const char *type);

/* Append a mapping; returns its id (>= 1) or 0 on ENOMEM. Strings are copied. */
uint64_t profile_add_mapping(struct profile *p, const struct profile_mapping *m);

/* The id of the function {name, system_name, file}, added if new; 0 on ENOMEM. */
uint64_t profile_function_id(struct profile *p, const char *name, const char *system_name,
			     const char *file, int64_t start_line);

/*
 * The id of the location at {@mapping_id, @address}, or 0 if there is none
 * yet (then add it with profile_add_location). Cannot fail.
 */
uint64_t profile_find_location(const struct profile *p, uint64_t mapping_id, uint64_t address);
/* Add a location (lines copied, innermost first); returns its id or 0 on ENOMEM. */
uint64_t profile_add_location(struct profile *p, uint64_t mapping_id, uint64_t address,
			      const struct profile_line *lines, size_t nr_lines);

/*
 * Append a sample: @nr_locs location ids leaf first, one value per column
 * (profile_add_type before any sample), labels whose strings are copied.
 * Returns 0 or -ENOMEM.
 */
int profile_add_sample(struct profile *p, const uint64_t *locs, size_t nr_locs,
		       const int64_t *values, const struct profile_label *labels,
		       size_t nr_labels);

/* Set metadata @key (replacing an earlier value); 0 or -ENOMEM. */
int profile_set_meta(struct profile *p, const char *key, const char *value);
int profile_set_meta_u64(struct profile *p, const char *key, uint64_t value);
/* Set every metadata key of @from in @into (replacing). 0 or -ENOMEM. */
int profile_copy_meta(struct profile *into, const struct profile *from);
/* The value of @key, or NULL. Cannot fail. */
const char *profile_get_meta(const struct profile *p, const char *key);
/* The value of @key as a number, or 0 when absent or not a number. */
uint64_t profile_get_meta_u64(const struct profile *p, const char *key);

/* Borrowed views; NULL for id 0 or out of range. */
const struct profile_mapping *profile_mapping(const struct profile *p, uint64_t id);
const struct profile_location *profile_location(const struct profile *p, uint64_t id);
const struct profile_function *profile_function(const struct profile *p, uint64_t id);

/* The label @key of sample @s, or NULL. */
const struct profile_label *profile_sample_label(const struct profile_sample *s,
						 const char *key);

/* Is @m the kernel or a kernel module? */
bool profile_mapping_is_kernel(const struct profile_mapping *m);

#endif
