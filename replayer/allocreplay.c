/*
 * allocreplay.c — the command: replay recorded traces against allocators,
 * one worker process per allocator x repetition, store every run in SQLite
 * and print a comparison table per trace.
 *
 *   allocreplay TRACE... [--all | -a NAME[,NAME...]] [--db FILE] [--repeat N]
 *               [--timeout S] [--touch none|first|pages|all] [--json]
 *               [--counters perf|sim|none] [--access-pass]
 *   allocreplay --list
 *
 * Each trace is compiled once (wl_cache.c: keyed by its SHA-256), then the
 * runs go one at a time — never two workers at once, they would measure
 * each other — repetition-major (all allocators once, then again), so a slow
 * drift of the machine spreads over every allocator instead of biasing one.
 *
 * --counters sim runs every worker under valgrind's callgrind (found on
 * PATH, or ALLOCRR_VALGRIND) with profiles in a private temporary
 * directory, removed at the end (sim_callgrind.h, docs/RESULTS.md).
 *
 * Exit status: 0 when every requested run succeeded; 1 usage error; 2
 * runtime error or any failed run (each is named on stderr, and stored).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay.h"
#include "wl_cache.h"

#define MAX_ALLOCS 32

static void usage(FILE *f)
{
	fprintf(f,
		"usage: allocreplay TRACE... [--all | -a NAME[,NAME...]] [--db FILE] [--repeat N]\n"
		"                   [--timeout S] [--touch none|first|pages|all] [--json]\n"
		"                   [--counters perf|sim|none] [--access-pass]\n"
		"       allocreplay --list\n"
		"Replays each trace under each allocator (default: every installed one), N times\n"
		"(default 3), one worker process at a time; stores the runs in FILE (default\n"
		"allocrr.db, see docs/RESULTS.md) and prints a comparison table per trace.\n"
		"  --timeout S  kill a worker after S seconds (default 300; 0 = never)\n"
		"  --touch      write to new blocks: none, first byte, one byte per page (default),\n"
		"               or all bytes; outside the timed window\n"
		"  --json       print the runs as JSON instead of tables\n"
		"  --counters   cache statistics: perf = hardware counters over the replay window\n"
		"               (default; NULL with the kernel's reason where refused), sim =\n"
		"               valgrind callgrind cache simulation, deterministic, 30-90x\n"
		"               slower (timeout scaled), none\n"
		"  --access-pass  at the live-bytes peak, read and write every live block once,\n"
		"               timed apart (access_pass_ns; single-thread traces)\n"
		"  --list       list the allocators the registry knows\n");
}

static int list_registry(void)
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
	return 0;
}

/* The worker binary: $ALLOCRR_WORKER, else next to this executable. */
static int find_worker(char *out, size_t cap)
{
	const char *env = getenv("ALLOCRR_WORKER");
	if (env && *env) {
		snprintf(out, cap, "%s", env);
	} else {
		char exe[PATH_MAX - 32]; /* room for the worker's name */
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		if (n <= 0)
			return -1;
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (!slash)
			return -1;
		*slash = '\0';
		snprintf(out, cap, "%s/allocreplay-worker", exe);
	}
	return access(out, X_OK);
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
	for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(out, cap, "%s/valgrind", d);
		if (access(out, X_OK) == 0) {
			rc = 0;
			break;
		}
	}
	free(copy);
	return rc;
}

static int parse_uint(const char *s, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || errno || v > 1000000)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* Trace facts for the traces table; the workload must already be open. */
static int trace_info(ar_trace_info_t *t, const char *path, char *err, size_t cap)
{
	ar_reader_t *r;
	ar_error_t e;
	if (ar_reader_open(&r, path, &e) != 0) {
		snprintf(err, cap, "%s", e.msg);
		return -1;
	}
	const ar_header_t *h = ar_reader_header(r);
	snprintf(t->program, sizeof t->program, "%s", h->cmdline);
	t->recorded_unix_ns = h->start_wall_ns;
	t->file_bytes = ar_reader_file_size(r);
	ar_reader_close(r);
	const char *base = strrchr(path, '/');
	snprintf(t->name, sizeof t->name, "%s", base ? base + 1 : path);
	snprintf(t->path, sizeof t->path, "%s", path);
	static const char *const st[] = { "complete", "truncated", "corrupt" };
	t->status = t->wl->trace_status <= 2 ? st[t->wl->trace_status] : "corrupt";
	return 0;
}

