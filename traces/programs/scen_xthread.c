/*
 * scen_xthread.c — X as a real program (generator: traces/gen/
 * scen_xthread.c): threads in pairs, the even one a producer that mallocs
 * 64-1024 B messages, writes them and pushes them into a single-producer
 * single-consumer ring of 1024, the odd one a consumer that pops, reads and
 * frees them: every free is a cross-thread free.
 *   usage: scen_xthread X [--threads N (even)] [--ops N] [--seed S]
 * Invariants: the ring's release/acquire pair orders the producer's writes
 * (and its malloc) before the consumer's free; the consumer exits only after
 * the producer is done and the ring is empty, so nothing leaks.
 */
#include <sched.h>
#include <stdatomic.h>

#include "scen_common.h"

#define RING 1024u

typedef struct msg {
	uint64_t size;
	unsigned char body[];
} msg_t;

typedef struct pair {
	msg_t *slot[RING];
	_Atomic uint64_t head, tail; /* consumer owns head, producer tail */
	atomic_int done;
} pair_t;

typedef struct worker {
	pair_t *pair;
	int producer;
	uint64_t budget, rng, calls, checksum;
} worker_t;

static void *run(void *arg)
{
	worker_t *w = arg;
	pair_t *p = w->pair;
	if (w->producer) {
		uint64_t tail = 0;
		for (uint64_t i = 0; i < w->budget; i++) {
			uint64_t size = 64 + 16 * scen_range(&w->rng, 0, 60);
			msg_t *m = scen_check(malloc(size));
			m->size = size;
			memset(m->body, (int)i, size - sizeof *m);
			while (tail - atomic_load_explicit(&p->head, memory_order_acquire) == RING)
				sched_yield(); /* ring full */
			p->slot[tail % RING] = m;
			atomic_store_explicit(&p->tail, ++tail, memory_order_release);
			w->calls++;
		}
		atomic_store_explicit(&p->done, 1, memory_order_release);
		return NULL;
	}
	uint64_t head = 0;
	for (;;) {
		if (head == atomic_load_explicit(&p->tail, memory_order_acquire)) {
			if (atomic_load_explicit(&p->done, memory_order_acquire) &&
			    head == atomic_load_explicit(&p->tail, memory_order_acquire))
				break;
			sched_yield(); /* ring empty */
			continue;
		}
		msg_t *m = p->slot[head % RING];
		w->checksum += m->body[0] + m->body[m->size - sizeof *m - 1];
		free(m);
		atomic_store_explicit(&p->head, ++head, memory_order_release);
		w->calls++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	scen_args_t a;
	scen_parse(argc, argv, &a, "X");
	unsigned threads = a.threads ? a.threads : 2;
	if (strcasecmp(a.scenario, "X") || threads < 2 || threads % 2) {
		fprintf(stderr, "%s: scenario X with an even number of threads\n", argv[0]);
		return 1;
	}
	uint64_t ops = a.ops ? a.ops : 1000000;
	static pair_t pairs[SCEN_MAX_THREADS / 2];
	worker_t w[SCEN_MAX_THREADS];
	/* each message is two calls (malloc, free): a producer's share of ops is
	 * ops / threads messages */
	for (unsigned t = 0; t < threads; t++)
		w[t] = (worker_t){&pairs[t / 2], t % 2 == 0, ops / threads, scen_thread_seed(&a, t), 0, 0};
	scen_run_threads(threads, run, w, sizeof *w);
	uint64_t calls = 0, sum = 0;
	for (unsigned t = 0; t < threads; t++)
		calls += w[t].calls, sum += w[t].checksum;
	scen_report("X", calls, sum);
	return 0;
}
