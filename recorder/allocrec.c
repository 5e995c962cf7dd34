/*
 * allocrec — run a program with the recorder shim preloaded and report the
 * traces it wrote.
 *
 *   allocrec [-o FILE [--output-for NAME]] [--stacks[=DEPTH]] [--no-follow] [--level N] [--time-every N] [--time-unit NS]
 *            [--max-size BYTES] [--duration S] [--rotate BYTES] [--paused] [-q] [--] PROG ARGS...
 *   allocrec --start PID | --stop PID
 *   allocrec -p PID [--duration S] [-o FILE] ... | --detach PID   (allocrec_attach.c)
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
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "allocrec_stream.h"
#include "ar_cli.h"
#include "ar_escape.h"
#include "ar_trace.h"
#include "allocrec_attach.h"
#include "allocrec_settings.h"
#include "rec_ctl_dir.h"

#define MAX_TRACES 64      /* traces one run reports (a fork bomb writes more) */
#define NEXT_LISTED 4      /* traces the "next:" line names before abridging */

/* What the command line asks for. */
typedef struct rec_opts {
	const char *output; /* -o, NULL: the shim's default ./PROG.PID.zst */
	const char *output_for; /* --output-for: -o is the first image so named, NULL: the first image */
	allocrec_settings_t set;        /* --stacks, --level, --time-every, --time-unit, --duration */
	int follow, quiet;
	unsigned long long max_size;    /* --max-size in bytes, 0 = none */
	unsigned long long rotate;      /* --rotate in bytes, 0 = none */
	int paused;                     /* --paused: windows by --start/--stop */
	const char *ctl_verb, *ctl_pid; /* --start/--stop PID: talk to a running program */
	char **prog;        /* PROG ARGS..., NULL-terminated */
} rec_opts_t;

/* The traces one run wrote, each once, in the order the manifest lists them. */
typedef struct rec_traces {
	char path[MAX_TRACES][PATH_MAX + 8];
	int readable[MAX_TRACES];
	int n;
} rec_traces_t;

