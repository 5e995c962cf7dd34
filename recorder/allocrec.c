/*
 * allocrec — run a program with the recorder shim preloaded and report the
 * traces it wrote.
 *
 *   allocrec [-o FILE] [--stacks[=DEPTH]] [--no-follow] [--level N] [-q] [--] PROG ARGS...
 *
 * Exit status is PROG's (128+signal if it died of one; 127 if it could not
 * be found, 126 if it could not be run), so allocrec can stand in for PROG
 * in scripts; 1 for a usage error and 2 when allocrec fails before PROG
 * starts. The shim learns its options from ALLOCRR_* variables; every
 * process image that records appends its trace path to a manifest file,
 * which is how we find the traces of forked and exec'ed descendants. One
 * summary line per trace, then one line naming the next command to run, go
 * to stderr, prefixed "allocrec: " (none with -q).
 *
 * Invariants: the program's environment differs from the caller's only by
 * LD_PRELOAD (shim first, an existing value kept after it) and ALLOCRR_*;
 * SIGINT/SIGQUIT are ignored here while the program runs (like system(3)),
 * SIGTERM/SIGHUP are forwarded to it; option parsing stops at PROG, so its
 * own options are never ours.
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

#include "ar_cli.h"
#include "ar_trace.h"

#define MAX_TRACES 64      /* traces one run reports (a fork bomb writes more) */
#define NEXT_LISTED 4      /* traces the "next:" line names before abridging */

/* What the command line asks for. */
typedef struct rec_opts {
	const char *output; /* -o, NULL: the shim's default ./PROG.PID.zst */
	int stacks, follow, level, quiet;
	char **prog;        /* PROG ARGS..., NULL-terminated */
} rec_opts_t;

/* The traces one run wrote, each once, in the order the manifest lists them. */
typedef struct rec_traces {
	char path[MAX_TRACES][PATH_MAX + 8];
	int readable[MAX_TRACES];
	int n;
} rec_traces_t;

static pid_t child;

static void usage(void)
{
	printf("Usage: allocrec [OPTION]... [--] PROG [ARG]...\n"
	       "Run PROG with the allocrr recorder preloaded and write every heap call it makes\n"
	       "(malloc, calloc, realloc, reallocarray, free, posix_memalign, aligned_alloc,\n"
	       "memalign, valloc, pvalloc) to a trace. Forked and exec'ed children each write\n"
	       "their own trace, PROG.CHILDPID.zst, next to it. When PROG ends, one line per\n"
	       "trace (events, threads, bytes) and the command to run next go to standard\n"
	       "error: \"allocrec: next: allocreplay FILE --all (or: alloctrace stats FILE)\".\n"
	       "\n"
	       "Options:\n"
	       "  -o, --output=FILE   the trace of PROG (%%p = its pid); default ./PROG.PID.zst.\n"
	       "                      Not '-': PROG's own output goes to standard output\n"
	       "      --stacks[=N]    record call stacks, N frames deep (default 32, 1..%d)\n"
	       "      --no-follow     do not record the programs PROG exec()s\n"
	       "      --level=N       zstd level of the trace, 1..19 (default 3)\n"
	       "  -q, --quiet         print neither the summary lines nor the next command\n"
	       "  -h, --help          display this help and exit\n"
	       "      --version       output version information and exit\n"
	       "\n"
	       "Exit status:\n"
	       " PROG's own; 128+N if it died of signal N; 127 if PROG was not found, 126 if\n"
	       " it could not be run; 1 for a usage error; 2 if allocrec failed before\n"
	       " starting PROG.\n"
	       "\n"
	       "See docs/RECORDER.md.\n",
	       AR_STACK_MAX_DEPTH);
}

/* Parse s as a whole decimal number in lo..hi into *out; -1 if it is not. */
static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

enum { OPT_STACKS = 256, OPT_NO_FOLLOW, OPT_LEVEL, OPT_VERSION };

/* Fill o from argv. Returns -1 to go on and record, or the exit status
 * (--help, --version, a usage error). */
