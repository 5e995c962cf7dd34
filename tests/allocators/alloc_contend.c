/*
 * alloc_contend.c — many threads hammering one size class, for an allocator
 * under LD_PRELOAD (tests/e2e/alloc_contend.sh runs it for each of ours):
 *
 *   alloc_contend [THREADS] [OPS_PER_THREAD]
 *
 * (defaults 8 and 200000). More threads than the machine has cores, all on
 * 48-byte blocks, so a thread is often preempted in the middle of a malloc or
 * free while the others keep recycling the very same blocks: the case a
 * lock-free free list must survive (the ABA problem: a list head that went
 * from A to B and back to A while a pop was between its read and its swap).
 *
 * Each thread allocates a block, stamps it with a unique tag over its whole
 * size, and swaps it into a random slot of a small shared table; the block
 * it gets back (most often allocated by another thread) is checked and
 * freed. A block handed out twice, or a free-list link written into a live
 * block, breaks a pattern. At the end, with every block freed and every
 * thread gone, our allocators' statistics must show no 48-byte block in use
 * (the debug builds keep freed blocks in a quarantine: run them with
 * ALLOCRR_DEBUG_QUARANTINE=0).
 *
 * Deterministic inputs per thread; only the interleaving varies, and any
 * interleaving must pass. No timing is asserted.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "alloc_test.h"

enum { SIZE = 48, SLOTS = 8, LOCAL = 2 };

typedef struct blk {
	uint64_t tag;
	unsigned char rest[SIZE - 8];
} blk_t;

static _Atomic(blk_t *) slots[SLOTS];
static _Atomic uint64_t failures, frees;
static long ops = 200000;

static blk_t *make(uint64_t tag)
{
	blk_t *b = malloc(SIZE);
	if (!b) {
		atomic_fetch_add(&failures, 1);
		fprintf(stderr, "malloc(%d) returned NULL\n", SIZE);
		return NULL;
	}
	b->tag = tag;
	t_fill(b->rest, sizeof b->rest, tag);
	return b;
}

static void check_free(blk_t *b)
{
	if (!b)
		return;
	size_t at = t_check(b->rest, sizeof b->rest, b->tag);
	if (at != sizeof b->rest && atomic_fetch_add(&failures, 1) < 10)
		fprintf(stderr, "block %p (tag %llx) corrupted at offset %zu\n", (void *)b,
			(unsigned long long)b->tag, at + 8);
	free(b);
	atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
}

static void *worker(void *arg)
{
	uint64_t id = (uint64_t)(uintptr_t)arg, rng = id * 7919 + 1;
	blk_t *local[LOCAL] = { 0 };
	for (long i = 0; i < ops; i++) {
		uint64_t r = t_rand(&rng), tag = id << 40 | (uint64_t)i;
		blk_t *b = make(tag);
		if (r & 1) {
			/* Through the shared table: freed by whichever thread
			 * swaps it out next. */
			check_free(atomic_exchange(&slots[(r >> 8) % SLOTS], b));
		} else {
			/* Kept locally a little: same-thread reuse. */
			unsigned k = (unsigned)(r >> 8) % LOCAL;
			check_free(local[k]);
			local[k] = b;
		}
		if ((r >> 32) % 4096 == 0)
			sched_yield();
	}
	for (unsigned k = 0; k < LOCAL; k++)
		check_free(local[k]);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 8;
	if (argc > 2)
		ops = atol(argv[2]);
	if (threads < 1 || threads > 256 || ops < 1) {
		fprintf(stderr, "usage: alloc_contend [THREADS (1-256)] [OPS_PER_THREAD (>= 1)]\n");
		return 2;
	}
	pthread_t *th = calloc((size_t)threads, sizeof *th);
	if (!th)
		return 2;
	for (int t = 0; t < threads; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)(t + 1)) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			return 2;
		}
	for (int t = 0; t < threads; t++)
		pthread_join(th[t], NULL);
	free(th);
	for (unsigned s = 0; s < SLOTS; s++)
		check_free(atomic_exchange(&slots[s], NULL));

	uint64_t want = (uint64_t)threads * (uint64_t)ops;
	if (atomic_load(&frees) != want) {
		fprintf(stderr, "freed %llu blocks, allocated %llu\n", (unsigned long long)atomic_load(&frees),
			(unsigned long long)want);
		atomic_fetch_add(&failures, 1);
	}
	/* Every block is back: none of the 48-byte class may be counted in
	 * use (allocators with size classes; the others report no bins). */
	ar_allocator_stats_fn stats = t_stats_fn();
	if (stats) {
		ar_alloc_stats_t s;
		if (stats(&s) != 0) {
			fprintf(stderr, "statistics call failed\n");
			atomic_fetch_add(&failures, 1);
		}
		for (unsigned i = 0; i < s.nbins; i++)
			if (s.bins[i].block_bytes == SIZE && s.bins[i].blocks_in_use != 0) {
				fprintf(stderr, "%llu blocks of %d bytes still counted in use\n",
					(unsigned long long)s.bins[i].blocks_in_use, SIZE);
				atomic_fetch_add(&failures, 1);
			}
	}
	printf("%d threads x %ld ops on %d-byte blocks, %llu failures\n", threads, ops, SIZE,
	       (unsigned long long)atomic_load(&failures));
	return atomic_load(&failures) ? 1 : 0;
}
