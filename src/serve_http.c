// SPDX-License-Identifier: GPL-2.0-only
/*
 * serve's HTTP side (see serve.h): libmicrohttpd with a thread per
 * connection, so a profile request can record for its seconds while
 * /metrics and /healthz keep answering. Every request is checked in the
 * same order: authentication (401), path (404), method (405), parameters
 * (400), session limit (429), then the work. A profile request runs its own
 * BPF session and symbolizer, freed before the response is sent.
 */
#include "src/serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/export_pprof.h"
#include "src/flamegraph.h"
#include "src/loadprof.h"
#include "src/pprof.h"
#include "src/util.h"

/* Open connections at once; each one is a thread. */
#define HTTP_MAX_CONNECTIONS 64
/* A connection idle this long is closed. */
#define HTTP_IDLE_TIMEOUT_S 30

struct serve_http {
	struct serve *s;
	struct MHD_Daemon *d;
};

struct http_reply {
	unsigned int status;
	const char *type;
	char *body;			/* owned */
	size_t len;
	const char *filename;		/* Content-Disposition, or NULL */
};

static enum MHD_Result send_reply(struct MHD_Connection *conn, struct http_reply *r)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	char disp[96];

	resp = MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(r->body);
		return MHD_NO;
	}
	r->body = NULL;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->type);
	if (r->filename) {
		snprintf(disp, sizeof(disp), "attachment; filename=\"%s\"", r->filename);
		MHD_add_response_header(resp, "Content-Disposition", disp);
	}
	if (r->status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"latprof\"");
	ret = MHD_queue_response(conn, r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* A one-line text/plain reply. */
static enum MHD_Result send_text(struct MHD_Connection *conn, unsigned int status,
				 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static enum MHD_Result send_text(struct MHD_Connection *conn, unsigned int status,
				 const char *fmt, ...)
{
	struct http_reply r = { .status = status, .type = "text/plain; charset=utf-8" };
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&r.body, fmt, ap);
	va_end(ap);
	if (n < 0)
		return MHD_NO;
	r.len = n;
	return send_reply(conn, &r);
}

static bool authorized(struct serve *s, struct MHD_Connection *conn)
{
	if (!s->o.token)
		return true;
	return serve_bearer_ok(MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							   MHD_HTTP_HEADER_AUTHORIZATION),
			       s->o.token);
}

/* The parameters of a profile request; each may be given once. */
static const char *const profile_params[] = {
	"seconds", "hz", "min_duration_us", "pid", "comm", "weight",
};

struct query_scan {
	unsigned int seen;	/* bit i: profile_params[i] was given */
	const char *key;	/* the first parameter in error, NULL: none */
	const char *what;	/* what is wrong with it */
};

/*
 * MHD keeps the first of repeated keys and cuts a value at a %00: a request
 * could mean something other than what it was read as. Reject both, and the
 * bytes that have no business in a number or a name (so an error message
 * never echoes them): control bytes anywhere, non-ASCII but in comm.
 */
static enum MHD_Result query_scan_one(void *cls, enum MHD_ValueKind kind, const char *key,
				      size_t key_size, const char *value, size_t value_size)
{
	struct query_scan *q = cls;
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(profile_params); i++)
		if (!strcmp(key, profile_params[i]))
			break;
	if (i == ARRAY_SIZE(profile_params))
		return MHD_YES;	/* not ours: ignored */
	q->key = profile_params[i];
	if (q->seen & 1u << i) {
		q->what = "given more than once";
		return MHD_NO;
	}
	q->seen |= 1u << i;
	for (j = 0; value && j < value_size; j++) {
		unsigned char c = value[j];

		if (c < 0x20 || c == 0x7f || (c >= 0x80 && strcmp(key, "comm"))) {
			q->what = "has a control or non-ASCII byte";
			return MHD_NO;
		}
	}
	q->key = NULL;
	return MHD_YES;
}

static int query_check(struct MHD_Connection *conn, char *why, size_t size)
{
	struct query_scan q = { 0 };

	MHD_get_connection_values_n(conn, MHD_GET_ARGUMENT_KIND, query_scan_one, &q);
	if (!q.key)
		return 0;
	snprintf(why, size, "invalid %s: %s", q.key, q.what);
	return -EINVAL;
}

static const char *query_get(void *ctx, const char *key)
{
	return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, key);
}

/* The request's parameters (serve_parse.c), then whether its pid exists. */
static int parse_profile_req(struct serve *s, struct MHD_Connection *conn,
			     enum serve_endpoint ep, struct serve_profile_req *r, char *why,
			     size_t size)
{
	struct serve_req_defaults d = {
		.freq_hz = s->o.freq_hz,
		.min_duration_us = s->o.min_duration_us,
		.mode_cpu = s->o.modes.cpu,
		.mode_syscall = s->o.modes.syscall,
		.mode_offcpu = s->o.modes.offcpu,
	};
	int err = query_check(conn, why, size);

	if (!err)
		err = serve_query_parse(ep, &d, query_get, conn, r, why, size);

	if (!err && r->pid && kill(r->pid, 0) && errno == ESRCH) {
		snprintf(why, size, "invalid pid %llu: no such process",
			 (unsigned long long)r->pid);
		return -EINVAL;
	}
	return err;
}

