/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `latprof serve`, the agent: one session (session.h) for the agent's
 * life, whose in-kernel counters are drained into struct metrics every
 * second and at every scrape: with a history a recorder, whose stacks are
 * cut into the history's windows (serve_history.h), replaced by a fresh
 * one when it holds too many processes gone; with --history 0 a metrics
 * session, no stacks kept. And the HTTP server (serve_http.h), which
 * records one profile session per profile request and answers from the
 * history. It ends on SIGINT/SIGTERM, or when a -- COMMAND exits, then
 * stops the HTTP server and detaches every BPF program.
 */
#ifndef LATPROF_SERVE_H
#define LATPROF_SERVE_H

#include <stdint.h>

#include "src/collectopts.h"
#include "src/trigger.h"

#define SERVE_DEFAULT_PORT 6061
#define SERVE_DEFAULT_MAX_SESSIONS 4
/* A series nothing was added to for this long is removed (metrics.h). */
#define SERVE_DEFAULT_SERIES_TTL_S 300

struct serve_opts {
	struct collector_opts co;	/* the metrics session's, and every profile's defaults */
	const char *listen;		/* ADDR:PORT as given */
	char **command;			/* after "--" */
	char *token;			/* owned; NULL: no authentication */
	char *tls_cert, *tls_key;	/* owned PEM contents */
	char *tls_client_ca;		/* owned PEM: client certificates required; NULL: not */
	unsigned int max_sessions;
	uint64_t series_ttl_ns;		/* 0: series are kept for the agent's life */
	const char *command_line;	/* latprof's own, for the profiles' metadata */
	/* the flight recorder (history.h); keep_ns 0: none */
	uint64_t history_keep_ns, history_window_ns, history_max_bytes;
	const char *history_dir;	/* spill directory, or NULL */
	uint64_t history_dir_max_bytes;
	/* trigger rules (trigger.h), checked at each history window */
	struct { struct trigger_rule *items; size_t nr, alloc; } triggers;	/* owned */
	const char *trigger_dir;
	unsigned int trigger_max_files;
};

/*
 * Serve until SIGINT/SIGTERM or the command's end. 0, -ENOENT or -EACCES
 * when the command cannot be run (bad input), or another -errno (printed).
 */
int serve_run(const struct serve_opts *o);

#endif
