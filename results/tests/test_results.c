/*
 * test_results.c — unit tests of the results module: the median and range
 * rule (odd, even, NULLs left out), spread, the significance rule (effect
 * floor + bootstrap; deterministic), an allocator's runs becoming medians
 * and ratios to the trace's baseline (the recorded allocator, glibc
 * otherwise, a wanted one; failed runs left out), latencies below the
 * timer's resolution, the trace notes, and the schema: migrating an empty
 * database to the current version, after which the SQL view
 * allocator_comparison gives exactly the medians and ratios compare.c
 * computes from the same runs — against glibc and against the recorded
 * allocator; a database of schema 8 holding two machines' runs migrates to
 * one view row per machine; a database of schema 4 still loads read-only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ar_results.h"
#include "testing.h"

#define CLOSE(a, b) (fabs((a) - (b)) <= 1e-9 * fmax(1.0, fabs(b)))

static void test_stat(void)
{
	double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 10}, nans[] = {NAN, 2, NAN};
	ar_res_stat_t s = ar_res_stat(odd, 3);
	EXPECT(s.med == 3 && s.min == 1 && s.max == 5 && s.n == 3);
	s = ar_res_stat(even, 4);
	EXPECT(s.med == 3.5 && s.min == 1 && s.max == 10 && s.n == 4);
	s = ar_res_stat(nans, 3);
	EXPECT(s.med == 2 && s.n == 1);
	EXPECT(isnan(ar_res_spread(&s))); /* one value: no spread */
	s = ar_res_stat(NULL, 0);
	EXPECT(isnan(s.med) && isnan(s.min) && s.n == 0);
	double sp[] = {90, 100, 110};
	s = ar_res_stat(sp, 3);
	EXPECT(CLOSE(ar_res_spread(&s), 0.2));
}

static void test_significance(void)
{
	/* clear: 1.5x apart with 2 % noise, 5 repetitions each */
	double fast[] = {150, 147, 153, 149, 151}, slow[] = {100, 98, 102, 101, 99};
	ar_res_verdict_t v = ar_res_significance(fast, 5, slow, 5, 1);
	EXPECT(v.sig == AR_RES_SIG_YES && CLOSE(v.ratio, 1.5) && v.lo > 1.05 && v.hi >= v.lo && v.na == 5);
	/* lower is better (memory, time): the ratio is oriented so >= 1 leads */
	v = ar_res_significance(slow, 5, fast, 5, 0);
	EXPECT(v.sig == AR_RES_SIG_YES && CLOSE(v.ratio, 1.5));
	/* the case: noise around 1.03x with spread — never meaningful */
	double a[] = {103, 96, 110, 101, 107}, b[] = {100, 93, 108, 97, 104};
	v = ar_res_significance(a, 5, b, 5, 1);
	EXPECT(v.sig == AR_RES_SIG_SMALL && fabs(v.ratio - 1.03) < 0.01);
	/* 8 % apart, but the repetitions overlap widely: the interval reaches the floor */
	double c[] = {108, 80, 130, 95, 120}, d[] = {100, 75, 125, 90, 110};
	v = ar_res_significance(c, 5, d, 5, 1);
	EXPECT(v.sig == AR_RES_SIG_NOISE && v.lo <= 1.05);
	/* steady but below the floor: 3 % apart with 0.1 % noise */
	double e[] = {103, 103.1, 102.9}, g[] = {100, 100.1, 99.9};
	EXPECT(ar_res_significance(e, 3, g, 3, 1).sig == AR_RES_SIG_SMALL);
	/* one repetition: undecided, whatever the ratio */
	v = ar_res_significance(fast, 1, slow, 5, 1);
	EXPECT(v.sig == AR_RES_SIG_SINGLE && isnan(v.lo) && CLOSE(v.ratio, 1.5));
	/* NANs (not measured) are left out */
	double h[] = {NAN, 150, NAN};
	EXPECT(ar_res_significance(h, 3, slow, 5, 1).sig == AR_RES_SIG_SINGLE);
	/* deterministic: the same values, the same interval */
	ar_res_verdict_t x = ar_res_significance(c, 5, d, 5, 1), y = ar_res_significance(c, 5, d, 5, 1);
	EXPECT(x.lo == y.lo && x.hi == y.hi);
}

static void run(ar_res_trace_t *t, const char *alloc, const char *status, double ops, double heap)
{
	ar_res_run_t r;
	memset(&r, 0, sizeof r);
	for (int m = 0; m < AR_RES_NFIG; m++)
		r.fig[m] = NAN;
	r.status = (char *)status;
	r.fig[AR_RES_OPS] = ops;
	r.fig[AR_RES_HEAP] = heap;
	ar_res_add_run(ar_res_alloc_slot(t, alloc, NULL), &r);
}

