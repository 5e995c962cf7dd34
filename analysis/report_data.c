/*
 * report_data.c — load the comparison model from a results database
 * (docs/RESULTS.md): one ar_rep_trace_t per trace x host, in the order the
 * trace was first replayed; in each, one ar_rep_alloc_t per allocator with
 * medians and ranges over its ok runs (run_summary), its failed runs with
 * their reason, and its hardware counters (NULL values keep their reason).
 *
 * Traces that are "the same scenario at different thread counts" form a
 * thread-scaling series: their recorded command lines (traces.program) are
 * equal once a `--threads N` / `--threads=N` argument is removed (what
 * `alloctrace gen SCENARIO --threads N` records), and they ran on the same
 * host. Traces without such an argument are never put in a series.
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
#include "report_model.h"

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

static char *col_str(sqlite3_stmt *st, int i)
{
	return ar_rep_strdup((const char *)sqlite3_column_text(st, i));
}

/* program without "--threads N" or "--threads=N"; NULL when absent. */
static char *scenario_of(const char *program)
{
	if (!program)
		return NULL;
	char *out = ar_rep_xcalloc(strlen(program) + 1, 1), *copy = ar_rep_strdup(program);
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

/* Per-allocator accumulation while reading its runs. */
enum { M_OPS, M_P50, M_P99, M_P999, M_MAX, M_HEAP, M_FINAL, M_FRAG, M_MINF, M_MAJF, M_FAILED, M_N };

typedef struct acc {
	double *v[M_N];
	size_t n, cap;
} acc_t;

static ar_rep_alloc_t *alloc_slot(ar_rep_trace_t *t, acc_t **accs, const char *name, const char *version)
{
	for (size_t i = 0; i < t->nallocs; i++)
		if (!strcmp(t->allocs[i].name, name))
			return &t->allocs[i];
	t->allocs = realloc(t->allocs, (t->nallocs + 1) * sizeof *t->allocs);
	*accs = realloc(*accs, (t->nallocs + 1) * sizeof **accs);
	if (!t->allocs || !*accs) {
		ar_cli_error(NULL, "out of memory");
		exit(2);
	}
	ar_rep_alloc_t *a = &t->allocs[t->nallocs];
	memset(a, 0, sizeof *a);
	memset(&(*accs)[t->nallocs], 0, sizeof **accs);
	a->name = ar_rep_strdup(name);
	a->version = ar_rep_strdup(version);
	a->speed_vs_glibc = a->heap_vs_glibc = NAN;
	t->nallocs++;
	return a;
}

static void acc_push(acc_t *c, const double *vals)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 8;
		for (int m = 0; m < M_N; m++) {
			c->v[m] = realloc(c->v[m], c->cap * sizeof(double));
			if (!c->v[m]) {
				ar_cli_error(NULL, "out of memory");
				exit(2);
			}
		}
	}
	for (int m = 0; m < M_N; m++)
		c->v[m][c->n] = vals[m];
	c->n++;
}

