/*
 * alloc_stress.c — multi-threaded stress test for an allocator under
 * LD_PRELOAD (tests/e2e/alloc_stress.sh runs it for each of ours):
 *
 *   alloc_stress [OPS_PER_THREAD] [THREADS] [WAVES] [FORKS]
 *
 * (defaults 100000, 4, 12, 20; tests/e2e/torture_alloc_debug.sh scales them)
 *
 * 1. churn: threads allocate (malloc, calloc, every aligned function, random
 *    alignments up to 64 KiB), reallocate and free blocks of random sizes
 *    (log-uniform up to 64 KiB, sometimes up to 2 MiB), and swap blocks
 *    through a shared table so most frees happen on another thread. Every
 *    block carries a pattern over its whole size, checked before each
 *    realloc and free: overlapping blocks, metadata written into live
 *    blocks, or a realloc that loses data all show up as a mismatch.
 * 2. thread turnover: waves of short-lived threads whose blocks are freed by
 *    the next wave (thread caches and thread states retired and reused).
 * 3. fork: while three threads churn, the main thread forks repeatedly; each
 *    child allocates, frees blocks inherited from the parent, starts a
 *    thread that allocates, and exits. A child that deadlocks (a lock held
 *    across fork) is killed after 30 s and counted as a failure.
 *
 * Deterministic inputs (fixed seeds per thread); only the interleaving
 * varies, and any interleaving must pass. No timing is asserted.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc_test.h"

typedef struct blk {
	unsigned char *p;
	size_t n;
	uint64_t tag;
} blk_t;

enum { SLOTS = 1024, LOCAL = 256 };
static _Atomic(blk_t *) slots[SLOTS];
static _Atomic uint64_t failures, next_tag;
/* What was done, for the summary line (exact; the mix depends on the
 * interleaving). Every freed or reallocated block was verified first. */
static _Atomic uint64_t n_allocs, n_reallocs, n_frees;

static void fail(const char *what, const blk_t *b, size_t at)
{
	if (atomic_fetch_add(&failures, 1) < 10)
		fprintf(stderr, "%s: block %p (%zu bytes, tag %llu) differs at offset %zu\n", what,
			(void *)b->p, b->n, (unsigned long long)b->tag, at);
}

static void verify(const blk_t *b, const char *what)
{
	size_t at = t_check(b->p, b->n, b->tag);
	if (at != b->n)
		fail(what, b, at);
}

/* A new block with a random size (log-uniform up to max, and 1 in 64 up
 * to 2 MiB when max is 64 KiB), allocation function and alignment. */
static blk_t *new_block_max(uint64_t *rng, size_t max)
{
	blk_t *b = malloc(sizeof *b);
	if (!b) {
		fail("malloc(descriptor) returned NULL", &(blk_t){ 0 }, 0);
		return NULL;
	}
	size_t n = max == 65536 && t_rand(rng) % 64 == 0 ? t_rand_size(rng, (size_t)2 << 20)
							  : t_rand_size(rng, max);
	size_t align = (size_t)32 << (t_rand(rng) % 12); /* 32 .. 64 KiB */
	void *p = NULL;
	switch (t_rand(rng) % 10) {
	case 0:
		p = calloc(1, n);
		align = 16;
		if (p)
			for (size_t i = 0; i < n; i += 61)
				if (((unsigned char *)p)[i] != 0) {
					fail("calloc memory not zero", &(blk_t){ p, n, 0 }, i);
					break;
				}
		break;
	case 1:
		if (posix_memalign(&p, align, n) != 0)
			p = NULL;
		break;
	case 2:
		p = aligned_alloc(align, n);
		break;
	case 3:
		p = memalign(align, n);
		break;
	default:
		p = malloc(n);
		align = 16;
	}
	if (!p || ((uintptr_t)p & (align - 1))) {
		fail(p ? "misaligned block" : "allocation returned NULL", &(blk_t){ p, n, align }, 0);
		free(b);
		free(p);
		return NULL;
	}
	if (malloc_usable_size(p) < n)
		fail("malloc_usable_size below request", &(blk_t){ p, n, 0 }, malloc_usable_size(p));
	b->p = p;
	b->n = n;
	b->tag = atomic_fetch_add_explicit(&next_tag, 1, memory_order_relaxed);
	t_fill(b->p, n, b->tag);
	atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
	return b;
}