static void test_finish(void)
{
	ar_res_trace_t t;
	memset(&t, 0, sizeof t);
	run(&t, "pool", "ok", 300, 10);
	run(&t, "glibc", "ok", 100, 20);
	run(&t, "glibc", "ok", 200, 40);
	run(&t, "pool", "crashed", 1e9, 1e9);
	run(&t, "pool", "ok", 500, 30);
	ar_res_finish(&t);
	const ar_res_alloc_t *g = ar_res_find(&t, "glibc"), *p = ar_res_find(&t, "pool");
	EXPECT(g && p && g->ops_per_sec.med == 150 && g->heap_bytes.med == 30);
	EXPECT(p && p->runs_ok == 2 && p->runs_total == 3 && p->nfails == 1 && p->ops_per_sec.med == 400);
	EXPECT(p && CLOSE(p->speed_vs_baseline, 400 / 150.0) && CLOSE(p->heap_vs_baseline, 20 / 30.0));
	EXPECT(t.baseline && !strcmp(t.baseline, "glibc") && !t.baseline_is_recorded && !t.baseline_note);
	/* the program ran on pool: pool is the baseline */
	t.recorded_allocator = ar_res_strdup("pool");
	ar_res_finish(&t);
	EXPECT(t.baseline && !strcmp(t.baseline, "pool") && t.baseline_is_recorded);
	EXPECT(g && CLOSE(g->speed_vs_baseline, 150 / 400.0) && CLOSE(g->heap_vs_baseline, 30 / 20.0));
	EXPECT(p && CLOSE(p->speed_vs_baseline, 1.0));
	/* asked for glibc: glibc */
	t.baseline_wanted = ar_res_strdup("glibc");
	ar_res_finish(&t);
	EXPECT(t.baseline && !strcmp(t.baseline, "glibc") && !t.baseline_is_recorded && !t.baseline_note);
	/* asked for one without runs: the default (recorded), and a note */
	free(t.baseline_wanted);
	t.baseline_wanted = ar_res_strdup("mimalloc");
	ar_res_finish(&t);
	EXPECT(t.baseline && !strcmp(t.baseline, "pool") && t.baseline_note && strstr(t.baseline_note, "mimalloc"));
	/* recorded on an allocator never replayed: glibc, and a note naming it */
	free(t.baseline_wanted);
	t.baseline_wanted = NULL;
	free(t.recorded_allocator);
	t.recorded_allocator = ar_res_strdup("tcmalloc");
	ar_res_finish(&t);
	EXPECT(t.baseline && !strcmp(t.baseline, "glibc") && t.baseline_note &&
	       strstr(t.baseline_note, "tcmalloc, which was not replayed"));
	ar_res_trace_free(&t);
	/* no baseline: no ratio */
	run(&t, "pool", "ok", 1, 1);
	ar_res_finish(&t);
	EXPECT(isnan(t.allocs[0].speed_vs_baseline) && t.baseline == NULL);
	ar_res_trace_free(&t);
}

/* Latencies at or below the timer's resolution print as "< N ns"; the
 * predictions come first in the table and the fidelity line under it. */
