/*
 * torture_fork WORKERS FORKERS FORKS — fork storm from a multi-threaded
 * parent (tests/e2e/torture_rec_fork.sh).
 *
 * WORKERS threads run tt_mix without pause while FORKERS threads (the main
 * thread among them) fork FORKS children in total, as fast as they can: a
 * fork lands while other threads are anywhere in the recorder or in glibc.
 * Child number k (0-based, global) does k % 5 + 1 mallocs of worker
 * sequence 0 (each freed), and when k % 3 == 0 also starts a thread that
 * runs k % 4 + 1 iterations of tt_mix; it ends with exit(0) when k is even
 * and _exit(0) when odd. Its parent waits for it at most 20 s, then kills it
 * and counts it as hung.
 *
 * Output (after everything is done; the children print nothing): the
 * parent's tt_mix counts ("op NAME N"), one line per child
 * "child PID seq S mix M status ST" (ST: exit status, or "hung", or
 * "signal N"), then "info hung N".
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "torture.h"

static tt_counts_t counts;
static _Atomic int stop;
static _Atomic unsigned next_child;
static unsigned total_forks;

typedef struct {
	pid_t pid;
	unsigned seq, mix;
	int status; /* >= 0 exit status, -1 hung, -100-N signal N */
} child_t;
static child_t *kids;

static void *worker(void *arg)
{
	(void)arg;
	for (unsigned i = 0; !atomic_load_explicit(&stop, memory_order_relaxed); i++)
		tt_mix(i, &counts);
	return NULL;
}

static void *child_thread(void *arg)
{
	unsigned m = (unsigned)(uintptr_t)arg;
	for (unsigned i = 0; i < m; i++)
		tt_mix(i, NULL);
	return NULL;
}

static void child_main(unsigned k)
{
	unsigned s = k % 5 + 1;
	for (unsigned j = 0; j < s; j++)
		free(malloc(TT_SEQ_SIZE(0, j)));
	if (k % 3 == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, child_thread, (void *)(uintptr_t)(k % 4 + 1)) != 0 ||
		    pthread_join(t, NULL) != 0)
			_exit(3);
	}
	if (k % 2 == 0)
		exit(0);
	_exit(0);
}

static int wait_child(pid_t pid)
{
	int st;
	for (int ms = 0; ms < 20000; ms++) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -100 - WTERMSIG(st);
		if (r < 0 && errno != EINTR)
			return -2;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

static void *forker(void *arg)
{
	(void)arg;
	unsigned k;
	while ((k = atomic_fetch_add(&next_child, 1)) < total_forks) {
		pid_t pid = fork();
		if (pid < 0) {
			kids[k].status = -3;
			continue;
		}
		if (pid == 0)
			child_main(k);
		kids[k].pid = pid;
		kids[k].seq = k % 5 + 1;
		kids[k].mix = k % 3 == 0 ? k % 4 + 1 : 0;
		kids[k].status = wait_child(pid);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: torture_fork WORKERS FORKERS FORKS\n");
		return 2;
	}
	unsigned nw = (unsigned)atoi(argv[1]), nf = (unsigned)atoi(argv[2]);
	total_forks = (unsigned)atoi(argv[3]);
	kids = calloc(total_forks, sizeof *kids);
	pthread_t w[64], f[64];
	if (!kids || nw > 64 || nf < 1 || nf > 64)
		return 2;
	fflush(stdout); /* nothing buffered may be duplicated into a child */
	for (unsigned i = 0; i < nw; i++)
		pthread_create(&w[i], NULL, worker, NULL);
	for (unsigned i = 1; i < nf; i++)
		pthread_create(&f[i], NULL, forker, NULL);
	forker(NULL);
	for (unsigned i = 1; i < nf; i++)
		pthread_join(f[i], NULL);
	atomic_store(&stop, 1);
	for (unsigned i = 0; i < nw; i++)
		pthread_join(w[i], NULL);
	tt_print_counts(stdout, &counts);
	unsigned hung = 0;
	for (unsigned k = 0; k < total_forks; k++) {
		printf("child %d seq %u mix %u status ", (int)kids[k].pid, kids[k].seq, kids[k].mix);
		if (kids[k].status >= 0)
			printf("%d\n", kids[k].status);
		else if (kids[k].status == -1)
			printf("hung\n"), hung++;
		else if (kids[k].status <= -100)
			printf("signal %d\n", -100 - kids[k].status);
		else
			printf("error\n");
	}
	printf("info hung %u\n", hung);
	free(kids);
	return 0;
}