static int load_runs(ar_rep_t *rep, ar_rep_trace_t *t)
{
	sqlite3_stmt *st = prepare(rep->db, rep->path,
		"SELECT s.run_id, s.allocator, r.allocator_version, s.repetition, s.status, s.reason,"
		"       s.ops_per_sec, s.p50_ns, s.p99_ns, s.p999_ns, s.max_ns, s.peak_heap_rss_bytes,"
		"       r.final_heap_rss_bytes, s.fragmentation, s.minor_faults, s.major_faults,"
		"       s.failed_allocs"
		" FROM run_summary s JOIN runs r ON r.run_id = s.run_id"
		" WHERE s.trace_sha256 = ?1 AND s.host IS ?2"
		" ORDER BY s.allocator <> 'glibc', s.run_id");
	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, t->sha256, -1, SQLITE_STATIC);
	if (t->host)
		sqlite3_bind_text(st, 2, t->host, -1, SQLITE_STATIC);
	acc_t *accs = NULL;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ar_rep_alloc_t *a = alloc_slot(t, &accs, (const char *)sqlite3_column_text(st, 1),
					       (const char *)sqlite3_column_text(st, 2));
		acc_t *c = &accs[a - t->allocs];
		a->runs_total++;
		const char *status = (const char *)sqlite3_column_text(st, 4);
		if (status && !strcmp(status, "ok")) {
			a->runs_ok++;
			a->ok_runs = realloc(a->ok_runs, (a->n_ok_runs + 1) * sizeof *a->ok_runs);
			if (!a->ok_runs)
				exit(2);
			a->ok_runs[a->n_ok_runs++] = sqlite3_column_int64(st, 0);
			double vals[M_N];
			for (int m = 0; m < M_N; m++)
				vals[m] = col_num(st, 6 + m);
			acc_push(c, vals);
		} else {
			a->fails = realloc(a->fails, (a->nfails + 1) * sizeof *a->fails);
			if (!a->fails)
				exit(2);
			ar_rep_fail_t *fl = &a->fails[a->nfails++];
			fl->run_id = sqlite3_column_int64(st, 0);
			fl->repetition = sqlite3_column_int(st, 3);
			fl->status = ar_rep_strdup(status ? status : "?");
			fl->reason = col_str(st, 5);
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		complain(rep->path, "reading runs", rep->db);
		return -1;
	}
	for (size_t i = 0; i < t->nallocs; i++) {
		ar_rep_alloc_t *a = &t->allocs[i];
		acc_t *c = &accs[i];
		ar_rep_stat_t *dst[M_N] = {&a->ops_per_sec, &a->p50_ns, &a->p99_ns, &a->p999_ns, &a->max_ns,
					   &a->heap_bytes, &a->final_heap_bytes, &a->frag, &a->minor_faults,
					   &a->major_faults, &a->failed_allocs};
		for (int m = 0; m < M_N; m++) {
			*dst[m] = ar_rep_stat(c->v[m], c->n);
			free(c->v[m]);
		}
	}
	free(accs);
	const ar_rep_alloc_t *g = ar_rep_find(t, "glibc");
	for (size_t i = 0; g && i < t->nallocs; i++) {
		ar_rep_alloc_t *a = &t->allocs[i];
		if (g->ops_per_sec.med > 0)
			a->speed_vs_glibc = a->ops_per_sec.med / g->ops_per_sec.med;
		if (g->heap_bytes.med > 0)
			a->heap_vs_glibc = a->heap_bytes.med / g->heap_bytes.med;
	}
	return 0;
}

/* Does table have column? (Databases before schema 3 lack counters.source
 * and runs.access_pass_ns; the report reads every version it can.) */
static int has_column(sqlite3 *db, const char *table, const char *column)
{
	sqlite3_stmt *st;
	int found = 0;
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		found = sqlite3_column_int(st, 0) > 0;
	sqlite3_finalize(st);
	return found;
}

/* Counters per allocator, medians over its ok runs. Simulated counters
 * (counters.source = 'sim', allocreplay --counters sim) are named "sim."
 * + name, so a figure always says where it came from; the access pass's
 * time (runs.access_pass_ns) is listed with them. */
