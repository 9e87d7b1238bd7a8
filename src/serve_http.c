// SPDX-License-Identifier: GPL-2.0-only
/*
 * serve's HTTP side (serve_http.h). Every request is checked in the same
 * order: authentication (401), path (404), method (405), parameters (400),
 * session limit (429), then the work. A profile request runs its own
 * session, freed before the response is sent.
 */
#include "src/serve_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/export_pprof.h"
#include "src/history.h"
#include "src/trigger.h"
#include "src/weight.h"
#include "src/mhd.h"
#include "src/pprof.h"
#include "src/serve_parse.h"
#include "src/session.h"
#include "src/stacks.h"
#include "src/stacks_svg.h"
#include "src/lib/util.h"

/* Open connections at once; each one is a thread. */
#define HTTP_MAX_CONNECTIONS 64
/* A connection idle this long is closed. */
#define HTTP_IDLE_TIMEOUT_S 30

/* libmicrohttpd's functions, set by the first serve_http_start() */
static const struct mhd_api *mhd;

struct serve_http {
	struct serve_http_config cfg;
	struct MHD_Daemon *d;
	pthread_mutex_t lock;		/* stats */
	struct serve_http_stats stats;
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

	resp = mhd->create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(r->body);
		return MHD_NO;
	}
	r->body = NULL;
	mhd->add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->type);
	if (r->filename) {
		snprintf(disp, sizeof(disp), "attachment; filename=\"%s\"", r->filename);
		mhd->add_response_header(resp, "Content-Disposition", disp);
	}
	if (r->status == MHD_HTTP_UNAUTHORIZED)
		mhd->add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"latprof\"");
	ret = mhd->queue_response(conn, r->status, resp);
	mhd->destroy_response(resp);
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

static bool authorized(struct serve_http *h, struct MHD_Connection *conn)
{
	if (!h->cfg.token)
		return true;
	return serve_bearer_ok(mhd->lookup_connection_value(conn, MHD_HEADER_KIND,
							   MHD_HTTP_HEADER_AUTHORIZATION),
			       h->cfg.token);
}

/* The parameters of a profile request; each may be given once. */
static const char *const profile_params[] = {
	"seconds", "hz", "min_duration_us", "pid", "comm", "weight", "history", "start", "end",
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

	mhd->get_connection_values_n(conn, MHD_GET_ARGUMENT_KIND, query_scan_one, &q);
	if (!q.key)
		return 0;
	snprintf(why, size, "invalid %s: %s", q.key, q.what);
	return -EINVAL;
}

static const char *query_get(void *ctx, const char *key)
{
	return mhd->lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, key);
}

/* The request's parameters (serve_parse.c), then whether its pid exists. */
static int parse_profile_req(struct serve_http *h, struct MHD_Connection *conn,
			     enum serve_endpoint ep, struct serve_profile_req *r, char *why,
			     size_t size)
{
	struct serve_req_defaults d = {
		.freq_hz = h->cfg.co->freq_hz,
		.min_duration_us = h->cfg.co->min_duration_us,
		.modes = h->cfg.co->modes,
		.history = h->cfg.history != NULL,
		.now_wall_ns = wall_ns(),
	};
	int err = query_check(conn, why, size);

	if (!err)
		err = serve_query_parse(ep, &d, query_get, conn, r, why, size);

	/* a process of the past may be gone */
	if (!err && r->pid && !r->history && kill(r->pid, 0) && errno == ESRCH) {
		snprintf(why, size, "invalid pid %llu: no such process",
			 (unsigned long long)r->pid);
		return -EINVAL;
	}
	return err;
}

/*
 * The agent's collector options with the request's own: its targets (a pid
 * or a name, else the agent's, the agent's command standing for them),
 * rate, threshold and collectors. The lists in @co point into @pids/@comms
 * or the agent's; nothing is owned.
 */
static void request_opts(const struct serve_http *h, const struct serve_profile_req *r,
			 pid_t *pid, const char **comm, struct collector_opts *co)
{
	*co = *h->cfg.co;
	co->freq_hz = r->freq_hz;
	co->min_duration_us = r->min_duration_us;
	co->modes = r->modes;
	*pid = r->pid ? r->pid : h->cfg.command_pid;
	*comm = r->comm;
	if (r->comm[0]) {
		co->comms = (struct comm_list){ .items = comm, .nr = 1 };
		co->pids = (struct pid_list){ 0 };
		co->all = false;
	} else if (*pid) {
		co->pids = (struct pid_list){ .items = pid, .nr = 1 };
		co->comms = (struct comm_list){ 0 };
		co->all = false;
	}
}