static pid_t child;
/* --output-for: the file the first image named NAME removes to claim -o. */
static char claim[] = "/tmp/allocrec-claim.XXXXXX";

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
	       "                      '-' streams it to standard output (PROG's own output\n"
	       "                      then goes to standard error), and a FIFO streams it to\n"
	       "                      its reader; a slow reader never makes PROG wait: the\n"
	       "                      events it cannot take are dropped and counted\n"
	       "      --output-for=NAME\n"
	       "                      -o names the trace of the first image named NAME (a glob,\n"
	       "                      matched against the basename of argv[0] and of the\n"
	       "                      executable: python3 matches /usr/bin/python3.11), not\n"
	       "                      PROG's: for wrapper scripts and version-manager shims that\n"
	       "                      exec other programs first; those get PROG.PID.zst as usual\n"
	       "      --stacks[=N]    record call stacks, N frames deep (default 32, 1..%d)\n"
	       "      --no-follow     do not record the programs PROG exec()s\n"
	       "      --level=N       zstd level of the trace, 1..19 (default 3)\n"
	       "      --time-every=N  while a thread calls alone and densely (its calls less\n"
	       "                      than 1 us apart, no other thread's in its last 1024),\n"
	       "                      read the clock once per N of its calls, the others\n"
	       "                      taking that reading as their time, 1..1024 (default 8;\n"
	       "                      1: every call reads the clock; docs/RECORDER.md)\n"
	       "      --time-unit=NS  keep event times in units of NS nanoseconds, a power of\n"
	       "                      two from 16 to 1048576 (default 64; finer costs bytes,\n"
	       "                      coarser hides short pauses from the replay's schedule)\n"
	       "      --max-size=BYTES\n"
	       "                      stop recording once the trace holds BYTES (K, M, G\n"
	       "                      suffixes, powers of 1024); the trace is closed complete\n"
	       "                      and PROG runs on unrecorded; the file may pass BYTES by\n"
	       "                      what the threads held at the stop (docs/RECORDER.md)\n"
	       "      --duration=S    stop recording S seconds (a decimal number, e.g. 0.5)\n"
	       "                      after the recorder started, the same way.\n"
	       "                      Each image (PROG, every forked or exec'ed child) has its\n"
	       "                      own limit; the heap calls made after a stop are counted\n"
	       "                      in the trace's footer (alloctrace info: \"stopped\")\n"
	       "      --rotate=BYTES  once a trace holds BYTES (K, M, G), close it and go on in\n"
	       "                      a new segment file (FILE.w2.zst, FILE.w3.zst ...); every\n"
	       "                      segment is complete and replayable on its own\n"
	       "      --paused        start PROG with the recorder loaded but not recording;\n"
	       "                      allocrec --start PID / --stop PID open and close a\n"
	       "                      window, each its own trace (-o FILE: FILE, then\n"
	       "                      FILE.w2.zst ...); --duration, --max-size bound each\n"
	       "      --start=PID     open a window in PID (a program run with --paused)\n"
	       "      --stop=PID      close PID's window: its trace is complete\n"
	       "  -p, --pid=PID       record the running process PID from now on (gdb loads the\n"
	       "                      recorder into it): a window trace, -o FILE or\n"
	       "                      ./PROG.PID.zst; until --duration S, allocrec --detach PID\n"
	       "                      or Ctrl-C; the process runs on unharmed (needs gdb and\n"
	       "                      ptrace permission; not for static or traced processes;\n"
	       "                      --stacks, --level, --time-every, --time-unit apply)\n"
	       "      --detach=PID    stop recording the process allocrec -p PID attached to\n"
	       "  -q, --quiet         print neither the summary lines nor the next command\n"
	       "  -h, --help          display this help and exit\n"
	       "      --version       output version information and exit\n"
	       "\n"
	       "Exit status:\n"
	       " PROG's own; 128+N if it died of signal N; 127 if PROG was not found, 126 if\n"
	       " it could not be run; 1 for a usage error; 2 if allocrec failed before\n"
	       " starting PROG (also: -o for a PROG that cannot be recorded, being statically\n"
	       " linked or set-user-ID, or an -o that is a symbolic link), or if PROG\n"
	       " succeeded but no recorded image was named --output-for's NAME (so -o's\n"
	       " trace does not exist).\n"
	       "\n"
	       "See docs/RECORDER.md.\n",
	       AR_STACK_MAX_DEPTH);
}

/* Parse s as a whole decimal number in lo..hi into *out; -1 if it is not. */
/* --duration: seconds as a decimal number, > 0 and at most a year, in ns;
 * -1 if s is not one. */
enum { OPT_NO_FOLLOW = 256, OPT_VERSION, OPT_OUTPUT_FOR, OPT_MAX_SIZE, OPT_ROTATE, OPT_PAUSED, OPT_START,
       OPT_STOP };

/* Fill o from argv. Returns -1 to go on and record, or the exit status
 * (--help, --version, a usage error). */
