/*
 * torture_exit SHARED WORKERS AFTER MODE — a worker ends the process while
 * the others are in the middle of allocating (tests/e2e/torture_rec_exit.sh).
 *
 * WORKERS threads run their malloc sequences (torture.h, tt_seq_run) without
 * pause, counting in the shared file. Worker 0, after AFTER mallocs of its
 * own, copies every worker's count into the snapshot and calls exit(0)
 * (MODE exit) or _exit(3) (MODE _exit); the others never stop. Every malloc
 * counted in the snapshot returned before the process began to end, so the
 * recorder must have it in the trace.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "torture.h"

static tt_shared_t *sh;
static unsigned after;
static int use_exit;

static void *worker(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	if (w != 0)
		tt_seq_run(sh, w, 0, 0);
	for (uint64_t i = 0;; i++) {
		void *p = malloc(TT_SEQ_SIZE(0, i));
		atomic_store_explicit(&sh->done[0], i + 1, memory_order_release);
		free(p);
		if (i + 1 >= after) {
			for (unsigned k = 0; k < sh->nworkers; k++)
				atomic_store(&sh->snapshot[k], atomic_load_explicit(&sh->done[k], memory_order_acquire));
			atomic_store(&sh->snapshot_taken, 1);
			if (use_exit)
				exit(0);
			_exit(3);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: torture_exit SHARED WORKERS AFTER exit|_exit\n");
		return 2;
	}
	unsigned nw = (unsigned)atoi(argv[2]);
	after = (unsigned)atoi(argv[3]);
	use_exit = strcmp(argv[4], "exit") == 0;
	if (nw < 1 || nw > TT_SEQ_MAXW)
		return 2;
	sh = tt_shared_create(argv[1], nw);
	pthread_t t[TT_SEQ_MAXW];
	for (unsigned w = 1; w < nw; w++)
		pthread_create(&t[w], NULL, worker, (void *)(uintptr_t)w);
	worker(NULL); /* main is worker 0: it ends the process */
	return 1;
}
