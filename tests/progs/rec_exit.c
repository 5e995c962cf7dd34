/*
 * rec_exit MODE — ending without the usual exit path, after 500
 * allocations of 7777 bytes:
 *   _exit      _exit(5): no atexit handlers, no destructors
 *   thread     a second thread calls exit(4) while main waits in pthread_join
 *   terminated N children, one after another, each _exit(0)s as the
 *              parent sends it SIGTERM (a process pool's terminate(): the
 *              signal lands before, during or after the child's _exit);
 *              exit 0 if every child exited 0 or died of SIGTERM
 *   started N  N children, one after another, each sent SIGTERM 1-3 ms
 *              after its fork (while the recorder opens its trace, or
 *              later, as it allocates); exit 0 if every child died of it
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void spin_us(long us)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static int terminated(int n)
{
	unsigned lcg = 12345; /* the same spread of delays in every run */
	int bad = 0;
	for (int i = 0; i < n; i++) {
		int ready[2];
		if (pipe(ready) != 0)
			return 2;
		pid_t pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0) {
			for (int k = 0; k < 500; k++)
				malloc(7777);
			if (write(ready[1], "r", 1) != 1)
				_exit(3);
			_exit(0);
		}
		char c;
		if (read(ready[0], &c, 1) != 1)
			bad++;
		close(ready[0]);
		close(ready[1]);
		lcg = lcg * 1103515245u + 12345u;
		spin_us((long)(lcg >> 16) % 400); /* the child's close takes about this long */
		kill(pid, SIGTERM);
		int st;
		if (waitpid(pid, &st, 0) != pid ||
		    !((WIFEXITED(st) && WEXITSTATUS(st) == 0) || (WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM)))
			bad++;
	}
	return bad != 0;
}

static int started(int n)
{
	unsigned lcg = 54321;
	int bad = 0;
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0)
			for (;;) {
				free(malloc(100));
				usleep(1000);
			}
		lcg = lcg * 1103515245u + 12345u;
		spin_us(1000 + (long)(lcg >> 16) % 2000); /* the child opens its trace about then */
		kill(pid, SIGTERM);
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFSIGNALED(st) || WTERMSIG(st) != SIGTERM)
			bad++;
	}
	return bad != 0;
}

static void *quitter(void *arg)
{
	(void)arg;
	free(malloc(99));
	exit(4);
}

int main(int argc, char **argv)
{
	for (int i = 0; i < 500; i++)
		malloc(7777);
	if (argc > 1 && strcmp(argv[1], "thread") == 0) {
		pthread_t t;
		pthread_create(&t, NULL, quitter, NULL);
		pthread_join(t, NULL);
		return 1;
	}
	if (argc > 2 && strcmp(argv[1], "terminated") == 0)
		return terminated(atoi(argv[2]));
	if (argc > 2 && strcmp(argv[1], "started") == 0)
		return started(atoi(argv[2]));
	_exit(5);
}
