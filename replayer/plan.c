/*
 * plan.c — the command line and the plan of allocreplay (see plan.h).
 *
 * Parsing is getopt_long's with opterr off: its messages start with
 * argv[0] and the usage text would follow; ours are one line in the
 * common/ar_cli.h wording, naming the option as typed, then the hint.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ar_cli.h"
#include "ar_escape.h"
#include "plan.h"
#include "wl_cache.h"

#define WORKER_NAME "allocreplay-worker"

/* ---- the command line ------------------------------------------------------------- */

static void usage(void)
{
	printf("Usage: allocreplay [OPTION]... TRACE...\n"
	       "   or: allocreplay --list\n"
	       "   or: allocreplay --cache-clean\n"
	       "Replay each recorded trace under each allocator (default: every installed\n"
	       "one), N times, one worker process at a time; store the runs in an SQLite\n"
	       "database (docs/RESULTS.md) and print a comparison table per trace.\n"
	       "Options may come before or after the traces.\n"
	       "\n"
	       "Options:\n"
	       "  -a, --allocators=NAMES  replay under these allocators only (comma-separated,\n"
	       "                          or -a again; --list shows the names; a name given\n"
	       "                          twice runs once, said in a note)\n"
	       "      --all               every installed allocator (the default)\n"
	       "      --db=FILE           store the runs in FILE (default allocrr.db); SQLite\n"
	       "                          needs a file, so not '-' (--json prints to stdout)\n"
	       "      --repeat=N          runs per allocator (default 3)\n"
	       "      --timeout=S         kill a worker after S seconds (default 300; 0 = never)\n"
	       "      --timing=HOW        which heap calls are timed for the latency figures:\n"
	       "                          sample:N = 1 in N, at random (default sample:%d; a\n"
	       "                          trace too short for 10000 timed calls at that rate\n"
	       "                          is timed more often, down to every call), every, or\n"
	       "                          none (no latency figures). ops/s always covers\n"
	       "                          every call; timing costs it (docs/BENCHMARKS.md)\n"
	       "      --touch=HOW         write to new blocks, outside the timed window: none,\n"
	       "                          first (byte), pages (one byte per page, the default),\n"
	       "                          all (bytes), or auto: pages, unless a calibration\n"
	       "                          replay under the recorded allocator shows pages would\n"
	       "                          make more memory resident than the recorded program\n"
	       "                          had (then first)\n"
	       "      --counters=SOURCE   cache statistics: perf = hardware counters over the\n"
	       "                          replay window (default; NULL with the kernel's reason\n"
	       "                          where refused), sim = valgrind callgrind cache\n"
	       "                          simulation, deterministic, 30-90x slower (timeout\n"
	       "                          scaled), none\n"
	       "      --access-pass       at the live-bytes peak, read and write every live\n"
	       "                          block once, timed apart (access_pass_ns;\n"
	       "                          single-thread traces)\n"
	       "      --route=RULE        also replay each allocator with the allocations RULE\n"
	       "                          selects served by one of ours, in the same process:\n"
	       "                          NAME:SEL[,SEL]..., NAME pool, arena, tlscache or\n"
	       "                          freelist, SEL size=N, size=A-B (requested bytes),\n"
	       "                          stack=ID (alloctrace stacks), thread=N or\n"
	       "                          frame=FUNCTION (stacks through it); all SELs\n"
	       "                          must hold; repeat --route for more rules, the first\n"
	       "                          that holds wins. The runs are named BASE+NAME[SEL]\n"
	       "                          (e.g. glibc+pool[size=64]); docs/RESULTS.md, Routing\n"
	       "      --json              print the runs as JSON instead of tables\n"
	       "      --list              list the allocators the registry knows, and exit\n"
	       "      --cache-max=SIZE    keep at most SIZE of compiled workloads in the cache\n"
	       "                          (K, M, G suffixes; default 4G; 0 = no limit): the\n"
	       "                          least recently used go first, never one in use\n"
	       "      --cache-clean       empty the workload cache, say what it freed, and exit\n"
	       "      --workload-memory=SIZE  a worker decodes a workload whose ops fit in SIZE\n"
	       "                          before the replay (default 512M), and streams a larger\n"
	       "                          one a segment at a time (0: always stream); neither\n"
	       "                          enters RSS, faults or latencies, but streaming adds\n"
	       "                          its decoding to wall time and ops/s (docs/BENCHMARKS.md)\n"
	       "      --no-baseline       replay the named allocators only, not also the one\n"
	       "                          the recorded program ran on (the baseline)\n"
	       "      --plan              run nothing: print the matrix as independent jobs,\n"
	       "                          one allocreplay command a line, one per trace x\n"
	       "                          allocator with all its repetitions, each into its own\n"
	       "                          database (DIR/SHA-ALLOCATOR.db), for GNU parallel or\n"
	       "                          Slurm; gather them with allocreport merge\n"
	       "                          (docs/DISTRIBUTED.md)\n"
	       "      --plan-format=F     shell (default), json (one object a line) or slurm (a\n"
	       "                          job-array script: task k runs job k)\n"
	       "      --db-dir=DIR        --plan: where the jobs write their databases (default .)\n"
	       "  -q, --quiet             no progress line while compiling and replaying\n"
	       "  -h, --help              display this help and exit\n"
	       "      --version           output version information and exit\n"
	       "\n"
	       "Progress:\n"
	       " When stderr is a terminal, each compile and each run shows a line with the\n"
	       " percentage of events or ops done, the time elapsed and an estimate of the\n"
	       " time left; never when stderr is not a terminal, nor with -q.\n"
	       "\n"
	       "Workload cache:\n"
	       " Each trace is compiled once into a workload, cached by the trace's SHA-256\n"
	       " in a directory of your own: created 0700, refused when it is a symbolic\n"
	       " link, another user's, or writable by group or others. A cached workload is\n"
	       " used only when its digest and the trace's size, events and threads match;\n"
	       " otherwise it is compiled again, with a note saying why.\n"
	       "\n"
	       "Environment:\n"
	       " ALLOCRR_CACHE_DIR  compiled workloads (default $XDG_CACHE_HOME/allocrr, else\n"
	       "                    $HOME/.cache/allocrr, else the same under your account's\n"
	       "                    home directory, else $TMPDIR/allocrr-cache-UID)\n"
	       " ALLOCRR_CACHE_MAX  the cache's size limit when --cache-max is not given\n"
	       " ALLOCRR_WORKER     the worker binary (default: allocreplay-worker next to\n"
	       "                    allocreplay, else in ../libexec/allocrr/)\n"
	       " ALLOCRR_VALGRIND   valgrind for --counters sim (default: on PATH)\n"
	       " ALLOCRR_LIBDIR     where our allocators' libraries are\n"
	       "\n"
	       "Exit status:\n"
	       " 0 every run succeeded;\n"
	       " 1 usage error;\n"
	       " 2 runtime error or a failed run (each is named on stderr and stored with\n"
	       "   its reason);\n"
	       " 3 every run succeeded, but a trace was truncated or corrupt and only its\n"
	       "   valid prefix was replayed (said on stderr; traces.status in the\n"
	       "   database).\n", AR_PLAN_SAMPLE_EVERY);
}

