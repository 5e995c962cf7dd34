/*
 * rec_fork — fork without exec, and fork + exec.
 *   rec_fork fork   parent allocates, forks; the child allocates 5 x 1234
 *                   bytes and exits; the parent waits, allocates 4321.
 *   rec_fork exec   the child allocates 2222 then execs this program as
 *                   "rec_execd" (argv[0]), which allocates 3 x 5555.
 * Prints "child PID" so the test can find the child's traces.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
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
