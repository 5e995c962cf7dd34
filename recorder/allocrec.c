/*
 * allocrec — run a program with the recorder shim preloaded and report the
 * traces it wrote.
 *
 *   allocrec [-o FILE] [--stacks[=DEPTH]] [--no-follow] [--level N] [-q] [--] PROG ARGS...
 *
 * Exit status is PROG's (128+signal if it died of one; 127 if it could not
 * be started), so allocrec can stand in for PROG in scripts. The shim learns
 * its options from ALLOCRR_* variables; every process image that records
 * appends its trace path to a manifest file, which is how we find the traces
 * of forked and exec'ed descendants. One summary line per trace goes to
 * stderr, prefixed "allocrec: ".
 *
 * Invariants: the program's environment differs from the caller's only by
 * LD_PRELOAD (shim first, an existing value kept after it) and ALLOCRR_*;
 * SIGINT/SIGQUIT are ignored here while the program runs (like system(3)),
 * SIGTERM/SIGHUP are forwarded to it.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ar_trace.h"

static pid_t child;

static void usage(FILE *f)
{
	fprintf(f, "usage: allocrec [-o FILE] [--stacks[=DEPTH]] [--no-follow] [--level N] [-q] [--] PROG ARGS...\n"
		   "  -o FILE          trace of PROG (%%p = pid); default ./PROG.PID.zst\n"
		   "  --stacks[=N]     record call stacks, N frames deep (default 32)\n"
		   "  --no-follow      do not record programs PROG exec()s\n"
		   "  --level N        zstd level of the trace (default 3)\n"
		   "  -q               no summary lines\n"
		   "Forked and exec'ed children write PROG.CHILDPID.zst next to the trace.\n");
}

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

/* The shim next to us (build tree: bin/../lib, install: bin/../lib/allocrr). */
static int find_shim(char *out, size_t cap)
{
	const char *env = getenv("ALLOCRR_SHIM");
	if (env && *env) {
		snprintf(out, cap, "%s", env);
		return access(out, R_OK) == 0 ? 0 : -1;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *dir = dirname(exe);
	const char *cands[] = {"%s/../lib/liballocrr-rec.so", "%s/../lib/allocrr/liballocrr-rec.so"};
	for (size_t i = 0; i < 2; i++) {
		char p[PATH_MAX + 64];
		snprintf(p, sizeof p, cands[i], dir);
		char *r = realpath(p, NULL);
		if (r && access(r, R_OK) == 0) {
			snprintf(out, cap, "%s", r);
			free(r);
			return 0;
		}
		free(r);
	}
	return -1;
}

/* One line per trace: path, events, threads, bytes, bytes/event. */
static void report(const char *path)
{
	ar_reader_t *r;
	ar_error_t err;
	if (ar_reader_open(&r, path, &err) != 0) {
		fprintf(stderr, "allocrec: %s: unreadable: %s\n", path, err.msg);
		return;
	}
	const ar_footer_t *f = ar_reader_footer(r);
	uint64_t events = f ? f->events : ar_reader_event_count(r);
	uint64_t bytes = ar_reader_file_size(r);
	ar_status_t st = ar_reader_status(r);
	fprintf(stderr, "allocrec: %s: %llu events, %u threads, %llu bytes, %.2f bytes/event%s\n", path,
		(unsigned long long)events, ar_reader_thread_count(r), (unsigned long long)bytes,
		events ? (double)bytes / (double)events : 0.0,
		st == AR_STATUS_COMPLETE ? "" : st == AR_STATUS_TRUNCATED ? " (truncated)" : " (corrupt)");
	if (f && f->dropped_events)
		fprintf(stderr, "allocrec: %s: %llu events could not be recorded\n", path,
			(unsigned long long)f->dropped_events);
	ar_reader_close(r);
}

int main(int argc, char **argv)
{
	const char *output = NULL;
	int stacks = 0, follow = 1, level = 3, quiet = 0;
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'}, {"stacks", optional_argument, NULL, 's'},
		{"no-follow", no_argument, NULL, 'n'},    {"level", required_argument, NULL, 'l'},
		{"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "+o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 's':
			stacks = optarg ? atoi(optarg) : 32;
			if (stacks < 1 || stacks > AR_STACK_MAX_DEPTH) {
				fprintf(stderr, "allocrec: --stacks depth must be 1..%d\n", AR_STACK_MAX_DEPTH);
				return 1;
			}
			break;
		case 'n':
			follow = 0;
			break;
		case 'l':
			level = atoi(optarg);
			if (level < 1 || level > 19) {
				fprintf(stderr, "allocrec: --level must be 1..19\n");
				return 1;
			}
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 1;
	}
	char shim[PATH_MAX];
	if (find_shim(shim, sizeof shim) != 0) {
		fprintf(stderr, "allocrec: cannot find liballocrr-rec.so next to allocrec; set ALLOCRR_SHIM=/path/to/it\n");
		return 2;
	}

	/* Environment for the program. */
	const char *old = getenv("LD_PRELOAD");
	size_t n = strlen(shim) + (old ? strlen(old) : 0) + 2;
	char *pre = malloc(n);
	snprintf(pre, n, "%s%s%s", shim, old && *old ? " " : "", old ? old : "");
	setenv("LD_PRELOAD", pre, 1);
	char dir[PATH_MAX];
	if (output) {
		char tmp[PATH_MAX];
		snprintf(tmp, sizeof tmp, "%s", output);
		char *d = dirname(tmp);
		if (!realpath(d, dir)) {
			fprintf(stderr, "allocrec: output directory %s: %s\n", d, strerror(errno));
			return 2;
		}
		setenv("ALLOCRR_OUTPUT", output, 1);
	} else {
		if (!getcwd(dir, sizeof dir)) {
			fprintf(stderr, "allocrec: getcwd: %s\n", strerror(errno));
			return 2;
		}
		unsetenv("ALLOCRR_OUTPUT");
	}
	setenv("ALLOCRR_DIR", dir, 1);
	char num[32];
	snprintf(num, sizeof num, "%d", stacks);
	setenv("ALLOCRR_STACKS", num, 1);
	setenv("ALLOCRR_FOLLOW", follow ? "1" : "0", 1);
	snprintf(num, sizeof num, "%d", level);
	setenv("ALLOCRR_LEVEL", num, 1);
	char manifest[] = "/tmp/allocrec-manifest.XXXXXX";
	int mfd = mkstemp(manifest);
	if (mfd < 0) {
		fprintf(stderr, "allocrec: cannot create a temporary file in /tmp: %s\n", strerror(errno));
		return 2;
	}
	close(mfd);
	setenv("ALLOCRR_MANIFEST", manifest, 1);

	struct sigaction ign = {.sa_handler = SIG_IGN}, fwd = {.sa_handler = forward}, oint, oquit;
	sigemptyset(&ign.sa_mask);
	sigemptyset(&fwd.sa_mask);
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	sigaction(SIGTERM, &fwd, NULL);
	sigaction(SIGHUP, &fwd, NULL);
	child = fork();
	if (child < 0) {
		fprintf(stderr, "allocrec: fork: %s\n", strerror(errno));
		unlink(manifest);
		return 2;
	}
	if (child == 0) {
		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGQUIT, &oquit, NULL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "allocrec: cannot run %s: %s\n", argv[optind], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	int status = 0;
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	int rc = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 2;

	FILE *m = fopen(manifest, "r");
	if (m && !quiet) {
		char line[PATH_MAX + 8];
		static char seen[64][PATH_MAX + 8];
		int nseen = 0;
		while (fgets(line, sizeof line, m)) {
			line[strcspn(line, "\n")] = 0;
			int dup = 0;
			for (int i = 0; i < nseen && !dup; i++)
				dup = strcmp(seen[i], line) == 0;
			if (dup || !line[0])
				continue;
			if (nseen < 64)
				snprintf(seen[nseen++], sizeof seen[0], "%s", line);
			report(line);
		}
	}
	if (m)
		fclose(m);
	unlink(manifest);
	free(pre);
	return rc;
}