/* Non-negative integer up to 10^6 (repetitions, seconds). 0, or -1. */
static int parse_uint(const char *s, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *s == '-' || *end || errno || v > 1000000)
		return -1;
	*out = (unsigned)v;
	return 0;
}

enum { OPT_ALL = 256, OPT_DB, OPT_REPEAT, OPT_TIMEOUT, OPT_TOUCH, OPT_JSON, OPT_COUNTERS,
       OPT_ACCESS_PASS, OPT_WORKLOAD_MEMORY, OPT_LIST, OPT_VERSION, OPT_TIMING, OPT_CACHE_MAX, OPT_CACHE_CLEAN,
       OPT_ROUTE, OPT_NO_BASELINE, OPT_PLAN, OPT_PLAN_FORMAT, OPT_DB_DIR };

static const struct option long_opts[] = {
	{ "allocators", required_argument, NULL, 'a' },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "db", required_argument, NULL, OPT_DB },
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "touch", required_argument, NULL, OPT_TOUCH },
	{ "timing", required_argument, NULL, OPT_TIMING },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "counters", required_argument, NULL, OPT_COUNTERS },
	{ "access-pass", no_argument, NULL, OPT_ACCESS_PASS },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "cache-max", required_argument, NULL, OPT_CACHE_MAX },
	{ "workload-memory", required_argument, NULL, OPT_WORKLOAD_MEMORY },
	{ "cache-clean", no_argument, NULL, OPT_CACHE_CLEAN },
	{ "route", required_argument, NULL, OPT_ROUTE },
	{ "no-baseline", no_argument, NULL, OPT_NO_BASELINE },
	{ "plan", no_argument, NULL, OPT_PLAN },
	{ "plan-format", required_argument, NULL, OPT_PLAN_FORMAT },
	{ "db-dir", required_argument, NULL, OPT_DB_DIR },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* The long option the n bytes at name abbreviate (or spell out); NULL when
 * none does or several do (*matches says how many). */