static int load_counters(ar_rep_t *rep, ar_rep_trace_t *t)
{
	int v3 = has_column(rep->db, "counters", "source") && has_column(rep->db, "runs", "access_pass_ns");
	sqlite3_stmt *st = prepare(rep->db, rep->path, v3 ?
		"SELECT allocator, name, value, reason FROM ("
		" SELECT r.allocator, r.run_id, CASE WHEN c.source = 'sim' THEN 'sim.' || c.name ELSE c.name END"
		"  AS name, c.value, c.reason FROM counters c JOIN runs r ON r.run_id = c.run_id"
		"  WHERE r.trace_sha256 = ?1 AND r.host IS ?2 AND r.status = 'ok'"
		" UNION ALL SELECT r.allocator, r.run_id, 'access_pass_ns', r.access_pass_ns, NULL FROM runs r"
		"  WHERE r.trace_sha256 = ?1 AND r.host IS ?2 AND r.status = 'ok' AND r.access_pass_ns IS NOT NULL)"
		" ORDER BY allocator, name, run_id" :
		"SELECT r.allocator, c.name, c.value, c.reason FROM counters c JOIN runs r ON r.run_id = c.run_id"
		" WHERE r.trace_sha256 = ?1 AND r.host IS ?2 AND r.status = 'ok'"
		" ORDER BY r.allocator, c.name, r.run_id");
	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, t->sha256, -1, SQLITE_STATIC);
	if (t->host)
		sqlite3_bind_text(st, 2, t->host, -1, SQLITE_STATIC);
	double *vals = NULL;
	size_t nv = 0, cap = 0;
	ar_rep_alloc_t *cur_a = NULL; /* rows come grouped by (allocator, counter) */
	ar_rep_counter_t *cur = NULL;
	int rc;
	for (;;) {
		rc = sqlite3_step(st);
		const char *an = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
		const char *cn = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 1) : NULL;
		ar_rep_alloc_t *a = NULL;
		for (size_t i = 0; an && i < t->nallocs; i++)
			if (!strcmp(t->allocs[i].name, an))
				a = &t->allocs[i];
		if (cur && (a != cur_a || !cn || strcmp(cur->name, cn))) {
			cur->value = ar_rep_stat(vals, nv);
			cur = NULL;
			nv = 0;
		}
		if (rc != SQLITE_ROW)
			break;
		if (!a || !cn)
			continue;
		if (!cur) {
			a->counters = realloc(a->counters, (a->ncounters + 1) * sizeof *a->counters);
			if (!a->counters)
				exit(2);
			cur = &a->counters[a->ncounters++];
			memset(cur, 0, sizeof *cur);
			cur->name = ar_rep_strdup(cn);
			cur_a = a;
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
	const ar_rep_trace_t *x = *(const ar_rep_trace_t *const *)a, *y = *(const ar_rep_trace_t *const *)b;
	return (x->threads > y->threads) - (x->threads < y->threads);
}

