/*
 * alloc_reuse.c — the reuse rules issue 19 added to our allocators, checked
 * under LD_PRELOAD of one of them (tests/e2e/alloc_reuse.sh):
 *
 *   alloc_reuse NAME
 *
 *   - every allocator: blocks made while the process had one thread (when
 *     the cores skip their atomic instructions, single_thread.h) stay
 *     intact and are freed and reused correctly by threads started later,
 *     each block's pattern checked (the switch from plain to atomic updates);
 *   - arena: freeing the newest block of the chunk being filled moves the
 *     bump pointer back over every dead block on top, also over one that
 *     another thread freed, and stops at the newest live one; the blocks
 *     below stay intact.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_test.h"
#include "testing.h"

#define EARLY 4096
#define THREADS 4

static void *early[EARLY];
static size_t early_size[EARLY];

/* Thread k frees its share of the early blocks (checking them), then
 * churns: allocate, fill, check, free. */
static void *churn(void *arg)
{
	uintptr_t k = (uintptr_t)arg;
	uint64_t rng = 7 + k;
	for (size_t i = k; i < EARLY; i += THREADS) {
		EXPECT(t_check(early[i], early_size[i], i) == early_size[i]);
		free(early[i]);
	}
	void *mine[64] = { 0 };
	size_t size[64] = { 0 };
	for (int n = 0; n < 20000; n++) {
		unsigned j = (unsigned)(t_rand(&rng) % 64);
		if (mine[j]) {
			EXPECT(t_check(mine[j], size[j], k << 32 | j) == size[j]);
			free(mine[j]);
		}
		size[j] = t_rand_size(&rng, 2048);
		mine[j] = malloc(size[j]);
		EXPECT(mine[j] != NULL);
		t_fill(mine[j], size[j], k << 32 | j);
	}
	for (unsigned j = 0; j < 64; j++)
		if (mine[j]) {
			EXPECT(t_check(mine[j], size[j], k << 32 | j) == size[j]);
			free(mine[j]);
		}
	return NULL;
}

static void test_one_then_many(void)
{
	uint64_t rng = 1;
	/* One thread: fill, free half in random order, refill. */
	for (size_t i = 0; i < EARLY; i++) {
		early_size[i] = t_rand_size(&rng, 1024);
		early[i] = malloc(early_size[i]);
		EXPECT(early[i] != NULL);
		t_fill(early[i], early_size[i], i);
	}
	for (size_t n = 0; n < EARLY / 2; n++) {
		size_t i = (size_t)(t_rand(&rng) % EARLY);
		EXPECT(t_check(early[i], early_size[i], i) == early_size[i]);
		free(early[i]);
		early_size[i] = t_rand_size(&rng, 1024);
		early[i] = malloc(early_size[i]);
		EXPECT(early[i] != NULL);
		t_fill(early[i], early_size[i], i);
	}
	/* Then threads, freeing those blocks and churning side by side. */
	pthread_t th[THREADS];
	for (uintptr_t k = 0; k < THREADS; k++)
		EXPECT(pthread_create(&th[k], NULL, churn, (void *)k) == 0);
	for (int k = 0; k < THREADS; k++)
		pthread_join(th[k], NULL);
}

static void *free_it(void *p)
{
	free(p);
	return NULL;
}

/* n blocks of the given sizes, adjacent in one chunk (a chunk boundary
 * between two of them would change where a rewind stops): retried until
 * they are, the misses freed. */
static void adjacent(char **out, const size_t *size, int n)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		int ok = 1;
		for (int i = 0; i < n; i++) {
			out[i] = malloc(size[i]);
			if (i && (out[i] < out[i - 1] || out[i] - out[i - 1] > 8192))
				ok = 0;
		}
		if (ok)
			return;
		for (int i = n - 1; i >= 0; i--)
			free(out[i]);
	}
	EXPECT(!"four attempts without adjacent blocks");
}

static void test_arena_rewind(void)
{
	char *x[3];
	adjacent(x, (const size_t[]){ 100, 200, 50 }, 3);
	char *a = x[0], *b = x[1], *c = x[2];
	t_fill(a, 100, 1);
	t_fill(b, 200, 2);
	t_fill(c, 50, 3);
	free(b); /* not the newest: nothing moves */
	char *d = malloc(200);
	EXPECT(d > c); /* bumped past c */
	free(d);       /* the newest: back to c's end */
	free(c);       /* the newest again: over c and the dead b, to a's end */
	char *e = malloc(200);
	EXPECT(e == b); /* b's bytes again */
	EXPECT(t_check(a, 100, 1) == 100);
	t_fill(e, 200, 5);
	/* A block freed by another thread is dead for the owner's rewind too. */
	char *y[2];
	adjacent(y, (const size_t[]){ 64, 64 }, 2);
	pthread_t th;
	EXPECT(pthread_create(&th, NULL, free_it, y[0]) == 0);
	pthread_join(th, NULL);
	free(y[1]);
	char *h = malloc(64);
	EXPECT(h == y[0]);
	EXPECT(t_check(e, 200, 5) == 200);
	EXPECT(t_check(a, 100, 1) == 100);
	free(h);
	free(e);
	free(a);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: alloc_reuse NAME   (under LD_PRELOAD of liballocrr-NAME.so)\n");
		return 1;
	}
	/* Before any thread exists: this part runs on the single-thread paths. */
	RUN(test_one_then_many);
	if (strcmp(argv[1], "arena") == 0)
		RUN(test_arena_rewind);
	if (!test_failures)
		printf("alloc_reuse %s: ok\n", argv[1]);
	return TEST_END();
}
