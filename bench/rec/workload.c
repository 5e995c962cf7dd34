/*
 * bench_rec_workload THREADS EVENTS [any|set|tight] — the recorder benchmark's
 * malloc-heavy program: each thread runs EVENTS/THREADS heap calls over its
 * own window of 1024 slots, sizes 16 B - 64 KiB, mixing
 * malloc, calloc, realloc and free. Sizes: `any` (default) draws every byte
 * count (log-uniform power of two plus a random offset: the worst case for
 * a trace's size column); `set` draws from 40 fixed sizes, skewed small, as a
 * program allocating its own structs and buffers does; `tight`: 80 % of
 * calls 16-256 B (multiples of 8), the rest 288 B - 4 KiB from the same set,
 * all served from glibc's per-thread cache, so a bare call costs ~25 ns and
 * the recorder's per-event cost is most of what is measured. It writes the first
 * bytes of every block
 * it gets (a real program touches its memory). Deterministic per thread
 * (xorshift seeded by the thread number). Prints the number of heap calls.
 * With BENCH_REC_GATE=FILE it waits for FILE to exist before it starts
 * (bench-rec's attach row: allocrec -p attaches to it first, so every
 * timed call is in the window). It also prints the CPU time its own threads
 * spent (CLOCK_THREAD_CPUTIME_ID, summed): the recorder's cost on the
 * program's threads apart from its writer's, and less moved by a busy
 * machine than wall time.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static long per_thread;
static _Atomic long long thread_cpu_ns;
enum size_mode { SIZES_ANY, SIZES_SET, SIZES_TIGHT };
static enum size_mode size_mode;

static const uint32_t program_sizes[40] = {
	16,   24,   32,   40,   48,   56,   64,   72,   80,   96,   112,  128,  144,   160,
	192,  224,  256,  288,  320,  384,  448,  512,  640,  768,  1024, 1280, 1536,  2048,
	2560, 3072, 4096, 5120, 6144, 8192, 12288, 16384, 24576, 32768, 49152, 65536,
};

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
	if (size_mode == SIZES_SET) {
		uint64_t u = next(s) % 1000;
		return program_sizes[(u * u * 40) / 1000000];
	}
	if (size_mode == SIZES_TIGHT) {
		uint64_t u = next(s);
		if (u % 10 < 8)
			return 16 + 8 * (size_t)((u >> 8) % 31); /* 16 .. 256 */
		return program_sizes[17 + (u >> 8) % 14];  /* 288 .. 4096 */
	}
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
	struct timespec cpu;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	thread_cpu_ns += (long long)cpu.tv_sec * 1000000000 + cpu.tv_nsec;
	return (void *)calls;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	long events = argc > 2 ? atol(argv[2]) : 4000000;
	const char *mode = argc > 3 ? argv[3] : "any";
	size_mode = !strcmp(mode, "set") ? SIZES_SET : !strcmp(mode, "tight") ? SIZES_TIGHT : SIZES_ANY;
	if (threads < 1 || threads > 64 || events < 1 || (size_mode == SIZES_ANY && strcmp(mode, "any"))) {
		fprintf(stderr, "usage: bench_rec_workload THREADS EVENTS [any|set|tight]\n");
		return 1;
	}
	per_thread = events / threads;
	const char *gate = getenv("BENCH_REC_GATE");
	struct stat st;
	while (gate && stat(gate, &st) != 0)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	pthread_t t[64];
	for (long i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, run, (void *)i);
	long total = 0;
	for (int i = 0; i < threads; i++) {
		void *r;
		pthread_join(t[i], &r);
		total += (long)r;
	}
	printf("%ld heap calls, %.1f ns of thread CPU per call\n", total, (double)thread_cpu_ns / (double)total);
	return 0;
}
