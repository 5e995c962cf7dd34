/*
 * rec_phases — a program whose heap calls come in phases, for the
 * recording-window tests (tests/e2e/rec_windows.sh).
 *
 *   rec_phases SYNCDIR PHASES N THREADS [block] [peak=MIB@K]
 *
 * Writes SYNCDIR/pid, then for each phase k = 0 .. PHASES-1: creates
 * SYNCDIR/ready.k, waits for SYNCDIR/go.k to exist (polling every 5 ms, up
 * to 120 s), lets THREADS worker threads make the phase's heap calls, and
 * writes SYNCDIR/done.k: "calls C older_frees F" — C heap calls in the
 * phase over all threads, F of them frees or reallocs of blocks from the
 * phase before (a window that starts at phase k sees them as blocks it did
 * not see allocated). Then it waits for SYNCDIR/go.exit before it frees
 * what is left and exits. With "block", every signal is blocked in every
 * thread (as servers that sigwait do). With "peak=MIB@K" the main thread
 * touches a block of MIB MiB and frees it before the first phase (glibc
 * maps and unmaps a block that large, so the RSS falls back while the
 * kernel's high-water mark stays), and one of 2 x MIB MiB at the end of
 * phase K (2 calls, counted among its calls): a window over a phase before
 * K lies wholly below the process's high-water mark, one over phase K
 * raises it (SPEC 6.10's peak source).
 *
 * Between phases the program makes no heap call at all: the
 * synchronisation uses only system calls and a barrier (no stdio), so a
 * window opened while it waits holds exactly one phase's calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 16

static const char *dir;
static int nphases, n, nthreads;
static pthread_barrier_t start_bar, end_bar;
static int phase;
static long calls[MAX_THREADS], older[MAX_THREADS];
static void **blocks[MAX_THREADS]; /* this phase's live blocks, per thread */
static void **prev[MAX_THREADS];   /* the phase before's */

static void put_file(const char *name, const char *text)
{
	char path[4096], tmp[4200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		perror(tmp);
		exit(3);
	}
	close(fd);
	if (rename(tmp, path) != 0) {
		perror(path);
		exit(3);
	}
}

static void wait_file(const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	for (int i = 0; i < 24000; i++) {
		if (access(path, F_OK) == 0)
			return;
		struct timespec ts = {0, 5000000};
		nanosleep(&ts, NULL);
	}
	static const char msg[] = "rec_phases: timed out waiting for a go file\n";
	if (write(2, msg, sizeof msg - 1) < 0)
		_exit(4);
	_exit(4);
}

/* One thread's share of a phase: frees (or reallocs, one in four) the
 * blocks of the phase before, then N mallocs, N/4 callocs, N/2 reallocs
 * of its own new blocks. */
static void work(int id)
{
	long c = 0, o = 0;
	void **mine = blocks[id], **old = prev[id];
	int total = n + n / 4;
	if (old) {
		for (int i = 0; i < total; i++) {
			if (i % 4 == 3) {
				void *p = realloc(old[i], 48 + (size_t)i % 200);
				c++, o++;
				free(p);
				c++;
			} else {
				free(old[i]);
				c++, o++;
			}
		}
	}
	for (int i = 0; i < n; i++, c++)
		mine[i] = malloc(16 + (size_t)((i * 37 + phase * 11 + id) % 3000));
	for (int i = 0; i < n / 4; i++, c++)
		mine[n + i] = calloc(4, 8 + (size_t)i % 64);
	for (int i = 0; i < n / 2; i++, c++)
		mine[i] = realloc(mine[i], 32 + (size_t)((i * 13) % 5000));
	calls[id] = c;
	older[id] = o;
	prev[id] = mine; /* the next phase frees these */
	blocks[id] = old ? old : mine + total;
}

/* Make mib MiB resident in one block, then free it: 2 heap calls. */
static void touch_and_free(long mib)
{
	size_t bytes = (size_t)mib << 20;
	char *p = malloc(bytes);
	if (!p) {
		perror("rec_phases: peak block");
		exit(3);
	}
	memset(p, 1, bytes);
	free(p);
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	for (int k = 0; k < nphases; k++) {
		pthread_barrier_wait(&start_bar);
		work(id);
		pthread_barrier_wait(&end_bar);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: rec_phases SYNCDIR PHASES N THREADS [block] [peak=MIB@K]\n");
		return 2;
	}
	dir = argv[1];
	nphases = atoi(argv[2]);
	n = atoi(argv[3]);
	nthreads = atoi(argv[4]);
	if (nphases < 1 || n < 4 || nthreads < 1 || nthreads > MAX_THREADS)
		return 2;
	long peak_mib = 0, peak_phase = -1;
	for (int i = 5; i < argc; i++) {
		if (strcmp(argv[i], "block") == 0) {
			sigset_t all;
			sigfillset(&all);
			sigprocmask(SIG_BLOCK, &all, NULL);
		} else if (strncmp(argv[i], "peak=", 5) == 0) {
			char *at = NULL;
			peak_mib = strtol(argv[i] + 5, &at, 10);
			peak_phase = *at == '@' ? atol(at + 1) : -1;
		}
	}
	if (peak_mib > 0)
		touch_and_free(peak_mib);
	/* Two arrays per thread, swapped each phase (all allocated now,
	 * before phase 0: outside every phase). */
	int total = n + n / 4;
	for (int t = 0; t < nthreads; t++)
		blocks[t] = calloc(2 * (size_t)total, sizeof(void *));
	pthread_barrier_init(&start_bar, NULL, (unsigned)nthreads + 1);
	pthread_barrier_init(&end_bar, NULL, (unsigned)nthreads + 1);
	pthread_t th[MAX_THREADS];
	for (int t = 0; t < nthreads; t++)
		pthread_create(&th[t], NULL, worker, (void *)(long)t);
	char text[256], name[64];
	snprintf(text, sizeof text, "%d\n", (int)getpid());
	put_file("pid", text);
	for (phase = 0; phase < nphases; phase++) {
		snprintf(name, sizeof name, "ready.%d", phase);
		put_file(name, "\n");
		snprintf(name, sizeof name, "go.%d", phase);
		wait_file(name);
		pthread_barrier_wait(&start_bar);
		pthread_barrier_wait(&end_bar);
		long c = 0, o = 0;
		for (int t = 0; t < nthreads; t++)
			c += calls[t], o += older[t];
		if (peak_mib > 0 && phase == peak_phase) {
			touch_and_free(2 * peak_mib);
			c += 2;
		}
		snprintf(text, sizeof text, "calls %ld older_frees %ld\n", c, o);
		snprintf(name, sizeof name, "done.%d", phase);
		put_file(name, text);
	}
	put_file("ready.exit", "\n");
	wait_file("go.exit");
	for (int t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	return 0;
}
