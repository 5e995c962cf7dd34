/*
 * rec_paced — heap calls spread over time, for the bounded-recording tests
 * (tests/e2e/rec_bounded.sh): THREADS threads each make ROUNDS rounds of
 * PER_ROUND mallocs then PER_ROUND frees, sleeping PAUSE_MS between rounds.
 * Prints a checksum of what it wrote into its blocks, so a recording that
 * harmed the program would show in its output.
 *
 *   rec_paced THREADS ROUNDS PER_ROUND PAUSE_MS
 *
 * With REC_PACED_DONE=FILE it creates FILE once its threads are done, before
 * it prints: the streaming test's slow reader starts reading only then
 * (tests/e2e/rec_stream.sh).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rounds, per_round, pause_ms;

static void *worker(void *arg)
{
	unsigned long sum = (unsigned long)arg, **blocks = calloc((size_t)per_round, sizeof *blocks);
	if (!blocks)
		return (void *)1;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < per_round; i++) {
			blocks[i] = malloc(16 + (size_t)(i % 64) * 8);
			if (!blocks[i])
				return (void *)1;
			blocks[i][0] = (unsigned long)(r * per_round + i);
		}
		for (int i = 0; i < per_round; i++) {
			sum = sum * 31 + blocks[i][0];
			free(blocks[i]);
		}
		if (pause_ms) {
			struct timespec ts = {pause_ms / 1000, (long)(pause_ms % 1000) * 1000000L};
			nanosleep(&ts, NULL);
		}
	}
	free(blocks);
	return (void *)(sum & ~1ul);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: rec_paced THREADS ROUNDS PER_ROUND PAUSE_MS\n");
		return 2;
	}
	int nthreads = atoi(argv[1]);
	rounds = atoi(argv[2]);
	per_round = atoi(argv[3]);
	pause_ms = atoi(argv[4]);
	if (nthreads < 1 || nthreads > 64 || rounds < 1 || per_round < 1) {
		fprintf(stderr, "rec_paced: bad arguments\n");
		return 2;
	}
	pthread_t th[64];
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(unsigned long)(i * 2)) != 0)
			return 3;
	unsigned long total = 0;
	for (int i = 0; i < nthreads; i++) {
		void *r;
		pthread_join(th[i], &r);
		if ((unsigned long)r & 1)
			return 4;
		total ^= (unsigned long)r;
	}
	const char *done = getenv("REC_PACED_DONE");
	if (done && *done)
		close(open(done, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	printf("rec_paced: %d threads x %d rounds x %d blocks, checksum %lx\n", nthreads, rounds, per_round, total);
	return 0;
}
