// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for what `latprof serve` reads from the network
 * (src/serve_parse.c). Byte 0 picks the endpoint and the agent's modes; the
 * rest, up to a NUL byte, is a query string "k=v&k=v" split and
 * percent-decoded the way libmicrohttpd does before the server sees it (the
 * first value of a key wins); what follows the NUL is an Authorization
 * header checked against a fixed token, and a --listen address.
 * See docs/fuzzing.md.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "src/serve_parse.h"

#define FUZZ_MAX_PARAMS 64

struct fuzz_query {
	char *keys[FUZZ_MAX_PARAMS], *values[FUZZ_MAX_PARAMS];
	size_t nr;
};

static const char *fuzz_get(void *ctx, const char *key)
{
	struct fuzz_query *q = ctx;
	size_t i;

	for (i = 0; i < q->nr; i++)
		if (!strcmp(q->keys[i], key))
			return q->values[i];
	return NULL;
}

/* Split @s in place: '&' between parameters, the first '=' before a value. */
static void fuzz_split(char *s, struct fuzz_query *q)
{
	char *save = NULL, *kv, *eq;

	q->nr = 0;
	for (kv = strtok_r(s, "&", &save); kv && q->nr < FUZZ_MAX_PARAMS;
	     kv = strtok_r(NULL, "&", &save)) {
		eq = strchr(kv, '=');
		if (eq)
			*eq++ = 0;
		MHD_http_unescape(kv);
		if (eq)
			MHD_http_unescape(eq);
		q->keys[q->nr] = kv;
		q->values[q->nr++] = eq ? eq : kv + strlen(kv);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct serve_req_defaults d = { .freq_hz = 99, .min_duration_us = 1000 };
	struct serve_profile_req r;
	struct sockaddr_storage ss;
	struct fuzz_query q;
	char why[192], *s, *rest;
	bool v6;

	if (!size)
		return 0;
	d.modes.cpu = data[0] & 4;
	d.modes.syscall = data[0] & 8;
	d.modes.offcpu = data[0] & 16;
	/* an agent with a history: start, end and history=1 parsed too */
	d.history = data[0] & 32;
	d.now_wall_ns = 1795973424568784538ULL;
	s = malloc(size);
	if (!s)
		abort();
	memcpy(s, data + 1, size - 1);
	s[size - 1] = 0;
	rest = s + strlen(s) + 1;
	fuzz_split(s, &q);
	memset(why, 0, sizeof(why));
	if (serve_query_parse((data[0] & 3) % 3, &d, fuzz_get, &q, &r, why, sizeof(why))) {
		if (!why[0])
			abort();	/* the contract: a reason for every refusal */
	} else if (r.seconds < 1 || (r.seconds > SERVE_PROFILE_MAX_S && !r.history) ||
		   r.seconds > SERVE_HISTORY_MAX_S || r.freq_hz < 1 ||
		   r.freq_hz > 1000 || (r.pid && r.comm[0]) || strlen(r.comm) >= LP_COMM_LEN ||
		   (r.history && (!d.history || r.start_wall_ns >= r.end_wall_ns))) {
		abort();
	}
	if (rest < s + size) {
		serve_bearer_ok(rest, "s3cret-token");
		serve_parse_listen(rest, &ss, &v6);
	}
	free(s);
	return 0;
}
