/*
 * torture_fork WORKERS FORKERS FORKS [cold] — fork storm from a
 * multi-threaded parent (tests/e2e/torture_rec_fork.sh).
 *
 * WORKERS threads run tt_mix without pause while FORKERS threads (the main
 * thread among them) fork FORKS children in total, as fast as they can: a
 * fork lands while other threads are anywhere in the recorder or in glibc.
 * With "cold", each worker instead starts one short-lived thread after
 * another, and each of those runs one tt_mix at the bottom of a 40-deep
 * chain of distinct functions: under --stacks every such thread unwinds
 * frames it has never seen, more than libunwind's global cache holds, so
 * forks keep landing while a worker is inside libunwind and the loader
 * holding their locks (the window in which a child used to hang).
 * Child number k (0-based, global) does k % 5 + 1 mallocs of worker
 * sequence 0 (each freed), and when k % 3 == 0 also starts a thread that
 * runs k % 4 + 1 iterations of tt_mix; it ends with exit(0) when k is even
 * and _exit(0) when odd.
 *
 * A child is "hung" when it stops making progress, whatever the clock says
 * (a loaded machine may keep a healthy child waiting for a core a long
 * time, but it is then runnable or getting CPU): every second its threads
 * are sampled, and HUNG_IDLE_S seconds in which none of them (the
 * recorder's writer, which wakes on a timer, left aside) was runnable or
 * ran at all means each waits for something that will not come. A child
 * still alive after TIMEOUT_S seconds (slow, or spinning) is given up as
 * "timeout", the last resort that keeps the test finite; it is no verdict
 * on speed, only on a child that never ends. Before either is killed, its
 * state goes to stuck.PID.txt in the current directory: every thread's
 * state, kernel wait channel and scheduler counts, and a gdb backtrace of
 * every thread where gdb is installed and allowed to attach.
 *
 * Output (after everything is done; the children print nothing): the
 * parent's tt_mix counts ("op NAME N"), one line per child
 * "child PID seq S mix M status ST" (ST: exit status, "hung", "timeout"
 * or "signal N"), then "info hung N" and "info timeout N".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "torture.h"

#define HUNG_IDLE_S 30
#define TIMEOUT_S 300 /* tests/run.sh gives a whole script 600 s */

extern char **environ;

static tt_counts_t counts;
static _Atomic int stop;
static _Atomic unsigned next_child;
static unsigned total_forks;
static int cold;

enum { ST_HUNG = -1, ST_TIMEOUT = -4 };
typedef struct {
	pid_t pid;
	unsigned seq, mix;
	int status; /* >= 0 exit status, ST_HUNG, ST_TIMEOUT, -100-N signal N */
} child_t;
static child_t *kids;

/* ---- cold stacks: 48 distinct functions, chained in an order that depends
 * on the iteration, so the frames above a tt_mix call keep changing. ---- */
