/*
 * test_results.c — unit tests of the results module: the median and range
 * rule (odd, even, NULLs left out), spread, the significance rule, an
 * allocator's runs becoming medians and ratios to glibc (failed runs left
 * out), and the schema: migrating an empty database to the current version,
 * after which the SQL view allocator_comparison gives exactly the medians
 * and ratios compare.c computes from the same runs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
	ar_res_stat_t one = {100, 100, 100, 1}, a = {100, 95, 105, 3}, b = {80, 78, 82, 3};
	ar_res_stat_t c = {99.5, 90, 110, 3}, d = {90, 85, 96, 3};
	EXPECT(ar_res_significance(&one, &b, 1.25) == AR_RES_SIG_SINGLE);
	EXPECT(ar_res_significance(&a, &c, 100 / 99.5) == AR_RES_SIG_TIE);
	EXPECT(ar_res_significance(&a, &d, 100 / 90.0) == AR_RES_SIG_OVERLAP);
	EXPECT(ar_res_significance(&a, &b, 100 / 80.0) == AR_RES_SIG_YES);
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
	EXPECT(p && CLOSE(p->speed_vs_glibc, 400 / 150.0) && CLOSE(p->heap_vs_glibc, 20 / 30.0));
	ar_res_trace_free(&t);
	/* no baseline: no ratio */
	run(&t, "pool", "ok", 1, 1);
	ar_res_finish(&t);
	EXPECT(isnan(t.allocs[0].speed_vs_glibc));
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
	ar_res_finish(&t);
	sqlite3_stmt *st;
	EXPECT(sqlite3_prepare_v2(db, "SELECT allocator, runs, ops_per_sec, speed_vs_glibc, peak_heap_rss_bytes,"
				      " ops_per_sec_spread FROM allocator_comparison", -1, &st, NULL) == SQLITE_OK);
	int rows = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const ar_res_alloc_t *a = ar_res_find(&t, (const char *)sqlite3_column_text(st, 0));
		rows++;
		EXPECT(a && sqlite3_column_int(st, 1) == a->runs_ok);
		EXPECT(a && CLOSE(sqlite3_column_double(st, 2), a->ops_per_sec.med));
		EXPECT(a && CLOSE(sqlite3_column_double(st, 3), a->speed_vs_glibc));
		EXPECT(a && CLOSE(sqlite3_column_double(st, 4), a->heap_bytes.med));
		EXPECT(a && CLOSE(sqlite3_column_double(st, 5), ar_res_spread(&a->ops_per_sec)));
	}
	sqlite3_finalize(st);
	EXPECT(rows == 2);
	ar_res_trace_free(&t);
	ar_res_db_close(db);
}

int main(void)
{
	RUN(test_stat);
	RUN(test_significance);
	RUN(test_finish);
	RUN(test_view_agrees);
	return TEST_END();
}