static int same_host(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static void build_series(ar_rep_t *rep)
{
	for (size_t i = 0; i < rep->ntraces; i++) {
		const ar_rep_trace_t *t = &rep->traces[i];
		if (!t->scenario)
			continue;
		int seen = 0;
		for (size_t k = 0; k < rep->nseries; k++)
			if (!strcmp(rep->series[k].scenario, t->scenario) && same_host(rep->series[k].host, t->host))
				seen = 1;
		if (seen)
			continue;
		ar_rep_series_t s = {ar_rep_strdup(t->scenario), ar_rep_strdup(t->host), 0,
				     ar_rep_xcalloc(rep->ntraces, sizeof(ar_rep_trace_t *))};
		for (size_t j = i; j < rep->ntraces; j++) {
			const ar_rep_trace_t *u = &rep->traces[j];
			if (!u->scenario || strcmp(u->scenario, t->scenario) || !same_host(u->host, t->host))
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

int ar_rep_load(ar_rep_t *rep, const char *path, const char *filter, int *usage)
{
	memset(rep, 0, sizeof *rep);
	rep->path = path;
	*usage = 0;
	if (sqlite3_open_v2(path, &rep->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		complain(path, "cannot open (create it with: allocreplay TRACE --db FILE)", rep->db);
		return -1;
	}
	sqlite3_busy_timeout(rep->db, 10000);
	sqlite3_stmt *st = NULL;
	int ok = sqlite3_prepare_v2(rep->db,
				    "SELECT (SELECT count(*) FROM sqlite_master"
				    "        WHERE name IN ('runs','traces','run_summary')),"
				    "       (SELECT count(DISTINCT coalesce(host, '')) FROM runs)",
				    -1, &st, NULL) == SQLITE_OK &&
		 sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 3;
	rep->nhosts = ok ? sqlite3_column_int(st, 1) : 0;
	sqlite3_finalize(st);
	if (!ok) {
		complain(path, "not an allocreplay results database (no runs, traces, run_summary)", NULL);
		return -1;
	}
	st = prepare(rep->db, path,
		"SELECT t.sha256, t.name, t.program, t.status, t.events, t.threads, t.calls, t.trace_allocs,"
		"       t.peak_live_bytes, t.peak_live_blocks, t.cross_thread_deps, r.host, min(r.run_id) AS first"
		" FROM traces t JOIN runs r ON r.trace_sha256 = t.sha256"
		" GROUP BY t.sha256, r.host ORDER BY first");
	if (!st)
		return -1;
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
		ar_rep_trace_t *t = &rep->traces[rep->ntraces++];
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
		t->scenario = scenario_of(t->program);
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
	return 0;
}

void ar_rep_free(ar_rep_t *rep)
{
	for (size_t i = 0; i < rep->ntraces; i++) {
		ar_rep_trace_t *t = &rep->traces[i];
		for (size_t j = 0; j < t->nallocs; j++) {
			ar_rep_alloc_t *a = &t->allocs[j];
			for (size_t k = 0; k < a->nfails; k++) {
				free(a->fails[k].status);
				free(a->fails[k].reason);
			}
			for (size_t k = 0; k < a->ncounters; k++) {
				free(a->counters[k].name);
				free(a->counters[k].reason);
			}
			free(a->fails);
			free(a->counters);
			free(a->ok_runs);
			free(a->name);
			free(a->version);
		}
		free(t->allocs);
		free(t->sha256);
		free(t->name);
		free(t->program);
		free(t->status);
		free(t->host);
		free(t->scenario);
	}
	for (size_t i = 0; i < rep->nseries; i++) {
		free(rep->series[i].scenario);
		free(rep->series[i].host);
		free(rep->series[i].points);
	}
	free(rep->series);
	free(rep->traces);
	sqlite3_close(rep->db);
	memset(rep, 0, sizeof *rep);
}

const ar_rep_alloc_t *ar_rep_find(const ar_rep_trace_t *t, const char *name)
{
	for (size_t i = 0; i < t->nallocs; i++)
		if (!strcmp(t->allocs[i].name, name))
			return &t->allocs[i];
	return NULL;
}

ar_rep_sample_t *ar_rep_timeline(const ar_rep_t *rep, int64_t run_id, size_t *n)
{
	*n = 0;
	sqlite3_stmt *st = prepare(rep->db, rep->path,
		"SELECT event, heap_rss_bytes, live_bytes FROM rss_samples WHERE run_id = ?1 ORDER BY sample");
	if (!st)
		return NULL;
	sqlite3_bind_int64(st, 1, run_id);
	ar_rep_sample_t *s = NULL;
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
ar_rep_cdf_t *ar_rep_latency_cdf(const ar_rep_t *rep, const int64_t *runs, size_t nruns, size_t *n)
{
	*n = 0;
	if (!nruns)
		return NULL;
	size_t len = 128 + nruns * 24;
	char *sql = ar_rep_xcalloc(len, 1);
	size_t at = (size_t)snprintf(sql, len,
		"SELECT lo_ns, hi_ns, count FROM histogram WHERE op <> 'all' AND run_id IN (");
	for (size_t i = 0; i < nruns; i++)
		at += (size_t)snprintf(sql + at, len - at, "%s%lld", i ? "," : "", (long long)runs[i]);
	snprintf(sql + at, len - at, ") ORDER BY hi_ns");
	sqlite3_stmt *st = prepare(rep->db, rep->path, sql);
	free(sql);
	if (!st)
		return NULL;
	ar_rep_cdf_t *c = NULL;
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
