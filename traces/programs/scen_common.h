/*
 * scen_common.h — what the scenario programs (scen_*.c) share: the command
 * line `PROG SCENARIO [--threads N] [--ops N] [--seed S]` with the meaning
 * `alloctrace gen` gives it (ops: heap calls made plus objects live, after
 * which every thread frees what it holds; split evenly between threads),
 * the generators' random-number function, running worker 0 on the main
 * thread (so a recorded trace has exactly N threads, as the generated one),
 * and a result line written without stdio (stdio would malloc its buffer).
 *
 * Invariant: the programs call only malloc, calloc, realloc and free, touch
 * what they allocate (so the compiler cannot drop a call, and page faults
 * are real), and fold the bytes they read back into a checksum they print.
 */
#ifndef AR_SCEN_COMMON_H
#define AR_SCEN_COMMON_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define SCEN_MAX_THREADS 64

typedef struct scen_args {
	const char *scenario;
	unsigned threads;
	uint64_t ops, seed;
} scen_args_t;

/* splitmix64, as traces/gen uses. */
static inline uint64_t scen_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t scen_range(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return lo + scen_rand(s) % (hi - lo + 1);
}

/* The per-thread random stream of thread t. */
static inline uint64_t scen_thread_seed(const scen_args_t *a, unsigned t)
{
	return a->seed ^ 0x616c6c6f63727221ULL ^ ((uint64_t)(t + 1) << 48);
}

/* Parse argv; threads/ops left 0 take the caller's defaults. Exits 1 with a
 * usage line on a bad command line. */
static inline void scen_parse(int argc, char **argv, scen_args_t *a, const char *names)
{
	memset(a, 0, sizeof *a);
	a->seed = 1;
	for (int i = 1; i < argc; i++) {
		char *end = NULL;
		if (i + 1 < argc && (!strcmp(argv[i], "--threads") || !strcmp(argv[i], "--ops") ||
				     !strcmp(argv[i], "--seed"))) {
			unsigned long long v = strtoull(argv[i + 1], &end, 0);
			if (*end || argv[i + 1][0] == '-')
				goto usage;
			if (argv[i][2] == 't')
				a->threads = (unsigned)v;
			else if (argv[i][2] == 'o')
				a->ops = v;
			else
				a->seed = v;
			i++;
		} else if (argv[i][0] != '-' && !a->scenario) {
			a->scenario = argv[i];
		} else {
			goto usage;
		}
	}
	if (a->scenario && a->threads <= SCEN_MAX_THREADS)
		return;
usage:
	fprintf(stderr, "usage: %s SCENARIO [--threads N<=%d] [--ops N] [--seed S]  (SCENARIO: %s)\n", argv[0],
		SCEN_MAX_THREADS, names);
	exit(1);
}

/* Run worker(arg_of(t)) on `threads` threads, worker 0 on the calling one. */
static inline void scen_run_threads(unsigned threads, void *(*worker)(void *), void *args, size_t arg_size)
{
	pthread_t tid[SCEN_MAX_THREADS];
	for (unsigned t = 1; t < threads; t++)
		if (pthread_create(&tid[t], NULL, worker, (char *)args + t * arg_size) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			exit(2);
		}
	worker(args);
	for (unsigned t = 1; t < threads; t++)
		pthread_join(tid[t], NULL);
}

/* Write "SCENARIO: N heap calls, checksum X" with write(2). */
static inline void scen_report(const char *scenario, uint64_t calls, uint64_t checksum)
{
	char line[160];
	int n = snprintf(line, sizeof line, "%s: %llu heap calls, checksum %016llx\n", scenario,
			 (unsigned long long)calls, (unsigned long long)checksum);
	if (n > 0 && write(STDOUT_FILENO, line, (size_t)n) < 0)
		exit(2);
}

/* Touch a new object: its first bytes (up to 4 KiB), one byte per page
 * beyond, and its last byte, so small objects are written and large ones
 * fault in every page. With `all`, write every byte. */
static inline void scen_touch(void *p, uint64_t size, unsigned char v, int all)
{
	unsigned char *b = p;
	if (!size)
		return;
	if (all) {
		memset(b, v, size);
		return;
	}
	memset(b, v, size < 4096 ? size : 4096);
	for (uint64_t off = 4096; off < size; off += 4096)
		b[off] = v;
	b[size - 1] = v;
}

/* Read an object back into a checksum. */
static inline uint64_t scen_read(const void *p, uint64_t size)
{
	const unsigned char *b = p;
	return size ? (uint64_t)b[0] * 31 + b[size - 1] : 0;
}

static inline void *scen_check(void *p)
{
	if (!p) {
		static const char msg[] = "out of memory\n";
		if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0)
			exit(3);
		exit(3);
	}
	return p;
}

#endif