static bool request_stop(void *arg)
{
	const struct serve_http *h = arg;

	return *h->cfg.stop;
}

/* Record @r into a new profile; NULL with *err set (-EINTR: the agent is stopping). */
static struct profile *record_profile(struct serve_http *h, const struct serve_profile_req *r,
				      int *err)
{
	struct collector_opts co;
	struct session_config cfg = {
		.kind = SESSION_KIND_PROFILE, .co = &co, .interval_s = 1,
	};
	struct session_loop loop = { .stop = request_stop, .arg = h };
	struct profile *p = NULL;
	struct session s;
	const char *comm;
	pid_t pid;

	request_opts(h, r, &pid, &comm, &co);
	session_init(&s);
	*err = session_open(&s, &cfg);
	if (!*err) {
		loop.deadline_ns = s.attached_ns + r->seconds * NSEC_PER_SEC;
		*err = session_run(&s, &loop);
	}
	if (!*err && *h->cfg.stop)
		*err = -EINTR;
	if (!*err)
		*err = session_finish(&s, h->cfg.command_line, &p);
	session_release(&s);
	return p;
}

/* The windows of [start, end) merged (history.h); NULL with *err set, *why for 404/400. */
static struct profile *history_profile(struct serve_http *h, const struct serve_profile_req *r,
				       int *err, char *why, size_t size)
{
	struct profile_merge_filter f = { .pid = r->pid, .comm = r->comm };
	struct profile *p = NULL;
	const char *bad;

	*err = history_query(h->cfg.history, r->start_wall_ns, r->end_wall_ns, &f, &p, &bad);
	if (*err == -ENOENT)
		snprintf(why, size, "no history between %.3f and %.3f\n",
			 r->start_wall_ns / 1e9, r->end_wall_ns / 1e9);
	else if (*err == -EINVAL)
		snprintf(why, size, "cannot read a window: %s\n", bad ? bad : "corrupt");
	return p;
}

/* @p in the endpoint's format into @reply. 0 or -errno. */
static int render_profile(const struct serve_profile_req *r, const struct profile *p,
			  struct http_reply *reply)
{
	unsigned int flags = r->native ? STACKS_FLAG_NATIVE : 0;
	struct profile_weight w;
	const char *wname = r->weight;
	FILE *f = open_memstream(&reply->body, &reply->len);
	int err;

	if (!f)
		return -errno;
	if (r->ep == SERVE_ENDPOINT_LATENCY)
		wname = "latency";
	else if (!wname && r->ep == SERVE_ENDPOINT_FLAMEGRAPH)
		wname = profile_weight_default(p);
	err = wname ? profile_weight_get(p, wname, &w) : 0;
	if (!err && r->ep == SERVE_ENDPOINT_FLAMEGRAPH)
		err = stacks_svg_write_profile(f, p, &w, flags);
	else if (!err)	/* without a weight, every column: cpu and latency */
		err = export_pprof(f, p, wname ? &w : NULL, flags);
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

static bool session_take(struct serve_http *h)
{
	bool ok;

	pthread_mutex_lock(&h->lock);
	ok = h->stats.active < h->cfg.max_sessions;
	if (ok)
		h->stats.active++;
	else
		h->stats.rejected++;
	pthread_mutex_unlock(&h->lock);
	return ok;
}

static void session_put(struct serve_http *h)
{
	pthread_mutex_lock(&h->lock);
	h->stats.active--;
	h->stats.total++;
	pthread_mutex_unlock(&h->lock);
}

void serve_http_get_stats(struct serve_http *h, struct serve_http_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	*st = h->stats;
	pthread_mutex_unlock(&h->lock);
}

/* A profile of the past: no session, no limit; the windows merged at once. */
static enum MHD_Result handle_history(struct serve_http *h, struct MHD_Connection *conn,
				      const struct serve_profile_req *r)
{
	struct http_reply reply = { 0 };
	struct profile *p;
	char why[192] = "";
	int err;

	p = history_profile(h, r, &err, why, sizeof(why));
	if (p)
		err = render_profile(r, p, &reply);
	profile_free(p);
	pthread_mutex_lock(&h->lock);
	h->stats.history_total++;
	pthread_mutex_unlock(&h->lock);
	if (err == -ENOENT)
		return send_text(conn, MHD_HTTP_NOT_FOUND, "%s", why);
	if (err) {
		free(reply.body);
		if (why[0])
			return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", why);
		return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot merge: %s\n",
				 strerror(-err));
	}
	return send_reply(conn, &reply);
}