static blk_t *new_block(uint64_t *rng)
{
	return new_block_max(rng, 65536);
}

static void drop(blk_t *b)
{
	verify(b, "before free");
	free(b->p);
	free(b);
	atomic_fetch_add_explicit(&n_frees, 1, memory_order_relaxed);
}

static void resize(blk_t *b, uint64_t *rng)
{
	verify(b, "before realloc");
	size_t n = t_rand_size(rng, t_rand(rng) % 32 == 0 ? (size_t)1 << 20 : 65536);
	unsigned char *q = realloc(b->p, n);
	if (!q) {
		fail("realloc returned NULL", b, 0);
		return;
	}
	b->p = q;
	atomic_fetch_add_explicit(&n_reallocs, 1, memory_order_relaxed);
	size_t keep = n < b->n ? n : b->n;
	size_t at = t_check(q, keep, b->tag);
	if (at != keep)
		fail("realloc lost data", b, at);
	b->n = n;
	b->tag = atomic_fetch_add_explicit(&next_tag, 1, memory_order_relaxed);
	t_fill(q, n, b->tag);
}

static long ops_per_thread = 100000;

static void *churn(void *arg)
{
	uint64_t rng = 0x1234 + (uintptr_t)arg * 7919;
	blk_t *local[LOCAL] = { 0 };
	for (long op = 0; op < ops_per_thread; op++) {
		unsigned i = (unsigned)(t_rand(&rng) % LOCAL);
		unsigned r = (unsigned)(t_rand(&rng) % 100);
		if (!local[i]) {
			local[i] = new_block(&rng);
		} else if (r < 35) {
			drop(local[i]);
			local[i] = NULL;
		} else if (r < 50) {
			resize(local[i], &rng);
		} else {
			/* Swap with the shared table: what comes back was most
			 * likely allocated by another thread. */
			blk_t *got = atomic_exchange(&slots[t_rand(&rng) % SLOTS], local[i]);
			local[i] = got;
			if (got && r < 75) {
				drop(got);
				local[i] = NULL;
			}
		}
	}
	for (unsigned i = 0; i < LOCAL; i++)
		if (local[i])
			drop(local[i]);
	return NULL;
}

static int run_threads(void *(*fn)(void *), int n)
{
	pthread_t th[64];
	for (int t = 0; t < n; t++)
		if (pthread_create(&th[t], NULL, fn, (void *)(uintptr_t)t) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			return -1;
		}
	for (int t = 0; t < n; t++)
		pthread_join(th[t], NULL);
	return 0;
}

static void drain_slots(void)
{
	for (unsigned i = 0; i < SLOTS; i++) {
		blk_t *b = atomic_exchange(&slots[i], NULL);
		if (b)
			drop(b);
	}
}

/* ---- thread turnover ------------------------------------------------------- */

enum { WAVE_THREADS = 4, WAVE_BLOCKS = 1000 };
static blk_t *handoff[WAVE_THREADS][WAVE_BLOCKS];

static void *wave(void *arg)
{
	uintptr_t t = (uintptr_t)arg;
	uint64_t rng = 99 + t;
	/* Free what the previous wave's thread t left, then leave our own. */
	for (int i = 0; i < WAVE_BLOCKS; i++) {
		if (handoff[t][i])
			drop(handoff[t][i]);
		handoff[t][i] = new_block(&rng);
		if (i % 2) {
			blk_t *b = new_block(&rng);
			if (b)
				drop(b);
		}
	}
	return NULL;
}

/* ---- fork from a threaded process ----------------------------------------- */

static atomic_int stop_churn;

static void *background(void *arg)
{
	uint64_t rng = 555 + (uintptr_t)arg;
	blk_t *local[64] = { 0 };
	while (!atomic_load(&stop_churn)) {
		unsigned i = (unsigned)(t_rand(&rng) % 64);
		if (local[i])
			drop(local[i]);
		/* Small blocks: many calls per second, so the fork often lands
		 * while this thread is inside the allocator. */
		local[i] = new_block_max(&rng, 4096);
	}
	for (int i = 0; i < 64; i++)
		if (local[i])
			drop(local[i]);
	return NULL;
}

