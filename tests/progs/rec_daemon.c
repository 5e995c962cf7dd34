/*
 * rec_daemon — what daemons and pipeline members do to their descriptors
 * and signals, with a known number of heap calls around it, for
 * tests/e2e/rec_daemon_pipes.sh.
 *
 *   rec_daemon closeloop|closerange|cloexec|unshare|closefrom|dup2all|rawclose
 *       the daemon idiom on every descriptor from 3 up to the soft
 *       RLIMIT_NOFILE, then 1000 × (malloc 5555, free); prints what the
 *       program saw (the number the next open got, how many closes
 *       failed), which must not depend on being recorded; rawclose is
 *       close_range through syscall(2), which no preload can intercept
 *   rec_daemon sigpipe N      N × malloc 4242, then writes to stdout until
 *                             SIGPIPE kills it
 *   rec_daemon pipehandler N  the same with its own SIGPIPE handler: it
 *                             must run; exits 3 after EPIPE
 *   rec_daemon usr1|alrm|rt N N × malloc 4242, then dies of SIGUSR1,
 *                             SIGALRM (alarm) or SIGRTMIN+3
 *   rec_daemon emptyenv|clearenv N   re-executes itself as "child N" with
 *                             an empty environment (execve with {NULL},
 *                             or clearenv then execv)
 *   rec_daemon child N        N × malloc 3131
 *   rec_daemon dropuid N      a server's worker: fork; the child at once
 *                             becomes user and group 65534 (as nginx's
 *                             workers become www-data), then N × malloc
 *                             6161; the parent waits and exits with the
 *                             child's status (run as root)
 *   rec_daemon daemonize N    fork, setsid, fork: the grandchild makes N/2 ×
 *                             (malloc 5555, free), closes every descriptor,
 *                             puts /dev/null on 0-2 and makes the other N/2
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/close_range.h>

static void allocs(int n, size_t size)
{
	for (int i = 0; i < n; i++) {
		void *p = malloc(size);
		if (!p)
			exit(9);
		((volatile char *)p)[0] = 1;
	}
}

static int open_max(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur > 65536)
		return 1024;
	return (int)rl.rlim_cur;
}

static void daemon_mode(const char *mode)
{
	int max = open_max(), failed = 0;
	/* The recorder's writer thread reads a few files (the C library, to
	 * prove which object serves malloc; thread names) at its start: a
	 * dup2 onto the number it holds for that moment would be closed
	 * under the program (a known window, docs/RECORDER.md). Let it pass. */
	usleep(300000);
	if (strcmp(mode, "closeloop") == 0) {
		for (int fd = 3; fd < max; fd++)
			failed += close(fd) != 0;
	} else if (strcmp(mode, "closerange") == 0) {
		failed = close_range(3, ~0u, 0) != 0;
	} else if (strcmp(mode, "cloexec") == 0) {
		failed = close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) != 0;
	} else if (strcmp(mode, "unshare") == 0) {
		failed = close_range(3, ~0u, CLOSE_RANGE_UNSHARE) != 0;
	} else if (strcmp(mode, "closefrom") == 0) {
		closefrom(3);
	} else if (strcmp(mode, "rawclose") == 0) {
		/* past every wrapper: the recorder cannot see this one */
		failed = syscall(SYS_close_range, 3u, ~0u, 0) != 0;
	} else if (strcmp(mode, "dup2all") == 0) {
		int null = open("/dev/null", O_WRONLY);
		for (int fd = 3; fd < max; fd++)
			if (fd != null)
				failed += dup2(null, fd) != fd;
		for (int fd = 3; fd < max; fd++)
			failed += close(fd) != 0;
	} else {
		fprintf(stderr, "rec_daemon: unknown mode %s\n", mode);
		exit(2);
	}
	int next = open("/dev/null", O_RDONLY);
	for (int i = 0; i < 1000; i++)
		free(malloc(5555));
	printf("%s: failed closes %d, next open got %d\n", mode, failed, next);
}

static volatile sig_atomic_t handled;
static void on_pipe(int sig)
{
	(void)sig;
	handled++;
}

static void write_until_dead(void)
{
	static char buf[4096];
	memset(buf, 'y', sizeof buf);
	for (;;)
		if (write(1, buf, sizeof buf) < 0)
			return;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *m = argv[1];
	int n = argc > 2 ? atoi(argv[2]) : 0;
	if (strcmp(m, "sigpipe") == 0) {
		allocs(n, 4242);
		write_until_dead();
		return 4; /* not reached: SIGPIPE */
	}
	if (strcmp(m, "pipehandler") == 0) {
		signal(SIGPIPE, on_pipe);
		allocs(n, 4242);
		write_until_dead();
		fprintf(stderr, "rec_daemon: handler ran %d time(s), write failed: %s\n", (int)handled,
			errno == EPIPE ? "EPIPE" : strerror(errno));
		return 3;
	}
	if (strcmp(m, "usr1") == 0 || strcmp(m, "rt") == 0) {
		allocs(n, 4242);
		kill(getpid(), m[0] == 'u' ? SIGUSR1 : SIGRTMIN + 3);
		return 4;
	}
	if (strcmp(m, "alrm") == 0) {
		allocs(n, 4242);
		alarm(1);
		for (;;)
			pause();
	}
	if (strcmp(m, "emptyenv") == 0 || strcmp(m, "clearenv") == 0) {
		char *args[] = {argv[0], "child", argv[2], NULL};
		char *none[] = {NULL};
		if (m[0] == 'e') {
			execve("/proc/self/exe", args, none);
		} else {
			clearenv();
			execv("/proc/self/exe", args);
		}
		return 5;
	}
	if (strcmp(m, "dropuid") == 0) {
		pid_t c = fork();
		if (c < 0)
			return 6;
		if (c == 0) {
			if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
				_exit(7);
			allocs(n, 6161);
			_exit(0);
		}
		int st;
		if (waitpid(c, &st, 0) != c || !WIFEXITED(st))
			return 8;
		return WEXITSTATUS(st);
	}
	if (strcmp(m, "daemonize") == 0) {
		/* the classic double fork: the grandchild is the daemon */
		if (fork() != 0)
			_exit(0);
		setsid();
		if (fork() != 0)
			_exit(0);
		/* half before, and time for the recorder's flush to open this
		 * process's trace, so that the close loop meets it */
		for (int i = 0; i < n / 2; i++)
			free(malloc(5555));
		usleep(500000);
		int max = open_max();
		for (int fd = 3; fd < max; fd++)
			close(fd);
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
		for (int i = n / 2; i < n; i++)
			free(malloc(5555));
		return 0;
	}
	if (strcmp(m, "child") == 0) {
		allocs(n, 3131);
		printf("child: %d allocations, environment %s\n", n, getenv("REC_TEST_MARK") ? "kept" : "empty");
		return 0;
	}
	daemon_mode(m);
	return 0;
}