static const struct option *long_named(const char *name, size_t n, int *matches)
{
	const struct option *found = NULL;
	*matches = 0;
	for (const struct option *l = long_opts; l->name; l++) {
		if (strncmp(l->name, name, n))
			continue;
		if (!l->name[n]) { /* spelled out: never ambiguous */
			*matches = 1;
			return l;
		}
		found = l;
		++*matches;
	}
	return *matches == 1 ? found : NULL;
}

/* The one line for an option getopt refused (c is '?' or ':'), naming the
 * option as typed. getopt leaves optind on a short option's cluster until
 * the cluster ends, so argv[optind - 1] names the failing option only when
 * it is long or ended its argument; optopt names a short one. */
static int bad_option(int c, char **argv)
{
	const char *as_typed = argv[optind - 1];
	int is_long = !strncmp(as_typed, "--", 2) && as_typed[2];
	size_t n = is_long ? strcspn(as_typed + 2, "=") : 0;
	if (c == ':')
		return is_long ? ar_cli_usage_error("option '%.*s' needs a value", (int)n + 2, as_typed)
			       : ar_cli_usage_error("option '-%c' needs a value", optopt);
	int matches = 0;
	const struct option *l = is_long ? long_named(as_typed + 2, n, &matches) : NULL;
	if (l && optopt == l->val && as_typed[n + 2] == '=')
		return ar_cli_usage_error("option '--%s' takes no value", l->name);
	if (optopt)
		return ar_cli_usage_error("unknown option '-%c'", optopt);
	if (matches > 1)
		return ar_cli_usage_error("option '%.*s' is ambiguous", (int)n + 2, as_typed);
	return ar_cli_usage_error("unknown option '%.*s'", (int)n + 2, as_typed);
}

void ar_plan_note(const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: note: ", ar_cli_tool());
	ar_esc_term(stderr, line);
	fputc('\n', stderr);
}

/* Another -a's NAMES, appended to o->names with a comma. 0, or -1. */
static int add_names(ar_replay_options_t *o, const char *names)
{
	size_t had = o->names ? strlen(o->names) : 0, n = strlen(names);
	char *m = realloc(o->names, had + n + 2);
	if (!m)
		return -1;
	if (had)
		m[had++] = ',';
	memcpy(m + had, names, n + 1);
	o->names = m;
	return 0;
}

/* A size option's or variable's value (ar_cli_parse_size). 0, or 1. */
static int take_size(const char *what, const char *v, unsigned long long *out)
{
	if (ar_cli_parse_size(v, out) == 0)
		return 0;
	return ar_cli_usage_error("%s needs a size such as 4G, 512M or 0 (no limit), not '%s'", what, v);
}

/* One option's value into o. 0, or the exit status of a bad value. */
static int take_option(int c, ar_replay_options_t *o)
{
	switch (c) {
	case 'a':
		if (add_names(o, optarg) != 0)
			return ar_cli_error(NULL, "out of memory");
		break;
	case OPT_CACHE_CLEAN: o->cache_clean = 1; break;
	case OPT_CACHE_MAX: return take_size("--cache-max", optarg, &o->cache_max);
	case OPT_WORKLOAD_MEMORY:
		if (ar_cli_parse_size(optarg, &o->workload_memory) != 0)
			return ar_cli_usage_error("--workload-memory needs a size such as 512M, 2G or 0 "
						  "(always stream), not '%s'", optarg);
		if (o->workload_memory == 0)
			o->workload_memory = 1; /* 0 would mean the default: stream everything */
		break;
	case OPT_ALL: o->all = 1; break;
	case OPT_DB: o->db_path = optarg; break;
	case OPT_TOUCH: o->touch = optarg; break;
	case OPT_TIMING: o->timing = optarg; break;
	case OPT_JSON: o->json = 1; break;
	case OPT_COUNTERS: o->counters = optarg; break;
	case OPT_ACCESS_PASS: o->access_pass = 1; break;
	case OPT_ROUTE: {
		char err[512];
		if (ar_route_add(&o->route, optarg, err, sizeof err) != 0)
			return ar_cli_usage_error("%s", err);
		break;
	}
	case OPT_LIST: o->list = 1; break;
	case OPT_NO_BASELINE: o->no_baseline = 1; break;
	case OPT_PLAN: o->plan = 1; break;
	case OPT_PLAN_FORMAT: o->plan_format = optarg; break;
	case OPT_DB_DIR: o->db_dir = optarg; break;
	case 'q': o->quiet = 1; break;
	case OPT_REPEAT:
		if (parse_uint(optarg, &o->repeat) || o->repeat == 0)
			return ar_cli_usage_error("--repeat needs a positive number, not '%s'", optarg);
		break;
	case OPT_TIMEOUT:
		if (parse_uint(optarg, &o->timeout_s))
			return ar_cli_usage_error("--timeout needs a number of seconds, not '%s'", optarg);
		break;
	}
	return 0;
}

