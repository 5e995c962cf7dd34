/*
 * torture_kill SHARED WORKERS — allocates until killed, leaving a record of
 * what it did in the shared file (tests/e2e/torture_rec_kill.sh).
 *
 * Workers 0..WORKERS-2 run their malloc sequences in bursts (64 mallocs,
 * then 300 us of sleep); the last worker makes one malloc every 20 ms, so
 * its buffer reaches the disk only by the writer's steal from an idle
 * thread. A progress thread, which never allocates, appends a record (every
 * worker's count and the CLOCK_MONOTONIC time) every millisecond. Stops by
 * itself after 120 s (exit 0) in case nobody kills it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "torture.h"

static tt_shared_t *sh;

static void *worker(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	if (w + 1 == sh->nworkers)
		tt_seq_run(sh, w, 1, 20000);
	else
		tt_seq_run(sh, w, 64, 300);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: torture_kill SHARED WORKERS\n");
		return 2;
	}
	unsigned nw = (unsigned)atoi(argv[2]);
	if (nw < 2 || nw > TT_SEQ_MAXW)
		return 2;
	sh = tt_shared_create(argv[1], nw);
	pthread_t t;
	for (unsigned w = 0; w < nw; w++)
		pthread_create(&t, NULL, worker, (void *)(uintptr_t)w);
	uint64_t end = tt_mono_ns() + 120000000000ull;
	for (uint64_t n = 0; tt_mono_ns() < end; n++) {
		tt_progress_t *p = &sh->progress[n % TT_PROGRESS];
		atomic_store_explicit(&p->t_ns, 0, memory_order_relaxed);
		for (unsigned w = 0; w < nw; w++)
			p->done[w] = atomic_load_explicit(&sh->done[w], memory_order_acquire);
		atomic_store_explicit(&p->t_ns, tt_mono_ns(), memory_order_release);
		atomic_store_explicit(&sh->nprogress, n + 1, memory_order_release);
		usleep(1000);
	}
	return 0;
}
