/*
 * allocreplay.c — the command: replay recorded traces against allocators,
 * one worker process per allocator x repetition, store every run in SQLite
 * and print a comparison table per trace (plan.c's usage text says how to
 * call it).
 *
 * main is a pipeline of named steps: parse the options and plan (plan.c:
 * resolve the allocators, find the worker and, for --counters sim,
 * valgrind) -> open the database -> per trace: compile or open its
 * workload, run the repetitions, print the table or JSON -> summary.
 *
 * Each trace is compiled once (wl_cache.h: keyed by its SHA-256, checked
 * against the trace before reuse, in a private directory with a size
 * limit), then the runs go one at a time — never two workers at once, they would measure
 * each other — repetition-major (all allocators once, then again), so a slow
 * drift of the machine spreads over every allocator instead of biasing one.
 *
 * --counters sim runs every worker under valgrind's callgrind (found on
 * PATH, or ALLOCRR_VALGRIND) with profiles in a private temporary
 * directory, removed at the end (sim_callgrind.h, docs/RESULTS.md).
 *
 * On a terminal, compiling and each run show a progress line on stderr
 * (progress.h; the worker counts its ops in a page it shares with us,
 * runner.c); never when stderr is not a terminal, nor with -q.
 *
 * Messages follow common/ar_cli.h: "allocreplay: PATH: message" once, a
 * bad command line is one line and a hint. Exit status: 0 when every
 * requested run succeeded; 1 usage error; 2 runtime error or any failed run
 * (each is named on stderr, and stored); 3 (AR_EXIT_WARN) when every run
 * succeeded but some trace was truncated or corrupt, so only its valid
 * prefix was replayed: a script cannot tell that from a warning on stderr.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ar_cli.h"
#include "ar_escape.h"
#include "ar_trace_id.h"
#include "plan.h"
#include "progress.h"
#include "replay.h"
#include "sites_child.h"
#include "wl_cache.h"

/* Where the runs go, and the tally behind the summary and exit status. */
typedef struct session {
	sqlite3 *db;
	ar_machine_t machine;
	ar_wl_cache_t cache;
	size_t runs, failed;
	size_t prefix_only; /* traces replayed as their valid prefix (truncated, corrupt) */
	int runtime_error;
	int first_json;
} session_t;

/* One trace being replayed: its facts, its workload and its runs. */
typedef struct trace_job {
	ar_trace_info_t info;
	char wl_path[PATH_MAX];
	ar_wl_lease_t lease; /* the cache keeps wl_path while we hold it */
	ar_workload_t wl;
	uint64_t total_ops; /* every stream's ops: what the worker counts */
	ar_run_t **runs;
	size_t nruns;
	ar_run_opts_t run; /* the plan's, with --touch auto decided for this trace */
	ar_route_job_t route; /* --route (route.h): the map and the worker's arguments */
} trace_job_t;

/* ---- per trace: compile or open the workload --------------------------------------- */

/* A message about path without a copy of path at its start (the reader's
 * and compiler's messages begin with it; ours name it already). */
static const char *without_path(const char *msg, const char *path)
{
	size_t n = strlen(path);
	if (!strncmp(msg, path, n) && msg[n] == ':' && msg[n + 1] == ' ')
		return msg + n + 2;
	return msg;
}

/* Trace facts for the traces table; the workload must already be open. */
static int trace_info(ar_trace_info_t *t, const char *path)
{
	ar_reader_t *r;
	ar_error_t e;
	if (ar_reader_open(&r, path, &e) != 0)
		return ar_cli_error(path, "%s", without_path(e.msg, path));
	const ar_header_t *h = ar_reader_header(r);
	snprintf(t->program, sizeof t->program, "%s", h->cmdline);
	t->recorded_unix_ns = h->start_wall_ns;
	t->file_bytes = ar_reader_file_size(r);
	ar_recorded_read(r, &t->rec);
	ar_reader_close(r);
	const char *base = strrchr(path, '/');
	snprintf(t->name, sizeof t->name, "%s", base ? base + 1 : path);
	snprintf(t->path, sizeof t->path, "%s", path);
	static const char *const st[] = { "complete", "truncated", "corrupt" };
	t->status = t->wl->trace_status <= 2 ? st[t->wl->trace_status] : "corrupt";
	return 0;
}

