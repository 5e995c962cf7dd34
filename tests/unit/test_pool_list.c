/*
 * test_pool_list.c — the lock-free free list of pool's size classes
 * (allocators/pool/pool_list.h), on nodes of a static array:
 *
 *   - LIFO order, the counts in the head (pushes - pops = blocks on the
 *     list), a pushed chain keeps its order, take_all takes a list of at
 *     most max blocks whole (NULL-terminated) and leaves a longer one alone;
 *   - the 32-bit pops counter: pool_list_pop and pool_list_take_all say
 *     exactly when it wrapped, and the count stays right across the wrap;
 *   - try_pop, try_push and push_if_empty, on one thread and after threads;
 *   - four threads (more than the machine's cores, so they are preempted
 *     between reading the head and swapping it) popping, marking and
 *     pushing back 64 nodes, singly, in pairs and by take_all: no node is
 *     ever held by two threads, and at the end the list holds each node once.
 * Counts are exact; nothing depends on timing. Also run under
 * ThreadSanitizer (TSAN_TESTS), which pool_list.h tells about its swap.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "testing.h"

#include "pool_list.h"

#if POOL_LIST_CAS
int ar_pool_list_lockfree;
#endif

typedef struct node {
	void *link; /* the list's link: the first word, as in a pool block */
	_Atomic int owner;
} node_t;

static void test_order_and_counts(void)
{
	static node_t n[4];
	pool_list_t l;
	void *b;
	pool_list_init(&l);
	EXPECT(pool_list_pop(&l, &b) == 0 && b == NULL);
	pool_list_push(&l, &n[0], &n[0], 1);
	pool_list_push(&l, &n[1], &n[1], 1);
	/* A chain n[2] -> n[3] pushed as one. */
	n[2].link = &n[3];
	pool_list_push(&l, &n[2], &n[3], 2);
	EXPECT_U64(pool_head_count(pool_list_peek(&l)), 4);
	pool_list_pop(&l, &b);
	EXPECT(b == &n[2]);
	pool_list_pop(&l, &b);
	EXPECT(b == &n[3]);
	EXPECT_U64(pool_head_count(pool_list_peek(&l)), 2);
	EXPECT_U64(pool_list_peek(&l).pops, 2);
	EXPECT_U64(pool_list_peek(&l).pushes, 4);

	int wrapped = 0;
	EXPECT_U64(pool_list_take_all(&l, 1, &b, &wrapped), 0); /* 2 > max: untouched */
	EXPECT_U64(pool_head_count(pool_list_peek(&l)), 2);
	EXPECT_U64(pool_list_take_all(&l, 2, &b, &wrapped), 2);
	EXPECT(b == &n[1] && n[1].link == &n[0] && n[0].link == NULL);
	EXPECT(!wrapped);
	EXPECT(pool_list_peek(&l).top == NULL);
	EXPECT_U64(pool_head_count(pool_list_peek(&l)), 0);
	EXPECT_U64(pool_list_take_all(&l, 8, &b, &wrapped), 0); /* empty */
}

/* The fast paths a caller inlines (try_pop, try_push: -1 and 0 when only
 * the locked path can do it) and the swap of a whole chain into an empty
 * list (push_if_empty: a shard taking another's list), on whichever path
 * the process is on: one thread (plain loads and stores), lock-free, or
 * locked. */
static void test_try_and_if_empty(void)
{
	static node_t n[4];
	pool_list_t l;
	void *b = &n[0];
	pool_list_init(&l);
	int popped = pool_list_try_pop(&l, &b);
	EXPECT(popped == -1 || (popped == 0 && b == NULL));
	int pushed = pool_list_try_push(&l, &n[0]);
	if (!pushed)
		pool_list_push(&l, &n[0], &n[0], 1);
	/* not empty: the chain is refused, nothing changes */
	n[1].link = &n[2];
	n[2].link = NULL;
	EXPECT(pool_list_push_if_empty(&l, &n[1], 2) == 0);
	EXPECT_U64(pool_head_count(pool_list_peek(&l)), 1);
	popped = pool_list_try_pop(&l, &b);
	if (popped == -1)
		popped = pool_list_pop(&l, &b);
	EXPECT(popped == 0 && b == &n[0]);
	/* empty: the chain becomes the list, in its order, counted */
	EXPECT(pool_list_push_if_empty(&l, &n[1], 2) == 1);
	EXPECT_U64(pool_head_count(pool_list_peek(&l)), 2);
	pool_list_pop(&l, &b);
	EXPECT(b == &n[1]);
	pool_list_pop(&l, &b);
	EXPECT(b == &n[2]);
	EXPECT(pool_list_peek(&l).top == NULL && pool_head_count(pool_list_peek(&l)) == 0);
}