static void test_resolution_predictions(void)
{
	char buf[32];
	EXPECT_STR(ar_res_fmt_latency(buf, sizeof buf, 20, 20.3), "< 21 ns");
	EXPECT_STR(ar_res_fmt_latency(buf, sizeof buf, 0, 20), "< 20 ns");
	EXPECT_STR(ar_res_fmt_latency(buf, sizeof buf, 40, 20), "40 ns");
	EXPECT_STR(ar_res_fmt_latency(buf, sizeof buf, 15, NAN), "15 ns");
	EXPECT_STR(ar_res_fmt_latency(buf, sizeof buf, NAN, 20), "-");

	ar_res_trace_t t;
	memset(&t, 0, sizeof t);
	t.name = ar_res_strdup("t.zst");
	t.sha256 = ar_res_strdup("ab");
	t.status = ar_res_strdup("complete");
	t.recorded_allocator = ar_res_strdup("jemalloc");
	for (int k = 0; k < 3; k++) {
		ar_res_run_t r;
		memset(&r, 0, sizeof r);
		for (int m = 0; m < AR_RES_NFIG; m++)
			r.fig[m] = NAN;
		r.status = (char *)"ok";
		r.fig[AR_RES_OPS] = 100 + k;
		r.fig[AR_RES_P50] = 0; /* clamped: below the timer's resolution */
		r.fig[AR_RES_P99] = 300;
		r.fig[AR_RES_TIMER_RES] = 24.5;
		r.fig[AR_RES_PRED_TIME] = 2e9 + k;
		r.fig[AR_RES_PRED_RSS] = 1048576.0;
		r.fig[AR_RES_FID_RSS] = -0.04;
		r.fidelity_reason = (char *)"the trace holds no duration";
		ar_res_add_run(ar_res_alloc_slot(&t, "jemalloc", NULL), &r);
		r.fig[AR_RES_PRED_TIME] = 3e9;
		r.fig[AR_RES_FID_RSS] = NAN;
		r.fidelity_reason = NULL;
		ar_res_add_run(ar_res_alloc_slot(&t, "glibc", NULL), &r);
	}
	ar_res_finish(&t);
	const ar_res_alloc_t *g = ar_res_find(&t, "glibc");
	EXPECT(ar_res_has_predictions(&t) && g && CLOSE(g->pred_time_vs_baseline, 3e9 / (2e9 + 1)));
	char cells[AR_RES_NCOLS][AR_RES_CELL];
	int n = ar_res_table_head(cells, &t);
	EXPECT(n == 19 && !strcmp(cells[2], "pred time") && !strcmp(cells[6], "ops/s") && !strcmp(cells[10], "p50"));
	EXPECT(ar_res_fill_row(cells, &t, &t.allocs[0]) == n);
	EXPECT_STR(cells[0], "jemalloc (recorded)");
	EXPECT_STR(cells[10], "< 25 ns");
	EXPECT_STR(cells[11], "300 ns");
	EXPECT_STR(cells[3], "1.00");
	char *notes[AR_RES_NOTES];
	int nn = ar_res_trace_notes(&t, notes);
	EXPECT(nn == 2);
	if (nn == 2) {
		EXPECT_STR(notes[0], "baseline: jemalloc, the allocator the recorded program ran on");
		EXPECT_STR(notes[1], "replay vs recorded program (jemalloc): peak RSS -4 %, duration n/a (the trace "
				     "holds no duration)");
	}
	for (int i = 0; i < nn; i++)
		free(notes[i]);
	/* replay's peak far below the recording's, where the program's RSS grew
	 * by much more than its malloc'd bytes (an interpreter's own heaps):
	 * the line says why, and stays silent where malloc was the growth */
	t.recorded_start_rss_bytes = 30.0 * 1048576;
	t.recorded_peak_rss_bytes = 95.0 * 1048576;
	t.recorded_recorder_bytes = 5.0 * 1048576;
	for (int limit = 0; limit < 2; limit++) {
		t.peak_live_bytes = limit ? 40 << 20 : 4 << 20;
		ar_res_alloc_t *j = ar_res_alloc_slot(&t, "jemalloc", NULL);
		j->fid_rss_err.med = -0.85;
		nn = ar_res_trace_notes(&t, notes);
		const char *want = "peak RSS -85 % (most of this program's memory is not malloc's: its live malloc'd "
				   "bytes peaked at 4 MiB while its RSS grew by 60 MiB;";
		EXPECT(nn == 2 && (limit ? !strstr(notes[1], "not malloc's") : strstr(notes[1], want) != NULL));
		if (nn == 2 && !limit && !strstr(notes[1], want))
			fprintf(stderr, "got: %s\n", notes[1]);
		for (int i = 0; i < nn; i++)
			free(notes[i]);
	}
	ar_res_trace_free(&t);
}

static const char insert_trace[] =
	"INSERT INTO traces (sha256, name, status, events, threads, calls, trace_allocs, peak_live_bytes,"
	" peak_live_blocks, skipped_unknown_frees, unknown_reallocs, lost_blocks, trace_null_results,"
	" cross_thread_deps, reuse_deps, slots) VALUES ('ab', 't.zst', 'complete', 1,1,1,1,1,1,0,0,0,0,0,0,1)";

