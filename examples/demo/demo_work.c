// SPDX-License-Identifier: GPL-2.0-only
/*
 * The demo workload of `make demo`: a toy request loop whose CPU time splits
 * roughly 50/30/20 between parsing, hashing and sorting, plus a worker
 * process it forks, so the profile shows several functions and two processes.
 * Runs about 2 seconds of CPU.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile uint64_t sink;

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

__attribute__((noinline)) static void handle_request(void)
{
	parse_request(5);
	hash_payload(3);
	sort_results(10);
}

__attribute__((noinline)) static void background_worker(void)
{
	for (int i = 0; i < 40; i++)
		hash_payload(2);
}

int main(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		background_worker();
		_exit(0);
	}
	for (int i = 0; i < 100; i++)
		handle_request();
	if (pid > 0)
		waitpid(pid, NULL, 0);
	printf("demo_work: handled 100 requests\n");
	return 0;
}