/* --timing's value: every, none, or sample:N with 1 <= N <= 2^32 (the
 * worker's bound). 0, or -1. */
static int check_timing(const char *s)
{
	if (!strcmp(s, "every") || !strcmp(s, "none"))
		return 0;
	if (strncmp(s, "sample:", 7) != 0 || s[7] < '0' || s[7] > '9')
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s + 7, &end, 10);
	return *end || errno || v < 1 || v > (1ull << 32) ? -1 : 0;
}

/* The combinations and values the parser cannot check alone. 0, or 1. */
static int check_options(const ar_replay_options_t *o)
{
	if (strcmp(o->touch, "none") && strcmp(o->touch, "first") && strcmp(o->touch, "pages") &&
	    strcmp(o->touch, "all") && strcmp(o->touch, "auto"))
		return ar_cli_usage_error("--touch must be none, first, pages, all or auto, not '%s'", o->touch);
	if (strcmp(o->counters, "perf") && strcmp(o->counters, "sim") && strcmp(o->counters, "none"))
		return ar_cli_usage_error("--counters must be perf, sim or none, not '%s'", o->counters);
	if (check_timing(o->timing))
		return ar_cli_usage_error("--timing must be every, none or sample:N (N from 1 to "
					  "4294967296), not '%s'", o->timing);
	if (o->all && o->names)
		return ar_cli_usage_error("give either --all or -a NAMES, not both");
	/* SQLite writes a file it can reopen and lock: standard output is
	 * none. Refused before anything could create a file named "-". */
	if (ar_cli_is_stdio(o->db_path))
		return ar_cli_usage_error("--db needs a file: the results database cannot be standard "
					  "output (--json prints the runs there)");
	if (!o->db_path[0])
		return ar_cli_usage_error("--db needs a file name");
	if (strcmp(o->plan_format, "shell") && strcmp(o->plan_format, "json") && strcmp(o->plan_format, "slurm"))
		return ar_cli_usage_error("--plan-format must be shell, json or slurm, not '%s'", o->plan_format);
	if (!o->plan && (o->db_dir || strcmp(o->plan_format, "shell")))
		return ar_cli_usage_error("--plan-format and --db-dir go with --plan");
	if (o->db_dir && !o->db_dir[0])
		return ar_cli_usage_error("--db-dir needs a directory name");
	if (o->plan && o->json)
		return ar_cli_usage_error("--plan prints jobs, not runs: leave out --json (each job may use it)");
	if (o->cache_clean && o->ntraces)
		return ar_cli_usage_error("--cache-clean takes no trace: it empties the workload cache and "
					  "exits");
	if (!o->list && !o->cache_clean && !o->ntraces)
		return ar_cli_usage_error("no trace given");
	return 0;
}

