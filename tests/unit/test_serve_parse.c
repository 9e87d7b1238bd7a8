// SPDX-License-Identifier: GPL-2.0-only
/* src/serve_parse: profile request parameters, bearer tokens and --listen addresses. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "src/serve_parse.h"
#include "tests/unit/check.h"

/* Query parameters as a NULL-terminated array of key, value pairs. */
static const char *get_pair(void *ctx, const char *key)
{
	const char *const *kv = ctx;

	for (; kv[0]; kv += 2)
		if (!strcmp(kv[0], key))
			return kv[1];
	return NULL;
}

static const struct serve_req_defaults defaults = {
	.freq_hz = 99, .min_duration_us = 1000, .modes = { .cpu = true, .syscall = true },
};

static int parse(enum serve_endpoint ep, const char *const *kv, struct serve_profile_req *r,
		 char *why, size_t size)
{
	why[0] = 0;
	return serve_query_parse(ep, &defaults, get_pair, (void *)kv, r, why, size);
}

static void test_query(void)
{
	const char *none[] = { NULL };
	const char *all[] = { "seconds", "5", "hz", "1000", "min_duration_us", "0", "comm", "nginx",
			      "weight", "latency", NULL };
	const char *both[] = { "pid", "1", "comm", "x", NULL };
	const char *long_comm[] = { "comm", "0123456789abcdef", NULL };
	const char *bad_hz[] = { "hz", "1001", NULL };
	const char *neg[] = { "seconds", "-1", NULL };
	const char *off[] = { "weight", "offcpu", NULL };
	const char *junk[] = { "weight", "cpu\n", NULL };
	const char *path[] = { "weight", "latency:path", NULL };
	const char *bad_wait[] = { "weight", "latency:busy", NULL };
	const char *native[] = { "native", "1", NULL };
	const char *bad_native[] = { "native", "yes", NULL };
	struct serve_profile_req r;
	char why[192];

	CHECK(parse(SERVE_ENDPOINT_PROFILE, none, &r, why, sizeof(why)) == 0);
	CHECK(r.seconds == SERVE_PROFILE_DEFAULT_S && r.freq_hz == 99 && r.min_duration_us == 1000);
	CHECK(r.modes.cpu && r.modes.syscall && !r.modes.offcpu && !r.pid && !r.comm[0] && !r.weight);
	CHECK(parse(SERVE_ENDPOINT_PROFILE, all, &r, why, sizeof(why)) == 0);
	CHECK(r.seconds == 5 && r.freq_hz == 1000 && r.min_duration_us == 0);
	CHECK_STR(r.comm, "nginx");
	CHECK_STR(r.weight, "latency");
	/* latency: slow syscalls only, and the weight is its own */
	CHECK(parse(SERVE_ENDPOINT_LATENCY, off, &r, why, sizeof(why)) == 0);
	CHECK(!r.modes.cpu && r.modes.syscall && !r.modes.offcpu && !r.weight);
	CHECK(parse(SERVE_ENDPOINT_PROFILE, off, &r, why, sizeof(why)) == -EINVAL);
	CHECK_STR(why, "weight offcpu needs serve --mode offcpu");
	CHECK(parse(SERVE_ENDPOINT_PROFILE, both, &r, why, sizeof(why)) == -EINVAL);
	CHECK_STR(why, "give pid or comm, not both");
	CHECK(parse(SERVE_ENDPOINT_FLAMEGRAPH, long_comm, &r, why, sizeof(why)) == -EINVAL);
	CHECK_STR(why, "invalid comm '0123456789abcdef': want 1..15 characters");
	CHECK(parse(SERVE_ENDPOINT_PROFILE, bad_hz, &r, why, sizeof(why)) == -EINVAL);
	CHECK_STR(why, "invalid hz '1001': want an integer in 1..1000");
	CHECK(parse(SERVE_ENDPOINT_PROFILE, neg, &r, why, sizeof(why)) == -EINVAL);
	CHECK(parse(SERVE_ENDPOINT_PROFILE, junk, &r, why, sizeof(why)) == -EINVAL);
	/* a wait filter after the weight (docs/syscalls.md, "Idle waits") */
	CHECK(parse(SERVE_ENDPOINT_FLAMEGRAPH, path, &r, why, sizeof(why)) == 0);
	CHECK_STR(r.weight, "latency:path");
	CHECK(parse(SERVE_ENDPOINT_FLAMEGRAPH, bad_wait, &r, why, sizeof(why)) == -EINVAL);
	/* native=1: the full native stacks, not the Python view (docs/python.md) */
	CHECK(parse(SERVE_ENDPOINT_PROFILE, none, &r, why, sizeof(why)) == 0 && !r.native);
	CHECK(parse(SERVE_ENDPOINT_LATENCY, native, &r, why, sizeof(why)) == 0 && r.native);
	CHECK(parse(SERVE_ENDPOINT_FLAMEGRAPH, bad_native, &r, why, sizeof(why)) == -EINVAL);
	CHECK_STR(why, "invalid native 'yes': want an integer in 0..1");
	/* a short buffer truncates the reason, never overflows */
	CHECK(parse(SERVE_ENDPOINT_PROFILE, bad_hz, &r, why, 8) == -EINVAL && strlen(why) == 7);
}