static void insert_run(sqlite3 *db, int id, const char *alloc, const char *status, double ops, double heap)
{
	char sql[512];
	snprintf(sql, sizeof sql,
		 "INSERT INTO runs (run_id, run_uuid, trace_sha256, allocator, allocator_version, repetition,"
		 " status, started_at, host, allocrr_version, options, touch, ops_per_sec, peak_heap_rss_bytes)"
		 " VALUES (%d, 'u%d', 'ab', '%s', '1', %d, '%s', 'now', 'h', '1', '', 'pages', %.17g, %.17g)",
		 id, id, alloc, id, status, ops, heap);
	EXPECT(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
}

static void test_view_agrees(void)
{
	char err[256];
	sqlite3 *db = NULL;
	EXPECT(ar_res_db_open(":memory:", &db, err, sizeof err) == 0);
	if (!db)
		return;
	EXPECT(ar_res_schema_version() >= 4 && ar_res_migration(ar_res_schema_version()) == NULL);
	EXPECT(sqlite3_exec(db, insert_trace, NULL, NULL, NULL) == SQLITE_OK);
	static const struct { const char *a, *st; double ops, heap; } runs[] = {
		{"glibc", "ok", 100, 4096}, {"glibc", "ok", 400, 8192}, {"glibc", "ok", 150, 4096},
		{"glibc", "ok", 900, 12288}, {"pool", "ok", 70, 1000}, {"pool", "crashed", 1, 1},
		{"pool", "ok", 1000, 3000}, {"pool", "ok", 80, 2000},
	};
	ar_res_trace_t t;
	memset(&t, 0, sizeof t);
	for (int i = 0; i < (int)(sizeof runs / sizeof *runs); i++) {
		insert_run(db, i + 1, runs[i].a, runs[i].st, runs[i].ops, runs[i].heap);
		run(&t, runs[i].a, runs[i].st, runs[i].ops, runs[i].heap);
	}
	/* once with the default baseline (glibc), once recorded on pool */
	for (int pass = 0; pass < 2; pass++) {
		if (pass) {
			EXPECT(sqlite3_exec(db, "UPDATE traces SET recorded_allocator = 'pool'", NULL, NULL, NULL) ==
			       SQLITE_OK);
			t.recorded_allocator = ar_res_strdup("pool");
		}
		ar_res_finish(&t);
		const ar_res_alloc_t *g = ar_res_find(&t, "glibc");
		sqlite3_stmt *st;
		EXPECT(sqlite3_prepare_v2(db, "SELECT allocator, runs, ops_per_sec, speed_vs_glibc, peak_heap_rss_bytes,"
					      " ops_per_sec_spread, baseline, speed_vs_baseline, heap_rss_vs_baseline"
					      " FROM allocator_comparison", -1, &st, NULL) == SQLITE_OK);
		int rows = 0;
		while (sqlite3_step(st) == SQLITE_ROW) {
			const ar_res_alloc_t *a = ar_res_find(&t, (const char *)sqlite3_column_text(st, 0));
			rows++;
			EXPECT(a && g && sqlite3_column_int(st, 1) == a->runs_ok);
			EXPECT(a && CLOSE(sqlite3_column_double(st, 2), a->ops_per_sec.med));
			EXPECT(a && g && CLOSE(sqlite3_column_double(st, 3), a->ops_per_sec.med / g->ops_per_sec.med));
			EXPECT(a && CLOSE(sqlite3_column_double(st, 4), a->heap_bytes.med));
			EXPECT(a && CLOSE(sqlite3_column_double(st, 5), ar_res_spread(&a->ops_per_sec)));
			EXPECT_STR((const char *)sqlite3_column_text(st, 6), pass ? "pool" : "glibc");
			EXPECT(a && CLOSE(sqlite3_column_double(st, 7), a->speed_vs_baseline));
			EXPECT(a && CLOSE(sqlite3_column_double(st, 8), a->heap_vs_baseline));
		}
		sqlite3_finalize(st);
		EXPECT(rows == 2);
	}
	ar_res_trace_free(&t);
	ar_res_db_close(db);
}

/* A schema-8 database holding one trace's runs from two machines (same
 * host, two CPU models), migrated by ar_res_db_open: before, the view
 * mixed the machines (one row per allocator); after (migration 9), one
 * row per machine x allocator, each with its own machine's medians and
 * baseline ratio and the machine's text (ar_res_machine_text, the same as
 * the comparison load.c reads for that machine). */
static void test_view_machines(void)
{
	char path[96], err[256];
	snprintf(path, sizeof path, "%s/test_results_v8.%d.db", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		 (int)getpid());
	remove(path);
	sqlite3 *db = NULL;
	EXPECT(ar_res_schema_version() >= 9);
	EXPECT(sqlite3_open(path, &db) == SQLITE_OK);
	for (int i = 0; i < 8; i++)
		EXPECT(ar_res_exec(db, ar_res_migration(i), err, sizeof err) == 0);
	EXPECT(ar_res_exec(db, "PRAGMA user_version=8", err, sizeof err) == 0);
	EXPECT(sqlite3_exec(db, insert_trace, NULL, NULL, NULL) == SQLITE_OK);
	/* machine A: glibc 100, 300 (median 200), pool 50, 70 (60); machine B:
	 * glibc 1000, 2000 (1500), pool 4000 */
	static const struct { const char *a; double ops; } runs[] = {
		{"glibc", 100}, {"glibc", 300}, {"pool", 50}, {"pool", 70},
		{"glibc", 1000}, {"glibc", 2000}, {"pool", 4000},
	};
	for (int i = 0; i < (int)(sizeof runs / sizeof *runs); i++)
		insert_run(db, i + 1, runs[i].a, "ok", runs[i].ops, 4096);
	EXPECT(ar_res_exec(db, "UPDATE runs SET cpu_model = CASE WHEN run_id <= 4 THEN 'CPU A' ELSE 'CPU B' END,"
			       " cpus = 2, kernel = 'Linux 6.1', glibc_version = '2.36'", err, sizeof err) == 0);
	sqlite3_stmt *st;
	EXPECT(sqlite3_prepare_v2(db, "SELECT count(*) FROM allocator_comparison", -1, &st, NULL) == SQLITE_OK &&
	       sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 2);
	sqlite3_finalize(st);
	sqlite3_close(db);

	EXPECT(ar_res_db_open(path, &db, err, sizeof err) == 0);
	if (!db)
		return;
	EXPECT(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	       sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == ar_res_schema_version());
	sqlite3_finalize(st);
	char *ma = ar_res_machine_text("h", "CPU A", 2, "Linux 6.1", "2.36");
	char *mb = ar_res_machine_text("h", "CPU B", 2, "Linux 6.1", "2.36");
	EXPECT_STR(ma, "h (CPU A, 2 CPUs, Linux 6.1, glibc 2.36)");
	static const struct { const char *a; int b; double ops, speed; int runs; } want[] = {
		{"glibc", 0, 200, 1, 2}, {"pool", 0, 60, 0.3, 2},
		{"glibc", 1, 1500, 1, 2}, {"pool", 1, 4000, 4000.0 / 1500, 1},
	};
	EXPECT(sqlite3_prepare_v2(db, "SELECT allocator, machine, ops_per_sec, speed_vs_baseline, runs, host,"
				      " baseline FROM allocator_comparison ORDER BY machine, allocator",
				  -1, &st, NULL) == SQLITE_OK);
	int rows = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int k = rows++;
		if (k >= 4)
			continue;
		EXPECT_STR((const char *)sqlite3_column_text(st, 0), want[k].a);
		EXPECT_STR((const char *)sqlite3_column_text(st, 1), want[k].b ? mb : ma);
		EXPECT(CLOSE(sqlite3_column_double(st, 2), want[k].ops));
		EXPECT(CLOSE(sqlite3_column_double(st, 3), want[k].speed));
		EXPECT(sqlite3_column_int(st, 4) == want[k].runs);
		EXPECT_STR((const char *)sqlite3_column_text(st, 5), "h");
		EXPECT_STR((const char *)sqlite3_column_text(st, 6), "glibc");
	}
	sqlite3_finalize(st);
	EXPECT(rows == 4);
	ar_res_db_close(db);
	/* the reports' comparison: one trace per machine, named alike */
	ar_res_set_t rep;
	int usage = 0;
	EXPECT(ar_res_load(&rep, path, NULL, &usage) == 0);
	EXPECT(rep.ntraces == 2 && rep.nhosts == 2);
	for (size_t i = 0; i < rep.ntraces && i < 2; i++) {
		const ar_res_trace_t *t = &rep.traces[i];
		EXPECT_STR(t->machine, i ? mb : ma);
		const ar_res_alloc_t *p = ar_res_find(t, "pool");
		EXPECT(p && CLOSE(p->ops_per_sec.med, i ? 4000.0 : 60.0));
	}
	ar_res_free(&rep);
	free(ma);
	free(mb);
	ar_res_merge_discard(path); /* and its -wal, -shm */
}