int ar_plan_parse_options(int argc, char **argv, ar_replay_options_t *o)
{
	int rc;
	static char default_timing[32];
	snprintf(default_timing, sizeof default_timing, "sample:%d", AR_PLAN_SAMPLE_EVERY);
	*o = (ar_replay_options_t){ .db_path = "allocrr.db", .touch = "pages", .counters = "perf",
			  .timing = default_timing, .plan_format = "shell", .repeat = 3, .timeout_s = 300,
			  .cache_max = AR_WL_CACHE_MAX_DEFAULT };
	const char *env_max = getenv("ALLOCRR_CACHE_MAX");
	if (env_max && *env_max && (rc = take_size("ALLOCRR_CACHE_MAX", env_max, &o->cache_max)) != 0)
		return rc;
	opterr = 0; /* ours say it once, in our words (bad_option) */
	int c;
	while ((c = getopt_long(argc, argv, ":a:qh", long_opts, NULL)) != -1) {
		if (c == 'h') {
			usage();
			return AR_EXIT_OK;
		}
		if (c == OPT_VERSION)
			return ar_cli_version();
		if (c == '?' || c == ':')
			return bad_option(c, argv);
		if ((rc = take_option(c, o)) != 0)
			return rc;
	}
	o->traces = argv + optind; /* getopt_long moved the traces behind the options */
	o->ntraces = argc - optind;
	rc = check_options(o);
	return rc ? rc : -1;
}

/* ---- the plan ------------------------------------------------------------------- */

int ar_plan_list_allocators(void)
{
	printf("%-10s %-6s %-12s %-9s %s\n", "name", "kind", "version", "installed", "library");
	for (int i = 0; i < ar_registry_count(); i++) {
		ar_allocator_t a;
		if (ar_registry_get(i, &a) != 0)
			continue;
		printf("%-10s %-6s %-12s %-9s %s\n", a.name, a.kind == AR_ALLOC_OURS ? "ours" : "system",
		       a.version, a.installed ? "yes" : "no",
		       a.installed ? a.library : (a.package ? a.package : "(not built)"));
	}
	return AR_EXIT_OK;
}

/* Allocator `name` into *a. 0, 1 (unknown: usage) or 2 (not installed). */
static int find_allocator(const char *name, ar_allocator_t *a)
{
	if (ar_registry_find(name, a) != 0)
		return ar_cli_usage_error("unknown allocator '%s' (allocreplay --list shows the known "
					  "ones)", name);
	if (a->installed)
		return 0;
	if (a->kind == AR_ALLOC_OURS)
		return ar_cli_error(NULL, "allocator '%s' is not built: run make, or set ALLOCRR_LIBDIR "
				    "to the directory of liballocrr-%s.so", name, name);
	return ar_cli_error(NULL, "allocator '%s' is not installed: apt-get install %s", name,
			    a->package ? a->package : name);
}

/* The allocators of -a NAMES, else every installed one. 0, 1 or 2. */
static int resolve_allocators(const ar_replay_options_t *o, ar_plan_t *p)
{
	p->nallocs = 0;
	if (!o->names) {
		for (int i = 0; i < ar_registry_count() && p->nallocs < AR_PLAN_MAX_ALLOCS; i++)
			if (ar_registry_get(i, &p->allocs[p->nallocs]) == 0 && p->allocs[p->nallocs].installed)
				p->nallocs++;
		return p->nallocs ? 0 : ar_cli_usage_error("no allocator to run (allocreplay --list)");
	}
	char *copy = strdup(o->names), *save = NULL;
	if (!copy)
		return ar_cli_error(NULL, "out of memory");
	int rc = 0;
	unsigned char noted[AR_PLAN_MAX_ALLOCS] = { 0 };
	for (char *n = strtok_r(copy, ",", &save); n && !rc; n = strtok_r(NULL, ",", &save)) {
		ar_allocator_t a;
		if ((rc = find_allocator(n, &a)) != 0)
			break;
		/* By the registry's name, so that another spelling resolving to
		 * the same allocator counts as the same. */
		int seen = -1;
		for (int i = 0; i < p->nallocs && seen < 0; i++)
			if (!strcmp(p->allocs[i].name, a.name))
				seen = i;
		if (seen >= 0) {
			if (!noted[seen]++) /* one note per name */
				ar_plan_note("allocator %s is named more than once in -a: replaying it once",
					     a.name);
		} else if (p->nallocs == AR_PLAN_MAX_ALLOCS)
			rc = ar_cli_usage_error("at most %d allocators at once", AR_PLAN_MAX_ALLOCS);
		else
			p->allocs[p->nallocs++] = a;
	}
	free(copy);
	if (!rc && !p->nallocs)
		rc = ar_cli_usage_error("-a needs at least one allocator name");
	return rc;
}

/*
 * The worker binary into out: $ALLOCRR_WORKER when set (the user's choice
 * is never second-guessed), else next to this executable (the build tree),
 * else <exedir>/../libexec/allocrr/ (an installed tree: the worker is not a
 * user command). 0, or an error naming every place tried (exit status 2).
 */
