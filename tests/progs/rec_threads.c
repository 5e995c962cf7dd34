/*
 * rec_threads — producers allocate, consumers on other threads free (every
 * free crosses a thread), and short-lived threads exit early (some by
 * returning, some with pthread_exit) while the others keep going. Threads
 * are named; the trace must show every thread with its name and order every
 * free after its allocation.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRODUCERS 3
#define CONSUMERS 2
#define EARLY 8
#define PER_PRODUCER 20000

static void *ring[1024];
static size_t head, tail;
static int producers_left = PRODUCERS;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER, not_full = PTHREAD_COND_INITIALIZER;

static void *producer(void *arg)
{
	char name[16];
	snprintf(name, sizeof name, "prod-%d", (int)(long)arg);
	pthread_setname_np(pthread_self(), name);
	for (int i = 0; i < PER_PRODUCER; i++) {
		char *p = malloc(16 + (size_t)(i % 200));
		p[0] = (char)i;
		pthread_mutex_lock(&mu);
		while (head - tail == 1024)
			pthread_cond_wait(&not_full, &mu);
		ring[head++ % 1024] = p;
		pthread_cond_signal(&not_empty);
		pthread_mutex_unlock(&mu);
	}
	pthread_mutex_lock(&mu);
	producers_left--;
	pthread_cond_broadcast(&not_empty);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void *consumer(void *arg)
{
	char name[16];
	snprintf(name, sizeof name, "cons-%d", (int)(long)arg);
	pthread_setname_np(pthread_self(), name);
	long freed = 0;
	for (;;) {
		pthread_mutex_lock(&mu);
		while (head == tail && producers_left > 0)
			pthread_cond_wait(&not_empty, &mu);
		if (head == tail) {
			pthread_mutex_unlock(&mu);
			break;
		}
		void *p = ring[tail++ % 1024];
		pthread_cond_signal(&not_full);
		pthread_mutex_unlock(&mu);
		free(p);
		freed++;
	}
	return (void *)freed;
}

static void *early(void *arg)
{
	long i = (long)arg;
	char name[16];
	snprintf(name, sizeof name, "early-%ld", i);
	pthread_setname_np(pthread_self(), name);
	void *p = malloc(100 + (size_t)i);
	void *q = calloc(2, 50);
	free(p);
	if (i % 2)
		pthread_exit(q); /* q is freed by main */
	return q;
}

int main(void)
{
	pthread_t pt[PRODUCERS], ct[CONSUMERS], et[EARLY];
	for (long i = 0; i < EARLY; i++)
		pthread_create(&et[i], NULL, early, (void *)i);
	for (long i = 0; i < CONSUMERS; i++)
		pthread_create(&ct[i], NULL, consumer, (void *)i);
	for (long i = 0; i < PRODUCERS; i++)
		pthread_create(&pt[i], NULL, producer, (void *)i);
	for (int i = 0; i < EARLY; i++) {
		void *q;
		pthread_join(et[i], &q);
		free(q);
	}
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(pt[i], NULL);
	long total = 0;
	for (int i = 0; i < CONSUMERS; i++) {
		void *n;
		pthread_join(ct[i], &n);
		total += (long)n;
	}
	printf("freed %ld of %d\n", total, PRODUCERS * PER_PRODUCER);
	return total == PRODUCERS * PER_PRODUCER ? 0 : 1;
}
