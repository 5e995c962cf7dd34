/*
 * bench/alloc/threads_loop.c — the smallest program that shows what a lock
 * in malloc costs: THREADS threads, each replacing a random one of its own
 * 4096 blocks of SIZE bytes (S1's pattern, no cross-thread frees), OPS times;
 * prints the malloc+free calls per second over the whole run. Run it under
 * LD_PRELOAD of each allocator, interleaved (docs/BENCHMARKS.md, "Threads"):
 *
 *   cc -O2 -pthread -o threads_loop bench/alloc/threads_loop.c
 *   LD_PRELOAD=build/lib/liballocrr-pool.so ./threads_loop 4 1000000 [SIZE]
 *
 * Not built by make: a measurement aid, not part of the toolkit.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { WINDOW = 4096 };
static long ops;
static size_t size = 64;

static void *run(void *arg)
{
	unsigned x = (unsigned)(uintptr_t)arg * 2654435761u + 1;
	void **win = calloc(WINDOW, sizeof *win);
	if (!win)
		return NULL;
	for (int i = 0; i < WINDOW; i++)
		win[i] = malloc(size);
	for (long i = 0; i < ops; i++) {
		x = x * 1103515245u + 12345u;
		unsigned k = (x >> 8) % WINDOW;
		free(win[k]);
		win[k] = malloc(size);
	}
	for (int i = 0; i < WINDOW; i++)
		free(win[i]);
	free(win);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: threads_loop THREADS OPS [SIZE]\n");
		return 1;
	}
	int threads = atoi(argv[1]);
	ops = atol(argv[2]);
	if (argc > 3)
		size = (size_t)atol(argv[3]);
	if (threads < 1 || threads > 64 || ops < 1 || size < 1) {
		fprintf(stderr, "threads_loop: THREADS 1-64, OPS >= 1, SIZE >= 1\n");
		return 1;
	}
	pthread_t th[64];
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int t = 0; t < threads; t++)
		pthread_create(&th[t], NULL, run, (void *)(uintptr_t)t);
	for (int t = 0; t < threads; t++)
		pthread_join(th[t], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("%.1f M calls/s\n", 2.0 * threads * (double)ops / s / 1e6);
	return 0;
}
