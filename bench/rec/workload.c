/*
 * bench_rec_workload THREADS EVENTS — the recorder benchmark's malloc-heavy
 * program: each thread runs EVENTS/THREADS heap calls over its own window of
 * 1024 slots, sizes 16 B - 64 KiB (log-uniform, so most are small), mixing
 * malloc, calloc, realloc and free; it writes the first bytes of every block
 * it gets (a real program touches its memory). Deterministic per thread
 * (xorshift seeded by the thread number). Prints the number of heap calls.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long per_thread;

static uint64_t next(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static size_t pick_size(uint64_t *s)
{
	unsigned shift = 4 + (unsigned)(next(s) % 13); /* 16 B .. 64 KiB */
	size_t lo = (size_t)1 << shift;
	return lo + (size_t)(next(s) % lo) / 2;
}

static void *run(void *arg)
{
	uint64_t s = 0x9e3779b97f4a7c15ull * ((uint64_t)(uintptr_t)arg + 1);
	void *slot[1024] = {0};
	long calls = 0;
	while (calls < per_thread) {
		unsigned i = (unsigned)(next(&s) % 1024);
		unsigned what = (unsigned)(next(&s) % 16);
		if (slot[i]) {
			if (what < 3) {
				size_t n = pick_size(&s);
				void *p = realloc(slot[i], n);
				if (p) {
					((char *)p)[0] = 1;
					slot[i] = p;
				}
			} else {
				free(slot[i]);
				slot[i] = NULL;
			}
		} else {
			size_t n = pick_size(&s);
			char *p = what < 2 ? calloc(1, n) : malloc(n);
			if (p)
				memset(p, 1, n < 64 ? n : 64);
			slot[i] = p;
		}
		calls++;
	}
	for (unsigned i = 0; i < 1024; i++)
		if (slot[i]) {
			free(slot[i]);
			calls++;
		}
	return (void *)calls;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	long events = argc > 2 ? atol(argv[2]) : 4000000;
	if (threads < 1 || threads > 64 || events < 1) {
		fprintf(stderr, "usage: bench_rec_workload THREADS EVENTS\n");
		return 1;
	}
	per_thread = events / threads;
	pthread_t t[64];
	for (long i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, run, (void *)i);
	long total = 0;
	for (int i = 0; i < threads; i++) {
		void *r;
		pthread_join(t[i], &r);
		total += (long)r;
	}
	printf("%ld heap calls\n", total);
	return 0;
}
