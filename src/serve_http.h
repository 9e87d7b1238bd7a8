/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * serve's HTTP side: libmicrohttpd with a thread per connection, so a
 * profile request can record for its seconds while /metrics and /healthz
 * keep answering. /metrics is written by the agent's callback; every
 * profile request runs its own profile session (session.h) with the
 * agent's collector options, as record would, at most max_sessions at once.
 */
#ifndef LATPROF_SERVE_HTTP_H
#define LATPROF_SERVE_HTTP_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "src/collectopts.h"

struct history;
struct triggers;

struct serve_http_config {
	const char *listen;		/* ADDR:PORT */
	const char *token;		/* bearer token, NULL: none */
	const char *tls_cert, *tls_key;	/* PEM contents, NULL: plain HTTP */
	const char *tls_client_ca;	/* PEM: clients need a certificate it signed; NULL: none */
	unsigned int max_sessions;
	const struct collector_opts *co;	/* defaults of every profile; borrowed */
	pid_t command_pid;		/* the agent's -- COMMAND, 0 without */
	const char *command_line;	/* latprof's own, for the profiles' metadata */
	/* /metrics into @out, called from connection threads. 0 or -errno */
	int (*write_metrics)(void *arg, FILE *out);
	void *arg;
	volatile sig_atomic_t *stop;	/* set: requests in flight end (503) */
	struct history *history;	/* NULL: none kept; borrowed */
	struct triggers *triggers;	/* NULL: no rules; borrowed (/profiles) */
};

/* Profile requests so far. */
struct serve_http_stats {
	unsigned int active;
	uint64_t total, rejected;
	uint64_t history_total;		/* profiles cut out of the history */
};

struct serve_http;

/*
 * Listen on @cfg->listen and answer requests on background threads. Prints
 * the address it listens on. Returns the server, or NULL after printing
 * why. @cfg is copied; what it points to is borrowed until serve_http_stop.
 */
struct serve_http *serve_http_start(const struct serve_http_config *cfg);

/* The profile requests' counters. NULL gives zeros. Cannot fail. */
void serve_http_get_stats(struct serve_http *h, struct serve_http_stats *st);

/* Stop answering; waits for running requests (which see *stop). NULL ok. */
void serve_http_stop(struct serve_http *h);

#endif
