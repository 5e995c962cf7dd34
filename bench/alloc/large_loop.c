/*
 * bench/alloc/large_loop.c — S4's pattern (docs/SCENARIOS.md) in a plain C
 * loop, without the replay harness: WINDOW live buffers of LO..HI bytes
 * (uniform), OPS times a random one is freed and replaced, and one byte per
 * page of the new buffer is written, as a program filling it would. Prints
 * the wall time, the peak of live bytes, the process's maximum RSS and its
 * minor page faults. Run it under LD_PRELOAD of each allocator, interleaved
 * (docs/BENCHMARKS.md, "Large blocks, second version"):
 *
 *   cc -O2 -o large_loop bench/alloc/large_loop.c
 *   LD_PRELOAD=build/lib/liballocrr-pool.so ./large_loop 1000 [LO HI WINDOW]
 *
 * Deterministic (rand_r, seed 1). Not built by make: a measurement aid.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

enum { MAX_WINDOW = 64 };

int main(int argc, char **argv)
{
	long ops = argc > 1 ? atol(argv[1]) : 1000;
	size_t lo = argc > 2 ? strtoull(argv[2], NULL, 0) : 1000000;
	size_t hi = argc > 3 ? strtoull(argv[3], NULL, 0) : 10000000;
	int window = argc > 4 ? atoi(argv[4]) : 4;
	if (ops < 1 || lo < 1 || hi <= lo || window < 1 || window > MAX_WINDOW) {
		fprintf(stderr, "usage: large_loop [OPS [LO HI [WINDOW (1-%d)]]]\n", MAX_WINDOW);
		return 1;
	}
	char *buf[MAX_WINDOW] = { 0 };
	size_t size[MAX_WINDOW] = { 0 }, live = 0, peak = 0;
	unsigned seed = 1;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < ops; i++) {
		int k = rand_r(&seed) % window;
		free(buf[k]);
		size_t sz = lo + (size_t)rand_r(&seed) % (hi - lo);
		buf[k] = malloc(sz);
		if (!buf[k]) {
			fprintf(stderr, "large_loop: malloc(%zu) failed\n", sz);
			return 2;
		}
		for (size_t o = 0; o < sz; o += 4096)
			buf[k][o] = 1;
		live += sz - size[k];
		size[k] = sz;
		if (live > peak)
			peak = live;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("%.3f s  peak live %zu MiB  maxrss %ld MiB  minflt %ld\n",
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, peak >> 20,
	       ru.ru_maxrss / 1024, ru.ru_minflt);
	for (int k = 0; k < window; k++)
		free(buf[k]);
	return 0;
}
