/*
 * xthread — a producer/consumer program for the replayer's cross-thread
 * test (tests/e2e/replay_xthread.sh): two producers malloc blocks and hand
 * them through a fixed ring (no heap use of its own) to two consumers, which
 * realloc every third block and free all of them. Every free therefore
 * happens on another thread than the malloc, so the compiled workload must
 * carry a dependency per block. Prints "freed N of N".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PER_PRODUCER 4000
#define RING 256

static void *ring[RING];
static unsigned head, tail, done_producers;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER, not_full = PTHREAD_COND_INITIALIZER;
static unsigned long freed;

static void *producer(void *arg)
{
	unsigned id = (unsigned)(size_t)arg;
	for (unsigned i = 0; i < PER_PRODUCER; i++) {
		size_t n = 16 + (i * 37 + id * 11) % 2000;
		char *p = malloc(n);
		if (!p)
			abort();
		memset(p, (int)i, n);
		pthread_mutex_lock(&mu);
		while (head - tail == RING)
			pthread_cond_wait(&not_full, &mu);
		ring[head++ % RING] = p;
		pthread_cond_signal(&not_empty);
		pthread_mutex_unlock(&mu);
	}
	pthread_mutex_lock(&mu);
	done_producers++;
	pthread_cond_broadcast(&not_empty);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	unsigned long mine = 0;
	for (;;) {
		pthread_mutex_lock(&mu);
		while (head == tail && done_producers < 2)
			pthread_cond_wait(&not_empty, &mu);
		if (head == tail) {
			pthread_mutex_unlock(&mu);
			break;
		}
		char *p = ring[tail++ % RING];
		pthread_cond_signal(&not_full);
		pthread_mutex_unlock(&mu);
		if (mine % 3 == 0) {
			char *q = realloc(p, 3000);
			if (q)
				p = q;
		}
		free(p);
		mine++;
	}
	pthread_mutex_lock(&mu);
	freed += mine;
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(void)
{
	pthread_t t[4];
	for (size_t i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, producer, (void *)i);
	for (size_t i = 2; i < 4; i++)
		pthread_create(&t[i], NULL, consumer, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("freed %lu of %d\n", freed, 2 * PER_PRODUCER);
	return freed == 2 * PER_PRODUCER ? 0 : 1;
}