static int find_worker(char *out, size_t cap)
{
	const char *env = getenv("ALLOCRR_WORKER");
	if (env && *env) {
		snprintf(out, cap, "%s", env);
		if (access(out, X_OK) == 0)
			return 0;
		return ar_cli_error(env, "cannot execute the worker named by ALLOCRR_WORKER: %s",
				    strerror(errno));
	}
	char dir[PATH_MAX - 64], tried[2][PATH_MAX];
	if (ar_cli_exe_dir(dir, sizeof dir) != 0)
		return ar_cli_error(NULL, "cannot find %s: /proc/self/exe is unreadable (set "
				    "ALLOCRR_WORKER)", WORKER_NAME);
	snprintf(tried[0], sizeof tried[0], "%s/%s", dir, WORKER_NAME);
	snprintf(tried[1], sizeof tried[1], "%s/../libexec/allocrr/%s", dir, WORKER_NAME);
	for (int i = 0; i < 2; i++)
		if (access(tried[i], X_OK) == 0) {
			/* The canonical path: callgrind profiles name objects by it. */
			if (!realpath(tried[i], out))
				snprintf(out, cap, "%s", tried[i]);
			return 0;
		}
	return ar_cli_error(NULL, "cannot find %s: tried %s and %s (build it with make, or set "
			    "ALLOCRR_WORKER)", WORKER_NAME, tried[0], tried[1]);
}

/* valgrind for --counters sim: ALLOCRR_VALGRIND, else the first on PATH.
 * 0, or -1 when there is none. */
static int find_valgrind(char *out, size_t cap)
{
	const char *env = getenv("ALLOCRR_VALGRIND");
	if (env && *env) {
		snprintf(out, cap, "%s", env);
		return access(out, X_OK);
	}
	const char *path = getenv("PATH");
	char *copy = strdup(path && *path ? path : "/usr/bin:/bin"), *save = NULL;
	if (!copy)
		return -1;
	int rc = -1;
	for (char *d = strtok_r(copy, ":", &save); d && rc; d = strtok_r(NULL, ":", &save)) {
		snprintf(out, cap, "%s/valgrind", d);
		rc = access(out, X_OK) == 0 ? 0 : -1;
	}
	free(copy);
	return rc;
}

/* --counters sim: valgrind, and a private directory for the profiles
 * (removed by ar_plan_cleanup). 0, or 2. */
static int plan_sim(ar_run_opts_t *run)
{
	if (find_valgrind(run->valgrind, sizeof run->valgrind) != 0)
		return ar_cli_error(NULL, "--counters sim needs valgrind: apt-get install valgrind, or "
				    "set ALLOCRR_VALGRIND");
	const char *tmp = getenv("TMPDIR");
	snprintf(run->sim_dir, sizeof run->sim_dir, "%s/allocreplay-sim.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(run->sim_dir)) {
		int rc = ar_cli_error(run->sim_dir, "cannot create a directory for callgrind profiles: "
				      "%s (set TMPDIR)", strerror(errno));
		run->sim_dir[0] = '\0';
		return rc;
	}
	return 0;
}

int ar_plan_make(const ar_replay_options_t *o, ar_plan_t *p)
{
	memset(p, 0, sizeof *p);
	int rc = resolve_allocators(o, p);
	if (rc)
		return rc;
	p->run = (ar_run_opts_t){ .touch = o->touch, .timeout_s = o->timeout_s,
				  .counters = o->counters, .timing = o->timing,
				  .access_pass = o->access_pass };
	if (o->workload_memory)
		snprintf(p->run.workload_memory, sizeof p->run.workload_memory, "%llu", o->workload_memory);
	if ((rc = find_worker(p->run.worker, sizeof p->run.worker)) != 0)
		return rc;
	if (!strcmp(o->counters, "sim") && (rc = plan_sim(&p->run)) != 0)
		return rc;
	snprintf(p->options, sizeof p->options,
		 "touch=%s repeat=%u timeout_s=%u counters=%s access_pass=%s timing=%s", o->touch,
		 o->repeat, o->timeout_s, o->counters, o->access_pass ? "on" : "off", o->timing);
	return 0;
}

void ar_plan_cleanup(ar_plan_t *p)
{
	if (p->run.sim_dir[0])
		rmdir(p->run.sim_dir); /* each profile was removed after it was read */
	p->run.sim_dir[0] = '\0';
}