/* The compile's progress line: opened by the compiler's first call (the
 * trace is indexed, its event count known), so a cache hit draws nothing. */
typedef struct compile_line {
	char label[PATH_MAX + 16];
	int open;
} compile_line_t;

static void compile_progress(void *ctx, uint64_t done, uint64_t total)
{
	compile_line_t *l = ctx;
	if (!l->open) {
		ar_progress_start(l->label, "events", total);
		l->open = 1;
	}
	ar_progress_update(done);
}

/* Hash, compile (or find in the cache) and map the workload of path. */
static int open_workload(session_t *s, trace_job_t *j, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return ar_cli_error(path, "%s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return ar_cli_error(path, "not a regular file");
	if (ar_trace_sha256(path, j->info.sha256) != 0)
		return ar_cli_error(path, "cannot read: %s", strerror(errno));
	compile_line_t line = { .open = 0 };
	snprintf(line.label, sizeof line.label, "compiling %s", path);
	char err[2048];
	int rc = ar_wl_cache_get(&s->cache, path, j->info.sha256, &j->lease, &j->info.cache_hit,
				 ar_progress_enabled() ? compile_progress : NULL, &line, err, sizeof err);
	ar_progress_finish();
	if (rc != 0)
		return ar_cli_error(path, "cannot compile: %s (alloctrace verify %s says more)",
				    without_path(err, path), path);
	snprintf(j->wl_path, sizeof j->wl_path, "%s", j->lease.path);
	if (ar_wl_open(&j->wl, j->wl_path, err, sizeof err) != 0)
		return ar_cli_error(j->wl_path, "%s (delete it and retry)", without_path(err, j->wl_path));
	j->info.wl = j->wl.hdr;
	for (uint32_t i = 0; i < j->wl.hdr->nthreads; i++)
		j->total_ops += j->wl.threads[i].nops;
	if (trace_info(&j->info, path) != 0) {
		ar_wl_close(&j->wl);
		return AR_EXIT_RUNTIME;
	}
	return 0;
}

/* What the replay of this trace will not be (SPEC 5.5; docs/RESULTS.md,
 * traces.skipped_* and friends), said once per trace. A valid prefix only
 * makes the exit status AR_EXIT_WARN. */
static void warn_trace(session_t *s, const trace_job_t *j, const ar_replay_options_t *o)
{
	const char *path = j->info.path;
	const ar_wl_header_t *wh = j->wl.hdr;
	if (strcmp(j->info.status, "complete")) {
		s->prefix_only++;
		ar_cli_warn("trace %s is %s; replaying its valid prefix (%llu events; exit status %d)",
			    path, j->info.status, (unsigned long long)wh->events, AR_EXIT_WARN);
	}
	if (wh->skipped_unknown_frees || wh->unknown_reallocs || wh->lost_blocks || wh->skipped_unknown_ops)
		ar_cli_warn("trace %s: skipped %llu free(s) of pointers it never returned and %llu "
			    "event(s) of unknown ops; replayed %llu realloc(s) of such pointers as "
			    "realloc(NULL, n); %llu address(es) returned again while live (their blocks "
			    "stay allocated)", path, (unsigned long long)wh->skipped_unknown_frees,
			    (unsigned long long)wh->skipped_unknown_ops,
			    (unsigned long long)wh->unknown_reallocs, (unsigned long long)wh->lost_blocks);
	if (o->access_pass && wh->nthreads != 1)
		ar_cli_warn("--access-pass skipped for %s: it has %u threads, and the pass supports "
			    "single-thread traces only (another thread could free a block under the "
			    "walk)", path, wh->nthreads);
	uint64_t limit = o->workload_memory ? o->workload_memory : AR_WL_RESIDENT_DEFAULT;
	if (ar_wl_decoded_bytes(&j->wl) > limit)
		ar_plan_note("%s: the workload's %llu MiB of decoded ops pass --workload-memory "
			    "(%llu MiB): each worker streams it a segment at a time, which adds the "
			    "decoding (about 5 ns per op here; docs/BENCHMARKS.md) to wall time and "
			    "ops/s, not to latencies, RSS or faults", path,
			    (unsigned long long)(ar_wl_decoded_bytes(&j->wl) >> 20),
			    (unsigned long long)(limit >> 20));
}

/* ---- per trace: --touch auto ------------------------------------------------------- */

/* How many bytes above the recorded peak RSS a replay may make resident
 * before page touching is judged to overstate the program (the recorded RSS
 * samples every 10 ms, and the worker's own baseline differs a little). */
#define TOUCH_AUTO_SLACK 1.10

/* --touch auto: one untimed calibration replay under the recorded allocator
 * with pages touched (not stored). When the RSS the recording started with
 * plus that replay's heap peak stays within TOUCH_AUTO_SLACK of the
 * recorded peak RSS, the program did touch what it allocated: "pages".
 * Otherwise it did not (a database's page cache allocated whole, used in
 * part): "first", which makes one page per block resident. Without a
 * recorded peak RSS or a recorded allocator to calibrate with: "pages",
 * said. */
static const char *choose_touch(const ar_plan_t *p, const trace_job_t *j)
{
	const ar_recorded_t *rec = &j->info.rec;
	ar_allocator_t a;
	if (!rec->allocator[0] || isnan(rec->peak_rss_bytes) || isnan(rec->start_rss_bytes) ||
	    ar_registry_find(rec->allocator, &a) != 0 || !a.installed) {
		ar_cli_warn("%s: --touch auto: pages (%s)", j->info.path,
			    rec->reason[0] ? rec->reason : "the recorded allocator is not installed");
		return "pages";
	}
	ar_run_opts_t cal = p->run;
	cal.touch = "pages";
	cal.timing = "none";
	ar_run_t r;
	memset(&r, 0, sizeof r);
	ar_run_worker(&cal, &a, j->wl_path, 0, &r);
	ar_res_run_t f;
	ar_db_run_figures(&j->info, &r, &f);
	double resident = rec->start_rss_bytes + f.fig[AR_RES_HEAP];
	const char *pick = "pages";
	if (strcmp(r.status, AR_ST_OK) || isnan(f.fig[AR_RES_HEAP]))
		ar_cli_warn("%s: --touch auto: pages (the calibration replay under %s failed: %s)", j->info.path,
			    a.name, r.reason);
	else {
		pick = resident > rec->peak_rss_bytes * TOUCH_AUTO_SLACK ? "first" : "pages";
		ar_cli_warn("%s: --touch auto: %s (touching every page, replay under %s makes %.1f MiB "
			    "resident against the recorded program's peak of %.1f MiB)", j->info.path, pick,
			    a.name, resident / 1048576.0, rec->peak_rss_bytes / 1048576.0);
	}
	ar_run_free(&r);
	return pick;
}

/* ---- per trace: the repetitions ---------------------------------------------------- */

/* Say what went wrong (or oddly) in run r, which is stored either way. */
static void report_run(session_t *s, const ar_run_t *r, const char *trace)
{
	s->runs++;
	if (strcmp(r->status, AR_ST_OK)) {
		s->failed++;
		ar_cli_error(NULL, "%s on %s, repetition %d: %s: %s", r->allocator, trace, r->repetition,
			     r->status, r->reason);
	} else if (r->reason[0]) { /* ok, but NULLs the trace did not have */
		ar_cli_warn("%s on %s, repetition %d: %s", r->allocator, trace, r->repetition, r->reason);
	}
}

/* One worker: run, report, store. */
static void run_one(const ar_replay_options_t *o, const ar_plan_t *p, session_t *s, trace_job_t *j,
		    const ar_allocator_t *a, unsigned rep, size_t k)
{
	ar_run_t *r = j->runs[k] = calloc(1, sizeof *r);
	if (!r) {
		s->runtime_error = 1;
		ar_cli_error(NULL, "out of memory");
		return;
	}
	char label[512];
	snprintf(label, sizeof label, "[%zu/%zu] %s rep %u on %s", k + 1, j->nruns, a->name, rep,
		 j->info.name);
	/* --route: the second half of the list is the routed twins, named
	 * BASE+NAME[RULE]; the worker runs under BASE with the routes. */
	ar_allocator_t base = *a;
	ar_run_opts_t run = j->run;
	char name[sizeof r->allocator], options[sizeof p->options + 600];
	snprintf(options, sizeof options, "%s", p->options);
	const char *plus = strchr(a->name, '+');
	if (plus) {
		snprintf(name, sizeof name, "%s", a->name);
		name[plus - a->name] = '\0';
		base.name = name;
		run.extra_args = j->route.args;
		snprintf(options, sizeof options, "%s route=%s", p->options, o->route.option);
	}
	ar_progress_start(label, "ops", j->total_ops);
	ar_run_worker(&run, &base, j->wl_path, (int)rep, r);
	ar_progress_finish();
	snprintf(r->allocator, sizeof r->allocator, "%s", a->name);
	report_run(s, r, j->info.name);
	char err[2048];
	if (ar_db_store_run(s->db, &j->info, a, &s->machine, options, r, err, sizeof err) < 0) {
		ar_cli_error(o->db_path, "cannot store the run: %s", err);
		s->runtime_error = 1;
	}
}

/* The allocators this trace runs under: the plan's, plus the one the
 * recorded program ran on when the plan lacks it — it is the baseline every
 * ratio and prediction is against (recorded.c, results/predict.c). */
static int trace_allocators(const ar_replay_options_t *o, const ar_plan_t *p, const trace_job_t *j,
			    ar_allocator_t *out)
{
	int n = 0;
	for (int i = 0; i < p->nallocs; i++)
		out[n++] = p->allocs[i];
	const char *rec = j->info.rec.allocator;
	if (!rec[0] || o->no_baseline) /* --plan's jobs: the baseline is a job of its own */
		return n;
	for (int i = 0; i < n; i++)
		if (!strcmp(out[i].name, rec))
			return n;
	if (ar_registry_find(rec, &out[n]) == 0 && out[n].installed) {
		ar_cli_warn("%s: also replaying %s, which the recorded program ran on: every ratio and "
			    "prediction is against it", j->info.path, rec);
		return n + 1;
	}
	return n;
}

/* Every allocator once, then again: repetition-major (see the top). */
static int run_repetitions(const ar_replay_options_t *o, const ar_plan_t *p, session_t *s, trace_job_t *j)
{
	ar_allocator_t allocs[2 * (AR_PLAN_MAX_ALLOCS + 1)];
	char routed_names[AR_PLAN_MAX_ALLOCS + 1][sizeof j->runs[0]->allocator];
	int nallocs = trace_allocators(o, p, j, allocs);
	for (int ai = 0; j->route.active && ai < nallocs; ai++) { /* the routed twins */
		allocs[nallocs + ai] = allocs[ai];
		snprintf(routed_names[ai], sizeof routed_names[ai], "%.31s%.96s", allocs[ai].name,
			 o->route.label);
		allocs[nallocs + ai].name = routed_names[ai];
	}
	if (j->route.active)
		nallocs *= 2;
	j->nruns = (size_t)o->repeat * (size_t)nallocs;
	j->runs = calloc(j->nruns, sizeof *j->runs);
	if (!j->runs)
		return ar_cli_error(NULL, "out of memory");
	size_t k = 0;
	for (unsigned rep = 1; rep <= o->repeat; rep++)
		for (int ai = 0; ai < nallocs; ai++, k++)
			run_one(o, p, s, j, &allocs[ai], rep, k);
	return 0;
}

/* ---- per trace: the table or JSON ---------------------------------------------------- */

/* The comparison of the trace's runs: its predictions stored with the
 * runs, then printed as a table or JSON. */
static void print_trace(const ar_replay_options_t *o, session_t *s, const trace_job_t *j)
{
	size_t n = 0; /* the runs that exist (all, unless memory ran out) */
	while (n < j->nruns && j->runs[n])
		n++;
	ar_res_trace_t rt;
	ar_table_build(&rt, &j->info, j->runs, n);
	char err[2048];
	if (ar_db_store_predictions(s->db, &rt, err, sizeof err) != 0) {
		ar_cli_error(o->db_path, "cannot store the predictions: %s", err);
		s->runtime_error = 1;
	}
	if (o->json) {
		ar_json_print_built(stdout, &rt, s->first_json);
		s->first_json = 0;
	} else {
		ar_table_print_built(stdout, &j->info, &rt);
		if (!strcmp(o->counters, "sim"))
			printf("(--counters sim: the workers ran under valgrind, untimed: the speed, latency and "
			       "RSS above are valgrind's, not stored as the allocator's; the simulated counters "
			       "are in %s: allocreport --db %s)\n", o->db_path, o->db_path);
	}
	ar_res_trace_free(&rt);
}

static void free_job(session_t *s, trace_job_t *j)
{
	for (size_t i = 0; j->runs && i < j->nruns; i++)
		if (j->runs[i]) {
			ar_run_free(j->runs[i]);
			free(j->runs[i]);
		}
	free(j->runs);
	if (j->wl.map)
		ar_wl_close(&j->wl);
	ar_wl_cache_release(&s->cache, &j->lease);
	ar_route_release(&j->route);
}

/* One trace: workload, repetitions, table. A trace that cannot be opened is skipped
 * (runtime error), the others still run. */
static void replay_trace(const ar_replay_options_t *o, const ar_plan_t *p, session_t *s, const char *path)
{
	trace_job_t *j = calloc(1, sizeof *j);
	if (j)
		j->lease.fd = -1;
	if (!j || open_workload(s, j, path) != 0) {
		if (!j)
			ar_cli_error(NULL, "out of memory");
		else
			free_job(s, j);
		s->runtime_error = 1;
		free(j);
		return;
	}
	warn_trace(s, j, o);
	char err[2048];
	if (ar_route_prepare(&j->route, &o->route, path, &j->wl, err, sizeof err) != 0) {
		ar_cli_error(NULL, "%s", err);
		free_job(s, j);
		s->runtime_error = 1;
		free(j);
		return;
	}
	uint64_t allocs = 0;
	for (int k = 0; k <= AR_ROUTE_MAX; k++)
		allocs += j->route.routed[k];
	for (int k = 1; j->route.active && k <= o->route.nnames; k++)
		ar_plan_note("%s: --route sends %llu of %llu allocations to %s", j->info.name,
			     (unsigned long long)j->route.routed[k], (unsigned long long)allocs,
			     o->route.names[k - 1]);
	j->run = p->run;
	if (!strcmp(o->touch, "auto"))
		j->run.touch = choose_touch(p, j);
	if (run_repetitions(o, p, s, j) != 0)
		s->runtime_error = 1;
	else
		print_trace(o, s, j);
	ar_sites_child_store(path, o->db_path); /* a trace with stacks: its sites (sites_child.h) */
	free_job(s, j);
	free(j);
}

/* ---- the session: database open to summary --------------------------------------- */

/* The cache's notes (why a workload was recompiled, what was evicted). */
static void cache_note(void *ctx, const char *line)
{
	(void)ctx;
	ar_plan_note("%s", line);
}

static int open_session(const ar_replay_options_t *o, session_t *s)
{
	memset(s, 0, sizeof *s);
	s->first_json = 1;
	char err[2048];
	s->cache.max_bytes = o->cache_max;
	s->cache.note = cache_note;
	if (ar_wl_cache_open(&s->cache, 1, err, sizeof err) != 0)
		return ar_cli_error(NULL, "%s", err); /* names the directory */
	if (ar_db_open(o->db_path, &s->db, err, sizeof err) != 0)
		return ar_cli_error(NULL, "%s", err); /* db.c's messages name the file */
	ar_machine_probe(&s->machine);
	return 0;
}

/* Close everything; the exit status of the whole command. */
static int end_session(const ar_replay_options_t *o, ar_plan_t *p, session_t *s)
{
	if (s->db)
		ar_db_close(s->db);
	ar_plan_cleanup(p);
	if (s->failed)
		ar_cli_error(NULL, "%zu of %zu runs failed (see above; stored in %s with their reasons)",
			     s->failed, s->runs, o->db_path);
	if (s->failed || s->runtime_error)
		return AR_EXIT_RUNTIME;
	return s->prefix_only ? AR_EXIT_WARN : AR_EXIT_OK;
}

/* --cache-clean: empty the workload cache, say what was freed. */
static int clean_cache(const ar_replay_options_t *o)
{
	ar_wl_cache_t c = { .max_bytes = o->cache_max };
	char err[2048], a[32], b[32];
	int rc = ar_wl_cache_open(&c, 0, err, sizeof err);
	if (rc < 0)
		return ar_cli_error(NULL, "%s", err);
	ar_wl_cache_tally_t t = { 0 };
	if (rc == 0 && ar_wl_cache_clean(&c, &t, err, sizeof err) != 0)
		return ar_cli_error(NULL, "%s", err);
	printf("workload cache ");
	ar_esc_term(stdout, c.dir);
	printf(": removed %u file(s), %s freed", t.removed,
	       ar_res_fmt_bytes(a, sizeof a, (double)t.removed_bytes));
	if (t.in_use)
		printf("; kept %u workload(s) in use by a running allocreplay (%s)", t.in_use,
		       ar_res_fmt_bytes(b, sizeof b, (double)t.in_use_bytes));
	printf("\n");
	return AR_EXIT_OK;
}

int main(int argc, char **argv)
{
	ar_cli_init("allocreplay");
	static ar_replay_options_t o;
	static ar_plan_t plan; /* a few hundred KiB of paths: not on the stack */
	static session_t s;
	int rc = ar_plan_parse_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.list)
		return ar_plan_list_allocators();
	if (o.cache_clean)
		return clean_cache(&o);
	if (o.plan) { /* the jobs, for a job engine to run (plan_jobs.c) */
		if ((rc = ar_plan_make(&o, &plan)) == 0)
			rc = ar_plan_jobs_print(stdout, &o, &plan, argv[0]);
		ar_plan_cleanup(&plan);
		return rc;
	}
	if ((rc = ar_plan_make(&o, &plan)) != 0 || (rc = open_session(&o, &s)) != 0) {
		end_session(&o, &plan, &s);
		return rc;
	}
	const char *term = getenv("TERM");
	ar_progress_enable(!o.quiet && isatty(STDERR_FILENO) && !(term && !strcmp(term, "dumb")));
	if (o.json)
		ar_json_begin(stdout, o.db_path);
	for (int i = 0; i < o.ntraces; i++)
		replay_trace(&o, &plan, &s, o.traces[i]);
	if (o.json)
		ar_json_end(stdout);
	return end_session(&o, &plan, &s);
}