static void *child_thread(void *arg)
{
	uint64_t rng = (uintptr_t)arg;
	for (int i = 0; i < 500; i++) {
		blk_t *b = new_block(&rng);
		if (b)
			drop(b);
	}
	return NULL;
}

/* The child: allocate and free, free blocks inherited from the parent,
 * allocate from a new thread. Exit status 0 when every check held. */
static int child_main(blk_t **inherited, int ninherited, int k)
{
	uint64_t rng = 4242 + (uint64_t)k;
	blk_t *mine[300];
	for (int i = 0; i < 300; i++)
		mine[i] = new_block(&rng);
	for (int i = 0; i < ninherited; i++)
		if (inherited[i])
			drop(inherited[i]);
	for (int i = 0; i < 300; i++)
		if (mine[i])
			drop(mine[i]);
	pthread_t th;
	if (pthread_create(&th, NULL, child_thread, (void *)(uintptr_t)k) != 0)
		return 3;
	pthread_join(th, NULL);
	return atomic_load(&failures) ? 1 : 0;
}

static int fork_test(int forks)
{
	pthread_t th[3];
	int bad = 0;
	for (uintptr_t t = 0; t < 3; t++)
		pthread_create(&th[t], NULL, background, (void *)t);
	uint64_t rng = 777;
	for (int k = 0; k < forks; k++) {
		blk_t *inherited[50];
		for (int i = 0; i < 50; i++)
			inherited[i] = new_block(&rng);
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			bad++;
			break;
		}
		if (pid == 0)
			_exit(child_main(inherited, 50, k));
		int status = 0, waited = 0;
		pid_t w;
		/* A deadlocked child never exits: poll for 30 s, then kill it. */
		while ((w = waitpid(pid, &status, WNOHANG)) == 0 && waited < 3000) {
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			nanosleep(&ts, NULL);
			waited++;
		}
		if (w == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fprintf(stderr, "fork child %d hung (deadlock after fork?)\n", k);
			bad++;
		} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "fork child %d failed (status 0x%x)\n", k, status);
			bad++;
		}
		for (int i = 0; i < 50; i++)
			if (inherited[i])
				drop(inherited[i]);
	}
	atomic_store(&stop_churn, 1);
	for (int t = 0; t < 3; t++)
		pthread_join(th[t], NULL);
	return bad;
}

int main(int argc, char **argv)
{
	int threads = 4, waves = 12, forks = 20;
	setvbuf(stdout, NULL, _IOLBF, 0); /* progress lines reach the log as they happen */
	if (argc > 1)
		ops_per_thread = atol(argv[1]);
	if (argc > 2)
		threads = atoi(argv[2]);
	if (argc > 3)
		waves = atoi(argv[3]);
	if (argc > 4)
		forks = atoi(argv[4]);
	if (ops_per_thread <= 0 || threads <= 0 || threads > 64 || waves < 0 || forks < 0) {
		fprintf(stderr, "usage: alloc_stress [OPS_PER_THREAD] [THREADS<=64] [WAVES] [FORKS]\n");
		return 1;
	}
	if (run_threads(churn, threads) != 0)
		return 2;
	drain_slots();
	printf("churn: %d threads x %ld ops, %llu failures\n", threads, ops_per_thread,
	       (unsigned long long)atomic_load(&failures));
	for (int w = 0; w < waves; w++)
		if (run_threads(wave, WAVE_THREADS) != 0)
			return 2;
	for (int t = 0; t < WAVE_THREADS; t++)
		for (int i = 0; i < WAVE_BLOCKS; i++)
			if (handoff[t][i])
				drop(handoff[t][i]);
	printf("thread turnover: %d waves of %d threads, %llu failures\n", waves, WAVE_THREADS,
	       (unsigned long long)atomic_load(&failures));
	int bad_forks = fork_test(forks);
	printf("fork: %d forks from 4 threads, %d bad children, %llu failures\n", forks, bad_forks,
	       (unsigned long long)atomic_load(&failures));
	printf("totals: allocs=%llu reallocs=%llu frees=%llu failures=%llu\n",
	       (unsigned long long)atomic_load(&n_allocs), (unsigned long long)atomic_load(&n_reallocs),
	       (unsigned long long)atomic_load(&n_frees), (unsigned long long)atomic_load(&failures));
	return atomic_load(&failures) || bad_forks ? 1 : 0;
}