#define NLINKS 48
typedef void (*link_fn)(unsigned depth, unsigned i);
static const link_fn links[NLINKS];
#define LINK(n)                                                                  \
	__attribute__((noinline)) static void link##n(unsigned depth, unsigned i) \
	{                                                                        \
		if (depth == 0)                                                  \
			tt_mix(i, &counts);                                      \
		else                                                             \
			links[(n##u + 1 + i) % NLINKS](depth - 1, i);            \
		__asm__ volatile("" ::: "memory"); /* not a tail call: keep the frame */ \
	}
#define LINK8(a) LINK(a##0) LINK(a##1) LINK(a##2) LINK(a##3) LINK(a##4) LINK(a##5) LINK(a##6) LINK(a##7)
LINK8(1) LINK8(2) LINK8(3) LINK8(4) LINK8(5) LINK8(6)
#define NAME8(a) link##a##0, link##a##1, link##a##2, link##a##3, link##a##4, link##a##5, link##a##6, link##a##7
static const link_fn links[NLINKS] = {NAME8(1), NAME8(2), NAME8(3), NAME8(4), NAME8(5), NAME8(6)};

static void *cold_mix(void *arg)
{
	unsigned i = (unsigned)(uintptr_t)arg;
	links[i % NLINKS](40, i);
	return NULL;
}

static void *worker(void *arg)
{
	(void)arg;
	for (unsigned i = 0; !atomic_load_explicit(&stop, memory_order_relaxed); i++) {
		if (!cold) {
			tt_mix(i, &counts);
			continue;
		}
		pthread_t t;
		if (pthread_create(&t, NULL, cold_mix, (void *)(uintptr_t)i) == 0)
			pthread_join(t, NULL);
	}
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

/* ---- watching a child --------------------------------------------------------- */
/* What one look at a child's threads found. */
typedef struct {
	unsigned long long slices; /* times its threads were scheduled in, writer aside */
	int runnable;              /* a thread (writer aside) is running, runnable or in I/O */
} look_t;

static int read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n > 0 ? 0 : -1;
}

/* The state letter of /proc/.../stat (after the parenthesised name). */
static char stat_state(const char *stat)
{
	const char *p = strrchr(stat, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

static look_t look(pid_t pid)
{
	look_t l = {0, 0};
	char dir[64], path[128], buf[512];
	snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
	DIR *d = opendir(dir);
	if (!d) {
		l.runnable = 1; /* cannot tell: never call it hung */
		return l;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s/comm", dir, e->d_name);
		if (read_small(path, buf, sizeof buf) == 0 && strncmp(buf, "allocrr-writer", 14) == 0)
			continue; /* wakes on a timer even when everything else is stuck */
		snprintf(path, sizeof path, "%s/%s/stat", dir, e->d_name);
		if (read_small(path, buf, sizeof buf) == 0) {
			char st = stat_state(buf);
			if (st == 'R' || st == 'D')
				l.runnable = 1;
		}
		snprintf(path, sizeof path, "%s/%s/schedstat", dir, e->d_name);
		unsigned long long run, wait, slices;
		if (read_small(path, buf, sizeof buf) == 0 && sscanf(buf, "%llu %llu %llu", &run, &wait, &slices) == 3)
			l.slices += slices;
		else
			l.runnable = 1; /* no scheduler counts here: only the last resort applies */
	}
	closedir(d);
	return l;
}

static void copy_file(FILE *out, const char *label, const char *path)
{
	char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	fprintf(out, "  %s: %s%s", label, buf, buf[n - 1] == '\n' ? "" : "\n");
}

/* gdb, unrecorded (no LD_PRELOAD), bounded by timeout(1), appending to path. */
static void gdb_backtrace(pid_t pid, const char *path)
{
	char pids[16];
	snprintf(pids, sizeof pids, "%d", (int)pid);
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 1, sizeof *env);
	if (!env)
		return;
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 && strncmp(environ[i], "ALLOCRR_", 8) != 0)
			env[m++] = environ[i];
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, path, O_WRONLY | O_APPEND, 0);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	char *argv[] = {"timeout", "-k", "5", "60", "gdb", "-p", pids, "-batch", "-ex", "thread apply all bt", NULL};
	pid_t g;
	if (posix_spawnp(&g, "timeout", &fa, NULL, argv, env) == 0) {
		int st;
		while (waitpid(g, &st, 0) < 0 && errno == EINTR)
			;
	}
	posix_spawn_file_actions_destroy(&fa);
	free(env);
}

/* What a stuck child was doing, to stuck.PID.txt, before it is killed. */
static void record_stuck(pid_t pid, const char *verdict, unsigned alive_s, unsigned idle_s)
{
	char path[64], dir[64], p[128];
	snprintf(path, sizeof path, "stuck.%d.txt", (int)pid);
	FILE *out = fopen(path, "w");
	if (!out)
		return;
	fprintf(out, "child %d %s: alive %u s, no thread (writer aside) ran or was runnable for the last %u s\n",
		(int)pid, verdict, alive_s, idle_s);
	snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		fprintf(out, "thread %s\n", e->d_name);
		snprintf(p, sizeof p, "%s/%s/comm", dir, e->d_name);
		copy_file(out, "comm", p);
		snprintf(p, sizeof p, "%s/%s/stat", dir, e->d_name);
		copy_file(out, "stat", p);
		snprintf(p, sizeof p, "%s/%s/wchan", dir, e->d_name);
		copy_file(out, "wchan", p);
		snprintf(p, sizeof p, "%s/%s/schedstat", dir, e->d_name);
		copy_file(out, "schedstat (run ns, wait ns, slices)", p);
		snprintf(p, sizeof p, "%s/%s/stack", dir, e->d_name);
		copy_file(out, "kernel stack", p);
	}
	if (d)
		closedir(d);
	fprintf(out, "gdb:\n");
	fclose(out);
	gdb_backtrace(pid, path);
}

static uint64_t now_s(void)
{
	return tt_mono_ns() / 1000000000u;
}

/* Waits for the child; never calls a slow child hung (see the top). */
static int wait_child(pid_t pid)
{
	int st;
	uint64_t start = now_s(), last_look = start, last_progress = start;
	look_t prev = {0, 1};
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -100 - WTERMSIG(st);
		if (r < 0 && errno != EINTR)
			return -2;
		usleep(1000);
		uint64_t now = now_s();
		if (now == last_look)
			continue;
		last_look = now;
		look_t l = look(pid);
		if (l.runnable || l.slices != prev.slices)
			last_progress = now;
		prev = l;
		int verdict = now - last_progress >= HUNG_IDLE_S ? ST_HUNG : now - start >= TIMEOUT_S ? ST_TIMEOUT : 0;
		if (!verdict)
			continue;
		record_stuck(pid, verdict == ST_HUNG ? "hung" : "timeout", (unsigned)(now - start),
			     (unsigned)(now - last_progress));
		kill(pid, SIGKILL);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		return verdict;
	}
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
	if (argc < 4 || (argc > 4 && strcmp(argv[4], "cold") != 0)) {
		fprintf(stderr, "usage: torture_fork WORKERS FORKERS FORKS [cold]\n");
		return 2;
	}
	unsigned nw = (unsigned)atoi(argv[1]), nf = (unsigned)atoi(argv[2]);
	total_forks = (unsigned)atoi(argv[3]);
	cold = argc > 4;
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
	unsigned hung = 0, timeout = 0;
	for (unsigned k = 0; k < total_forks; k++) {
		printf("child %d seq %u mix %u status ", (int)kids[k].pid, kids[k].seq, kids[k].mix);
		if (kids[k].status >= 0)
			printf("%d\n", kids[k].status);
		else if (kids[k].status == ST_HUNG)
			printf("hung\n"), hung++;
		else if (kids[k].status == ST_TIMEOUT)
			printf("timeout\n"), timeout++;
		else if (kids[k].status <= -100)
			printf("signal %d\n", -100 - kids[k].status);
		else
			printf("error\n");
	}
	printf("info hung %u\n", hung);
	printf("info timeout %u\n", timeout);
	free(kids);
	return 0;
}
