/*
 * scen_xthread.c — X, producer/consumer with cross-thread frees: threads
 * come in pairs, the even one a producer that mallocs 64-1024 B messages and
 * queues them (a ring of 1024), the odd one a consumer that dequeues and
 * frees them. Every free is of a block another thread allocated, which is
 * what a thread-caching allocator pays for (SCENARIOS.md: 44 -> 89 ns).
 * Invariants: the consumer frees a message only after dequeuing it, so its
 * free's seq is above the producer's malloc seq (SPEC 4); a full queue makes
 * the producer wait, an empty one the consumer; at the end the producer
 * stops and the consumer drains the queue before it exits.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gen_int.h"

#define RING 1024u

typedef struct pair {
	uint64_t ptr[RING], size[RING];
	uint32_t head, n;
	int producer_done;
} pair_t;

static int x_init(ar_gen_ctx_t *c)
{
	c->shared = calloc(c->nthreads / 2, sizeof(pair_t));
	return c->shared ? 0 : AR_ENOMEM;
}

static void x_fini(ar_gen_ctx_t *c)
{
	free(c->shared);
}

static int x_step(ar_gen_ctx_t *c, uint32_t t)
{
	pair_t *p = &((pair_t *)c->shared)[t / 2];
	if (t % 2 == 0) { /* producer */
		if (ar_gen_stopping(c)) {
			p->producer_done = 1;
			return 0;
		}
		if (p->n == RING) {
			ar_gen_work(c, t, ar_gen_range(c, 200, 800)); /* wait for room */
			return 1;
		}
		uint32_t k = (p->head + p->n) % RING;
		p->size[k] = 64 + 16 * ar_gen_range(c, 0, 60);
		p->ptr[k] = ar_gen_malloc(c, t, p->size[k]);
		p->n++;
		ar_gen_work(c, t, ar_gen_range(c, 50, 250)); /* fill in the message */
		return 1;
	}
	if (!p->n) { /* consumer */
		if (p->producer_done)
			return 0;
		ar_gen_work(c, t, ar_gen_range(c, 200, 800)); /* wait for a message */
		return 1;
	}
	ar_gen_free(c, t, p->ptr[p->head], p->size[p->head]);
	p->head = (p->head + 1) % RING;
	p->n--;
	ar_gen_work(c, t, ar_gen_range(c, 80, 300)); /* handle the message */
	return 1;
}

static void x_thread_name(uint32_t t, uint32_t nthreads, char out[32])
{
	(void)nthreads;
	snprintf(out, 32, "X-%s-%u", t % 2 ? "consumer" : "producer", t / 2);
}

const ar_gen_scenario_t ar_gen_x = {
	.name = "X",
	.summary = "producer/consumer pairs: producer mallocs 64-1024 B messages, consumer frees them "
		   "(cross-thread frees), 2 threads (1 pair)",
	.default_threads = 2,
	.min_threads = 2,
	.threads_even = 1,
	.default_ops = 1000000,
	.init = x_init,
	.fini = x_fini,
	.step = x_step,
	.thread_name = x_thread_name,
};
