// SPDX-License-Identifier: GPL-2.0-only
/*
 * Parsing of serve's untrusted input (see serve_parse.h). Every value is
 * checked against a range or a list before anything uses it; reasons quote
 * at most 40 bytes of what the client sent.
 */
#include "src/serve_parse.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "src/weight.h"
#include "src/lib/util.h"

/* A numeric query parameter in [min, max]; absent keeps *out. */
static int query_u64(serve_query_get_fn *get, void *ctx, const char *key, uint64_t min,
		     uint64_t max, uint64_t *out, char *why, size_t size)
{
	const char *v = get(ctx, key);

	if (!v)
		return 0;
	if (parse_u64(v, min, max, out)) {
		snprintf(why, size, "invalid %s '%.40s': want an integer in %llu..%llu", key, v,
			 (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	return 0;
}

/*
 * Does weight @weight have its columns in a recording with these
 * collectors? NULL: yes; the --mode it needs; "" for no such weight. A
 * ":path", ":idle" or ":readiness" filter after it (weight.h) is allowed.
 */
static const char *weight_needs(const char *weight, const struct serve_profile_req *r)
{
	const char *colon = strchr(weight, ':');
	char w[16];

	if (colon && strcmp(colon, ":path") && strcmp(colon, ":idle") &&
	    strcmp(colon, ":readiness"))
		return "";
	snprintf(w, sizeof(w), "%.*s", (int)strcspn(weight, ":"), weight);
	if (!strcmp(w, "cpu") || !strcmp(w, "cpu-time") || !strcmp(w, "samples"))
		return r->modes.cpu ? NULL : "cpu";
	if (!strcmp(w, "latency") || !strcmp(w, "syscalls"))
		return r->modes.syscall ? NULL : "syscall";
	if (!strcmp(w, "offcpu"))
		return r->modes.offcpu ? NULL : "offcpu";
	if (!strcmp(w, "wall"))
		return r->modes.cpu && r->modes.offcpu ? NULL : "cpu,offcpu";
	/* columns only a profile that saw a stall, an awaiting task has */
	if (!strcmp(w, "stall"))
		return r->modes.syscall ? NULL : "syscall";
	if (!strcmp(w, "await"))
		return NULL;
	return "";
}

static int parse_weight(serve_query_get_fn *get, void *ctx, struct serve_profile_req *r,
			char *why, size_t size)
{
	const char *w = get(ctx, "weight");
	const char *needs;

	if (!w)
		return 0;
	needs = weight_needs(w, r);
	if (needs && !*needs) {
		snprintf(why, size, "invalid weight '%.40s': want %s", w, PROFILE_WEIGHTS);
		return -EINVAL;
	}
	if (needs) {
		snprintf(why, size, "weight %s needs serve --mode %s", w, needs);
		return -EINVAL;
	}
	r->weight = w;
	return 0;
}

static int parse_target(serve_query_get_fn *get, void *ctx, struct serve_profile_req *r,
			char *why, size_t size)
{
	const char *comm = get(ctx, "comm");
	uint64_t pid = 0;
	int err = query_u64(get, ctx, "pid", 1, 4194304, &pid, why, size);

	if (err)
		return err;
	r->pid = pid;
	if (comm && (!*comm || strlen(comm) >= LP_COMM_LEN)) {
		snprintf(why, size, "invalid comm '%.40s': want 1..%d characters", comm,
			 LP_COMM_LEN - 1);
		return -EINVAL;
	}
	if (comm && pid) {
		snprintf(why, size, "give pid or comm, not both");
		return -EINVAL;
	}
	if (comm)
		snprintf(r->comm, sizeof(r->comm), "%s", comm);
	return 0;
}

/*
 * A time of a history request: Unix seconds with up to 9 decimals, or a
 * negative number of seconds before @now_ns. 0 or -EINVAL.
 */
static int parse_time(const char *v, uint64_t now_ns, uint64_t *out)
{
	uint64_t sec = 0, frac = 0, scale = NSEC_PER_SEC, t;
	bool neg = *v == '-';
	const char *p = v + neg;
	int digits = 0;

	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (sec > UINT64_MAX / 1000000000ULL / 10)
			return -EINVAL;
		sec = sec * 10 + (*p - '0');
	}
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9' && scale > 1; p++, digits++) {
			scale /= 10;
			frac += (*p - '0') * scale;
		}
	if (*p || !digits)
		return -EINVAL;
	t = sec * NSEC_PER_SEC + frac;
	if (neg && t > now_ns)
		return -EINVAL;
	*out = neg ? now_ns - t : t;
	return 0;
}

static int query_time(serve_query_get_fn *get, void *ctx, const char *key, uint64_t now_ns,
		      uint64_t *out, char *why, size_t size)
{
	const char *v = get(ctx, key);

	if (!v)
		return 0;
	if (parse_time(v, now_ns, out)) {
		snprintf(why, size, "invalid %s '%.40s': want Unix seconds, or -SECONDS before now",
			 key, v);
		return -EINVAL;
	}
	return 0;
}

/*
 * history=1, start or end: a profile cut out of the agent's history,
 * [start, end) or the last `seconds` to end (default now). The rate,
 * threshold and collectors are the history's own.
 */
static int parse_history(serve_query_get_fn *get, void *ctx, const struct serve_req_defaults *d,
			 struct serve_profile_req *r, char *why, size_t size)
{
	uint64_t history = 0, start = 0, end = d->now_wall_ns;
	int err = query_u64(get, ctx, "history", 0, 1, &history, why, size);

	if (err || (!history && !get(ctx, "start") && !get(ctx, "end")))
		return err;
	if (!d->history) {
		snprintf(why, size, "no history kept: serve runs with --history 0");
		return -EINVAL;
	}
	err = query_time(get, ctx, "start", d->now_wall_ns, &start, why, size);
	if (!err)
		err = query_time(get, ctx, "end", d->now_wall_ns, &end, why, size);
	if (err)
		return err;
	if (get(ctx, "hz") || get(ctx, "min_duration_us")) {
		snprintf(why, size, "a history profile has the agent's hz and min_duration_us");
		return -EINVAL;
	}
	if (!get(ctx, "start"))
		start = end > r->seconds * NSEC_PER_SEC ? end - r->seconds * NSEC_PER_SEC : 0;
	if (start >= end) {
		snprintf(why, size, "invalid start: not before end");
		return -EINVAL;
	}
	r->history = true;
	r->start_wall_ns = start;
	r->end_wall_ns = end;
	return 0;
}

int serve_query_parse(enum serve_endpoint ep, const struct serve_req_defaults *d,
		      serve_query_get_fn *get, void *ctx, struct serve_profile_req *r,
		      char *why, size_t size)
{
	uint64_t hz = d->freq_hz, native = 0;
	int err;

	memset(r, 0, sizeof(*r));
	r->ep = ep;
	r->seconds = SERVE_PROFILE_DEFAULT_S;
	r->min_duration_us = d->min_duration_us;
	r->modes.cpu = d->modes.cpu;
	r->modes.syscall = d->modes.syscall;
	r->modes.offcpu = d->modes.offcpu;
	if (ep == SERVE_ENDPOINT_LATENCY) {
		/* slow syscalls only: no sampling cost */
		r->modes.cpu = r->modes.offcpu = false;
		r->modes.syscall = true;
	}
	/* a history profile is cut out at once: as far back as the history goes */
	err = query_u64(get, ctx, "seconds", 1, d->history ? SERVE_HISTORY_MAX_S :
			SERVE_PROFILE_MAX_S, &r->seconds, why, size);
	if (!err && r->seconds > SERVE_PROFILE_MAX_S && !get(ctx, "history")) {
		snprintf(why, size, "invalid seconds '%.40s': want an integer in 1..%d",
			 get(ctx, "seconds"), SERVE_PROFILE_MAX_S);
		err = -EINVAL;
	}
	if (!err)
		err = parse_history(get, ctx, d, r, why, size);
	if (!err)
		err = query_u64(get, ctx, "hz", 1, 1000, &hz, why, size);
	if (!err)
		err = query_u64(get, ctx, "min_duration_us", 0, 3600000000ULL,
				&r->min_duration_us, why, size);
	if (!err)
		err = parse_target(get, ctx, r, why, size);
	if (!err && ep != SERVE_ENDPOINT_LATENCY)
		err = parse_weight(get, ctx, r, why, size);
	if (!err)
		err = query_u64(get, ctx, "native", 0, 1, &native, why, size);
	r->freq_hz = hz;
	r->native = native;
	return err;
}

/* Equal strings, in a time that depends only on their lengths, not on where they differ. */
static bool secret_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i;
	unsigned char diff = la != lb;

	for (i = 0; i < la; i++)
		diff |= (unsigned char)a[i] ^ (unsigned char)b[i % (lb ? lb : 1)];
	return !diff && la == lb;
}

bool serve_bearer_ok(const char *header, const char *token)
{
	if (!header || strncasecmp(header, "Bearer ", 7))
		return false;
	header += 7;
	while (*header == ' ')
		header++;
	return secret_equal(header, token);
}

int serve_parse_listen(const char *arg, struct sockaddr_storage *ss, bool *v6)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	const char *colon = strrchr(arg, ':');
	char host[64];
	uint64_t port;
	size_t len;

	if (!colon || parse_u64(colon + 1, 0, 65535, &port))
		return -EINVAL;
	len = colon - arg;
	*v6 = len >= 2 && arg[0] == '[' && arg[len - 1] == ']';
	if (*v6) {
		arg++;
		len -= 2;
	}
	if (len >= sizeof(host))
		return -EINVAL;
	memcpy(host, arg, len);
	host[len] = 0;
	memset(ss, 0, sizeof(*ss));
	if (*v6) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		return inet_pton(AF_INET6, host, &in6->sin6_addr) == 1 ? 0 : -EINVAL;
	}
	in->sin_family = AF_INET;
	in->sin_port = htons(port);
	return inet_pton(AF_INET, len ? host : "0.0.0.0", &in->sin_addr) == 1 ? 0 : -EINVAL;
}