/* A database of schema 4 (before the recorded_* and prediction columns),
 * opened read-only as allocreport does: it loads, with those figures
 * unknown and glibc the baseline. */
static void test_old_schema_loads(void)
{
	char path[96];
	snprintf(path, sizeof path, "%s/test_results_v4.%d.db", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		 (int)getpid());
	remove(path);
	sqlite3 *db = NULL;
	char err[256];
	EXPECT(sqlite3_open(path, &db) == SQLITE_OK);
	for (int i = 0; i < 4; i++)
		EXPECT(ar_res_exec(db, ar_res_migration(i), err, sizeof err) == 0);
	EXPECT(ar_res_exec(db, "PRAGMA user_version=4", err, sizeof err) == 0);
	EXPECT(sqlite3_exec(db, insert_trace, NULL, NULL, NULL) == SQLITE_OK);
	insert_run(db, 1, "glibc", "ok", 100, 4096);
	insert_run(db, 2, "pool", "ok", 200, 8192);
	sqlite3_close(db);
	ar_res_set_t rep;
	int usage = 0;
	EXPECT(ar_res_load(&rep, path, NULL, &usage) == 0);
	EXPECT(rep.ntraces == 1);
	if (rep.ntraces == 1) {
		const ar_res_trace_t *t = &rep.traces[0];
		EXPECT(t->recorded_allocator == NULL && isnan(t->recorded_peak_rss_bytes));
		EXPECT(t->baseline && !strcmp(t->baseline, "glibc") && !ar_res_has_predictions(t));
		const ar_res_alloc_t *p = ar_res_find(t, "pool");
		EXPECT(p && CLOSE(p->speed_vs_baseline, 2.0) && isnan(p->timer_res_ns.med));
	}
	ar_res_free(&rep);
	remove(path);
}

