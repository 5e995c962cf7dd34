/*
 * load.c — the comparison read from a results database (docs/RESULTS.md):
 * one ar_res_trace_t per trace x machine, in the order the trace was first
 * replayed; in each, one ar_res_alloc_t per allocator (glibc first) whose
 * runs (run_summary) go through compare.c like allocreplay's own, its failed
 * runs with their reason, and its hardware counters (NULL values keep their
 * reason); timelines and latency histograms on demand.
 *
 * Traces that are "the same scenario at different thread counts" form a
 * thread-scaling series: their recorded command lines (traces.program) are
 * equal once a `--threads N` / `--threads=N` argument is removed (what
 * `alloctrace gen SCENARIO --threads N` records), and they ran on the same
 * host. Traces without such an argument are never put in a series.
 *
 * What the recorded program ran on and measured (traces.recorded_*) and the
 * per-run timing, prediction and fidelity columns arrived with schema 5: an
 * older database (read-only here, so never migrated) loads with them NULL.
 *
 * A machine is what every run stores of the one it ran on (runs.host,
 * cpu_model, cpus, kernel, glibc_version: replayer/machine.c), compared
 * byte for byte: runs of one trace on two machines (a job list spread over
 * hosts, docs/DISTRIBUTED.md) are two comparisons, with a note on stderr,
 * never one silently mixing them — unless the caller asks for
 * across_machines, which pools every machine's runs of a trace (said too).
 * The versions of the other allocators are per run (runs.allocator_version),
 * not part of the machine: an allocator replayed at two versions on one
 * machine is named in a note.
 *
 * The database is opened read-only; nothing here writes.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ar_cli.h"
#include "ar_escape.h"
#include "ar_results.h"

/* The machine a run ran on, as one value: SQL over runs aliased r. Fields
 * joined by a unit separator, which no field of machine.c's holds. The view
 * allocator_comparison (results/sql/0009) repeats both expressions, and
 * ar_res_machine_text (format.c) the text: change them together. */
#define MACHINE_KEY \
	"(coalesce(r.host, '') || char(31) || coalesce(r.cpu_model, '') || char(31) ||" \
	" coalesce(r.cpus, '') || char(31) || coalesce(r.kernel, '') || char(31) ||" \
	" coalesce(r.glibc_version, ''))"
/* The machine for people: "HOST (CPU, N CPUs, KERNEL, glibc V)". */
#define MACHINE_TEXT \
	"(coalesce(r.host, '(unknown host)') || ' (' || coalesce(r.cpu_model, 'unknown CPU') || ', ' ||" \
	" coalesce(r.cpus, '?') || ' CPUs, ' || coalesce(r.kernel, 'unknown kernel') || ', glibc ' ||" \
	" coalesce(r.glibc_version, '?') || ')')"

static void complain(const char *path, const char *what, sqlite3 *db)
{
	ar_cli_error(path, "%s%s%s", what, db ? ": " : "", db ? sqlite3_errmsg(db) : "");
}

static sqlite3_stmt *prepare(sqlite3 *db, const char *path, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		complain(path, "query failed (is it a database from an older allocreplay? run allocreplay on it "
			       "once to migrate it)",
			 db);
		return NULL;
	}
	return st;
}