static enum MHD_Result handle_profile(struct serve_http *h, struct MHD_Connection *conn,
				      enum serve_endpoint ep)
{
	struct serve_profile_req r;
	struct http_reply reply = { 0 };
	struct profile *p;
	char why[192];
	int err;

	if (parse_profile_req(h, conn, ep, &r, why, sizeof(why)))
		return send_text(conn, MHD_HTTP_BAD_REQUEST, "%s\n", why);
	if (r.history)
		return handle_history(h, conn, &r);
	if (!session_take(h))
		return send_text(conn, MHD_HTTP_TOO_MANY_REQUESTS,
				 "%u profile sessions running (--max-sessions): try later\n",
				 h->cfg.max_sessions);
	pr_debug("profile %us requested", (unsigned int)r.seconds);
	p = record_profile(h, &r, &err);
	if (p)
		err = render_profile(&r, p, &reply);
	profile_free(p);
	/* a recording's symbolizer frees hundreds of MB: give them back now */
	malloc_trim(0);
	session_put(h);
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

/* /profiles: the triggers' files (JSON); /profiles/NAME: one of them. */
static enum MHD_Result handle_profiles(struct serve_http *h, struct MHD_Connection *conn,
				       const char *url)
{
	struct http_reply reply = { .status = MHD_HTTP_OK, .type = "application/json" };
	const char *name = url[strlen("/profiles")] ? url + strlen("/profiles/") : NULL;
	FILE *f;
	int err;

	if (!h->cfg.triggers)
		return send_text(conn, MHD_HTTP_NOT_FOUND, "no triggers: serve runs without --trigger\n");
	if (name) {
		err = triggers_read(h->cfg.triggers, name, &reply.body, &reply.len);
		if (err == -ENOENT)
			return send_text(conn, MHD_HTTP_NOT_FOUND, "no such profile: %.100s\n", name);
		if (err)
			return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read %.100s: %s\n",
					 name, strerror(-err));
		reply.type = "application/octet-stream";
		reply.filename = "profile.pb.gz";
		return send_reply(conn, &reply);
	}
	f = open_memstream(&reply.body, &reply.len);
	if (!f)
		return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	err = triggers_write_list(h->cfg.triggers, f);
	if (fclose(f) && !err)
		err = -errno;
	if (err) {
		free(reply.body);
		return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot list: %s\n",
				 strerror(-err));
	}
	return send_reply(conn, &reply);
}

static enum MHD_Result handle_metrics(struct serve_http *h, struct MHD_Connection *conn)
{
	struct http_reply reply = { .status = MHD_HTTP_OK,
				    .type = "text/plain; version=0.0.4; charset=utf-8" };
	FILE *f = open_memstream(&reply.body, &reply.len);
	int err;

	if (!f)
		return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	err = h->cfg.write_metrics(h->cfg.arg, f);
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
	struct serve_http *h = cls;

	if (!*req_cls) {
		*req_cls = &first_call_marker;	/* answer once the headers are complete */
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0;		/* a body is read and ignored */
		return MHD_YES;
	}
	if (!authorized(h, conn))
		return send_text(conn, MHD_HTTP_UNAUTHORIZED, "missing or wrong bearer token\n");
	if (strcmp(url, "/metrics") && strcmp(url, "/healthz") &&
	    strcmp(url, "/debug/pprof/profile") && strcmp(url, "/debug/pprof/latency") &&
	    strcmp(url, "/flamegraph") && strcmp(url, "/profiles") &&
	    strncmp(url, "/profiles/", strlen("/profiles/")))
		return send_text(conn, MHD_HTTP_NOT_FOUND, "no such endpoint: %.100s\n", url);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return send_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET is served\n");
	if (!strcmp(url, "/healthz"))
		return send_text(conn, MHD_HTTP_OK, "ok\n");
	if (!strcmp(url, "/metrics"))
		return handle_metrics(h, conn);
	if (!strncmp(url, "/profiles", strlen("/profiles")))
		return handle_profiles(h, conn, url);
	if (!strcmp(url, "/debug/pprof/profile"))
		return handle_profile(h, conn, SERVE_ENDPOINT_PROFILE);
	if (!strcmp(url, "/debug/pprof/latency"))
		return handle_profile(h, conn, SERVE_ENDPOINT_LATENCY);
	return handle_profile(h, conn, SERVE_ENDPOINT_FLAMEGRAPH);
}