/* Record @r into a new profile; NULL with *err set (-EINTR: the agent is stopping). */
static struct profile *record_profile(struct serve *s, const struct serve_profile_req *r,
				      int *err)
{
	const char *comms[1] = { r->comm };
	pid_t pids[1] = { r->pid ? r->pid : s->command_pid };
	bool own = r->pid || r->comm[0];
	struct collect_opts co = {
		.mode_cpu = r->mode_cpu,
		.mode_syscall = r->mode_syscall,
		.mode_offcpu = r->mode_offcpu,
		.min_duration_ns = r->min_duration_us * 1000,
		.min_block_ns = 1000000,
		.syscalls = s->o.syscalls.items,
		.nr_syscalls = s->o.syscalls.nr,
		.max_sys_stats = 16384,
		.freq_hz = r->freq_hz,
		.all = !own && !s->command_pid && !s->o.pids.nr && !s->o.comms.nr,
		.comms = r->comm[0] ? comms : own ? NULL : s->o.comms.items,
		.nr_comms = r->comm[0] ? 1 : own ? 0 : s->o.comms.nr,
		.pids = r->pid || s->command_pid ? pids : own ? NULL : s->o.pids.items,
		.nr_pids = r->pid || (!own && s->command_pid) ? 1 : own ? 0 : s->o.pids.nr,
		.max_stacks = s->o.unwind_dwarf ? 4096 : 16384,
		.max_samples = 65536,
		.max_procs = 32768,
		.unwind_dwarf = s->o.unwind_dwarf,
		.no_python = s->o.no_python,
		.stack_size = 16384,
		.ustack_ring_bytes = s->o.unwind_dwarf ? 4 * 1024 * 1024 : 1024 * 1024,
		.verbose = log_level >= LOG_LEVEL_DEBUG,
		.raw_tp = getenv("LATPROF_RAW_TP") && *getenv("LATPROF_RAW_TP"),
	};
	struct symbolizer *sym = symbolizer_new(NULL);
	struct collect *col = NULL;
	struct profile *p = NULL;
	uint64_t start_wall = wall_ns(), t0, deadline;
	const char *why;

	*err = sym ? 0 : -errno;
	if (sym)
		col = collect_open(&co, sym, err, &why);
	if (col)
		*err = collect_attach(col);
	t0 = now_ns();
	deadline = t0 + r->seconds * NSEC_PER_SEC;
	while (!*err && !serve_stop && now_ns() < deadline)
		*err = collect_poll(col, 100);
	if (!*err && serve_stop)
		*err = -EINTR;
	if (col)
		collect_detach(col);
	if (!*err) {
		p = profile_new();
		*err = p ? collect_build_profile(col, p) : -ENOMEM;
	}
	if (!*err) {
		p->time_ns = start_wall;
		p->duration_ns = now_ns() - t0;
		*err = profile_set_meta(p, "version", LATPROF_VERSION);
		if (!*err)
			*err = profile_set_meta_u64(p, "freq_hz", r->freq_hz);
		if (!*err)
			*err = profile_set_meta(p, "unwind", s->o.unwind_dwarf ? "dwarf" : "fp");
	}
	if (*err) {
		profile_free(p);
		p = NULL;
	}
	collect_free(col);
	symbolizer_free(sym);
	return p;
}

/* @p in the endpoint's format into @reply. 0 or -errno. */
static int render_profile(const struct serve_profile_req *r, const struct profile *p,
			  struct http_reply *reply)
{
	struct profile_weight w;
	const char *wname = r->weight;
	FILE *f = open_memstream(&reply->body, &reply->len);
	int err;

	if (!f)
		return -errno;
	if (r->ep == SERVE_ENDPOINT_LATENCY)
		wname = "latency";
	else if (!wname && r->ep == SERVE_ENDPOINT_FLAMEGRAPH)
		wname = r->mode_cpu ? "cpu" : r->mode_syscall ? "latency" : "offcpu";
	err = wname ? profile_weight_get(p, wname, &w) : 0;
	if (!err && r->ep == SERVE_ENDPOINT_FLAMEGRAPH)
		err = flamegraph_write_profile(f, p, &w, 0);
	else if (!err && wname)
		err = export_pprof(f, p, &w);
	else if (!err)
		err = pprof_write(p, f);	/* every column: cpu and latency */
	if (fclose(f) && !err)
		err = -errno;
	if (err)
		return err;
	reply->status = MHD_HTTP_OK;
	if (r->ep == SERVE_ENDPOINT_FLAMEGRAPH) {
		reply->type = "image/svg+xml";
	} else {
		reply->type = "application/octet-stream";
		reply->filename = "profile.pb.gz";
	}
	return 0;
}

static bool session_take(struct serve *s)
{
	bool ok;

	pthread_mutex_lock(&s->lock);
	ok = s->sessions < s->o.max_sessions;
	if (ok)
		s->sessions++;
	else
		s->profiles_rejected++;
	pthread_mutex_unlock(&s->lock);
	return ok;
}