static double col_num(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* Text of column i, malloc'ed; NULL for NULL. SQLite text may hold NUL
 * bytes (a database made elsewhere): each is shown as the text \x00, as the
 * trace reader and common/ar_escape.h show one, never cut there. */
static char *col_str(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	if (!s)
		return NULL;
	size_t n = (size_t)sqlite3_column_bytes(st, i), nul = 0;
	for (size_t k = 0; k < n; k++)
		nul += s[k] == 0;
	char *d = ar_res_xcalloc(n + 3 * nul + 1, 1), *o = d;
	for (size_t k = 0; k < n; k++) {
		if (s[k]) {
			*o++ = (char)s[k];
		} else {
			memcpy(o, "\\x00", 4);
			o += 4;
		}
	}
	return d;
}

/* Bind ?1 and ?2 to the trace and machine (MACHINE_KEY) of run first,
 * byte for byte (a value with a NUL in it would not match once shown as
 * \x00), and ?3 to across_machines (then ?2 does not matter). */
static void bind_trace_host(const ar_res_set_t *rep, sqlite3_stmt *st, int64_t first)
{
	sqlite3 *db = rep->db;
	sqlite3_stmt *k;
	sqlite3_bind_int(st, 3, rep->across_machines);
	if (sqlite3_prepare_v2(db, "SELECT trace_sha256, " MACHINE_KEY " FROM runs r WHERE run_id = ?1", -1, &k,
			       NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(k, 1, first);
	if (sqlite3_step(k) == SQLITE_ROW)
		for (int c = 0; c < 2; c++)
			if (sqlite3_column_type(k, c) != SQLITE_NULL)
				sqlite3_bind_text(st, c + 1, (const char *)sqlite3_column_text(k, c),
						  sqlite3_column_bytes(k, c), SQLITE_TRANSIENT);
	sqlite3_finalize(k);
}

/* program without "--threads N" or "--threads=N"; NULL when absent. */
static char *scenario_of(const char *program)
{
	if (!program)
		return NULL;
	char *out = ar_res_xcalloc(strlen(program) + 1, 1), *copy = ar_res_strdup(program);
	int found = 0;
	size_t len = 0;
	for (char *save = NULL, *tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (!strcmp(tok, "--threads")) {
			found = 1;
			strtok_r(NULL, " \t", &save); /* its value */
			continue;
		}
		if (!strncmp(tok, "--threads=", 10)) {
			found = 1;
			continue;
		}
		len += (size_t)sprintf(out + len, "%s%s", len ? " " : "", tok);
	}
	free(copy);
	if (!found) {
		free(out);
		return NULL;
	}
	return out;
}

static int matches(const char *filter, const char *sha, const char *name)
{
	if (!filter)
		return 1;
	if (name && !strcmp(filter, name))
		return 1;
	size_t n = strlen(filter);
	return n >= 4 && sha && strlen(sha) >= n && !strncasecmp(filter, sha, n);
}

/* One row of the runs query below as a run of the comparison. */
static void row_run(sqlite3_stmt *st, ar_res_run_t *r)
{
	memset(r, 0, sizeof *r);
	r->run_id = sqlite3_column_int64(st, 0);
	r->repetition = sqlite3_column_int(st, 3);
	r->status = col_str(st, 4);
	r->reason = col_str(st, 5);
	for (int m = 0; m < AR_RES_NFIG; m++)
		r->fig[m] = col_num(st, 6 + m);
	r->run_uuid = col_str(st, 6 + AR_RES_NFIG);
	r->library_path = col_str(st, 7 + AR_RES_NFIG);
	r->ops = col_num(st, 8 + AR_RES_NFIG);
	r->wall_ns = col_num(st, 9 + AR_RES_NFIG);
	r->prediction_reason = col_str(st, 10 + AR_RES_NFIG);
	r->fidelity_reason = col_str(st, 11 + AR_RES_NFIG);
	r->cpu_ns = col_num(st, 12 + AR_RES_NFIG);
	r->peak_rss_bytes = col_num(st, 13 + AR_RES_NFIG);
}

/* The strings row_run made (the comparison keeps copies). */
static void free_row(ar_res_run_t *r)
{
	free(r->status);
	free(r->reason);
	free(r->run_uuid);
	free(r->library_path);
	free(r->prediction_reason);
	free(r->fidelity_reason);
}

/* The database's schema version (PRAGMA user_version; results/sql/): the
 * report reads every version it can, by version rather than by probing
 * columns. -1 when unreadable. */
static int schema_version(sqlite3 *db)
{
	sqlite3_stmt *st;
	int v = -1;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Every run of trace t on its host, into the comparison (glibc first). */
static int load_runs(ar_res_set_t *rep, ar_res_trace_t *t)
{
	/* the columns of schema 5, or NULLs in their place (row_run's order) */
	const char *v5 = schema_version(rep->db) >= 5
		? "r.timer_resolution_ns, r.predicted_time_ns, r.predicted_peak_rss_bytes, r.fidelity_time_error,"
		  " r.fidelity_rss_error"
		: "NULL, NULL, NULL, NULL, NULL";
	const char *v5r = schema_version(rep->db) >= 5 ? "r.prediction_reason, r.fidelity_reason" : "NULL, NULL";
	char *sql = ar_res_strf(
		"SELECT s.run_id, s.allocator, r.allocator_version, s.repetition, s.status, s.reason,"
		"       s.ops_per_sec, s.p50_ns, s.p99_ns, s.p999_ns, s.max_ns, s.peak_heap_rss_bytes,"
		"       r.final_heap_rss_bytes, s.fragmentation, s.minor_faults, s.major_faults,"
		"       s.failed_allocs, %s, r.run_uuid, s.library_path, s.ops, s.wall_ns, %s,"
		"       r.cpu_user_ns + r.cpu_sys_ns, r.peak_rss_bytes"
		" FROM run_summary s JOIN runs r ON r.run_id = s.run_id"
		" WHERE s.trace_sha256 = ?1 AND (?3 OR " MACHINE_KEY " = ?2)"
		" ORDER BY s.allocator <> 'glibc', s.run_id", v5, v5r);
	sqlite3_stmt *st = prepare(rep->db, rep->path, sql);
	free(sql);
	if (!st)
		return -1;
	bind_trace_host(rep, st, t->db_first_run);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		char *name = col_str(st, 1), *version = col_str(st, 2);
		ar_res_alloc_t *a = ar_res_alloc_slot(t, name ? name : "", version);
		free(name);
		free(version);
		ar_res_run_t r;
		row_run(st, &r);
		ar_res_add_run(a, &r);
		free_row(&r);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		complain(rep->path, "reading runs", rep->db);
		return -1;
	}
	ar_res_finish(t);
	return 0;
}

/* Counters per allocator, medians over its ok runs. Simulated counters
 * (counters.source = 'sim', allocreplay --counters sim) are named "sim."
 * + name, so a figure always says where it came from; the access pass's
 * time (runs.access_pass_ns) is listed with them. */
static int load_counters(ar_res_set_t *rep, ar_res_trace_t *t)
{
	int v3 = schema_version(rep->db) >= 3; /* counters.source, runs.access_pass_ns */
	sqlite3_stmt *st = prepare(rep->db, rep->path, v3 ?
		"SELECT allocator, name, value, reason FROM ("
		" SELECT r.allocator, r.run_id, CASE WHEN c.source = 'sim' THEN 'sim.' || c.name ELSE c.name END"
		"  AS name, c.value, c.reason FROM counters c JOIN runs r ON r.run_id = c.run_id"
		"  WHERE r.trace_sha256 = ?1 AND (?3 OR " MACHINE_KEY " = ?2) AND r.status = 'ok'"
		" UNION ALL SELECT r.allocator, r.run_id, 'access_pass_ns', r.access_pass_ns, NULL FROM runs r"
		"  WHERE r.trace_sha256 = ?1 AND (?3 OR " MACHINE_KEY " = ?2) AND r.status = 'ok' AND r.access_pass_ns IS NOT NULL)"
		" ORDER BY allocator, name, run_id" :
		"SELECT r.allocator, c.name, c.value, c.reason FROM counters c JOIN runs r ON r.run_id = c.run_id"
		" WHERE r.trace_sha256 = ?1 AND (?3 OR " MACHINE_KEY " = ?2) AND r.status = 'ok'"
		" ORDER BY r.allocator, c.name, r.run_id");
	if (!st)
		return -1;
	bind_trace_host(rep, st, t->db_first_run);
	double *vals = NULL;
	size_t nv = 0, cap = 0;
	ar_res_alloc_t *cur_a = NULL; /* rows come grouped by (allocator, counter) */
	ar_res_counter_t *cur = NULL;
	int rc;
	for (;;) {
		rc = sqlite3_step(st);
		char *an = rc == SQLITE_ROW ? col_str(st, 0) : NULL;
		char *cn = rc == SQLITE_ROW ? col_str(st, 1) : NULL;
		ar_res_alloc_t *a = NULL;
		for (size_t i = 0; an && i < t->nallocs; i++)
			if (!strcmp(t->allocs[i].name, an))
				a = &t->allocs[i];
		if (cur && (a != cur_a || !cn || strcmp(cur->name, cn))) {
			cur->value = ar_res_stat(vals, nv);
			cur = NULL;
			nv = 0;
		}
		free(an);
		if (rc != SQLITE_ROW)
			break;
		if (!a || !cn) {
			free(cn);
			continue;
		}
		if (!cur) {
			a->counters = realloc(a->counters, (a->ncounters + 1) * sizeof *a->counters);
			if (!a->counters)
				exit(2);
			cur = &a->counters[a->ncounters++];
			memset(cur, 0, sizeof *cur);
			cur->name = cn;
			cur_a = a;
		} else {
			free(cn);
		}
		if (nv == cap) {
			cap = cap ? 2 * cap : 8;
			vals = realloc(vals, cap * sizeof *vals);
			if (!vals)
				exit(2);
		}
		vals[nv++] = col_num(st, 2);
		if (!cur->reason && sqlite3_column_type(st, 3) != SQLITE_NULL)
			cur->reason = col_str(st, 3);
	}
	free(vals);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		complain(rep->path, "reading counters", rep->db);
		return -1;
	}
	return 0;
}

static int cmp_point(const void *a, const void *b)
{
	const ar_res_trace_t *x = *(const ar_res_trace_t *const *)a, *y = *(const ar_res_trace_t *const *)b;
	return (x->threads > y->threads) - (x->threads < y->threads);
}

static int same_machine(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static void build_series(ar_res_set_t *rep)
{
	for (size_t i = 0; i < rep->ntraces; i++) {
		const ar_res_trace_t *t = &rep->traces[i];
		if (!t->scenario)
			continue;
		int seen = 0;
		for (size_t k = 0; k < rep->nseries; k++)
			if (!strcmp(rep->series[k].scenario, t->scenario) && same_machine(rep->series[k].machine, t->machine))
				seen = 1;
		if (seen)
			continue;
		ar_res_series_t s = {ar_res_strdup(t->scenario), ar_res_strdup(t->host), t->machine, 0,
				     ar_res_xcalloc(rep->ntraces, sizeof(ar_res_trace_t *))};
		for (size_t j = i; j < rep->ntraces; j++) {
			const ar_res_trace_t *u = &rep->traces[j];
			if (!u->scenario || strcmp(u->scenario, t->scenario) || !same_machine(u->machine, t->machine))
				continue;
			int dup = 0; /* the first trace replayed at a thread count stands for it */
			for (size_t k = 0; k < s.npoints; k++)
				dup |= s.points[k]->threads == u->threads;
			if (!dup)
				s.points[s.npoints++] = u;
		}
		if (s.npoints < 2) {
			free(s.scenario);
			free(s.host);
			free(s.points);
			continue;
		}
		qsort(s.points, s.npoints, sizeof *s.points, cmp_point);
		rep->series = realloc(rep->series, (rep->nseries + 1) * sizeof *rep->series);
		if (!rep->series)
			exit(2);
		rep->series[rep->nseries++] = s;
	}
}

int ar_res_load(ar_res_set_t *rep, const char *path, const char *filter, int *usage)
{
	return ar_res_load_machines(rep, path, filter, 0, usage);
}

/* Say which traces have runs from more than one machine, and how they are
 * compared (the rule at the top). */
static void machine_notes(const ar_res_set_t *rep)
{
	for (size_t i = 0; i < rep->ntraces; i++) {
		const ar_res_trace_t *t = &rep->traces[i];
		size_t n = 0, first = i;
		for (size_t k = 0; k < rep->ntraces; k++)
			if (!strcmp(rep->traces[k].sha256, t->sha256) && !n++)
				first = k;
		if (rep->across_machines && t->nmachines > 1) {
			fprintf(stderr, "%s: note: ", ar_cli_tool());
			ar_esc_term(stderr, t->name);
			fprintf(stderr, ": comparing runs from %d machines as one (--across-machines): a difference "
				"may be the machines', not the allocators'\n", t->nmachines);
		} else if (n > 1 && first == i) {
			fprintf(stderr, "%s: note: ", ar_cli_tool());
			ar_esc_term(stderr, t->name);
			fprintf(stderr, ": runs from %zu machines, compared per machine (one comparison each, "
				"never mixed); --across-machines compares them as one\n", n);
		}
	}
}

/* An allocator with runs of more than one version on one machine, named
 * (the comparison pools them under its name). */
static void version_notes(const ar_res_set_t *rep)
{
	sqlite3_stmt *st = prepare(rep->db, rep->path,
		"SELECT t.name, r.allocator, group_concat(DISTINCT r.allocator_version)"
		" FROM runs r JOIN traces t ON t.sha256 = r.trace_sha256"
		" GROUP BY r.trace_sha256, r.allocator, CASE WHEN ?1 THEN '' ELSE " MACHINE_KEY " END"
		" HAVING count(DISTINCT r.allocator_version) > 1");
	if (!st)
		return;
	sqlite3_bind_int(st, 1, rep->across_machines);
	while (sqlite3_step(st) == SQLITE_ROW) {
		char *name = col_str(st, 0), *alloc = col_str(st, 1), *versions = col_str(st, 2);
		fprintf(stderr, "%s: note: ", ar_cli_tool());
		ar_esc_term(stderr, name);
		fputs(": ", stderr);
		ar_esc_term(stderr, alloc);
		fputs(" ran at versions ", stderr);
		ar_esc_term(stderr, versions);
		fputs(", compared as one allocator\n", stderr);
		free(name);
		free(alloc);
		free(versions);
	}
	sqlite3_finalize(st);
}

int ar_res_load_machines(ar_res_set_t *rep, const char *path, const char *filter, int across_machines,
			 int *usage)
{
	memset(rep, 0, sizeof *rep);
	rep->path = path;
	rep->across_machines = across_machines;
	*usage = 0;
	char err[768];
	if (ar_res_db_open_readonly(path, &rep->db, err, sizeof err) != 0) {
		ar_cli_error(NULL, "%s", err); /* names path and what is wrong (results/schema_check.c) */
		return -1;
	}
	sqlite3_stmt *st = NULL;
	int ok = sqlite3_prepare_v2(rep->db,
				    "SELECT (SELECT count(*) FROM sqlite_master"
				    "        WHERE name IN ('runs','traces','run_summary')),"
				    "       (SELECT count(DISTINCT " MACHINE_KEY ") FROM runs r)",
				    -1, &st, NULL) == SQLITE_OK &&
		 sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 3;
	rep->nhosts = ok ? sqlite3_column_int(st, 1) : 0;
	sqlite3_finalize(st);
	if (!ok) {
		complain(path, "not an allocreplay results database (no runs, traces, run_summary)", NULL);
		return -1;
	}
	char *sql = ar_res_strf(
		"SELECT t.sha256, t.name, t.program, t.status, t.events, t.threads, t.calls, t.trace_allocs,"
		"       t.peak_live_bytes, t.peak_live_blocks, t.cross_thread_deps, r.host, min(r.run_id) AS first,"
		"       %s, %s, %s, " MACHINE_TEXT ", count(DISTINCT " MACHINE_KEY ")"
		" FROM traces t JOIN runs r ON r.trace_sha256 = t.sha256"
		" GROUP BY t.sha256, CASE WHEN ?1 THEN '' ELSE " MACHINE_KEY " END ORDER BY first",
		schema_version(rep->db) >= 5
			? "t.recorded_allocator, t.recorded_allocator_library, t.recorded_allocator_version,"
			  " t.recorded_reason, t.recorded_duration_ns, t.recorded_start_rss_bytes,"
			  " t.recorded_peak_rss_bytes, t.recorded_rss_samples, t.recorded_cpu_ns,"
			  " t.recorded_recorder_bytes"
			: "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL",
		schema_version(rep->db) >= 10 ? "t.recorded_recorder_cpu_ns" : "NULL",
		schema_version(rep->db) >= 7 ? "CASE WHEN t.window_trace THEN t.preexisting_bytes END" : "NULL");
	st = prepare(rep->db, path, sql);
	free(sql);
	if (!st)
		return -1;
	sqlite3_bind_int(st, 1, across_machines);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *sha = (const char *)sqlite3_column_text(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		if (!matches(filter, sha, name))
			continue;
		if (rep->ntraces == cap) {
			cap = cap ? 2 * cap : 8;
			rep->traces = realloc(rep->traces, cap * sizeof *rep->traces);
			if (!rep->traces)
				exit(2);
		}
		ar_res_trace_t *t = &rep->traces[rep->ntraces++];
		memset(t, 0, sizeof *t);
		t->sha256 = col_str(st, 0);
		t->name = col_str(st, 1);
		t->program = col_str(st, 2);
		t->status = col_str(st, 3);
		t->events = sqlite3_column_int64(st, 4);
		t->threads = sqlite3_column_int64(st, 5);
		t->calls = sqlite3_column_int64(st, 6);
		t->trace_allocs = sqlite3_column_int64(st, 7);
		t->peak_live_bytes = sqlite3_column_int64(st, 8);
		t->peak_live_blocks = sqlite3_column_int64(st, 9);
		t->cross_thread_deps = sqlite3_column_int64(st, 10);
		t->host = col_str(st, 11);
		t->db_first_run = sqlite3_column_int64(st, 12);
		t->scenario = scenario_of(t->program);
		t->recorded_allocator = col_str(st, 13);
		t->recorded_library = col_str(st, 14);
		t->recorded_version = col_str(st, 15);
		t->recorded_reason = col_str(st, 16);
		t->recorded_duration_ns = col_num(st, 17);
		t->recorded_start_rss_bytes = col_num(st, 18);
		t->recorded_peak_rss_bytes = col_num(st, 19);
		t->recorded_rss_samples = col_num(st, 20);
		t->recorded_cpu_ns = col_num(st, 21);
		t->recorded_recorder_bytes = col_num(st, 22);
		t->recorded_recorder_cpu_ns = col_num(st, 23);
		t->preexisting_bytes = col_num(st, 24);
		t->nmachines = sqlite3_column_int(st, 26);
		t->machine = t->nmachines > 1 ? ar_res_strf("%d machines (--across-machines)", t->nmachines)
					      : col_str(st, 25);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		complain(path, "reading traces", rep->db);
		return -1;
	}
	if (!rep->ntraces) {
		if (filter) {
			ar_cli_error(path, "no trace matches '%s' (give a trace name or at least 4 hex digits of its "
					   "SHA-256; `sqlite3 %s 'SELECT sha256, name FROM traces'` lists them)",
				     filter, path);
			*usage = 1;
		} else {
			ar_cli_error(path, "holds no runs yet (allocreplay TRACE --db %s)", path);
		}
		return -1;
	}
	for (size_t i = 0; i < rep->ntraces; i++)
		if (load_runs(rep, &rep->traces[i]) || load_counters(rep, &rep->traces[i]))
			return -1;
	build_series(rep);
	machine_notes(rep);
	version_notes(rep);
	return 0;
}

void ar_res_free(ar_res_set_t *rep)
{
	for (size_t i = 0; i < rep->ntraces; i++)
		ar_res_trace_free(&rep->traces[i]);
	for (size_t i = 0; i < rep->nseries; i++) {
		free(rep->series[i].scenario);
		free(rep->series[i].host);
		free(rep->series[i].points);
	}
	free(rep->series);
	free(rep->traces);
	ar_res_db_close(rep->db);
	memset(rep, 0, sizeof *rep);
}

ar_res_sample_t *ar_res_timeline(const ar_res_set_t *rep, int64_t run_id, size_t *n)
{
	*n = 0;
	sqlite3_stmt *st = prepare(rep->db, rep->path,
		"SELECT event, heap_rss_bytes, live_bytes FROM rss_samples WHERE run_id = ?1 ORDER BY sample");
	if (!st)
		return NULL;
	sqlite3_bind_int64(st, 1, run_id);
	ar_res_sample_t *s = NULL;
	size_t cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			s = realloc(s, cap * sizeof *s);
			if (!s)
				exit(2);
		}
		s[*n].event = col_num(st, 0);
		s[*n].heap_rss_bytes = col_num(st, 1);
		s[*n].live_bytes = col_num(st, 2);
		(*n)++;
	}
	sqlite3_finalize(st);
	return s;
}

/* Runs' bucket bounds differ slightly (each run's tick calibration), so the
 * buckets of all runs are walked together in order of their upper bound. */
ar_res_cdf_t *ar_res_latency_cdf(const ar_res_set_t *rep, const int64_t *runs, size_t nruns, size_t *n)
{
	return ar_res_latency_cdf_op(rep, runs, nruns, NULL, n);
}

ar_res_cdf_t *ar_res_latency_cdf_op(const ar_res_set_t *rep, const int64_t *runs, size_t nruns, const char *op,
				    size_t *n)
{
	*n = 0;
	if (!nruns)
		return NULL;
	size_t len = 128 + nruns * 24;
	char *sql = ar_res_xcalloc(len, 1);
	size_t at = (size_t)snprintf(sql, len,
		"SELECT lo_ns, hi_ns, count FROM histogram WHERE op <> 'all' AND (?1 IS NULL OR op = ?1) "
		"AND run_id IN (");
	for (size_t i = 0; i < nruns; i++)
		at += (size_t)snprintf(sql + at, len - at, "%s%lld", i ? "," : "", (long long)runs[i]);
	snprintf(sql + at, len - at, ") ORDER BY hi_ns");
	sqlite3_stmt *st = prepare(rep->db, rep->path, sql);
	free(sql);
	if (!st)
		return NULL;
	if (op)
		sqlite3_bind_text(st, 1, op, -1, SQLITE_TRANSIENT);
	ar_res_cdf_t *c = NULL;
	size_t cap = 0;
	double total = 0, lo0 = NAN;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (*n + 1 >= cap) {
			cap = cap ? 2 * cap : 512;
			c = realloc(c, cap * sizeof *c);
			if (!c)
				exit(2);
		}
		double lo = sqlite3_column_double(st, 0);
		if (isnan(lo0) || lo < lo0)
			lo0 = lo;
		total += sqlite3_column_double(st, 2);
		c[*n].ns = sqlite3_column_double(st, 1);
		c[*n].frac = total; /* normalised below */
		(*n)++;
	}
	sqlite3_finalize(st);
	if (!*n || !(total > 0)) {
		free(c);
		*n = 0;
		return NULL;
	}
	memmove(c + 1, c, *n * sizeof *c);
	c[0].ns = lo0;
	c[0].frac = 0;
	(*n)++;
	for (size_t i = 1; i < *n; i++)
		c[i].frac /= total;
	return c;
}