/* The model of results/predict.c: the recorded figures, plus each
 * allocator's difference from the recorded allocator's replay medians;
 * fidelity on the recorded allocator's runs only; a stored prediction is
 * kept; no recorded CPU time, no prediction, with the reason. */
static void pred_run(ar_res_trace_t *t, const char *alloc, double cpu, double heap, double stored)
{
	ar_res_run_t r;
	memset(&r, 0, sizeof r);
	for (int m = 0; m < AR_RES_NFIG; m++)
		r.fig[m] = NAN;
	r.status = (char *)"ok";
	r.cpu_ns = cpu;
	r.wall_ns = cpu;
	r.fig[AR_RES_HEAP] = heap;
	r.peak_rss_bytes = heap + 5e6; /* the worker's own memory, the same under every allocator */
	r.fig[AR_RES_PRED_TIME] = stored;
	ar_res_add_run(ar_res_alloc_slot(t, alloc, NULL), &r);
}

static void test_predict(void)
{
	ar_res_trace_t t;
	memset(&t, 0, sizeof t);
	t.recorded_allocator = ar_res_strdup("jemalloc");
	t.recorded_cpu_ns = 1e9;
	t.recorded_duration_ns = 3e9;
	t.recorded_start_rss_bytes = 10e6;
	t.recorded_peak_rss_bytes = 100e6;
	t.recorded_recorder_bytes = 4e6; /* the recorder's buffers: not the program's */
	pred_run(&t, "jemalloc", 90e6, 50e6, NAN);
	pred_run(&t, "jemalloc", 110e6, 50e6, NAN);
	pred_run(&t, "jemalloc", 100e6, 50e6, NAN);
	pred_run(&t, "glibc", 150e6, 60e6, NAN);
	pred_run(&t, "pool", 300e6, 20e6, 7e9); /* stored by an earlier allocreplay: kept */
	ar_res_finish(&t);
	const ar_res_alloc_t *j = ar_res_find(&t, "jemalloc"), *g = ar_res_find(&t, "glibc"),
			     *p = ar_res_find(&t, "pool");
	EXPECT(j && CLOSE(j->pred_time_ns.med, 1e9) && CLOSE(j->pred_rss_bytes.med, 96e6));
	EXPECT(j && CLOSE(j->fid_rss_err.med, (10e6 + 50e6 - 96e6) / 96e6) && j->fid_time_err.n == 0);
	EXPECT(j && j->fidelity_reason && strstr(j->fidelity_reason, "heap calls"));
	EXPECT(g && CLOSE(g->pred_time_ns.med, 1e9 + 50e6) && CLOSE(g->pred_rss_bytes.med, 106e6));
	EXPECT(g && g->fid_rss_err.n == 0 && !g->fidelity_reason);
	EXPECT(g && CLOSE(g->pred_time_vs_baseline, 1.05));
	EXPECT(p && CLOSE(p->pred_time_ns.med, 7e9));
	ar_res_trace_free(&t);

	/* A window's replay allocates its pre-existing blocks (30 MB) before
	 * the window, and the recorded start RSS already holds them: the
	 * fidelity check counts them once. */
	memset(&t, 0, sizeof t);
	t.recorded_allocator = ar_res_strdup("jemalloc");
	t.recorded_cpu_ns = 1e9;
	t.recorded_start_rss_bytes = 70e6;
	t.recorded_peak_rss_bytes = 100e6;
	t.preexisting_bytes = 30e6;
	pred_run(&t, "jemalloc", 100e6, 55e6, NAN);
	ar_res_finish(&t);
	j = ar_res_find(&t, "jemalloc");
	EXPECT(j && CLOSE(j->fid_rss_err.med, (70e6 + 55e6 - 30e6 - 100e6) / 100e6));
	ar_res_trace_free(&t);

	/* The recorder's own CPU time (SPEC 6.10, since 2.0) is not the
	 * program's: the prediction starts from the rest. A figure not below
	 * the process's whole CPU time is absurd and not used. */
	for (int absurd = 0; absurd < 2; absurd++) {
		memset(&t, 0, sizeof t);
		t.recorded_allocator = ar_res_strdup("jemalloc");
		t.recorded_cpu_ns = 1e9;
		t.recorded_recorder_cpu_ns = absurd ? 1e9 : 2e8;
		t.recorded_peak_rss_bytes = 100e6;
		pred_run(&t, "jemalloc", 100e6, 50e6, NAN);
		pred_run(&t, "glibc", 150e6, 60e6, NAN);
		ar_res_finish(&t);
		j = ar_res_find(&t, "jemalloc");
		g = ar_res_find(&t, "glibc");
		double program = absurd ? 1e9 : 8e8;
		EXPECT(j && CLOSE(j->pred_time_ns.med, program));
		EXPECT(g && CLOSE(g->pred_time_ns.med, program + 50e6) &&
		       CLOSE(g->pred_time_vs_baseline, (program + 50e6) / program));
		ar_res_trace_free(&t);
	}

	memset(&t, 0, sizeof t);
	t.recorded_allocator = ar_res_strdup("jemalloc");
	t.recorded_peak_rss_bytes = 100e6;
	pred_run(&t, "jemalloc", 100e6, 50e6, NAN);
	pred_run(&t, "glibc", 150e6, 60e6, NAN);
	ar_res_finish(&t);
	g = ar_res_find(&t, "glibc");
	EXPECT(g && g->pred_time_ns.n == 0 && g->prediction_reason && strstr(g->prediction_reason, "CPU time"));
	EXPECT(g && CLOSE(g->pred_rss_bytes.med, 110e6)); /* memory does not need the CPU time */
	ar_res_trace_free(&t);
}

