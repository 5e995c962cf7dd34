/*
 * torture_threads LIVE TOTAL ITERS [SIGNALS [KEYDTOR]] — thread churn under
 * signals for the recorder torture test (tests/e2e/torture_rec_threads.sh).
 *
 * Keeps LIVE threads running until TOTAL have been started; each does ITERS
 * iterations of tt_mix (every heap function once, torture.h) and ends,
 * alternately by returning and by pthread_exit. All are detached: they end
 * while others start and allocate.
 *
 * SIGNALS (default none):
 *   none    no signals
 *   plain   every worker has a CLOCK_THREAD_CPUTIME_ID timer sending it
 *           SIGALRM every 50 us of its CPU time, and the process gets SIGPROF
 *           from setitimer(ITIMER_PROF) every 100 us; the handlers only count
 *   malloc  as plain, and the SIGALRM handler also does malloc(TT_HANDLER)
 *           and free: not async-signal-safe, but common. To keep glibc itself
 *           out of trouble (its arena lock is not reentrant) the handler's
 *           size is a tcache size no other code uses and each worker fills
 *           that tcache bin first (7 x malloc/free of TT_HANDLER_WARM, same
 *           bin), so the handler never takes a glibc lock; what is left to
 *           test is the recorder's own reentrancy.
 * KEYDTOR = 1: each worker also owns a pthread key whose destructor re-arms
 * itself for every destructor round and runs tt_mix in each, so the last
 * round allocates after the recorder wrote the thread's exit record.
 *
 * Output: the tt_mix counts ("op NAME N"), "handler malloc N", "handler
 * free N", then "info threads N", "info sigalrm N", "info sigprof N".
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "torture.h"

static tt_counts_t counts;
static _Atomic uint64_t handler_calls, sigalrm, sigprof;
static int sig_mode; /* 0 none, 1 plain, 2 malloc */
static int keydtor;
static unsigned iters;
static pthread_key_t key;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static unsigned live, finished;

static void on_alrm(int sig)
{
	(void)sig;
	int saved = errno;
	atomic_fetch_add_explicit(&sigalrm, 1, memory_order_relaxed);
	if (sig_mode == 2) {
		void *p = malloc(TT_HANDLER);
		free(p);
		atomic_fetch_add_explicit(&handler_calls, 1, memory_order_relaxed);
	}
	errno = saved;
}

static void on_prof(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&sigprof, 1, memory_order_relaxed);
}

static void worker_done(void)
{
	pthread_mutex_lock(&mu);
	live--;
	finished++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

/* Called once per destructor round with the round number (1..4). */
static void key_dtor(void *arg)
{
	uintptr_t round = (uintptr_t)arg;
	for (unsigned i = 0; i < 3; i++)
		tt_mix(i, &counts);
	if (round < PTHREAD_DESTRUCTOR_ITERATIONS)
		pthread_setspecific(key, (void *)(round + 1));
	else
		worker_done(); /* the last round glibc runs */
}

static void *worker(void *arg)
{
	uintptr_t idx = (uintptr_t)arg;
	timer_t tm;
	int have_timer = 0;
	if (sig_mode) {
		if (sig_mode == 2) { /* fill the handler's tcache bin (see above) */
			void *w[7];
			for (int i = 0; i < 7; i++)
				w[i] = malloc(TT_HANDLER_WARM);
			for (int i = 0; i < 7; i++)
				free(w[i]);
		}
		struct sigevent sev;
		memset(&sev, 0, sizeof sev);
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = SIGALRM;
		sev._sigev_un._tid = gettid();
		if (timer_create(CLOCK_MONOTONIC, &sev, &tm) == 0) {
			struct itimerspec its = {{0, 100000}, {0, 100000}};
			timer_settime(tm, 0, &its, NULL);
			have_timer = 1;
		}
	}
	if (keydtor)
		pthread_setspecific(key, (void *)1);
	for (unsigned i = 0; i < iters; i++)
		tt_mix(i, &counts);
	if (have_timer)
		timer_delete(tm);
	if (!keydtor)
		worker_done();
	if (idx & 1)
		pthread_exit(NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: torture_threads LIVE TOTAL ITERS [none|plain|malloc [KEYDTOR]]\n");
		return 2;
	}
	unsigned want_live = (unsigned)atoi(argv[1]), total = (unsigned)atoi(argv[2]);
	iters = (unsigned)atoi(argv[3]);
	if (argc > 4)
		sig_mode = strcmp(argv[4], "plain") == 0 ? 1 : strcmp(argv[4], "malloc") == 0 ? 2 : 0;
	keydtor = argc > 5 && atoi(argv[5]);
	if (keydtor && pthread_key_create(&key, key_dtor) != 0)
		return 2;
	struct itimerval itv = {{0, 100}, {0, 100}};
	if (sig_mode) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sa.sa_handler = on_alrm;
		sigaction(SIGALRM, &sa, NULL);
		sa.sa_handler = on_prof;
		sigaction(SIGPROF, &sa, NULL);
		setitimer(ITIMER_PROF, &itv, NULL);
	}
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (unsigned started = 0; started < total; started++) {
		pthread_mutex_lock(&mu);
		while (live >= want_live)
			pthread_cond_wait(&cv, &mu);
		live++;
		pthread_mutex_unlock(&mu);
		pthread_t t;
		int rc;
		while ((rc = pthread_create(&t, &attr, worker, (void *)(uintptr_t)started)) == EAGAIN)
			usleep(1000);
		if (rc != 0) {
			fprintf(stderr, "pthread_create: %s\n", strerror(rc));
			return 2;
		}
	}
	pthread_mutex_lock(&mu);
	while (finished < total)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	if (sig_mode) { /* no more signals: the counts below are final */
		struct itimerval off;
		memset(&off, 0, sizeof off);
		setitimer(ITIMER_PROF, &off, NULL);
	}
	tt_print_counts(stdout, &counts);
	printf("handler malloc %llu\nhandler free %llu\n", (unsigned long long)handler_calls,
	       (unsigned long long)handler_calls);
	printf("info threads %u\ninfo sigalrm %llu\ninfo sigprof %llu\n", total + 1, (unsigned long long)sigalrm,
	       (unsigned long long)sigprof);
	return 0;
}
