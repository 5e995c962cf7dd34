/*
 * rec_signal MODE — dying of (or surviving) signals, after 1000 allocations
 * of 4444 bytes:
 *   term     kill(getpid(), SIGTERM) with the default action
 *   handler  the program's own SIGTERM handler calls exit(3)
 *   reraise  the program's own SIGTERM handler, installed with SA_RESETHAND,
 *            says so and raises SIGTERM again (node's idiom): it dies of it
 *   ignore   SIGTERM ignored, raised, the program goes on (exit 0)
 *   segv     a NULL write
 *   abort    abort()
 *   kill     sleep 2 s, then SIGKILL (the recorder cannot see it coming)
 *   busy     four threads allocate as fast as they can (the recorder's
 *            writer falls behind and holds them back) until SIGTERM, sent
 *            to the process by a fifth thread that blocks it itself, lands
 *            in one of them
 *   busy-exit the same with a SIGTERM handler (SA_SIGINFO) that checks the
 *            sender is this process, sent with kill(), and calls exit(3)
 * Every mode first prints what sigaction reports for SIGTERM, which must be
 * what the program itself installed.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_term(int sig)
{
	(void)sig;
	static const char msg[] = "caught SIGTERM\n";
	ssize_t w = write(1, msg, sizeof msg - 1);
	(void)w;
	exit(3);
}

static void on_term_reraise(int sig)
{
	static const char msg[] = "caught SIGTERM, raising it again\n";
	ssize_t w = write(1, msg, sizeof msg - 1);
	(void)w;
	raise(sig); /* blocked until this returns; by then the action is the default */
}

static const char *disp(void)
{
	struct sigaction old;
	sigaction(SIGTERM, NULL, &old);
	return old.sa_handler == SIG_DFL ? "default" : old.sa_handler == SIG_IGN ? "ignore"
		: old.sa_handler == on_term ? "on_term" : old.sa_handler == on_term_reraise ? "on_term_reraise"
		: "SOMETHING ELSE";
}

static atomic_long calls;

static void *churn(void *arg)
{
	(void)arg;
	for (;;) {
		for (int i = 0; i < 1000; i++)
			free(malloc(16 + (size_t)i % 200));
		atomic_fetch_add(&calls, 2000);
	}
	return NULL;
}

static void *terminator(void *arg)
{
	(void)arg;
	sigset_t term;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL); /* so it lands in an allocating thread */
	while (atomic_load(&calls) < 4000000)
		usleep(1000);
	kill(getpid(), SIGTERM);
	for (;;)
		pause();
	return NULL;
}

static void on_term_exit(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	exit(si->si_pid == getpid() && si->si_code == SI_USER ? 3 : 4);
}

static void busy(void)
{
	pthread_t t;
	for (int i = 0; i < 3; i++)
		pthread_create(&t, NULL, churn, NULL);
	pthread_create(&t, NULL, terminator, NULL);
	churn(NULL);
}

/* SIGTERM's action: handler h, or hs with SA_SIGINFO among flags. */
static void set_term(void (*h)(int), void (*hs)(int, siginfo_t *, void *), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	if (hs)
		sa.sa_sigaction = hs;
	else
		sa.sa_handler = h;
	sa.sa_flags = flags;
	sigaction(SIGTERM, &sa, NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "term";
	printf("initial %s\n", disp());
	if (strcmp(mode, "handler") == 0)
		set_term(on_term, NULL, 0);
	else if (strcmp(mode, "reraise") == 0)
		set_term(on_term_reraise, NULL, SA_RESETHAND);
	else if (strcmp(mode, "ignore") == 0)
		signal(SIGTERM, SIG_IGN);
	printf("now %s\n", disp());
	fflush(stdout);
	void *keep[1000];
	for (int i = 0; i < 1000; i++)
		keep[i] = malloc(4444);
	if (strcmp(mode, "kill") == 0) {
		sleep(2);
		kill(getpid(), SIGKILL);
	} else if (strcmp(mode, "segv") == 0) {
		*(volatile int *)(uintptr_t)0 = 1;
	} else if (strcmp(mode, "abort") == 0) {
		abort();
	} else if (strcmp(mode, "busy") == 0) {
		busy();
	} else if (strcmp(mode, "busy-exit") == 0) {
		set_term(NULL, on_term_exit, SA_SIGINFO);
		busy();
	} else {
		kill(getpid(), SIGTERM);
	}
	for (int i = 0; i < 1000; i++)
		free(keep[i]);
	printf("survived\n");
	return 0;
}
