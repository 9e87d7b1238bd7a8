/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What `latprof serve` reads from the network and its command line, as pure
 * functions: the query parameters of a profile request, the Authorization
 * header and the --listen address. No HTTP library, no process or kernel
 * state here (serve_http.c checks that a requested pid exists), so the unit
 * tests and the fuzzer (tests/fuzz/fuzz_serve_query.c) call them directly.
 */
#ifndef LATPROF_SERVE_PARSE_H
#define LATPROF_SERVE_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <linux/types.h>

#include "bpf/latprof.h"
#include "src/collectopts.h"

#define SERVE_PROFILE_DEFAULT_S 30
#define SERVE_PROFILE_MAX_S 300
/* history=1&seconds=N: at most a day back */
#define SERVE_HISTORY_MAX_S 86400

enum serve_endpoint {
	SERVE_ENDPOINT_PROFILE,		/* /debug/pprof/profile */
	SERVE_ENDPOINT_LATENCY,		/* /debug/pprof/latency */
	SERVE_ENDPOINT_FLAMEGRAPH,	/* /flamegraph */
};

/* What a request inherits from the agent's options. */
struct serve_req_defaults {
	unsigned int freq_hz;
	uint64_t min_duration_us;
	struct collector_modes modes;
	bool history;			/* the agent keeps a history */
	uint64_t now_wall_ns;		/* the request's time, wall clock */
};

/* One profile request, its parameters checked. */
struct serve_profile_req {
	enum serve_endpoint ep;
	uint64_t seconds;
	pid_t pid;			/* 0: the agent's targets */
	char comm[LP_COMM_LEN];		/* "": the agent's targets */
	unsigned int freq_hz;
	uint64_t min_duration_us;
	const char *weight;		/* NULL: the endpoint's default; borrowed from get */
	bool native;			/* native=1: full native stacks, no Python view */
	struct collector_modes modes;
	/* history=1, start or end: cut out of the history, not recorded */
	bool history;
	uint64_t start_wall_ns, end_wall_ns;	/* [start, end), wall clock */
};

/* The (decoded) value of query parameter @key, or NULL when absent. */
typedef const char *serve_query_get_fn(void *ctx, const char *key);

/*
 * Fill @r for endpoint @ep from the defaults and the query parameters
 * seconds, hz, min_duration_us, pid, comm, weight and native, read through @get;
 * history, start and end (Unix seconds, or -SECONDS before now) when
 * @d->history, which ask for a profile of the past: the last `seconds`
 * before end (default now) without start.
 * Returns 0, or -EINVAL with a one-line reason (no newline) in @why[@size].
 * Whether the pid exists is the caller's to check. Cannot fail otherwise.
 */
int serve_query_parse(enum serve_endpoint ep, const struct serve_req_defaults *d,
		      serve_query_get_fn *get, void *ctx, struct serve_profile_req *r,
		      char *why, size_t size);

/*
 * Does the Authorization header value @header (NULL: absent) carry bearer
 * token @token? Compared in a time that depends only on the lengths.
 */
bool serve_bearer_ok(const char *header, const char *token);

/* "ADDR:PORT" or "[ADDR6]:PORT" into @ss, *v6 set for the latter. 0 or -EINVAL. */
int serve_parse_listen(const char *arg, struct sockaddr_storage *ss, bool *v6);

#endif