static void session_put(struct serve *s)
{
	pthread_mutex_lock(&s->lock);
	s->sessions--;
	s->profiles_total++;
	pthread_mutex_unlock(&s->lock);
}

static enum MHD_Result handle_profile(struct serve *s, struct MHD_Connection *conn,
				      enum serve_endpoint ep)
{
	struct serve_profile_req r;
	struct http_reply reply = { 0 };
	struct profile *p;
	char why[192];
	int err;

	if (parse_profile_req(s, conn, ep, &r, why, sizeof(why)))
		return send_text(conn, MHD_HTTP_BAD_REQUEST, "%s\n", why);
	if (!session_take(s))
		return send_text(conn, MHD_HTTP_TOO_MANY_REQUESTS,
				 "%u profile sessions running (--max-sessions): try later\n",
				 s->o.max_sessions);
	pr_debug("profile %us requested", (unsigned int)r.seconds);
	p = record_profile(s, &r, &err);
	if (p)
		err = render_profile(&r, p, &reply);
	profile_free(p);
	/* a recording's symbolizer frees hundreds of MB: give them back now */
	malloc_trim(0);
	session_put(s);
	if (err == -EINTR)
		return send_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "latprof is stopping\n");
	if (err) {
		free(reply.body);
		pr_warn("profile request failed: %s", strerror(-err));
		return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot record: %s\n",
				 strerror(-err));
	}
	return send_reply(conn, &reply);
}

static enum MHD_Result handle_metrics(struct serve *s, struct MHD_Connection *conn)
{
	struct http_reply reply = { .status = MHD_HTTP_OK,
				    .type = "text/plain; version=0.0.4; charset=utf-8" };
	FILE *f = open_memstream(&reply.body, &reply.len);
	int err;

	if (!f)
		return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	err = serve_write_metrics(s, f);
	if (fclose(f) && !err)
		err = -errno;
	if (err) {
		free(reply.body);
		return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read metrics: %s\n",
				 strerror(-err));
	}
	return send_reply(conn, &reply);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size,
				  void **req_cls)
{
	static int first_call_marker;
	struct serve *s = cls;

	if (!*req_cls) {
		*req_cls = &first_call_marker;	/* answer once the headers are complete */
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0;		/* a body is read and ignored */
		return MHD_YES;
	}
	if (!authorized(s, conn))
		return send_text(conn, MHD_HTTP_UNAUTHORIZED, "missing or wrong bearer token\n");
	if (strcmp(url, "/metrics") && strcmp(url, "/healthz") &&
	    strcmp(url, "/debug/pprof/profile") && strcmp(url, "/debug/pprof/latency") &&
	    strcmp(url, "/flamegraph"))
		return send_text(conn, MHD_HTTP_NOT_FOUND, "no such endpoint: %.100s\n", url);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return send_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET is served\n");
	if (!strcmp(url, "/healthz"))
		return send_text(conn, MHD_HTTP_OK, "ok\n");
	if (!strcmp(url, "/metrics"))
		return handle_metrics(s, conn);
	if (!strcmp(url, "/debug/pprof/profile"))
		return handle_profile(s, conn, SERVE_ENDPOINT_PROFILE);
	if (!strcmp(url, "/debug/pprof/latency"))
		return handle_profile(s, conn, SERVE_ENDPOINT_LATENCY);
	return handle_profile(s, conn, SERVE_ENDPOINT_FLAMEGRAPH);
}

struct serve_http *serve_http_start(struct serve *s)
{
	/*
	 * poll, not select: profile sessions' symbolizers hold hundreds of
	 * files, and select drops every connection whose fd is past 1023
	 */
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			     MHD_USE_POLL;
	struct serve_http *h = calloc(1, sizeof(*h));
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *info;
	bool v6;

	if (!h)
		return NULL;
	h->s = s;
	if (serve_parse_listen(s->o.listen, &ss, &v6)) {
		pr_err("invalid --listen '%s': want ADDR:PORT or [ADDR6]:PORT", s->o.listen);
		goto fail;
	}
	if (v6)
		flags |= MHD_USE_IPv6;
	if (s->o.tls_cert) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			pr_err("cannot serve HTTPS: libmicrohttpd was built without TLS");
			goto fail;
		}
		flags |= MHD_USE_TLS;
	}
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_MAX_CONNECTIONS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_IDLE_TIMEOUT_S,
				s->o.tls_cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END,
				s->o.tls_cert, MHD_OPTION_HTTPS_MEM_KEY, s->o.tls_key,
				MHD_OPTION_END);
	if (!h->d) {
		pr_err("cannot listen on %s: %s", s->o.listen,
		       errno ? strerror(errno) : "address in use or bad TLS key/certificate");
		goto fail;
	}
	info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	pr_info("serving on %s://%.*s:%u", s->o.tls_cert ? "https" : "http",
		(int)(strrchr(s->o.listen, ':') - s->o.listen), s->o.listen,
		info ? info->port : 0);
	return h;
fail:
	free(h);
	return NULL;
}

void serve_http_stop(struct serve_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	free(h);
}