/*
 * --tls-client-ca: every connection's TLS session, before its handshake
 * (MHD calls this as it accepts), requires a client certificate that
 * GnuTLS verifies against the CA (MHD_OPTION_HTTPS_MEM_TRUST) during the
 * handshake: a client without one, or with one of another CA, fails the
 * handshake, and no request of its reaches on_request.
 */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *info;

	(void)cls;
	(void)socket_ctx;
	if (code != MHD_CONNECTION_NOTIFY_STARTED)
		return;
	info = mhd->get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!info || !info->tls_session)
		return;	/* not TLS: no daemon option asks for this then */
	mhd->tls_set_request(info->tls_session, GNUTLS_CERT_REQUIRE);
	mhd->tls_set_verify_cert(info->tls_session, NULL, 0);
}

/* The daemon's options for @cfg into @o (room for 8). */
static void daemon_options(const struct serve_http_config *cfg, const struct sockaddr_storage *ss,
			   struct MHD_OptionItem *o)
{
	size_t n = 0;

	o[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, (void *)ss };
	o[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, HTTP_MAX_CONNECTIONS, NULL };
	o[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, HTTP_IDLE_TIMEOUT_S, NULL };
	if (cfg->tls_cert) {
		o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0,
						  (void *)cfg->tls_cert };
		o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)cfg->tls_key };
	}
	if (cfg->tls_cert && cfg->tls_client_ca) {
		o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_TRUST, 0,
						  (void *)cfg->tls_client_ca };
		/* two pointers: the function as the value, its argument as the pointer */
		o[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION,
						  (intptr_t)on_connection, NULL };
	}
	o[n] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
}

struct serve_http *serve_http_start(const struct serve_http_config *cfg)
{
	/*
	 * poll, not select: profile sessions' symbolizers hold hundreds of
	 * files, and select drops every connection whose fd is past 1023
	 */
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			     MHD_USE_POLL;
	struct serve_http *h = calloc(1, sizeof(*h));
	struct MHD_OptionItem opts[8];
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *info;
	bool v6;

	mhd = mhd_open();
	if (!mhd || !h) {
		free(h);
		return NULL;
	}
	h->cfg = *cfg;
	pthread_mutex_init(&h->lock, NULL);
	if (serve_parse_listen(cfg->listen, &ss, &v6)) {
		pr_err("invalid --listen '%s': want ADDR:PORT or [ADDR6]:PORT", cfg->listen);
		goto fail;
	}
	if (v6)
		flags |= MHD_USE_IPv6;
	if (cfg->tls_cert) {
		if (mhd->is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			pr_err("cannot serve HTTPS: libmicrohttpd was built without TLS");
			goto fail;
		}
		flags |= MHD_USE_TLS;
	}
	daemon_options(cfg, &ss, opts);
	h->d = mhd->start_daemon(flags, 0, NULL, NULL, on_request, h, MHD_OPTION_ARRAY, opts,
				MHD_OPTION_END);
	if (!h->d) {
		pr_err("cannot listen on %s: %s", cfg->listen,
		       errno ? strerror(errno) :
		       "address in use or bad TLS key, certificate or client CA");
		goto fail;
	}
	info = mhd->get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	pr_info("serving on %s://%.*s:%u%s", cfg->tls_cert ? "https" : "http",
		(int)(strrchr(cfg->listen, ':') - cfg->listen), cfg->listen,
		info ? info->port : 0, cfg->tls_client_ca ? " (client certificates required)" : "");
	return h;
fail:
	pthread_mutex_destroy(&h->lock);
	free(h);
	return NULL;
}

void serve_http_stop(struct serve_http *h)
{
	if (!h)
		return;
	mhd->stop_daemon(h->d);
	pthread_mutex_destroy(&h->lock);
	free(h);
}