/* results/schema_check.c: allocrr's own schema passes at every version
 * (older databases still open), whatever it did not put there is refused
 * with the object named, a table of its own is allowed, and a database
 * whose user_version understates its schema is refused. */
static sqlite3 *schema_db(int v, int stamp)
{
	sqlite3 *db = NULL;
	char err[256], sql[48];
	EXPECT(sqlite3_open(":memory:", &db) == SQLITE_OK);
	for (int i = 0; i < v; i++)
		EXPECT(ar_res_exec(db, ar_res_migration(i), err, sizeof err) == 0);
	snprintf(sql, sizeof sql, "PRAGMA user_version=%d", stamp);
	EXPECT(ar_res_exec(db, sql, err, sizeof err) == 0);
	return db;
}

static int schema_ok(sqlite3 *db, const char *extra, char *err, size_t cap)
{
	int v = -1;
	err[0] = 0;
	if (extra)
		EXPECT(ar_res_exec(db, extra, err, cap) == 0);
	return ar_res_schema_check(db, "main", "t.db", "read it", &v, err, cap);
}

static void test_schema_check(void)
{
	char err[768];
	int n = ar_res_schema_version();
	for (int v = 0; v <= n; v++) {
		sqlite3 *db = schema_db(v, v);
		int got = -1;
		EXPECT(ar_res_schema_check(db, "main", "t.db", "read it", &got, err, sizeof err) == 0 && got == v);
		sqlite3_close(db);
	}
	static const struct {
		const char *sql, *says; /* says NULL: accepted */
	} cases[] = {
		{"CREATE TRIGGER x AFTER INSERT ON runs BEGIN DELETE FROM runs; END",
		 "t.db: trigger 'x' on table runs is not part of allocrr's schema: refusing to read it"},
		{"CREATE VIEW mine AS SELECT 1", "t.db: view 'mine' is not part of allocrr's schema"},
		{"DROP VIEW allocator_comparison; CREATE VIEW allocator_comparison AS SELECT 1 AS ops_per_sec",
		 "t.db: view 'allocator_comparison' is not allocrr's"},
		{"ALTER TABLE latency ADD COLUMN bonus REAL", "t.db: column latency.bonus is not part of allocrr's"},
		{"CREATE INDEX mine ON runs(ops_per_sec)", "t.db: index 'mine' on table runs is not part of"},
		{"DROP INDEX runs_by_trace", "t.db: index 'runs_by_trace' of allocrr's schema version"},
		{"CREATE TABLE notes (run_id INTEGER, text TEXT); CREATE INDEX notes_by_run ON notes(run_id)", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		sqlite3 *db = schema_db(n, n);
		int rc = schema_ok(db, cases[i].sql, err, sizeof err);
		EXPECT(cases[i].says ? rc == -1 && strstr(err, cases[i].says) : rc == 0);
		if (cases[i].says && !strstr(err, cases[i].says))
			fprintf(stderr, "case %zu: %s\n", i, err);
		sqlite3_close(db);
	}
	/* A version that understates the schema, one newer than this program,
	 * someone else's database at version 0. */
	char want[48];
	snprintf(want, sizeof want, "schema version %d", n - 1);
	sqlite3 *db = schema_db(n, n - 1);
	EXPECT(schema_ok(db, NULL, err, sizeof err) == -1 && strstr(err, want));
	sqlite3_close(db);
	db = schema_db(n, n + 1);
	EXPECT(schema_ok(db, NULL, err, sizeof err) == -1 && strstr(err, "newer than this program's"));
	sqlite3_close(db);
	db = schema_db(0, 0);
	EXPECT(schema_ok(db, "CREATE TABLE customers (id INTEGER)", err, sizeof err) == -1 &&
	       strstr(err, "t.db: not a results database (schema version 0, and it holds table 'customers')"));
	sqlite3_close(db);
	/* A connection of the results module never fires a trigger, even one
	 * that appeared after the check. */
	EXPECT(ar_res_db_open(":memory:", &db, err, sizeof err) == 0);
	EXPECT(ar_res_exec(db, "CREATE TABLE t (x); CREATE TABLE fired (x);"
			   "CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO fired VALUES (1); END;"
			   "INSERT INTO t VALUES (1)", err, sizeof err) == 0);
	sqlite3_stmt *st = NULL;
	EXPECT(sqlite3_prepare_v2(db, "SELECT count(*) FROM fired", -1, &st, NULL) == SQLITE_OK &&
	       sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 0);
	sqlite3_finalize(st);
	ar_res_db_close(db);
}

/* sites.c: a trace's sites stored, replaced whole, loaded largest live at
 * the peak first; none for another trace or a database before schema 8. */
static void test_sites(void)
{
	sqlite3 *db;
	char err[256];
	EXPECT(ar_res_db_open(":memory:", &db, err, sizeof err) == 0);
	ar_res_site_t s[] = {{"main;a", 10, 1000, 0, 0, 10, 0, 0},
			     {"main;b", 20, 4000, 4000, 20, 0, 0, 0},
			     {"main;c;x y", 5, 1500, 1500, 5, 0, 1500, 5}};
	EXPECT(ar_res_sites_store(db, "aa", s, 3, err, sizeof err) == 0);
	EXPECT(ar_res_sites_store(db, "bb", s, 1, err, sizeof err) == 0);
	size_t n = 9;
	ar_res_site_t *v = ar_res_sites_load(db, "aa", &n);
	EXPECT(v != NULL && n == 3);
	if (v && n == 3) {
		EXPECT_STR(v[0].stack, "main;b");
		EXPECT_STR(v[1].stack, "main;c;x y");
		EXPECT_STR(v[2].stack, "main;a");
		EXPECT(v[1].calls == 5 && v[1].bytes == 1500 && v[1].live_at_peak_bytes == 1500 &&
		       v[1].live_at_peak_blocks == 5 && v[1].temporary_calls == 0 && v[1].leaked_bytes == 1500 &&
		       v[1].leaked_blocks == 5);
		EXPECT(v[2].temporary_calls == 10);
	}
	ar_res_sites_free(v, n);
	/* stored again: replaced, not added; a duplicate stack refused whole */
	EXPECT(ar_res_sites_store(db, "aa", s + 2, 1, err, sizeof err) == 0);
	v = ar_res_sites_load(db, "aa", &n);
	EXPECT(v != NULL && n == 1 && !strcmp(v[0].stack, "main;c;x y"));
	ar_res_sites_free(v, n);
	ar_res_site_t dup[] = {s[0], s[0]};
	EXPECT(ar_res_sites_store(db, "aa", dup, 2, err, sizeof err) == -1 && strstr(err, "cannot store the sites"));
	v = ar_res_sites_load(db, "aa", &n);
	EXPECT(v != NULL && n == 1);
	ar_res_sites_free(v, n);
	v = ar_res_sites_load(db, "cc", &n);
	EXPECT(v == NULL && n == 0);
	ar_res_db_close(db);
	/* schema 7: no table, no sites */
	db = schema_db(7, 7);
	n = 9;
	EXPECT(ar_res_sites_load(db, "aa", &n) == NULL && n == 0);
	sqlite3_close(db);
}

int main(void)
{
	RUN(test_stat);
	RUN(test_significance);
	RUN(test_finish);
	RUN(test_resolution_predictions);
	RUN(test_predict);
	RUN(test_view_agrees);
	RUN(test_view_machines);
	RUN(test_old_schema_loads);
	RUN(test_schema_check);
	RUN(test_sites);
	return TEST_END();
}
