// SPDX-License-Identifier: GPL-2.0-only
/* `latprof serve`: usage, options, one call to serve_run() (serve.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "src/history.h"
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
	OPT_TLS_CLIENT_CA,
	OPT_MAX_SESSIONS,
	OPT_SERIES_TTL,
	OPT_HISTORY,
	OPT_HISTORY_WINDOW,
	OPT_HISTORY_MAX_MB,
	OPT_HISTORY_DIR,
	OPT_HISTORY_DIR_MAX_MB,
	OPT_TRIGGER,
	OPT_TRIGGER_DIR,
	OPT_TRIGGER_MAX_FILES,
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
	"  ...?start=T&end=T, ?history=1&seconds=N  the same of the past, from the\n"
	"                                    history, at once (T: Unix seconds or -SECONDS)\n"
	"  /profiles                         the triggers' saved profiles (JSON)\n"
	"  /profiles/NAME                    one of them (gzip pprof)\n"
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
	"      --tls-client-ca FILE  require a client certificate signed by this PEM CA\n"
	"                           (mutual TLS; the handshake fails without one)\n"
	"      --max-sessions N     profile requests recorded at once, 1..64 (default 4);\n"
	"                           more get 429\n"
	"      --series-ttl SECONDS drop a series nothing was counted to for this long\n"
	"                           (default 300; 0: keep every series)\n"
	"      --history MINUTES    keep the last MINUTES of profiles, 0..1440 (default 10;\n"
	"                           0: none)\n"
	"      --history-window SECONDS  the history's windows, 1..600 (default 10)\n"
	"      --history-max-mb MB  the history's memory, 1..65536 MiB (default 64)\n"
	"      --history-dir DIR    windows past the memory cap go to DIR\n"
	"      --history-dir-max-mb MB  and take at most MB MiB there (default 1024)\n"
	"      --trigger RULE       when RULE holds, save the history around it as a\n"
	"                           profile in --trigger-dir (may repeat, 32 at most):\n"
	"                           name=NAME and syscall=S,p99_ms=MS | requests_p99_ms=MS\n"
	"                           (--requests) | cpu_pct=PCT | slow_calls=N, with comm=,\n"
	"                           windows=K, before_s=, after_s=, every_s= (docs/serve.md);\n"
	"                           listed on /profiles\n"
	"      --trigger-dir DIR    where the triggers save (needed with --trigger)\n"
	"      --trigger-max-files N  keep at most N of them, 1..100000 (default 100)\n"
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
	{ "tls-client-ca", required_argument, NULL, OPT_TLS_CLIENT_CA },
	{ "max-sessions", required_argument, NULL, OPT_MAX_SESSIONS },
	{ "series-ttl", required_argument, NULL, OPT_SERIES_TTL },
	{ "history", required_argument, NULL, OPT_HISTORY },
	{ "history-window", required_argument, NULL, OPT_HISTORY_WINDOW },
	{ "history-max-mb", required_argument, NULL, OPT_HISTORY_MAX_MB },
	{ "history-dir", required_argument, NULL, OPT_HISTORY_DIR },
	{ "history-dir-max-mb", required_argument, NULL, OPT_HISTORY_DIR_MAX_MB },
	{ "trigger", required_argument, NULL, OPT_TRIGGER },
	{ "trigger-dir", required_argument, NULL, OPT_TRIGGER_DIR },
	{ "trigger-max-files", required_argument, NULL, OPT_TRIGGER_MAX_FILES },
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

/* A number option in [min, max] times @unit into *out. 0 or -EINVAL (printed). */
static int parse_scaled(const char *opt, const char *arg, uint64_t min, uint64_t max,
			uint64_t unit, const char *what, uint64_t *out)
{
	uint64_t v;

	if (parse_u64(arg, min, max, &v)) {
		pr_err("invalid --%s '%s': want %s, %llu..%llu", opt, arg, what,
		       (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	*out = v * unit;
	return 0;
}

/* One more --trigger rule. 0 or -EINVAL (printed), -ENOMEM. */
static int add_trigger(struct serve_opts *o, const char *arg)
{
	struct trigger_rule r;
	char why[200];
	size_t i;

	if (trigger_rule_parse(arg, &r, why, sizeof(why))) {
		pr_err("invalid --trigger '%.60s': %s", arg, why);
		return -EINVAL;
	}
	for (i = 0; i < o->triggers.nr; i++)
		if (!strcmp(o->triggers.items[i].name, r.name)) {
			pr_err("invalid --trigger '%.60s': a rule named %s already", arg, r.name);
			return -EINVAL;
		}
	if (o->triggers.nr >= TRIGGER_MAX_RULES) {
		pr_err("invalid --trigger '%.60s': at most %d rules", arg, TRIGGER_MAX_RULES);
		return -EINVAL;
	}
	if (array_grow(&o->triggers, o->triggers.nr + 1))
		return -ENOMEM;
	o->triggers.items[o->triggers.nr++] = r;
	return 0;
}

/* The history's options; COLLECTOPTS_NOT_MINE for others. */
static int parse_history_option(struct serve_opts *o, int c)
{
	switch (c) {
	case OPT_HISTORY:
		return parse_scaled("history", optarg, 0, 1440, 60 * NSEC_PER_SEC, "minutes",
				    &o->history_keep_ns);
	case OPT_HISTORY_WINDOW:
		return parse_scaled("history-window", optarg, 1, 600, NSEC_PER_SEC, "seconds",
				    &o->history_window_ns);
	case OPT_HISTORY_MAX_MB:
		return parse_scaled("history-max-mb", optarg, 1, 65536, 1 << 20, "MiB",
				    &o->history_max_bytes);
	case OPT_HISTORY_DIR:
		o->history_dir = optarg;
		return 0;
	case OPT_HISTORY_DIR_MAX_MB:
		return parse_scaled("history-dir-max-mb", optarg, 1, 1 << 24, 1 << 20, "MiB",
				    &o->history_dir_max_bytes);
	case OPT_TRIGGER:
		return add_trigger(o, optarg);
	case OPT_TRIGGER_DIR:
		o->trigger_dir = optarg;
		return 0;
	case OPT_TRIGGER_MAX_FILES: {
		uint64_t v = 0;
		int err = parse_scaled("trigger-max-files", optarg, 1, 100000, 1, "files", &v);

		if (!err)
			o->trigger_max_files = v;
		return err;
	}
	default:
		return COLLECTOPTS_NOT_MINE;
	}
}

/* 0, 1 after -h, or -errno after printing why. */
static int parse_serve_option(struct serve_opts *o, int c, char **argv)
{
	int err = collectopts_parse(&o->co, c, optarg);
	uint64_t v;

	if (err != COLLECTOPTS_NOT_MINE)
		return err;
	err = parse_history_option(o, c);
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
	case OPT_TLS_CLIENT_CA:
		err = read_secret("tls-client-ca", optarg, false, &o->tls_client_ca);
		/* GnuTLS takes a file of no certificate as an empty list: every client refused */
		if (!err && !strstr(o->tls_client_ca, "-----BEGIN CERTIFICATE-----")) {
			pr_err("invalid --tls-client-ca %s: no PEM certificate in it", optarg);
			return -EINVAL;
		}
		return err;
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

/* Does a rule measure requests that the agent does not track? */
static bool serve_needs_requests(const struct serve_opts *o)
{
	size_t i;

	for (i = 0; i < o->triggers.nr; i++)
		if (o->triggers.items[i].kind == TRIGGER_KIND_REQUESTS_P99 && !o->co.requests)
			return true;
	return false;
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
	if (o->triggers.nr && (!o->trigger_dir || !o->history_keep_ns)) {
		pr_err("--trigger needs --trigger-dir and a history (--history above 0)");
		return -EINVAL;
	}
	if (serve_needs_requests(o)) {
		pr_err("--trigger with requests_p99_ms needs --requests");
		return -EINVAL;
	}
	if (o->tls_client_ca && !o->tls_cert) {
		pr_err("--tls-client-ca needs --tls-cert and --tls-key (HTTPS)");
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
				.series_ttl_ns = SERVE_DEFAULT_SERIES_TTL_S * NSEC_PER_SEC,
				.history_keep_ns = HISTORY_DEFAULT_MINUTES * 60 * NSEC_PER_SEC,
				.history_window_ns = HISTORY_DEFAULT_WINDOW_S * NSEC_PER_SEC,
				.history_max_bytes = HISTORY_DEFAULT_MAX_BYTES,
				.history_dir_max_bytes = HISTORY_DEFAULT_DIR_MAX_BYTES,
				.trigger_max_files = TRIGGER_DEFAULT_MAX_FILES };
	int status;

	collectopts_init(&o.co);
	status = collectopts_run_verb(argc, argv, serve_longopts, parse_serve, run_serve, &o);
	collectopts_release(&o.co);
	free(o.token);
	free(o.tls_cert);
	free(o.tls_key);
	free(o.tls_client_ca);
	free(o.triggers.items);
	return status;
}
