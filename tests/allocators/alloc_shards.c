/*
 * alloc_shards.c — what pool's sharded free lists (issue 19) must keep,
 * checked under LD_PRELOAD of one of our allocators
 * (tests/e2e/alloc_shards.sh):
 *
 *   alloc_shards NAME
 *
 *   - producer/consumer: one thread allocates every block, another frees
 *     them all, 400 rounds of 2000 blocks in three size classes. Pool
 *     pushes a free onto the freeing thread's shard, so the producer's
 *     shard is always empty: it must take the consumer's blocks back rather
 *     than carve new ones. The heap mapped after the last round may exceed
 *     what it was after round 20 by at most 2 MiB (carving instead would
 *     map 400 x 2000 blocks, ~70 MiB); every block's pattern is checked;
 *   - statistics with several threads: 4 threads allocate 3000 blocks
 *     each, half freed by a neighbouring thread (pool moves blocks between
 *     shards on the way); once they are joined, the allocations counted
 *     (allocs_total) are the program's own, not the moves, within 64 for
 *     what the thread library allocates itself, and blocks_in_use is back
 *     where it started within the same margin.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_test.h"
#include "testing.h"

#define BATCH 2000
#define ROUNDS 400

static void *slot[BATCH];
static size_t slot_size[BATCH];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int full; /* 1: slot[] holds a batch for the consumer */
static int done;

static void *consumer(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&mu);
		while (!full && !done)
			pthread_cond_wait(&cv, &mu);
		if (!full && done) {
			pthread_mutex_unlock(&mu);
			return NULL;
		}
		pthread_mutex_unlock(&mu);
		for (size_t i = 0; i < BATCH; i++) {
			EXPECT(t_check(slot[i], slot_size[i], i) == slot_size[i]);
			free(slot[i]);
		}
		pthread_mutex_lock(&mu);
		full = 0;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	}
}

static uint64_t mapped(void)
{
	ar_allocator_stats_fn fn = t_stats_fn();
	ar_alloc_stats_t s;
	EXPECT(fn != NULL && fn(&s) == 0);
	return s.bytes_mapped;
}

static void test_producer_consumer(void)
{
	static const size_t sizes[3] = { 24, 48, 200 };
	pthread_t th;
	uint64_t rng = 3, at20 = 0;
	EXPECT(pthread_create(&th, NULL, consumer, NULL) == 0);
	for (int r = 0; r < ROUNDS; r++) {
		for (size_t i = 0; i < BATCH; i++) {
			slot_size[i] = sizes[t_rand(&rng) % 3];
			slot[i] = malloc(slot_size[i]);
			EXPECT(slot[i] != NULL);
			t_fill(slot[i], slot_size[i], i);
		}
		pthread_mutex_lock(&mu);
		full = 1;
		pthread_cond_broadcast(&cv);
		while (full)
			pthread_cond_wait(&cv, &mu);
		pthread_mutex_unlock(&mu);
		if (r == 20)
			at20 = mapped();
	}
	pthread_mutex_lock(&mu);
	done = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(th, NULL);
	uint64_t end = mapped();
	if (end > at20 + ((uint64_t)2 << 20))
		fprintf(stderr, "mapped after round 20: %llu, at the end: %llu\n", (unsigned long long)at20,
			(unsigned long long)end);
	EXPECT(end <= at20 + ((uint64_t)2 << 20));
}

#define THREADS 4
#define PER 3000
static void *blocks[THREADS][PER];
static pthread_barrier_t bar;

static void *mixer(void *arg)
{
	uintptr_t k = (uintptr_t)arg;
	uint64_t rng = 11 + k;
	for (size_t i = 0; i < PER; i++) {
		blocks[k][i] = malloc(t_rand_size(&rng, 512));
		EXPECT(blocks[k][i] != NULL);
	}
	pthread_barrier_wait(&bar);
	/* Free the odd blocks of the next thread and the even ones of our own. */
	size_t other = (k + 1) % THREADS;
	for (size_t i = 0; i < PER; i++)
		free(i % 2 ? blocks[other][i] : blocks[k][i]);
	pthread_barrier_wait(&bar);
	/* Allocate and free again: the shards now hold each other's blocks. */
	for (size_t i = 0; i < PER; i++)
		blocks[k][i] = malloc(t_rand_size(&rng, 512));
	for (size_t i = 0; i < PER; i++)
		free(blocks[k][i]);
	return NULL;
}

static void test_stats_threads(void)
{
	ar_allocator_stats_fn fn = t_stats_fn();
	ar_alloc_stats_t a, b;
	pthread_t th[THREADS];
	EXPECT(fn != NULL);
	EXPECT(pthread_barrier_init(&bar, NULL, THREADS) == 0);
	/* Warm the thread library's own allocations up first. */
	for (uintptr_t k = 0; k < THREADS; k++)
		EXPECT(pthread_create(&th[k], NULL, mixer, (void *)k) == 0);
	for (int k = 0; k < THREADS; k++)
		pthread_join(th[k], NULL);
	EXPECT(fn(&a) == 0);
	for (uintptr_t k = 0; k < THREADS; k++)
		EXPECT(pthread_create(&th[k], NULL, mixer, (void *)k) == 0);
	for (int k = 0; k < THREADS; k++)
		pthread_join(th[k], NULL);
	EXPECT(fn(&b) == 0);
	uint64_t ours = 2 * THREADS * PER, allocs = b.allocs_total - a.allocs_total;
	fprintf(stderr, "allocations counted %llu for %llu made; blocks in use %llu -> %llu\n",
		(unsigned long long)allocs, (unsigned long long)ours, (unsigned long long)a.blocks_in_use,
		(unsigned long long)b.blocks_in_use);
	EXPECT(allocs >= ours && allocs <= ours + 64);
	EXPECT(b.blocks_in_use + 64 >= a.blocks_in_use && b.blocks_in_use <= a.blocks_in_use + 64);
	pthread_barrier_destroy(&bar);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: alloc_shards NAME   (under LD_PRELOAD of liballocrr-NAME.so)\n");
		return 1;
	}
	RUN(test_producer_consumer);
	RUN(test_stats_threads);
	if (!test_failures)
		printf("alloc_shards %s: ok\n", argv[1]);
	return TEST_END();
}
