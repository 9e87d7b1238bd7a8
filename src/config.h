/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `record --config FILE`: a YAML mapping whose keys are record's long
 * options (CLI.md), turned into the command-line options they stand for, so
 * one parser checks both and the command line, read after the file,
 * overrides it:
 *
 *	mode: [cpu, syscall, offcpu]	# a list is joined with ','
 *	freq: 499
 *	comm: [nginx, uwsgi]		# a repeatable option: one per item
 *	requests: true			# a flag: true/false
 *	trigger:			# a repeatable option's item may be a
 *	  - name: slow			# mapping: --trigger=name=slow,p99_ms=50
 *	    p99_ms: 50
 *
 * Library code: prints nothing, reports where it failed.
 */
#ifndef LATPROF_CONFIG_H
#define LATPROF_CONFIG_H

#include <getopt.h>
#include <stddef.h>

/* The options a file stands for, "--key=value" or "--key"; owned. */
struct config_args {
	char **items;
	size_t nr, alloc;
};

struct config_error {
	size_t line;		/* 1-based; 0: not about a line */
	char reason[160];
};

/* The largest configuration file read, and the most options it may give. */
#define CONFIG_MAX_BYTES (1 << 20)
#define CONFIG_MAX_ARGS 1024

/*
 * Append to @out the options that YAML text @buf[@len] stands for. Keys must
 * name an option of @longopts other than those in @refused; a flag
 * (no_argument) takes true or false; a list is one option with its items
 * joined by ',' unless the key is in @repeated, then one option per item.
 * Returns 0, or -EINVAL with @e set (bad YAML, unknown key, a nested value,
 * too many options), or -ENOMEM. @refused and @repeated are NULL-terminated.
 */
int config_parse(const char *buf, size_t len, const struct option *longopts,
		 const char *const *refused, const char *const *repeated,
		 struct config_args *out, struct config_error *e);

/* Free the strings and the array; @a is empty afterwards. */
void config_args_release(struct config_args *a);

#endif
