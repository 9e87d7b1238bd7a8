/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `latprof serve`, shared between its two halves: serve.c (options, the
 * always-on metrics session, the main loop, shutdown) and serve_http.c (the
 * HTTP server and the per-request profile sessions). Not used elsewhere.
 *
 * Two kinds of BPF session run at once:
 *   - one metrics session for the agent's life: in-kernel counters drained
 *     into struct metrics every second and at every scrape, no stacks kept;
 *   - one session per profile request (/debug/pprof/profile and latency,
 *     /flamegraph), with
 *     its own symbolizer, for the request's seconds, then freed: at most
 *     --max-sessions at a time, so memory is bounded by that many recordings.
 */
#ifndef LATPROF_SERVE_H
#define LATPROF_SERVE_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/collect.h"
#include "src/collectopts.h"
#include "src/metrics.h"
#include "src/serve_parse.h"

#define SERVE_DEFAULT_PORT 6061
#define SERVE_DEFAULT_MAX_SESSIONS 4

struct serve_opts {
	const char *listen;		/* ADDR:PORT as given */
	struct pid_list pids;
	struct comm_list comms;
	struct syscall_list syscalls;
	char **command;			/* after "--" */
	struct collector_modes modes;
	const char *mode;
	unsigned int freq_hz;
	uint64_t min_duration_us;
	bool unwind_dwarf;
	bool no_python;		/* --no-python: profiles keep the eval loop's C frames */
	char *token;			/* owned; NULL: no authentication */
	char *tls_cert, *tls_key;	/* owned PEM contents */
	unsigned int max_sessions;
};

struct serve {
	struct serve_opts o;
	pthread_mutex_t lock;		/* everything below */
	struct metrics *metrics;
	struct collect *col;		/* the metrics session */
	struct symbolizer *sym;		/* its (nearly idle) symbolizer */
	pid_t command_pid;		/* -- COMMAND, 0 without */
	uint64_t attached_ns;
	unsigned int sessions;		/* profile sessions running */
	uint64_t profiles_total, profiles_rejected;
	uint64_t drain_errors;
	char kernel[128];
};

/* Set by SIGINT/SIGTERM: everything winds down. */
extern volatile sig_atomic_t serve_stop;

/*
 * Take what the kernel counted since the last drain into the metrics; call
 * with s->lock held. 0 or -errno.
 */
int serve_drain_locked(struct serve *s);

/* Write /metrics into @out (drains first). 0 or -errno. */
int serve_write_metrics(struct serve *s, FILE *out);

struct serve_http;

/*
 * Listen on s->o.listen and answer requests on background threads. Prints
 * the address it listens on. Returns the server, or NULL after printing why.
 */
struct serve_http *serve_http_start(struct serve *s);

/* Stop answering; waits for running requests (which see serve_stop). NULL ok. */
void serve_http_stop(struct serve_http *h);

#endif