static void test_wrap(void)
{
	static node_t n[3];
	pool_list_t l;
	void *b;
	pool_list_init(&l);
	l.head.pops = l.head.pushes = UINT32_MAX - 1;
	pool_list_push(&l, &n[0], &n[0], 1);
	pool_list_push(&l, &n[1], &n[1], 1);
	pool_list_push(&l, &n[2], &n[2], 1); /* pushes wrapped to 1 */
	EXPECT_U64(pool_head_count(pool_list_peek(&l)), 3);
	EXPECT(pool_list_pop(&l, &b) == 0 && b == &n[2]); /* pops = UINT32_MAX */
	EXPECT(pool_list_pop(&l, &b) == 1 && b == &n[1]); /* pops wraps to 0 */
	EXPECT_U64(pool_head_count(pool_list_peek(&l)), 1);

	pool_list_init(&l);
	l.head.pops = l.head.pushes = UINT32_MAX;
	n[1].link = &n[0];
	pool_list_push(&l, &n[1], &n[0], 2);
	int wrapped = 0;
	EXPECT_U64(pool_list_take_all(&l, 2, &b, &wrapped), 2);
	EXPECT(wrapped && b == &n[1]);
	EXPECT_U64(pool_list_peek(&l).pops, 1);
}

enum { NODES = 64, THREADS = 4, ROUNDS = 200000 };
static node_t nodes[NODES];
static pool_list_t shared;
static _Atomic unsigned long double_held;

/* Mark node b held by thread id; a node already held counts as an error. */
static void hold(node_t *b, int id)
{
	if (atomic_exchange(&b->owner, id) != 0)
		atomic_fetch_add(&double_held, 1);
}

static void release(node_t *b)
{
	atomic_store(&b->owner, 0);
}

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	unsigned x = (unsigned)id * 2654435761u;
	for (long i = 0; i < ROUNDS; i++) {
		x = x * 1103515245u + 12345u;
		void *a = NULL, *c = NULL;
		pool_list_pop(&shared, &a);
		if (!a)
			continue;
		hold(a, id);
		if ((x >> 16) % 4 == 0) {
			/* A pair, pushed back as one chain. */
			pool_list_pop(&shared, &c);
			if (c) {
				hold(c, id);
				release(c);
				release(a);
				/* Atomic, like the list's own link writes: a pop
				 * may read this link speculatively (pool_list.h,
				 * "Safety of the pop"); a program's plain writes
				 * there are the race that file accepts. */
				__atomic_store_n(&((node_t *)a)->link, c, __ATOMIC_RELAXED);
				pool_list_push(&shared, a, c, 2);
				continue;
			}
		} else if ((x >> 16) % 16 == 1) {
			/* Whatever is left, if short, in one swap; then all back. */
			void *rest = NULL;
			int wrapped;
			uint32_t n = pool_list_take_all(&shared, 8, &rest, &wrapped);
			void *last = rest;
			for (uint32_t k = 0; k < n; k++) {
				hold(last, id);
				release(last);
				if (k + 1 < n)
					last = ((node_t *)last)->link;
			}
			if (n)
				pool_list_push(&shared, rest, last, n);
		}
		release(a);
		pool_list_push(&shared, a, a, 1);
	}
	return NULL;
}

static void test_threads(void)
{
	pool_list_init(&shared);
	for (int i = 0; i < NODES; i++)
		pool_list_push(&shared, &nodes[i], &nodes[i], 1);
	pthread_t th[THREADS];
	for (int t = 0; t < THREADS; t++)
		EXPECT(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)(t + 1)) == 0);
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	EXPECT_U64(atomic_load(&double_held), 0);
	EXPECT_U64(pool_head_count(pool_list_peek(&shared)), NODES);
	/* Each node exactly once on the list. */
	int seen[NODES] = { 0 }, walked = 0;
	for (node_t *b = pool_list_peek(&shared).top; b && walked <= NODES; b = b->link, walked++)
		seen[b - nodes]++;
	EXPECT_U64(walked, NODES);
	for (int i = 0; i < NODES; i++)
		EXPECT_U64(seen[i], 1);
}

int main(void)
{
	/* Both paths, whichever the CPU gets: the lock-free one where CPUID
	 * lists cmpxchg16b, and the locked one a CPU without it would run. */
	pool_list_probe();
	for (int pass = 0; pass < 2; pass++) {
		RUN(test_order_and_counts);
		RUN(test_wrap);
		RUN(test_try_and_if_empty); /* the first pass: one thread */
		RUN(test_threads);
		RUN(test_try_and_if_empty); /* threads have run: the shared paths */
#if POOL_LIST_CAS
		if (!ar_pool_list_lockfree)
			break;
		ar_pool_list_lockfree = 0;
#else
		break;
#endif
	}
	return TEST_END();
}
