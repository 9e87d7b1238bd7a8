// SPDX-License-Identifier: GPL-2.0-only
/* `latprof serve`: usage, options, one call to serve_run() (serve.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "src/serve.h"
#include "src/serve_parse.h"
#include "src/command.h"
#include "src/lib/util.h"
#include "src/verbs.h"

/* The largest token file read. */
#define SERVE_MAX_SECRET (64 * 1024)
/* The longest --series-ttl: a year. */
#define SERVE_MAX_SERIES_TTL_S (365 * 24 * 3600)

enum {
	OPT_LISTEN = COLLECTOPTS_VERB,
	OPT_TOKEN_FILE,
	OPT_TLS_CERT,
	OPT_TLS_KEY,
	OPT_MAX_SESSIONS,
	OPT_SERIES_TTL,
	OPT_CONFIG,
};

static const char serve_usage_head[] =
	"usage: latprof serve [--listen ADDR:PORT] [TARGET] [OPTIONS]\n"
	"\n"
	"Run as an agent: Prometheus metrics of syscall latency, CPU and off-CPU\n"
	"time on /metrics, and pprof profiles recorded on request on\n"
	"/debug/pprof/profile (as Go's endpoint: go tool pprof, Parca, Pyroscope).\n"
	"\n"
	"endpoints:\n"
	"  /metrics                          Prometheus text, per process name and syscall\n"
	"  /debug/pprof/profile?seconds=N    gzip pprof, cpu + latency (default 30, max 300)\n"
	"  /debug/pprof/latency?seconds=N    gzip pprof weighted by slow-syscall time\n"
	"  /flamegraph?seconds=N&weight=W    interactive SVG flame graph\n"
	"  /healthz                          \"ok\"\n"
	"  profile parameters: pid, comm, hz (1..1000), min_duration_us, weight,\n"
	"  native=1 (Python programs' full native stacks, not the Python view)\n"
	"\n"
	"targets (default: every process on the system):\n";

static const char serve_usage_command[] =
	"  -- COMMAND [ARGS...]     run COMMAND and trace it; serve stops when it exits\n"
	"\n"
	"options:\n"
	"      --listen ADDR:PORT   address to listen on (default 127.0.0.1:6061;\n"
	"                           [ADDR]:PORT for IPv6)\n"
	"      --token-file FILE    every request needs 'Authorization: Bearer TOKEN',\n"
	"                           TOKEN being FILE's first line\n"
	"      --tls-cert FILE      serve HTTPS with this PEM certificate ...\n"
	"      --tls-key FILE       ... and this PEM private key\n"
	"      --max-sessions N     profile requests recorded at once, 1..64 (default 4);\n"
	"                           more get 429\n"
	"      --series-ttl SECONDS drop a series nothing was counted to for this long\n"
	"                           (default 300; 0: keep every series)\n"
	"collector options (the metrics' and every profile's; a profile request's\n"
	"parameters override some):\n";

static const char serve_usage_tail[] =
	"  -q, --quiet              errors only\n"
	"  -v, --verbose            more messages (repeat for debug)\n"
	"  -h, --help               this help\n"
	"\n"
	"Stops cleanly on SIGINT/SIGTERM. Needs root or CAP_BPF + CAP_PERFMON.\n"
	"See docs/serve.md for scrape configurations.\n";

static void print_usage(void)
{
	fputs(serve_usage_head, stdout);
	fputs(collectopts_usage_targets, stdout);
	fputs(serve_usage_command, stdout);
	fputs(collectopts_usage, stdout);
	fputs(serve_usage_tail, stdout);
}