static void test_bearer(void)
{
	CHECK(serve_bearer_ok("Bearer s3cret", "s3cret"));
	CHECK(serve_bearer_ok("bearer   s3cret", "s3cret"));
	CHECK(!serve_bearer_ok("Bearer s3cre", "s3cret"));
	CHECK(!serve_bearer_ok("Bearer s3cret2", "s3cret"));
	CHECK(!serve_bearer_ok("Basic s3cret", "s3cret"));
	CHECK(!serve_bearer_ok("Bearer", "s3cret"));
	CHECK(!serve_bearer_ok(NULL, "s3cret"));
	CHECK(!serve_bearer_ok("Bearer ", "s3cret"));
}

static void test_listen(void)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	bool v6;

	CHECK(serve_parse_listen("127.0.0.1:6061", &ss, &v6) == 0 && !v6);
	CHECK(in->sin_family == AF_INET && ntohs(in->sin_port) == 6061 &&
	      in->sin_addr.s_addr == htonl(INADDR_LOOPBACK));
	CHECK(serve_parse_listen(":80", &ss, &v6) == 0 && !v6 && in->sin_addr.s_addr == 0);
	CHECK(serve_parse_listen("[::1]:0", &ss, &v6) == 0 && v6);
	CHECK(in6->sin6_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr));
	CHECK(serve_parse_listen("[]:80", &ss, &v6) == -EINVAL);
	CHECK(serve_parse_listen("[:80", &ss, &v6) == -EINVAL);
	CHECK(serve_parse_listen("localhost:80", &ss, &v6) == -EINVAL);
	CHECK(serve_parse_listen("1.2.3.4:65536", &ss, &v6) == -EINVAL);
	CHECK(serve_parse_listen("1.2.3.4", &ss, &v6) == -EINVAL);
	CHECK(serve_parse_listen("", &ss, &v6) == -EINVAL);
}

/* The history's requests: start/end, -SECONDS, history=1&seconds=N (serve --history). */
static void test_history(void)
{
	struct serve_req_defaults d = defaults;
	const char *range[] = { "start", "1700000000.5", "end", "1700000010", "pid", "7", NULL };
	const char *rel[] = { "start", "-60", NULL };
	const char *back[] = { "history", "1", "seconds", "3600", NULL };
	const char *big[] = { "seconds", "3600", NULL };
	const char *rev[] = { "start", "1700000010", "end", "1700000000", NULL };
	const char *hz[] = { "start", "-5", "hz", "99", NULL };
	const char *junk[] = { "start", "12x", NULL };
	const char *far[] = { "start", "-99999999999", NULL };
	const char *none[] = { NULL };
	struct serve_profile_req r;
	char why[192];

	d.history = true;
	d.now_wall_ns = 1700000100ULL * 1000000000ULL;
	CHECK(serve_query_parse(SERVE_ENDPOINT_PROFILE, &d, get_pair, range, &r, why,
				sizeof(why)) == 0);
	CHECK(r.history && r.start_wall_ns == 1700000000500000000ULL &&
	      r.end_wall_ns == 1700000010000000000ULL && r.pid == 7);
	CHECK(serve_query_parse(SERVE_ENDPOINT_FLAMEGRAPH, &d, get_pair, rel, &r, why,
				sizeof(why)) == 0);
	CHECK(r.history && r.start_wall_ns == d.now_wall_ns - 60000000000ULL &&
	      r.end_wall_ns == d.now_wall_ns);
	CHECK(serve_query_parse(SERVE_ENDPOINT_PROFILE, &d, get_pair, back, &r, why,
				sizeof(why)) == 0);
	CHECK(r.history && r.end_wall_ns - r.start_wall_ns == 3600000000000ULL);
	/* without history=1, seconds keeps Go's meaning: the next N, at most 300 */
	CHECK(serve_query_parse(SERVE_ENDPOINT_PROFILE, &d, get_pair, big, &r, why,
				sizeof(why)) == -EINVAL);
	CHECK(serve_query_parse(SERVE_ENDPOINT_PROFILE, &d, get_pair, none, &r, why,
				sizeof(why)) == 0 && !r.history);
	CHECK(serve_query_parse(SERVE_ENDPOINT_PROFILE, &d, get_pair, rev, &r, why,
				sizeof(why)) == -EINVAL);
	CHECK_STR(why, "invalid start: not before end");
	CHECK(serve_query_parse(SERVE_ENDPOINT_PROFILE, &d, get_pair, hz, &r, why,
				sizeof(why)) == -EINVAL);
	CHECK(serve_query_parse(SERVE_ENDPOINT_PROFILE, &d, get_pair, junk, &r, why,
				sizeof(why)) == -EINVAL);
	CHECK_STR(why, "invalid start '12x': want Unix seconds, or -SECONDS before now");
	CHECK(serve_query_parse(SERVE_ENDPOINT_PROFILE, &d, get_pair, far, &r, why,
				sizeof(why)) == -EINVAL);
	/* an agent without history refuses them */
	CHECK(parse(SERVE_ENDPOINT_PROFILE, rel, &r, why, sizeof(why)) == -EINVAL);
	CHECK_STR(why, "no history kept: serve runs with --history 0");
}

int main(void)
{
	test_query();
	test_history();
	test_bearer();
	test_listen();
	return check_exit();
}
