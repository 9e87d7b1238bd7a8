// SPDX-License-Identifier: GPL-2.0-only
/*
 * The demo workload of `make demo`: a toy request loop whose CPU time splits
 * roughly 50/30/20 between parsing, hashing and sorting, plus a worker
 * process it forks, so the profile shows several functions and two processes.
 * Runs about 2 seconds of CPU. Each request also waits ~4 ms for a backend
 * process to answer over a pipe (a blocking read() in query_backend: 100
 * requests, ~0.4 s under syscall:read), and every tenth request appends to
 * a log file and fdatasync()s it.
 *
 * usage: demo_work [PARSE_UNITS]  (default 5; 2 is the "optimised parser"
 * that docs/img/render.sh compares against with `latprof diff`)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int to_backend[2], from_backend[2];

static volatile uint64_t sink;
static unsigned int parse_units = 5;

__attribute__((noinline)) static void parse_request(unsigned int units)
{
	uint64_t h = 0;

	for (unsigned int i = 0; i < units * 1000000u; i++)
		h = h * 31 + (i ^ (h >> 7));
	sink += h;
}

__attribute__((noinline)) static void hash_payload(unsigned int units)
{
	uint64_t h = 1469598103934665603ULL;

	for (unsigned int i = 0; i < units * 1000000u; i++) {
		h ^= i & 0xff;
		h *= 1099511628211ULL;
	}
	sink += h;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

__attribute__((noinline)) static void sort_results(unsigned int units)
{
	size_t n = units * 20000u;
	uint32_t *v = malloc(n * sizeof(*v));

	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		v[i] = (uint32_t)(i * 2654435761u);
	qsort(v, n, sizeof(*v), cmp_u32);
	sink += v[n / 2];
	free(v);
}

/* Ask the backend and block until it answers (~4 ms). */
__attribute__((noinline)) static void query_backend(void)
{
	char c = 'q';

	if (write(to_backend[1], &c, 1) != 1 || read(from_backend[0], &c, 1) != 1)
		exit(1);
}

__attribute__((noinline)) static void write_log(FILE *log, int i)
{
	fprintf(log, "request %d done\n", i);
	fflush(log);
	fdatasync(fileno(log));
}

__attribute__((noinline)) static void handle_request(FILE *log, int i)
{
	parse_request(parse_units);
	query_backend();
	hash_payload(3);
	sort_results(10);
	if (log && i % 10 == 0)
		write_log(log, i);
}

/* The backend: answer each request after 4 ms, until the pipe closes. */
__attribute__((noinline)) static void backend(void)
{
	struct timespec ts = { 0, 4000000 };
	char c;

	while (read(to_backend[0], &c, 1) == 1) {
		nanosleep(&ts, NULL);
		if (write(from_backend[1], &c, 1) != 1)
			break;
	}
}

__attribute__((noinline)) static void background_worker(void)
{
	for (int i = 0; i < 40; i++)
		hash_payload(2);
}

int main(int argc, char **argv)
{
	char path[] = "/tmp/latprof-demo-log.XXXXXX";
	int fd = mkstemp(path);
	FILE *log = fd >= 0 ? fdopen(fd, "w") : NULL;
	pid_t pid, be;

	if (argc > 1)
		parse_units = (unsigned int)strtoul(argv[1], NULL, 10);
	if (pipe(to_backend) || pipe(from_backend))
		return 1;
	be = fork();
	if (be == 0) {
		close(to_backend[1]);
		backend();
		_exit(0);
	}
	pid = fork();
	if (pid == 0) {
		background_worker();
		_exit(0);
	}
	for (int i = 0; i < 100; i++)
		handle_request(log, i);
	close(to_backend[1]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	if (be > 0)
		waitpid(be, NULL, 0);
	if (log)
		fclose(log);
	unlink(path);
	printf("demo_work: handled 100 requests\n");
	return 0;
}