static const struct option serve_longopts[] = {
	COLLECTOPTS_LONGOPTS,
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
	{ "tls-cert", required_argument, NULL, OPT_TLS_CERT },
	{ "tls-key", required_argument, NULL, OPT_TLS_KEY },
	{ "max-sessions", required_argument, NULL, OPT_MAX_SESSIONS },
	{ "series-ttl", required_argument, NULL, OPT_SERIES_TTL },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* A secret file: read whole, at most 64 KiB, never empty. */
static int read_secret(const char *opt, const char *path, bool first_line, char **out)
{
	size_t len = 0;
	int err;

	free(*out);	/* given twice (a --config and the command line): the last */
	*out = NULL;
	err = read_file(path, out, &len);
	if (err) {
		pr_err("cannot read --%s %s: %s", opt, path, strerror(-err));
		return err;
	}
	if (first_line) {
		(*out)[strcspn(*out, "\r\n")] = 0;
		len = strlen(*out);
	}
	if (!len || len > SERVE_MAX_SECRET) {
		pr_err("invalid --%s %s: %s", opt, path, len ? "larger than 64 KiB" : "empty");
		free(*out);
		*out = NULL;
		return -EINVAL;
	}
	return 0;
}

/* 0, 1 after -h, or -errno after printing why. */
static int parse_serve_option(struct serve_opts *o, int c, char **argv)
{
	int err = collectopts_parse(&o->co, c, optarg);
	uint64_t v;

	if (err != COLLECTOPTS_NOT_MINE)
		return err;
	switch (c) {
	case OPT_LISTEN:
		o->listen = optarg;
		return 0;
	case OPT_TOKEN_FILE:
		return read_secret("token-file", optarg, true, &o->token);
	case OPT_TLS_CERT:
		return read_secret("tls-cert", optarg, false, &o->tls_cert);
	case OPT_TLS_KEY:
		return read_secret("tls-key", optarg, false, &o->tls_key);
	case OPT_MAX_SESSIONS:
		if (parse_u64(optarg, 1, 64, &v)) {
			pr_err("invalid --max-sessions '%s': want 1..64", optarg);
			return -EINVAL;
		}
		o->max_sessions = v;
		return 0;
	case OPT_SERIES_TTL:
		if (parse_u64(optarg, 0, SERVE_MAX_SERIES_TTL_S, &v)) {
			pr_err("invalid --series-ttl '%s': want seconds, 0..31536000 (0: never expire)",
			       optarg);
			return -EINVAL;
		}
		o->series_ttl_ns = v * NSEC_PER_SEC;
		return 0;
	case OPT_CONFIG:
		return 0;	/* read before the command line */
	case 'h':
		print_usage();
		return 1;
	default:
		pr_option_error("serve", argv, c);
		return -EINVAL;
	}
}

/* 0, 1 after -h, or -errno after printing why. */
static int parse_serve_args(int argc, char **argv, struct serve_opts *o)
{
	struct sockaddr_storage ss;
	int c, err;
	bool v6;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:" COLLECTOPTS_SHORT "h", serve_longopts,
				NULL)) != -1) {
		err = parse_serve_option(o, c, argv);
		if (err)
			return err;
	}
	if (optind < argc)
		o->command = argv + optind;
	if (collectopts_check(&o->co, o->command, false))
		return -EINVAL;
	if (serve_parse_listen(o->listen, &ss, &v6)) {
		pr_err("invalid --listen '%s': want ADDR:PORT or [ADDR6]:PORT", o->listen);
		return -EINVAL;
	}
	if (!o->tls_cert != !o->tls_key) {
		pr_err("--tls-cert and --tls-key go together");
		return -EINVAL;
	}
	if (o->command && !command_exists(o->command[0])) {
		pr_err("cannot run '%s': command not found", o->command[0]);
		return -ENOENT;
	}
	return 0;
}

/* collectopts_run_verb's parser and run. */
static int parse_serve(int argc, char **argv, void *opts)
{
	return parse_serve_args(argc, argv, opts);
}

static int run_serve(void *opts, const char *command_line)
{
	struct serve_opts *o = opts;

	o->command_line = command_line;
	return serve_run(o);
}

int cmd_serve(int argc, char **argv)
{
	struct serve_opts o = { .listen = "127.0.0.1:6061",
				.max_sessions = SERVE_DEFAULT_MAX_SESSIONS,
				.series_ttl_ns = SERVE_DEFAULT_SERIES_TTL_S * NSEC_PER_SEC };
	int status;

	collectopts_init(&o.co);
	status = collectopts_run_verb(argc, argv, serve_longopts, parse_serve, run_serve, &o);
	collectopts_release(&o.co);
	free(o.token);
	free(o.tls_cert);
	free(o.tls_key);
	return status;
}