static int parse_args(int argc, char **argv, rec_opts_t *o)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},        ALLOCREC_SETTINGS_OPTIONS,
		{"no-follow", no_argument, NULL, OPT_NO_FOLLOW}, {"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},                {"version", no_argument, NULL, OPT_VERSION},
		{"output-for", required_argument, NULL, OPT_OUTPUT_FOR},
		{"max-size", required_argument, NULL, OPT_MAX_SIZE},
		{"rotate", required_argument, NULL, OPT_ROTATE}, {"paused", no_argument, NULL, OPT_PAUSED},
		{"start", required_argument, NULL, OPT_START},   {"stop", required_argument, NULL, OPT_STOP},
		{NULL, 0, NULL, 0}};
	*o = (rec_opts_t){.set = allocrec_settings_default(), .follow = 1};
	int c, rc;
	/* '+': stop at PROG, whose options are its own; ':': we say what is wrong. */
	while ((c = getopt_long(argc, argv, "+:o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case OPT_NO_FOLLOW:
			o->follow = 0;
			break;
		case OPT_OUTPUT_FOR:
			if (!*optarg || strchr(optarg, '/'))
				return ar_cli_usage_error("--output-for takes a program name (a glob like 'python3*'), "
							  "not a path: '%s'", optarg);
			o->output_for = optarg;
			break;
		case OPT_MAX_SIZE:
			if (ar_cli_parse_size(optarg, &o->max_size) != 0 || o->max_size == 0)
				return ar_cli_usage_error("--max-size takes a size in bytes above 0, with an optional K, M "
							  "or G suffix (e.g. 64M), not '%s'", optarg);
			break;
		case OPT_ROTATE:
			if (ar_cli_parse_size(optarg, &o->rotate) != 0 || o->rotate == 0)
				return ar_cli_usage_error("--rotate takes a size in bytes above 0, with an optional K, M "
							  "or G suffix (e.g. 64M), not '%s'", optarg);
			break;
		case OPT_PAUSED:
			o->paused = 1;
			break;
		case OPT_START:
		case OPT_STOP:
			if (o->ctl_verb)
				return ar_cli_usage_error("--start and --stop take one process each: give one of them");
			o->ctl_verb = c == OPT_START ? "start" : "stop";
			o->ctl_pid = optarg;
			break;
		case 'q':
			o->quiet = 1;
			break;
		default: /* the settings, --help, --version, a bad option */
			if ((rc = allocrec_settings_option(c, optarg, &o->set)) >= 0) {
				if (rc != 0)
					return rc;
				break;
			}
			return ar_cli_other_option(c, argv, OPT_VERSION, usage);
		}
	}
	if (o->ctl_verb) {
		if (optind < argc)
			return ar_cli_usage_error("--%s PID talks to a running program: no PROG after it ('%s')",
						  o->ctl_verb, argv[optind]);
		return -1;
	}
	if (optind >= argc)
		return ar_cli_usage_error("missing PROG, the program to record (allocrec [OPTION]... PROG [ARG]...)");
	o->prog = argv + optind;
	if (o->output_for && !o->output)
		return ar_cli_usage_error("--output-for %s says which image -o names: give -o FILE too", o->output_for);
	/* -o -: PROG's own image streams (allocrec_stream.c), not another. */
	if (o->output && ar_cli_is_stdio(o->output) && o->output_for)
		return ar_cli_usage_error("--output-for %s cannot go with -o -: only PROG's own image streams; "
					  "name a file", o->output_for);
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
	char dir[PATH_MAX];
	if (ar_cli_exe_dir(dir, sizeof dir) == 0) {
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

/* --output-for: -o's path, absolute (the image may run in another
 * directory), for the first image named NAME, which claims it by removing
 * the claim file (rec_config.c); PROG itself writes PROG.PID.zst like any
 * other image. Returns 0, or 2 with the message printed. */
static int set_output_for(const rec_opts_t *o)
{
	unsetenv("ALLOCRR_OUTPUT_FOR");
	unsetenv("ALLOCRR_OUTPUT_FOR_FILE");
	unsetenv("ALLOCRR_OUTPUT_FOR_CLAIM");
	if (!o->output_for)
		return 0;
	char tmp[PATH_MAX], file[2 * PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s", o->output);
	snprintf(file, sizeof file, "%s/%s", getenv("ALLOCRR_DIR"), basename(tmp));
	if (strlen(file) >= 1024) /* rec_config_t.output: the shim would cut it */
		return ar_cli_error(o->output, "its absolute path, %zu bytes, is longer than the recorder takes (1023)",
				    strlen(file));
	int fd = mkstemp(claim);
	if (fd < 0)
		return ar_cli_error("/tmp", "cannot create the --output-for claim file: %s", strerror(errno));
	close(fd);
	unsetenv("ALLOCRR_OUTPUT");
	setenv("ALLOCRR_OUTPUT_FOR", o->output_for, 1);
	setenv("ALLOCRR_OUTPUT_FOR_FILE", file, 1);
	setenv("ALLOCRR_OUTPUT_FOR_CLAIM", claim, 1);
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
	if (rc == 0)
		rc = set_output_for(o);
	if (rc != 0)
		return rc;
	char num[32];
	snprintf(num, sizeof num, "%d", o->set.stacks);
	setenv("ALLOCRR_STACKS", num, 1);
	setenv("ALLOCRR_FOLLOW", o->follow ? "1" : "0", 1);
	snprintf(num, sizeof num, "%d", o->set.level);
	setenv("ALLOCRR_LEVEL", num, 1);
	snprintf(num, sizeof num, "%d", o->set.time_every);
	setenv("ALLOCRR_TIME_EVERY", num, 1);
	snprintf(num, sizeof num, "%d", o->set.time_unit);
	setenv("ALLOCRR_TIME_UNIT", num, 1);
	/* Limits unset unless asked: an ALLOCRR_MAX_SIZE from the caller's
	 * environment must not bound a recording that did not ask. */
	unsetenv("ALLOCRR_MAX_SIZE");
	unsetenv("ALLOCRR_DURATION_NS");
	unsetenv("ALLOCRR_ROTATE");
	unsetenv("ALLOCRR_PAUSED");
	if (o->rotate) {
		snprintf(num, sizeof num, "%llu", o->rotate);
		setenv("ALLOCRR_ROTATE", num, 1);
	}
	if (o->paused)
		setenv("ALLOCRR_PAUSED", "1", 1);
	if (o->max_size) {
		snprintf(num, sizeof num, "%llu", o->max_size);
		setenv("ALLOCRR_MAX_SIZE", num, 1);
	}
	if (o->set.duration_ns) {
		snprintf(num, sizeof num, "%llu", o->set.duration_ns);
		setenv("ALLOCRR_DURATION_NS", num, 1);
	}
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
		allocrec_stream_child();
		execvp(prog[0], prog);
		int e = errno;
		ar_cli_error(prog[0], "cannot run: %s", strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	allocrec_stream_parent();
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
static int summarise(const char *path, int quiet)
{
	ar_reader_t *r;
	ar_error_t err = {0};
	if (ar_reader_open(&r, path, &err) != 0) {
		ar_cli_error(path, "unreadable at byte offset %llu: %s (alloctrace verify %s says more)",
			     (unsigned long long)err.offset, without_path(path, err.msg), path);
		return 0;
	}
	int whole = ar_reader_status(r) == AR_STATUS_COMPLETE;
	if (quiet) {
		ar_reader_close(r);
		return whole ? 1 : 2;
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
	if (f && (f->stop_reason == AR_STOP_MAX_SIZE || f->stop_reason == AR_STOP_DURATION))
		fprintf(stderr, "%s: %s: stopped at its %s limit; %llu heap calls after that were not recorded\n",
			ar_cli_tool(), path, f->stop_reason == AR_STOP_MAX_SIZE ? "--max-size" : "--duration",
			(unsigned long long)f->after_stop);
	else if (f && f->stop_reason)
		fprintf(stderr, "%s: %s: ended by %s while the program went on\n", ar_cli_tool(), path,
			f->stop_reason == AR_STOP_ROTATE ? "--rotate (the next segment is the next file)"
			: f->stop_reason == AR_STOP_DETACH ? "a detach" : "allocrec --stop");
	ar_reader_close(r);
	return whole ? 1 : 2;
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
		ar_esc_shell_word(stderr, t->path[i]);
		listed++;
	}
	fputs(" --all   (or: alloctrace stats ", stderr);
	ar_esc_shell_word(stderr, t->path[first]);
	if (listed < readable)
		fprintf(stderr, "; %d more traces are listed above", readable - listed);
	fputs(")\n", stderr);
}

/* Does path match the -o pattern pat, whose %p stands for a pid? */
static int is_output(const char *path, const char *pat)
{
	for (; *pat; pat++) {
		if (pat[0] == '%' && pat[1] == 'p') {
			if (*path < '0' || *path > '9')
				return 0;
			while (*path >= '0' && *path <= '9')
				path++;
			pat++;
			continue;
		}
		if (pat[0] == '%' && pat[1] == '%')
			pat++;
		if (*path++ != *pat)
			return 0;
	}
	return !*path;
}

/* The manifest's line that is -o's trace, into out: 0, or -1 when there
 * is none. The whole manifest, not the MAX_TRACES the summary lists: a
 * version-manager shim runs dozens of images before the one meant. */
static int find_output(const char *manifest, const char *pat, char *out, size_t cap)
{
	FILE *m = fopen(manifest, "r");
	if (!m)
		return -1;
	int found = -1;
	while (found < 0 && fgets(out, (int)cap, m)) {
		out[strcspn(out, "\n")] = 0;
		found = is_output(out, pat) ? 0 : -1;
	}
	fclose(m);
	return found;
}

/* "allocrec:   PATH (pid N): CMDLINE", escaped: the images that ran. */
static void list_images(const rec_traces_t *t)
{
	for (int i = 0; i < t->n; i++) {
		ar_reader_t *r;
		ar_error_t err = {0};
		fprintf(stderr, "%s:   ", ar_cli_tool());
		ar_esc_term(stderr, t->path[i]);
		if (ar_reader_open(&r, t->path[i], &err) != 0) {
			fputs(" (unreadable)\n", stderr);
			continue;
		}
		const ar_header_t *h = ar_reader_header(r);
		fprintf(stderr, " (pid %llu): ", (unsigned long long)h->pid);
		ar_esc_term(stderr, h->cmdline);
		fputc('\n', stderr);
		ar_reader_close(r);
	}
}

/* The summary lines and the next command, unless -q. With --output-for,
 * the next command names -o's trace, the image the user asked for, not
 * the wrapper that ran first. */
static void report(const rec_opts_t *o, const char *manifest)
{
	if (o->quiet)
		return;
	static rec_traces_t t, chosen; /* 64 paths: too big for the stack */
	allocrec_stream_report(o->quiet);
	read_manifest(manifest, &t);
	for (int i = 0; i < t.n; i++)
		t.readable[i] = summarise(t.path[i], 0);
	if (o->paused && t.n == 0) {
		fprintf(stderr, "%s: no window was opened (allocrec --start PID opens one while the program runs): "
			"no trace\n", ar_cli_tool());
		return;
	}
	if (o->output_for &&
	    find_output(manifest, getenv("ALLOCRR_OUTPUT_FOR_FILE"), chosen.path[0], sizeof chosen.path[0]) == 0) {
		chosen.n = chosen.readable[0] = 1;
		print_next(&chosen);
		return;
	}
	print_next(&t);
}

/* --output-for: which image -o's trace holds, or why it does not exist
 * (then 2, unless PROG's own status already says it failed). */
static int report_output_for(const rec_opts_t *o, const char *manifest, int rc)
{
	if (!o->output_for)
		return rc;
	int claimed = unlink(claim) != 0; /* the image named NAME removed it */
	const char *file = getenv("ALLOCRR_OUTPUT_FOR_FILE");
	static rec_traces_t t;
	static char path[PATH_MAX + 8];
	if (find_output(manifest, file, path, sizeof path) == 0) {
		ar_reader_t *r;
		ar_error_t err = {0};
		if (!o->quiet && ar_reader_open(&r, path, &err) == 0) {
			fprintf(stderr, "%s: ", ar_cli_tool());
			ar_esc_term(stderr, path);
			fprintf(stderr, " is the trace of the first image named '");
			ar_esc_term(stderr, o->output_for);
			fprintf(stderr, "' (pid %llu): ", (unsigned long long)ar_reader_header(r)->pid);
			ar_esc_term(stderr, ar_reader_header(r)->cmdline);
			fprintf(stderr, "; the other images' traces are named PROG.PID.zst\n");
			ar_reader_close(r);
		}
		return rc;
	}
	read_manifest(manifest, &t);
	struct stat st;
	const char *old = stat(file, &st) == 0 ? " (the file of that name there is an older one)" : "";
	if (claimed)
		ar_cli_error(o->output, "not written, although an image named '%s' ran: the allocrr message above says why%s",
			     o->output_for, old);
	else
		ar_cli_error(o->output, "not written: no image named '%s' ran, or none was recorded (a static binary, "
				   "or one run with --no-follow or through system() after clearenv())%s; the traces are%s", o->output_for, old,
			     t.n ? ":" : " none");
	if (!claimed)
		list_images(&t); /* the first MAX_TRACES: enough to see the names */
	return rc == 0 ? 2 : rc;
}

/* ---- programs the recorder cannot enter -------------------------------------------- */
/* PROG as execvp would find it, in out; 0 when found. */
static int resolve_prog(const char *name, char *out, size_t cap)
{
	if (strchr(name, '/')) {
		snprintf(out, cap, "%s", name);
		return access(out, X_OK);
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/bin:/usr/bin";
	for (const char *p = path;; p++) {
		const char *e = strchr(p, ':');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		snprintf(out, cap, "%.*s%s%s", (int)len, p, len ? "/" : "", name);
		struct stat st;
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
		if (!e)
			return -1;
		p = e;
	}
}

/* 1 when the ELF executable in fd (its first n bytes in buf) has no
 * PT_INTERP, i.e. no dynamic loader (static, or static-pie); 0 when it has
 * one, is not ELF, or cannot be read. */
#define ELF_NO_INTERP(Ehdr, Phdr)                                                                       \
	do {                                                                                            \
		Ehdr eh;                                                                                \
		if (n < sizeof eh)                                                                      \
			return 0;                                                                       \
		memcpy(&eh, buf, sizeof eh);                                                            \
		if (eh.e_phentsize != sizeof(Phdr) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))    \
			return 0;                                                                       \
		for (unsigned i = 0; i < eh.e_phnum; i++) {                                             \
			Phdr ph;                                                                        \
			off_t at = (off_t)eh.e_phoff + (off_t)i * (off_t)sizeof ph;                     \
			if (pread(fd, &ph, sizeof ph, at) != (ssize_t)sizeof ph || ph.p_type == PT_INTERP) \
				return 0;                                                               \
		}                                                                                       \
		return 1;                                                                               \
	} while (0)

static int elf_static(int fd, const unsigned char *buf, size_t n)
{
	if (n < EI_NIDENT || memcmp(buf, ELFMAG, SELFMAG) != 0)
		return 0;
	if (buf[EI_CLASS] == ELFCLASS64)
		ELF_NO_INTERP(Elf64_Ehdr, Elf64_Phdr);
	if (buf[EI_CLASS] == ELFCLASS32)
		ELF_NO_INTERP(Elf32_Ehdr, Elf32_Phdr);
	return 0;
}

/* Why the loader will not preload the recorder into the program at path
 * (NULL when it will, or when we cannot tell): a static executable has no
 * loader at all; a set-user-ID/set-group-ID or file-capability executable
 * runs in secure mode, where the loader ignores an LD_PRELOAD entry with a
 * slash (ld.so(8)); a script depends on its interpreter. */
static const char *unpreloadable(const char *path, char *why, size_t cap, int depth)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	unsigned char buf[512];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	struct stat st;
	struct statvfs vfs;
	int nosuid = fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_NOSUID);
	if (n < 4 || fstat(fd, &st) != 0) {
		close(fd);
		return NULL;
	}
	buf[n] = 0;
	if (buf[0] == '#' && buf[1] == '!') {
		close(fd);
		char interp[PATH_MAX];
		const char *p = (const char *)buf + 2;
		p += strspn(p, " \t");
		size_t len = strcspn(p, " \t\n");
		snprintf(interp, sizeof interp, "%.*s", (int)len, p);
		char inner[256];
		if (depth >= 4 || !unpreloadable(interp, inner, sizeof inner, depth + 1))
			return NULL;
		int w = snprintf(why, cap, "its interpreter %.200s is %s", interp, inner);
		(void)w;
		return why;
	}
	const char *r = NULL;
	if (!nosuid && (((st.st_mode & S_ISUID) && st.st_uid != getuid()) ||
			((st.st_mode & S_ISGID) && st.st_gid != getgid())))
		r = "set-user-ID or set-group-ID (the loader ignores LD_PRELOAD in secure mode)";
	else if (!nosuid && getuid() != 0 && fgetxattr(fd, "security.capability", NULL, 0) > 0)
		r = "given file capabilities (the loader ignores LD_PRELOAD in secure mode)";
	else if (elf_static(fd, buf, (size_t)n))
		r = "statically linked (no dynamic loader to preload the recorder)";
	close(fd);
	if (r)
		snprintf(why, cap, "%s", r);
	return r ? why : NULL;
}

/* One line when PROG cannot be recorded. With -o naming PROG's own trace
 * (no --output-for), that trace cannot exist: refuse before running (2).
 * Otherwise PROG runs anyway (its dynamically linked descendants are
 * recorded as usual): returns -1. Also refuses an -o that is a symbolic
 * link: the recorder never writes through one. */
static int check_recordable(const rec_opts_t *o)
{
	struct stat st;
	if (o->output && lstat(o->output, &st) == 0 && S_ISLNK(st.st_mode))
		return ar_cli_error(o->output, "is a symbolic link: -o does not write through links (it would "
				    "replace the file the link points to); name that file, or remove the link");
	char path[PATH_MAX], why[512];
	if (resolve_prog(o->prog[0], path, sizeof path) != 0 || !unpreloadable(path, why, sizeof why, 0))
		return -1;
	if (o->output && !o->output_for)
		return ar_cli_error(path, "%s: it cannot be recorded, so -o %s cannot be written; run it without "
				    "allocrec", why, o->output);
	fprintf(stderr, "%s: %s: %s: it runs unrecorded (only the dynamically linked programs it starts are "
		"recorded)\n", ar_cli_tool(), path, why);
	return -1;
}

/* ---- --start/--stop PID: the control channel (rec_ctl_dir.h) ------------------------- */
static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* The whole small file at path into buf; -1 if it cannot be read. */
static int read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

/* Whether PID runs and listens: 0, or 2 with the reason printed. */
static int check_listening(pid_t pid, const char *dir, const char *arg)
{
	if (kill(pid, 0) != 0)
		return errno == EPERM
			       ? ar_cli_error(NULL, "process %s belongs to another user: allocrec controls only your own "
						    "processes", arg)
			       : ar_cli_error(NULL, "no process %s", arg);
	char path[PATH_MAX], buf[256];
	snprintf(path, sizeof path, "%s/%d.ctl", dir, (int)pid);
	if (read_small(path, buf, sizeof buf) != 0)
		return ar_cli_error(NULL, "process %s cannot be controlled: it was not started with allocrec --paused "
				    "(no %s); run it as allocrec --paused PROG", arg, path);
	const char *t = strstr(buf, "\nstart ");
	unsigned long long ticks = t ? strtoull(t + 7, NULL, 10) : 0;
	if (!ticks || ticks != rec_ctl_start_ticks(pid))
		return ar_cli_error(NULL, "process %s cannot be controlled: %s is left from an earlier process with "
				    "that pid (the one running now was not started with allocrec --paused)", arg, path);
	return 0;
}

/* Send verb to PID and wait up to 10 s for its answer. */
static int control(const rec_opts_t *o)
{
	char *end;
	long v = strtol(o->ctl_pid, &end, 10);
	if (*end || v <= 0 || v > INT_MAX)
		return ar_cli_usage_error("--%s takes a process id, not '%s'", o->ctl_verb, o->ctl_pid);
	pid_t pid = (pid_t)v;
	char dir[512], err[700];
	if (rec_ctl_dir(dir, sizeof dir, 0, err, sizeof err) != 0)
		return kill(pid, 0) != 0 ? check_listening(pid, dir, o->ctl_pid)
					 : ar_cli_error(NULL, "process %s cannot be controlled: %s", o->ctl_pid, err);
	int rc = check_listening(pid, dir, o->ctl_pid);
	if (rc != 0)
		return rc;
	char id[32], tmp[PATH_MAX], cmd[PATH_MAX], ack[PATH_MAX], line[1400];
	snprintf(id, sizeof id, "%d", (int)getpid());
	snprintf(tmp, sizeof tmp, "%s/.%d.cmd.%s", dir, (int)pid, id);
	snprintf(cmd, sizeof cmd, "%s/%d.cmd", dir, (int)pid);
	snprintf(ack, sizeof ack, "%s/%d.ack", dir, (int)pid);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return ar_cli_error(tmp, "cannot create: %s", strerror(errno));
	int n = snprintf(line, sizeof line, "%s %s\n", id, o->ctl_verb);
	int ok = write(fd, line, (size_t)n) == n;
	close(fd);
	if (!ok || rename(tmp, cmd) != 0) {
		unlink(tmp);
		return ar_cli_error(cmd, "cannot write the command: %s", strerror(errno));
	}
	/* The shim looks every 100 ms; opening or closing a trace takes a few ms
	 * more (a close waits up to 1 s for a thread inside a heap call). */
	for (int ms = 0; ms < 15000; ms += 20) {
		char word[32] = "";
		if (read_small(ack, line, sizeof line) == 0 && sscanf(line, "%31s", word) == 1 && strcmp(word, id) == 0) {
			unlink(ack);
			line[strcspn(line, "\n")] = 0;
			const char *verdict = line + strlen(id) + 1, *text = strchr(verdict, ' ');
			text = text ? text + 1 : "";
			if (strncmp(verdict, "ok", 2) != 0)
				return ar_cli_error(NULL, "process %s: %s", o->ctl_pid, text);
			if (!o->quiet) {
				fprintf(stderr, "%s: process %s: %s ", ar_cli_tool(), o->ctl_pid,
					strcmp(o->ctl_verb, "start") == 0 ? "recording into" : "closed");
				ar_esc_term(stderr, text);
				fputc('\n', stderr);
				if (strcmp(o->ctl_verb, "stop") == 0)
					summarise(text, 0);
			}
			return AR_EXIT_OK;
		}
		if (kill(pid, 0) != 0) {
			unlink(cmd);
			return ar_cli_error(NULL, "process %s ended before it answered", o->ctl_pid);
		}
		sleep_ms(20);
	}
	unlink(cmd);
	return ar_cli_error(NULL, "process %s did not answer within 15 s (stopped, or busy exiting?); the "
			    "command was withdrawn", o->ctl_pid);
}

/* allocrec --detach PID asks through the channel (allocrec_attach.c). */
static int control_verb(const char *verb, const char *pid, int quiet)
{
	rec_opts_t o = {.ctl_verb = verb, .ctl_pid = pid, .quiet = quiet};
	return control(&o);
}

int main(int argc, char **argv)
{
	ar_cli_init("allocrec");
	if (allocrec_attach_wanted(argc, argv))
		return allocrec_attach_main(argc, argv,
					    &(allocrec_attach_env_t){find_shim, summarise, control_verb});
	rec_opts_t o;
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.ctl_verb)
		return control(&o);
	if ((rc = check_recordable(&o)) >= 0)
		return rc;
	struct stat fifo;
	if (o.output && (o.rotate || o.paused) &&
	    (ar_cli_is_stdio(o.output) || (stat(o.output, &fifo) == 0 && S_ISFIFO(fifo.st_mode))))
		return ar_cli_usage_error("%s cannot go with a stream (-o %s): one stream carries one trace, and "
					  "each window or segment is a trace of its own; name a file",
					  o.rotate ? "--rotate" : "--paused", o.output);
	if ((rc = allocrec_stream_open(o.output, o.quiet)) >= 0 && rc != 0)
		return rc;
	char manifest[] = "/tmp/allocrec-manifest.XXXXXX";
	if ((rc = prepare_env(&o, manifest)) != 0)
		return rc;
	rc = run_program(o.prog);
	report(&o, manifest);
	rc = report_output_for(&o, manifest, rc);
	unlink(manifest);
	return rc;
}
