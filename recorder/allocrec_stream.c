/*
 * allocrec_stream.c — allocrec's side of streaming a trace to another
 * process: `allocrec -o - PROG | zstd …`, `allocrec -o FIFO PROG`.
 *
 * allocrec opens the stream and the shim in PROG's first image inherits
 * it (ALLOCRR_STREAM_FD): a FIFO opened twice would show its reader an
 * end of file in between, and a FIFO opened by the shim could not be
 * refused before PROG runs. The shim moves the descriptor out of the
 * program's way and makes it close-on-exec, so only the first image
 * streams; forked children and exec'ed images write PROG.PID.zst files as
 * usual (two traces cannot share one stream). allocrec cannot read a
 * stream back, so the shim leaves its totals in a file
 * (ALLOCRR_STREAM_STATS) for the summary.
 *
 * Invariants: with -o -, nothing but the trace reaches allocrec's
 * standard output (PROG's own goes to standard error, said once); allocrec
 * holds no copy of the stream while PROG runs, so the reader sees its end
 * when the recorder closes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allocrec_stream.h"
#include "ar_cli.h"
#include "ar_escape.h"
#include "ar_trace.h"

static int stream_fd = -1;   /* the inherited descriptor, -1: no stream */
static int to_stdout;        /* -o - */
static const char *name;     /* the FIFO's path as given */
static char stats[] = "/tmp/allocrec-stream.XXXXXX";
static int have_stats;

static void remove_stats(void)
{
	if (have_stats)
		unlink(stats);
	have_stats = 0;
}

/* The descriptor fd, duplicated to a number >= 3 that exec keeps open
 * (PROG's shim takes it), blocking. -1 with errno on failure. */
static int inheritable(int fd)
{
	int d = fcntl(fd, F_DUPFD, 3);
	if (d < 0)
		return -1;
	int fl = fcntl(d, F_GETFL);
	if (fl >= 0 && (fl & O_NONBLOCK))
		fcntl(d, F_SETFL, fl & ~O_NONBLOCK);
	return d;
}

int allocrec_stream_open(const char *output, int quiet)
{
	unsetenv("ALLOCRR_STREAM_FD");
	unsetenv("ALLOCRR_STREAM_STATS");
	struct stat st;
	if (!output)
		return -1;
	if (ar_cli_is_stdio(output)) {
		if (isatty(1))
			return ar_cli_usage_error("-o - writes the trace to standard output, which is a terminal: pipe it "
						  "(allocrec -o - PROG | ssh HOST 'cat > t.zst') or name a file");
		if (fstat(1, &st) != 0 || (stream_fd = inheritable(1)) < 0)
			return ar_cli_error(NULL, "-o -: cannot use standard output: %s", strerror(errno));
		to_stdout = 1;
	} else {
		if (lstat(output, &st) != 0 || !S_ISFIFO(st.st_mode))
			return -1;
		/* O_NONBLOCK: fails with ENXIO rather than waiting for a reader. */
		int fd = open(output, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 && errno == ENXIO)
			return ar_cli_error(output, "no process reads this FIFO, so the trace could not go anywhere: "
					    "start its reader first (e.g. cat %s > t.zst &), then allocrec", output);
		if (fd < 0)
			return ar_cli_error(output, "cannot open the FIFO for writing: %s", strerror(errno));
		stream_fd = inheritable(fd);
		int e = errno;
		close(fd);
		if (stream_fd < 0)
			return ar_cli_error(output, "cannot pass the FIFO on: %s", strerror(e));
		name = output;
	}
	int sfd = mkstemp(stats);
	if (sfd < 0)
		return ar_cli_error("/tmp", "cannot create the stream's summary file: %s", strerror(errno));
	close(sfd);
	have_stats = 1;
	atexit(remove_stats);
	char num[32];
	snprintf(num, sizeof num, "%d", stream_fd);
	setenv("ALLOCRR_STREAM_FD", num, 1);
	setenv("ALLOCRR_STREAM_STATS", stats, 1);
	if (to_stdout && !quiet)
		fprintf(stderr, "%s: -o -: the trace goes to standard output; the program's own standard output "
			"goes to standard error\n", ar_cli_tool());
	return 0;
}

void allocrec_stream_child(void)
{
	if (to_stdout)
		dup2(2, 1);
}

void allocrec_stream_parent(void)
{
	if (stream_fd < 0)
		return;
	close(stream_fd);
	if (to_stdout) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, 1);
			close(null);
		}
	}
}

/* "allocrec: NAME: " */
static void lead(void)
{
	fprintf(stderr, "%s: ", ar_cli_tool());
	if (to_stdout)
		fputs("(standard output)", stderr);
	else
		ar_esc_term(stderr, name);
	fputs(": ", stderr);
}

void allocrec_stream_report(int quiet)
{
	if (stream_fd < 0 || quiet) {
		remove_stats();
		return;
	}
	unsigned long long ev = 0, th = 0, bytes = 0, dropped = 0, after = 0;
	int complete = 0, stop = 0;
	FILE *f = fopen(stats, "r");
	int n = f ? fscanf(f, "events %llu threads %llu bytes %llu dropped %llu complete %d after_stop %llu stop %d",
			   &ev, &th, &bytes, &dropped, &complete, &after, &stop)
		  : 0;
	if (f)
		fclose(f);
	remove_stats();
	lead();
	if (n != 7) {
		fputs("the recorder did not close the stream (the allocrr message above says why); its reader holds a "
		      "truncated trace, or none\n", stderr);
		return;
	}
	fprintf(stderr, "%llu events, %llu threads, %llu bytes streamed, %.2f bytes/event%s\n", ev, th, bytes,
		ev ? (double)bytes / (double)ev : 0.0, complete ? "" : " (no footer: truncated)");
	if (dropped) {
		lead();
		fprintf(stderr, "%llu events could not be recorded: the stream's reader was slower than the program, "
			"which never waits for it (docs/RECORDER.md, Streaming)\n", dropped);
	}
	if (stop) {
		lead();
		fprintf(stderr, "stopped at its %s limit; %llu heap calls after that were not recorded (the stream "
			"ended at the stop: its footer says 0)\n", stop == AR_STOP_MAX_SIZE ? "--max-size" : "--duration", after);
	}
}