static int parse_args(int argc, char **argv, rec_opts_t *o)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},      {"stacks", optional_argument, NULL, OPT_STACKS},
		{"no-follow", no_argument, NULL, OPT_NO_FOLLOW}, {"level", required_argument, NULL, OPT_LEVEL},
		{"quiet", no_argument, NULL, 'q'},             {"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},   {NULL, 0, NULL, 0}};
	*o = (rec_opts_t){.follow = 1, .level = 3};
	int c;
	/* '+': stop at PROG, whose options are its own; ':': we say what is wrong. */
	while ((c = getopt_long(argc, argv, "+:o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case OPT_STACKS:
			o->stacks = 32;
			if (optarg && parse_int(optarg, 1, AR_STACK_MAX_DEPTH, &o->stacks) != 0)
				return ar_cli_usage_error("--stacks depth must be 1..%d, not '%s'", AR_STACK_MAX_DEPTH,
							  optarg);
			break;
		case OPT_NO_FOLLOW:
			o->follow = 0;
			break;
		case OPT_LEVEL:
			if (parse_int(optarg, 1, 19, &o->level) != 0)
				return ar_cli_usage_error("--level must be 1..19, not '%s'", optarg);
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			usage();
			return AR_EXIT_OK;
		case OPT_VERSION:
			return ar_cli_version();
		default:
			return ar_cli_bad_option(c, argv);
		}
	}
	if (optind >= argc)
		return ar_cli_usage_error("missing PROG, the program to record (allocrec [OPTION]... PROG [ARG]...)");
	o->prog = argv + optind;
	/* The shim writes its trace from inside PROG, whose own output is
	 * what standard output carries: the two cannot share it. */
	if (o->output && ar_cli_is_stdio(o->output)) {
		char name[256];
		snprintf(name, sizeof name, "%s", o->prog[0]);
		return ar_cli_usage_error("cannot write the trace to standard output: the recorder does not stream to "
					  "a pipe, and %s's own output goes there; name a file, e.g. -o %s.zst",
					  o->prog[0], basename(name));
	}
	return -1;
}

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

/* The shim next to us (build tree: bin/../lib, install: bin/../lib/allocrr),
 * or the one ALLOCRR_SHIM names. Returns 0, or 2 with the message printed. */
static int find_shim(char *out, size_t cap)
{
	const char *env = getenv("ALLOCRR_SHIM");
	if (env && *env) {
		snprintf(out, cap, "%s", env);
		if (access(out, R_OK) == 0)
			return 0;
		return ar_cli_error(env, "%s (ALLOCRR_SHIM names the recorder's liballocrr-rec.so)", strerror(errno));
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		char *dir = dirname(exe);
		const char *cands[] = {"%s/../lib/liballocrr-rec.so", "%s/../lib/allocrr/liballocrr-rec.so"};
		for (size_t i = 0; i < 2; i++) {
			char p[PATH_MAX + 64];
			snprintf(p, sizeof p, cands[i], dir);
			char *r = realpath(p, NULL);
			int found = r && access(r, R_OK) == 0;
			if (found)
				snprintf(out, cap, "%s", r);
			free(r);
			if (found)
				return 0;
		}
	}
	return ar_cli_error(NULL, "cannot find liballocrr-rec.so next to allocrec; set ALLOCRR_SHIM=/path/to/it");
}

/* LD_PRELOAD = the shim, then what the caller preloaded. */
static int set_preload(const char *shim)
{
	const char *old = getenv("LD_PRELOAD");
	size_t n = strlen(shim) + (old ? strlen(old) : 0) + 2;
	char *pre = malloc(n);
	if (!pre)
		return ar_cli_error(NULL, "out of memory");
	snprintf(pre, n, "%s%s%s", shim, old && *old ? " " : "", old ? old : "");
	setenv("LD_PRELOAD", pre, 1);
	free(pre);
	return 0;
}

/* ALLOCRR_OUTPUT and ALLOCRR_DIR: where the first image and its
 * descendants write. Returns 0, or 2 with the message printed. */
static int set_output(const char *output)
{
	char dir[PATH_MAX];
	if (output) {
		char tmp[PATH_MAX];
		snprintf(tmp, sizeof tmp, "%s", output);
		char *d = dirname(tmp);
		if (!realpath(d, dir))
			return ar_cli_error(d, "%s (the output directory of -o %s must exist)", strerror(errno), output);
		setenv("ALLOCRR_OUTPUT", output, 1);
	} else {
		if (!getcwd(dir, sizeof dir))
			return ar_cli_error(NULL, "cannot name the current directory: %s", strerror(errno));
		unsetenv("ALLOCRR_OUTPUT");
	}
	setenv("ALLOCRR_DIR", dir, 1);
	return 0;
}

/* The environment the shim reads, and the manifest file it appends to
 * (its name in manifest). Returns 0, or 2 with the message printed. */
static int prepare_env(const rec_opts_t *o, char *manifest)
{
	char shim[PATH_MAX];
	int rc = find_shim(shim, sizeof shim);
	if (rc == 0)
		rc = set_preload(shim);
	if (rc == 0)
		rc = set_output(o->output);
	if (rc != 0)
		return rc;
	char num[32];
	snprintf(num, sizeof num, "%d", o->stacks);
	setenv("ALLOCRR_STACKS", num, 1);
	setenv("ALLOCRR_FOLLOW", o->follow ? "1" : "0", 1);
	snprintf(num, sizeof num, "%d", o->level);
	setenv("ALLOCRR_LEVEL", num, 1);
	int mfd = mkstemp(manifest);
	if (mfd < 0)
		return ar_cli_error("/tmp", "cannot create the manifest file: %s", strerror(errno));
	close(mfd);
	setenv("ALLOCRR_MANIFEST", manifest, 1);
	return 0;
}

/* Run PROG and wait for it. Returns its exit status as a shell gives it
 * (128+signal), 126/127 when it could not be run, 2 when fork failed. */
static int run_program(char **prog)
{
	struct sigaction ign = {.sa_handler = SIG_IGN}, fwd = {.sa_handler = forward}, oint, oquit;
	sigemptyset(&ign.sa_mask);
	sigemptyset(&fwd.sa_mask);
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	sigaction(SIGTERM, &fwd, NULL);
	sigaction(SIGHUP, &fwd, NULL);
	child = fork();
	if (child < 0)
		return ar_cli_error(NULL, "cannot start %s: fork: %s", prog[0], strerror(errno));
	if (child == 0) {
		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGQUIT, &oquit, NULL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		execvp(prog[0], prog);
		int e = errno;
		ar_cli_error(prog[0], "cannot run: %s", strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	int status = 0;
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 2;
}

/* The manifest's trace paths, each once. */
static void read_manifest(const char *manifest, rec_traces_t *t)
{
	t->n = 0;
	FILE *m = fopen(manifest, "r");
	if (!m)
		return;
	char line[PATH_MAX + 8];
	while (fgets(line, sizeof line, m) && t->n < MAX_TRACES) {
		line[strcspn(line, "\n")] = 0;
		int dup = !line[0];
		for (int i = 0; i < t->n && !dup; i++)
			dup = strcmp(t->path[i], line) == 0;
		if (!dup)
			snprintf(t->path[t->n++], sizeof t->path[0], "%s", line);
	}
	fclose(m);
}

/* The trace library's messages about opening a file may start with the
 * file's name, which our "allocrec: PATH: " prefix already gives. */
static const char *without_path(const char *path, const char *msg)
{
	size_t n = strlen(path);
	return strncmp(msg, path, n) == 0 && strncmp(msg + n, ": ", 2) == 0 ? msg + n + 2 : msg;
}

/* One line about a trace: path, events, threads, bytes, bytes/event.
 * Returns whether the trace could be opened. */
static int summarise(const char *path)
{
	ar_reader_t *r;
	ar_error_t err = {0};
	if (ar_reader_open(&r, path, &err) != 0) {
		ar_cli_error(path, "unreadable at byte offset %llu: %s (alloctrace verify %s says more)",
			     (unsigned long long)err.offset, without_path(path, err.msg), path);
		return 0;
	}
	const ar_footer_t *f = ar_reader_footer(r);
	uint64_t events = f ? f->events : ar_reader_event_count(r);
	uint64_t bytes = ar_reader_file_size(r);
	ar_status_t st = ar_reader_status(r);
	fprintf(stderr, "%s: %s: %llu events, %u threads, %llu bytes, %.2f bytes/event%s\n", ar_cli_tool(), path,
		(unsigned long long)events, ar_reader_thread_count(r), (unsigned long long)bytes,
		events ? (double)bytes / (double)events : 0.0,
		st == AR_STATUS_COMPLETE ? "" : st == AR_STATUS_TRUNCATED ? " (truncated)" : " (corrupt)");
	if (f && f->dropped_events)
		fprintf(stderr, "%s: %s: %llu events could not be recorded\n", ar_cli_tool(), path,
			(unsigned long long)f->dropped_events);
	ar_reader_close(r);
	return 1;
}

/* s as one shell word: as is when it holds no special character, else in
 * single quotes, so the "next:" line can be pasted. */
static void put_shell_word(FILE *f, const char *s)
{
	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./%+,:=@-") == strlen(s)) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	fputc('\'', f);
}

/* "allocrec: next: allocreplay T... --all   (or: alloctrace stats T)",
 * naming the readable traces (at most NEXT_LISTED of them). */
static void print_next(const rec_traces_t *t)
{
	int listed = 0, first = -1, readable = 0;
	for (int i = 0; i < t->n; i++)
		readable += t->readable[i];
	if (!readable)
		return;
	fprintf(stderr, "%s: next: allocreplay", ar_cli_tool());
	for (int i = 0; i < t->n && (readable <= NEXT_LISTED || listed < 1); i++) {
		if (!t->readable[i])
			continue;
		first = first < 0 ? i : first;
		fputc(' ', stderr);
		put_shell_word(stderr, t->path[i]);
		listed++;
	}
	fputs(" --all   (or: alloctrace stats ", stderr);
	put_shell_word(stderr, t->path[first]);
	if (listed < readable)
		fprintf(stderr, "; %d more traces are listed above", readable - listed);
	fputs(")\n", stderr);
}

/* The summary lines and the next command, unless -q. */
static void report(const rec_opts_t *o, const char *manifest)
{
	if (o->quiet)
		return;
	static rec_traces_t t; /* 64 paths: too big for the stack */
	read_manifest(manifest, &t);
	for (int i = 0; i < t.n; i++)
		t.readable[i] = summarise(t.path[i]);
	print_next(&t);
}

int main(int argc, char **argv)
{
	ar_cli_init("allocrec");
	rec_opts_t o;
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	char manifest[] = "/tmp/allocrec-manifest.XXXXXX";
	if ((rc = prepare_env(&o, manifest)) != 0)
		return rc;
	rc = run_program(o.prog);
	report(&o, manifest);
	unlink(manifest);
	return rc;
}
