/*
 * rec_fork — fork without exec, and fork + exec.
 *   rec_fork fork   parent allocates, forks; the child allocates 5 x 1234
 *                   bytes and exits; the parent waits, allocates 4321.
 *   rec_fork exec   the child allocates 2222 then execs this program as
 *                   "rec_execd" (argv[0]), which allocates 3 x 5555.
 *   rec_fork loader       another thread is inside dl_iterate_phdr (its
 *                         callback waits) when the main thread forks; the
 *                         child allocates 5 x 1234 bytes and exits.
 *   rec_fork loader-self  the fork is made from inside a dl_iterate_phdr
 *                         callback; the child likewise.
 * In the loader modes the child inherits the loader's lock held (glibc
 * 2.36 does not reset dl_load_write_lock in a child) and never needs it: it
 * must end by itself. It needs milliseconds; after 60 s it is killed and
 * reported "hung" (tests/e2e/torture_rec_fork.sh).
 * Prints "child PID status ST" so the test can find the child's traces.
 */
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void child_allocs(void)
{
	for (int i = 0; i < 5; i++)
		free(malloc(1234));
	exit(0);
}

/* The child's exit status, or -1 when it had to be killed. */
static int wait_bounded(pid_t pid)
{
	int st;
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - t0.tv_sec < 60);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

static _Atomic int holder_inside, holder_release;

static int hold_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size, (void)arg;
	atomic_store(&holder_inside, 1);
	while (!atomic_load(&holder_release)) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	return 1;
}

static void *holder(void *arg)
{
	(void)arg;
	dl_iterate_phdr(hold_cb, NULL);
	return NULL;
}

static pid_t forked;
static int fork_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size, (void)arg;
	forked = fork();
	if (forked == 0)
		child_allocs();
	return 1;
}

static int loader_mode(int self)
{
	pthread_t t;
	fflush(stdout);
	if (self) {
		dl_iterate_phdr(fork_cb, NULL);
	} else {
		if (pthread_create(&t, NULL, holder, NULL) != 0)
			return 2;
		while (!atomic_load(&holder_inside)) {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
		forked = fork();
		if (forked == 0)
			child_allocs();
	}
	if (forked < 0)
		return 2;
	int st = wait_bounded(forked);
	if (!self) {
		atomic_store(&holder_release, 1);
		pthread_join(t, NULL);
	}
	if (st == -1)
		printf("child %d status hung\n", (int)forked);
	else
		printf("child %d status %d\n", (int)forked, st);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strncmp(argv[1], "loader", 6) == 0)
		return loader_mode(strcmp(argv[1], "loader-self") == 0);
	if (argc > 1 && strcmp(argv[1], "execd") == 0) {
		for (int i = 0; i < 3; i++)
			free(malloc(5555));
		return 0;
	}
	void *keep[10];
	for (int i = 0; i < 10; i++)
		keep[i] = malloc(100);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		if (argc > 1 && strcmp(argv[1], "exec") == 0) {
			free(malloc(2222));
			char *args[] = {"rec_execd", "execd", NULL};
			execv("/proc/self/exe", args);
			_exit(127);
		}
		for (int i = 0; i < 5; i++)
			free(malloc(1234));
		for (int i = 0; i < 10; i++)
			free(keep[i]); /* blocks the parent allocated before the fork */
		exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	free(malloc(4321));
	for (int i = 0; i < 10; i++)
		free(keep[i]);
	printf("child %d status %d\n", (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