int main(int argc, char **argv)
{
	const char *db_path = "allocrr.db", *touch = "pages", *names = NULL, *counters = "perf";
	int access_pass = 0;
	unsigned repeat = 3, timeout = 300;
	int all = 0, json = 0, list = 0;
	const char *traces[256];
	int ntraces = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int has_next = i + 1 < argc;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--all")) {
			all = 1;
		} else if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--list")) {
			list = 1;
		} else if ((!strcmp(a, "-a") || !strcmp(a, "--allocators")) && has_next) {
			names = argv[++i];
		} else if (!strcmp(a, "--db") && has_next) {
			db_path = argv[++i];
		} else if (!strcmp(a, "--touch") && has_next) {
			touch = argv[++i];
		} else if (!strcmp(a, "--counters") && has_next) {
			counters = argv[++i];
		} else if (!strcmp(a, "--access-pass")) {
			access_pass = 1;
		} else if (!strcmp(a, "--repeat") && has_next) {
			if (parse_uint(argv[++i], &repeat) || repeat == 0) {
				fprintf(stderr, "allocreplay: --repeat needs a positive number\n");
				return 1;
			}
		} else if (!strcmp(a, "--timeout") && has_next) {
			if (parse_uint(argv[++i], &timeout)) {
				fprintf(stderr, "allocreplay: --timeout needs a number of seconds\n");
				return 1;
			}
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "allocreplay: unknown or incomplete option '%s'\n", a);
			usage(stderr);
			return 1;
		} else if (ntraces < (int)(sizeof traces / sizeof *traces)) {
			traces[ntraces++] = a;
		}
	}
	if (list)
		return list_registry();
	if (!ntraces) {
		usage(stderr);
		return 1;
	}
	if (strcmp(touch, "none") && strcmp(touch, "first") && strcmp(touch, "pages") &&
	    strcmp(touch, "all")) {
		fprintf(stderr, "allocreplay: --touch must be none, first, pages or all\n");
		return 1;
	}
	if (strcmp(counters, "perf") && strcmp(counters, "sim") && strcmp(counters, "none")) {
		fprintf(stderr, "allocreplay: --counters must be perf, sim or none\n");
		return 1;
	}
	if (all && names) {
		fprintf(stderr, "allocreplay: give either --all or -a NAMES, not both\n");
		return 1;
	}

	/* ---- allocators ---- */
	static ar_allocator_t allocs[MAX_ALLOCS];
	int nallocs = 0;
	if (names) {
		char *copy = strdup(names), *save = NULL;
		for (char *n = strtok_r(copy, ",", &save); n && nallocs < MAX_ALLOCS;
		     n = strtok_r(NULL, ",", &save)) {
			if (ar_registry_find(n, &allocs[nallocs]) != 0) {
				fprintf(stderr, "allocreplay: unknown allocator '%s' (allocreplay --list shows "
						"the known ones)\n", n);
				free(copy);
				return 1;
			}
			if (!allocs[nallocs].installed) {
				ar_allocator_t *x = &allocs[nallocs];
				if (x->kind == AR_ALLOC_OURS)
					fprintf(stderr, "allocreplay: allocator '%s' is not built: run make, or "
							"set ALLOCRR_LIBDIR to the directory of liballocrr-%s.so\n",
						n, n);
				else
					fprintf(stderr, "allocreplay: allocator '%s' is not installed: apt-get "
							"install %s\n", n, x->package ? x->package : n);
				free(copy);
				return 2;
			}
			nallocs++;
		}
		free(copy);
	} else {
		for (int i = 0; i < ar_registry_count() && nallocs < MAX_ALLOCS; i++)
			if (ar_registry_get(i, &allocs[nallocs]) == 0 && allocs[nallocs].installed)
				nallocs++;
	}
	if (!nallocs) {
		fprintf(stderr, "allocreplay: no allocator to run\n");
		return 1;
	}

	ar_run_opts_t opts = { .touch = touch, .timeout_s = timeout, .counters = counters,
			       .access_pass = access_pass };
	if (!strcmp(counters, "sim")) {
		if (find_valgrind(opts.valgrind, sizeof opts.valgrind) != 0) {
			fprintf(stderr, "allocreplay: --counters sim needs valgrind: apt-get install "
					"valgrind, or set ALLOCRR_VALGRIND\n");
			return 2;
		}
		const char *tmp = getenv("TMPDIR");
		snprintf(opts.sim_dir, sizeof opts.sim_dir, "%s/allocreplay-sim.XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(opts.sim_dir)) {
			fprintf(stderr, "allocreplay: cannot create a directory for callgrind profiles "
					"(%s): %s (set TMPDIR)\n", opts.sim_dir, strerror(errno));
			return 2;
		}
	}
	if (find_worker(opts.worker, sizeof opts.worker) != 0) {
		fprintf(stderr, "allocreplay: cannot execute the worker %s: %s (build it with make, or "
				"set ALLOCRR_WORKER)\n", opts.worker, strerror(errno));
		return 2;
	}
	char err[2048];
	sqlite3 *db;
	if (ar_db_open(db_path, &db, err, sizeof err) != 0) {
		fprintf(stderr, "allocreplay: %s\n", err);
		return 2;
	}
	ar_machine_t machine;
	ar_machine_probe(&machine);
	char options[256];
	snprintf(options, sizeof options, "touch=%s repeat=%u timeout_s=%u counters=%s access_pass=%s",
		 touch, repeat, timeout, counters, access_pass ? "on" : "off");
	int progress = isatty(2);
	size_t failed = 0, total = 0;
	int runtime_error = 0;
	if (json)
		printf("[");
	int first_json = 1;

	for (int ti = 0; ti < ntraces; ti++) {
		const char *path = traces[ti];
		ar_trace_info_t t;
		memset(&t, 0, sizeof t);
		struct stat st;
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
			fprintf(stderr, "allocreplay: cannot read trace %s: %s\n", path,
				errno ? strerror(errno) : "not a regular file");
			runtime_error = 1;
			continue;
		}
		if (ar_trace_sha256(path, t.sha256) != 0) {
			fprintf(stderr, "allocreplay: cannot read trace %s: %s\n", path, strerror(errno));
			runtime_error = 1;
			continue;
		}
		char wl_path[PATH_MAX];
		if (progress)
			fprintf(stderr, "compiling %s ...\r", path);
		if (ar_wl_cache_get(path, t.sha256, wl_path, sizeof wl_path, &t.cache_hit, err, sizeof err)) {
			fprintf(stderr, "allocreplay: cannot compile trace %s: %s (alloctrace verify %s "
					"says more)\n", path, err, path);
			runtime_error = 1;
			continue;
		}
		ar_workload_t wl;
		if (ar_wl_open(&wl, wl_path, err, sizeof err) != 0) {
			fprintf(stderr, "allocreplay: %s (delete it and retry)\n", err);
			runtime_error = 1;
			continue;
		}
		t.wl = wl.hdr;
		if (trace_info(&t, path, err, sizeof err) != 0) {
			fprintf(stderr, "allocreplay: %s\n", err);
			ar_wl_close(&wl);
			runtime_error = 1;
			continue;
		}
		if (strcmp(t.status, "complete"))
			fprintf(stderr, "allocreplay: warning: trace %s is %s; replaying its valid prefix "
					"(%llu events)\n", path, t.status, (unsigned long long)wl.hdr->events);
		/* What the compiler could not replay as recorded (SPEC 5.5;
		 * docs/RESULTS.md, traces.skipped_* and friends). */
		const ar_wl_header_t *wh = wl.hdr;
		if (wh->skipped_unknown_frees || wh->unknown_reallocs || wh->lost_blocks || wh->skipped_unknown_ops)
			fprintf(stderr, "allocreplay: warning: trace %s: skipped %llu free(s) of pointers it never "
					"returned and %llu event(s) of unknown ops; replayed %llu realloc(s) of such "
					"pointers as realloc(NULL, n); %llu address(es) returned again while live "
					"(their blocks stay allocated)\n", path,
				(unsigned long long)wh->skipped_unknown_frees, (unsigned long long)wh->skipped_unknown_ops,
				(unsigned long long)wh->unknown_reallocs, (unsigned long long)wh->lost_blocks);
		if (access_pass && wl.hdr->nthreads != 1)
			fprintf(stderr, "allocreplay: warning: --access-pass skipped for %s: it has %u "
					"threads, and the pass supports single-thread traces only (another "
					"thread could free a block under the walk)\n", path, wl.hdr->nthreads);
		size_t nruns = (size_t)repeat * (size_t)nallocs, k = 0;
		ar_run_t **runs = calloc(nruns, sizeof *runs);
		for (unsigned rep = 1; rep <= repeat; rep++)
			for (int ai = 0; ai < nallocs; ai++) {
				ar_run_t *r = runs[k++] = calloc(1, sizeof **runs);
				if (progress)
					fprintf(stderr, "\033[K[%zu/%zu] %s: %s, repetition %u ...\r", k, nruns,
						t.name, allocs[ai].name, rep);
				ar_run_worker(&opts, &allocs[ai], wl_path, (int)rep, r);
				total++;
				if (strcmp(r->status, AR_ST_OK)) {
					failed++;
					fprintf(stderr, "%sallocreplay: %s on %s, repetition %u: %s: %s\n",
						progress ? "\033[K" : "", allocs[ai].name, t.name, rep, r->status,
						r->reason);
				} else if (r->reason[0]) { /* ok, but NULLs the trace did not have */
					fprintf(stderr, "%sallocreplay: warning: %s on %s, repetition %u: %s\n",
						progress ? "\033[K" : "", allocs[ai].name, t.name, rep, r->reason);
				}
				if (ar_db_store_run(db, &t, &allocs[ai], &machine, options, r, err,
						    sizeof err) < 0) {
					fprintf(stderr, "allocreplay: cannot store the run in %s: %s\n", db_path,
						err);
					runtime_error = 1;
				}
			}
		if (progress)
			fprintf(stderr, "\033[K");
		if (json) {
			ar_json_runs(stdout, &t, runs, nruns, first_json);
			first_json = 0;
		} else {
			ar_table_print(stdout, &t, runs, nruns);
			if (!strcmp(counters, "sim"))
				printf("(--counters sim: the workers ran under valgrind, untimed: the speed, "
				       "latency and RSS above are valgrind's, not stored as the allocator's; the "
				       "simulated counters are in %s: allocreport --db %s)\n", db_path, db_path);
		}
		for (size_t i = 0; i < nruns; i++) {
			ar_run_free(runs[i]);
			free(runs[i]);
		}
		free(runs);
		ar_wl_close(&wl);
	}
	if (json)
		printf("]\n");
	ar_db_close(db);
	if (opts.sim_dir[0])
		rmdir(opts.sim_dir); /* each profile was removed after it was read */
	if (failed)
		fprintf(stderr, "allocreplay: %zu of %zu runs failed (see above; stored in %s with their "
				"reasons)\n", failed, total, db_path);
	return failed || runtime_error ? 2 : 0;
}
