/*
 * test_recommend.c — unit tests of allocreport's recommendation logic
 * (analysis/report_recommend.c) on hand-built comparisons, no replay and no
 * timing: which allocator is picked for speed, memory, tail latency and
 * balance; the verdict (effect floor + bootstrap over repetitions): clear
 * differences meaningful, noise around 1.03x not ("no meaningful
 * difference", and the pick is then the baseline), a single repetition
 * undecided; the baseline being the recorded allocator; predicted figures
 * ranking speed and memory; allocators with failed runs left out unless all
 * failed; a figure not measured (NAN) never picked; the cautions (freelist
 * and threads, pool's falling live set, arena's long-lived objects, failed
 * runs, few repetitions) and a caution travelling with the pick it names;
 * and the four output formats saying the same.
 *
 * The RSS timelines the cautions read come from an in-memory SQLite table
 * shaped like the results database's rss_samples.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "ar_results.h"
#include "report_model.h"
#include "testing.h"

enum { SPEED, MEMORY, TAIL, BALANCE };

#define CLOSE(a, b) (fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1.0, fabs((double)(b))))

static sqlite3 *db;
static int64_t next_run_id = 1;

/* One run of alloc on t with the given figures (NAN: not measured). */
static void add_run(ar_res_trace_t *t, const char *alloc, const char *status, double ops, double heap, double p99,
		    double frag)
{
	ar_res_run_t r;
	memset(&r, 0, sizeof r);
	for (int m = 0; m < AR_RES_NFIG; m++)
		r.fig[m] = NAN;
	r.run_id = next_run_id++;
	r.status = (char *)status;
	r.reason = status && strcmp(status, "ok") ? (char *)"SIGSEGV in malloc" : NULL;
	r.fig[AR_RES_OPS] = ops;
	r.fig[AR_RES_HEAP] = heap;
	r.fig[AR_RES_FINAL] = heap;
	r.fig[AR_RES_P99] = p99;
	r.fig[AR_RES_FRAG] = frag;
	ar_res_add_run(ar_res_alloc_slot(t, alloc, NULL), &r);
}

/* Three ok runs at (1 - d, 1, 1 + d) times each figure: spread 2d. */
static void add3(ar_res_trace_t *t, const char *alloc, double ops, double heap, double p99, double d)
{
	for (int k = -1; k <= 1; k++)
		add_run(t, alloc, "ok", ops * (1 + k * d), heap * (1 + k * d), p99 * (1 + k * d), NAN);
}

static void trace_init(ar_res_trace_t *t, const char *name, int64_t threads)
{
	memset(t, 0, sizeof *t);
	t->sha256 = ar_res_strdup("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	t->name = ar_res_strdup(name);
	t->host = ar_res_strdup("testhost");
	t->threads = threads;
	t->events = 100;
	t->peak_live_bytes = 1000;
	t->peak_live_blocks = 10;
	t->trace_allocs = 20;
}

static ar_res_set_t set_of(ar_res_trace_t *t, size_t n)
{
	ar_res_set_t s;
	memset(&s, 0, sizeof s);
	s.db = db;
	s.path = ":memory:";
	s.nhosts = 1;
	s.traces = t;
	s.ntraces = n;
	return s;
}

/* live_bytes at events 0, 10, ..., 100 for run_id. */
static void timeline(int64_t run_id, const double live[11])
{
	for (int i = 0; i <= 10; i++) {
		char *sql = ar_res_strf("INSERT INTO rss_samples VALUES (%lld, %d, %d, 0, 0, %f)", (long long)run_id, i,
					10 * i, live[i]);
		EXPECT(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
		free(sql);
	}
}

static const char *name_of(const ar_rep_pick_t *p) { return p->best ? p->best->name : "(none)"; }
static const char *second_of(const ar_rep_pick_t *p) { return p->second ? p->second->name : "(none)"; }

static int has_prefix(char *const *v, size_t n, const char *prefix)
{
	for (size_t i = 0; i < n; i++)
		if (!strncmp(v[i], prefix, strlen(prefix)))
			return 1;
	return 0;
}

/* Clear leads: jemalloc fastest and lowest p99, "tiny" smallest heap and
 * best balance; every pick significant, evidence names glibc's figure. */
static void test_clear_winners(void)
{
	ar_res_trace_t t;
	trace_init(&t, "clear", 1);
	add3(&t, "glibc", 100, 1000000, 500, 0.01);
	add3(&t, "jemalloc", 200, 2000000, 300, 0.01);
	add3(&t, "tiny", 50, 100000, 1000, 0.01);
	ar_res_finish(&t);
	ar_res_set_t s = set_of(&t, 1);
	ar_rep_advice_t ad;
	ar_rep_advise(&s, &t, &ad);

	EXPECT_STR(ad.picks[SPEED].goal, "speed");
	EXPECT_STR(ad.picks[SPEED].metric, "ops_per_sec");
	EXPECT_STR(name_of(&ad.picks[SPEED]), "jemalloc");
	EXPECT_STR(second_of(&ad.picks[SPEED]), "glibc");
	EXPECT(CLOSE(ad.picks[SPEED].best_value, 200) && CLOSE(ad.picks[SPEED].second_value, 100));
	EXPECT(ad.picks[SPEED].significant);
	EXPECT_U64(ad.picks[SPEED].nwarnings, 0);
	EXPECT(strstr(ad.picks[SPEED].evidence, "2.00x glibc's") != NULL);
	EXPECT(strstr(ad.picks[SPEED].evidence, "is 2.00x faster") != NULL);

	EXPECT_STR(name_of(&ad.picks[MEMORY]), "tiny");
	EXPECT_STR(second_of(&ad.picks[MEMORY]), "glibc");
	EXPECT(ad.picks[MEMORY].significant);
	EXPECT(strstr(ad.picks[MEMORY].evidence, "0.10x glibc's") != NULL);

	EXPECT_STR(name_of(&ad.picks[TAIL]), "jemalloc");
	EXPECT_STR(second_of(&ad.picks[TAIL]), "glibc");
	EXPECT(ad.picks[TAIL].significant);
	EXPECT(strstr(ad.picks[TAIL].evidence, "0.60x glibc's") != NULL);

	/* Balance: cbrt(ops / 200 * 100000 / heap * 300 / p99). */
	EXPECT_STR(ad.picks[BALANCE].metric, "balance_score");
	EXPECT_STR(name_of(&ad.picks[BALANCE]), "tiny");
	EXPECT_STR(second_of(&ad.picks[BALANCE]), "jemalloc");
	EXPECT(CLOSE(ad.picks[BALANCE].best_value, cbrt(0.25 * 1 * 0.3)));
	EXPECT(CLOSE(ad.picks[BALANCE].second_value, cbrt(1 * 0.05 * 1)));
	EXPECT(ad.picks[BALANCE].significant);
	EXPECT_U64(ad.ncautions, 0);
	ar_rep_advice_free(&ad);
	ar_res_trace_free(&t);
}

/* Overlapping repetitions 5 % apart: no meaningful difference, so the pick
 * is the baseline (glibc), the leader its runner-up. */
static void test_overlap(void)
{
	ar_res_trace_t t;
	trace_init(&t, "overlap", 1);
	add3(&t, "glibc", 100, 1000000, 500, 0.10);
	add3(&t, "jemalloc", 105, 1000000 * 1.05, 500 * 1.05, 0.10);
	ar_res_finish(&t);
	ar_res_set_t s = set_of(&t, 1);
	ar_rep_advice_t ad;
	ar_rep_advise(&s, &t, &ad);
	EXPECT_STR(name_of(&ad.picks[SPEED]), "glibc");
	EXPECT_STR(second_of(&ad.picks[SPEED]), "jemalloc");
	EXPECT_STR(ad.picks[SPEED].leader->name, "jemalloc");
	EXPECT(!ad.picks[SPEED].significant);
	EXPECT_STR(ad.picks[SPEED].verdict, "no meaningful difference");
	EXPECT_U64(ad.picks[SPEED].nwarnings, 1);
	EXPECT(has_prefix(ad.picks[SPEED].warnings, ad.picks[SPEED].nwarnings,
			  "no meaningful difference: jemalloc is 1.05x glibc (95% bootstrap interval"));
	EXPECT(strstr(ad.picks[SPEED].warnings[0], "stay on glibc, the baseline") != NULL);
	EXPECT_STR(name_of(&ad.picks[MEMORY]), "glibc");
	EXPECT(!ad.picks[MEMORY].significant);
	EXPECT_STR(name_of(&ad.picks[TAIL]), "glibc");
	EXPECT(!ad.picks[TAIL].significant);
	ar_rep_advice_free(&ad);
	ar_res_trace_free(&t);
}

/* Medians within the 5 % floor: no meaningful difference, however steady. */
static void test_tie(void)
{
	ar_res_trace_t t;
	trace_init(&t, "tie", 1);
	add3(&t, "glibc", 100, 1000000, 500, 0.0001);
	add3(&t, "mimalloc", 100.5, 2000000, 300, 0.0001);
	ar_res_finish(&t);
	ar_res_set_t s = set_of(&t, 1);
	ar_rep_advice_t ad;
	ar_rep_advise(&s, &t, &ad);
	EXPECT_STR(name_of(&ad.picks[SPEED]), "glibc");
	EXPECT(!ad.picks[SPEED].significant);
	EXPECT(has_prefix(ad.picks[SPEED].warnings, ad.picks[SPEED].nwarnings,
			  "no meaningful difference: mimalloc is 1.005x glibc, within the 5% floor"));
	EXPECT(ad.picks[MEMORY].significant); /* 2x apart, ranges 0.02 % wide */
	ar_rep_advice_free(&ad);
	ar_res_trace_free(&t);
}

/* One repetition each: no verdict possible (undecided), the leader stays the
 * pick, and a caution that every allocator has a single repetition. */
static void test_single_repetition(void)
{
	ar_res_trace_t t;
	trace_init(&t, "single", 1);
	add_run(&t, "glibc", "ok", 100, 1000000, 500, NAN);
	add_run(&t, "jemalloc", "ok", 300, 3000000, 200, NAN);
	ar_res_finish(&t);
	ar_res_set_t s = set_of(&t, 1);
	ar_rep_advice_t ad;
	ar_rep_advise(&s, &t, &ad);
	EXPECT_STR(name_of(&ad.picks[SPEED]), "jemalloc");
	EXPECT(!ad.picks[SPEED].significant);
	EXPECT_STR(ad.picks[SPEED].verdict, "undecided");
	EXPECT(has_prefix(ad.picks[SPEED].warnings, ad.picks[SPEED].nwarnings,
			  "undecided: jemalloc has a single successful repetition, so no verdict is possible"));
	EXPECT(strstr(ad.picks[SPEED].evidence, "1 run, no spread") != NULL);
	EXPECT(has_prefix(ad.cautions, ad.ncautions, "every allocator has 1 successful repetition(s)"));
	ar_rep_advice_free(&ad);
	ar_res_trace_free(&t);
}

/* An allocator with a failed run is not picked even when fastest, and a
 * caution says so; when every allocator failed somewhere, they all compete
 * again; with no ok run at all, nothing is picked. */
static void test_failed_runs(void)
{
	ar_res_trace_t t;
	trace_init(&t, "failures", 1);
	add3(&t, "glibc", 100, 1000000, 500, 0.01);
	add3(&t, "fast", 1000, 100000, 50, 0.01);
	add_run(&t, "fast", "crashed", NAN, NAN, NAN, NAN);
	ar_res_finish(&t);
	ar_res_set_t s = set_of(&t, 1);
	ar_rep_advice_t ad;
	ar_rep_advise(&s, &t, &ad);
	for (int g = 0; g < AR_REP_GOALS; g++) {
		EXPECT_STR(name_of(&ad.picks[g]), "glibc");
		EXPECT(ad.picks[g].second == NULL);
		EXPECT(!ad.picks[g].significant);
		EXPECT(strstr(ad.picks[g].evidence, "the only allocator with successful runs") != NULL);
	}
	EXPECT(has_prefix(ad.cautions, ad.ncautions,
			  "fast: 1 of 4 runs failed (crashed: SIGSEGV in malloc); not recommended"));
	ar_rep_advice_free(&ad);

	add_run(&t, "glibc", "timeout", NAN, NAN, NAN, NAN); /* now both failed once */
	ar_res_finish(&t);
	ar_rep_advise(&s, &t, &ad);
	EXPECT_STR(name_of(&ad.picks[SPEED]), "fast");
	EXPECT(ad.picks[SPEED].significant);
	ar_rep_advice_free(&ad);
	ar_res_trace_free(&t);

	trace_init(&t, "all failed", 1);
	add_run(&t, "glibc", "crashed", NAN, NAN, NAN, NAN);
	ar_res_finish(&t);
	ar_rep_advise(&s, &t, &ad);
	for (int g = 0; g < AR_REP_GOALS; g++) {
		EXPECT(ad.picks[g].best == NULL);
		EXPECT(ad.picks[g].evidence == NULL);
		EXPECT(isnan(ad.picks[g].best_value));
	}
	ar_rep_advice_free(&ad);
	ar_res_trace_free(&t);
}

/* A p99 not measured (NAN) is never the lowest, and leaves the balance
 * score of that allocator NAN. */
static void test_not_measured(void)
{
	ar_res_trace_t t;
	trace_init(&t, "nan", 1);
	add3(&t, "glibc", 100, 1000000, 500, 0.01);
	add3(&t, "nop99", 200, 500000, NAN, 0.01);
	ar_res_finish(&t);
	ar_res_set_t s = set_of(&t, 1);
	ar_rep_advice_t ad;
	ar_rep_advise(&s, &t, &ad);
	EXPECT_STR(name_of(&ad.picks[SPEED]), "nop99");
	EXPECT_STR(name_of(&ad.picks[TAIL]), "glibc");
	EXPECT(isnan(ad.picks[TAIL].second_value));
	EXPECT_STR(name_of(&ad.picks[BALANCE]), "glibc");
	ar_rep_advice_free(&ad);
	ar_res_trace_free(&t);
}

/* freelist on a multi-threaded trace: a caution, which also travels with
 * the memory pick freelist wins. */
static void test_freelist_threads(void)
{
	ar_res_trace_t t;
	trace_init(&t, "threads", 4);
	add3(&t, "glibc", 100, 1000000, 500, 0.01);
	add3(&t, "freelist", 20, 400000, 5000, 0.01);
	ar_res_finish(&t);
	ar_res_set_t s = set_of(&t, 1);
	ar_rep_advice_t ad;
	ar_rep_advise(&s, &t, &ad);
	EXPECT(has_prefix(ad.cautions, ad.ncautions, "freelist: many threads (4) on one global lock"));
	EXPECT_STR(name_of(&ad.picks[MEMORY]), "freelist");
	EXPECT(has_prefix(ad.picks[MEMORY].warnings, ad.picks[MEMORY].nwarnings, "freelist: many threads"));
	EXPECT(!has_prefix(ad.picks[SPEED].warnings, ad.picks[SPEED].nwarnings, "freelist:"));
	ar_rep_advice_free(&ad);
	ar_res_trace_free(&t);
}

/* pool: the live set falls to 20 % of its peak before 80 % of the events. */
static void test_pool_shrinking(void)
{
	ar_res_trace_t t;
	trace_init(&t, "shrink", 1);
	int64_t first = next_run_id;
	add3(&t, "glibc", 100, 1000000, 500, 0.01);
	add3(&t, "pool", 150, 1200000, 400, 0.01);
	ar_res_finish(&t);
	const double live[11] = {0, 1000, 900, 600, 400, 200, 300, 300, 300, 300, 0};
	timeline(first, live);
	ar_res_set_t s = set_of(&t, 1);
	ar_rep_advice_t ad;
	ar_rep_advise(&s, &t, &ad);
	EXPECT(has_prefix(ad.cautions, ad.ncautions, "pool: the live set falls to 20% of its peak"));
	EXPECT_STR(name_of(&ad.picks[SPEED]), "pool");
	EXPECT(has_prefix(ad.picks[SPEED].warnings, ad.picks[SPEED].nwarnings, "pool: the live set"));
	ar_rep_advice_free(&ad);
	ar_res_trace_free(&t);
}

/* arena: long-lived objects among churn (the second half holds 80 % of the
 * peak while allocating 100x the peak block count), and separately a
 * measured fragmentation 2x the others' without that pattern. */
static void test_arena(void)
{
	ar_res_trace_t t;
	trace_init(&t, "longlived", 1);
	t.trace_allocs = 1000;
	int64_t first = next_run_id;
	for (int k = 0; k < 3; k++)
		add_run(&t, "glibc", "ok", 100 + k, 1000000, 500, 1.2);
	for (int k = 0; k < 3; k++)
		add_run(&t, "arena", "ok", 120 + k, 1500000, 400, 1.3);
	ar_res_finish(&t);
	const double hold[11] = {0, 500, 1000, 900, 800, 800, 800, 800, 800, 800, 0};
	timeline(first, hold);
	ar_res_set_t s = set_of(&t, 1);
	ar_rep_advice_t ad;
	ar_rep_advise(&s, &t, &ad);
	EXPECT(has_prefix(ad.cautions, ad.ncautions, "arena: long-lived objects among short-lived ones"));
	EXPECT(!has_prefix(ad.cautions, ad.ncautions, "pool:"));
	ar_rep_advice_free(&ad);
	ar_res_trace_free(&t);

	trace_init(&t, "frag", 1);
	for (int k = 0; k < 3; k++)
		add_run(&t, "glibc", "ok", 100 + k, 1000000, 500, 1.2);
	for (int k = 0; k < 3; k++)
		add_run(&t, "arena", "ok", 120 + k, 1500000, 400, 3.0);
	ar_res_finish(&t);
	ar_rep_advise(&s, &t, &ad);
	EXPECT(has_prefix(ad.cautions, ad.ncautions, "arena: objects of different lifetimes share its chunks"));
	ar_rep_advice_free(&ad);
	ar_res_trace_free(&t);
}

/* Every format prints the picks and the significance the advice holds. */
static void test_print(void)
{
	ar_res_trace_t t[2];
	trace_init(&t[0], "clear", 1);
	add3(&t[0], "glibc", 100, 1000000, 500, 0.01);
	add3(&t[0], "jemalloc", 200, 2000000, 300, 0.01);
	ar_res_finish(&t[0]);
	trace_init(&t[1], "overlap", 1);
	add3(&t[1], "glibc", 100, 1000000, 500, 0.10);
	add3(&t[1], "jemalloc", 105, 1050000, 525, 0.10);
	ar_res_finish(&t[1]);
	ar_res_set_t s = set_of(t, 2);
	const enum ar_res_format fmts[] = {AR_RES_TABLE, AR_RES_MARKDOWN, AR_RES_CSV, AR_RES_JSON};
	const char *const want[] = {"  speed         jemalloc\n", "- **speed: jemalloc**",
				    ",speed,ops_per_sec,jemalloc,200,glibc,100,1,meaningful,glibc,jemalloc,",
				    "\"significant\": true"};
	const char *const unsig[] = {"(no meaningful difference: stay on the baseline)",
				     "(no meaningful difference: stay on the baseline)", ",0,no meaningful difference,glibc,jemalloc,",
				     "\"verdict\": \"no meaningful difference\""};
	for (size_t i = 0; i < sizeof fmts / sizeof *fmts; i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		ar_rep_print_advice(f, &s, fmts[i]);
		fclose(f);
		EXPECT(strstr(buf, want[i]) != NULL);
		EXPECT(strstr(buf, unsig[i]) != NULL);
		if (strstr(buf, want[i]) == NULL)
			fprintf(stderr, "format %zu printed:\n%s\n", i, buf);
		free(buf);
	}
	ar_res_trace_free(&t[0]);
	ar_res_trace_free(&t[1]);
}

/* The case: a 1.03x lead with run-to-run spread (5 repetitions) is
 * no meaningful difference; a clear 1.4x lead with the same spread is. */
static void test_noise_around_103(void)
{
	ar_res_trace_t t;
	trace_init(&t, "noise", 1);
	static const double g[] = {100, 94, 106, 99, 103}, m[] = {103, 97, 110, 101, 107};
	for (int k = 0; k < 5; k++) {
		add_run(&t, "glibc", "ok", g[k], 1000000, 500, NAN);
		add_run(&t, "mimalloc", "ok", m[k], 1000000, 500, NAN);
		add_run(&t, "fast", "ok", 1.4 * g[k], 1000000, 500, NAN);
	}
	ar_res_finish(&t);
	ar_res_set_t s = set_of(&t, 1);
	ar_rep_advice_t ad;
	ar_rep_advise(&s, &t, &ad);
	EXPECT_STR(name_of(&ad.picks[SPEED]), "fast");
	EXPECT(ad.picks[SPEED].significant);
	EXPECT_STR(ad.picks[SPEED].verdict, "meaningful");
	EXPECT(ad.picks[SPEED].interval_lo > 1.05);
	ar_rep_advice_free(&ad);
	ar_res_trace_free(&t);

	trace_init(&t, "noise only", 1);
	for (int k = 0; k < 5; k++) {
		add_run(&t, "glibc", "ok", g[k], 1000000, 500, NAN);
		add_run(&t, "mimalloc", "ok", m[k], 1000000, 500, NAN);
	}
	ar_res_finish(&t);
	s = set_of(&t, 1);
	ar_rep_advise(&s, &t, &ad);
	EXPECT_STR(name_of(&ad.picks[SPEED]), "glibc");
	EXPECT_STR(ad.picks[SPEED].leader->name, "mimalloc");
	EXPECT(!ad.picks[SPEED].significant);
	EXPECT_STR(ad.picks[SPEED].verdict, "no meaningful difference");
	ar_rep_advice_free(&ad);
	ar_res_trace_free(&t);
}

/* The program ran on jemalloc: the verdict is against jemalloc, not glibc;
 * a leader not meaningfully better than jemalloc leaves jemalloc the pick. */
static void test_recorded_baseline(void)
{
	ar_res_trace_t t;
	trace_init(&t, "server", 1);
	t.recorded_allocator = ar_res_strdup("jemalloc");
	add3(&t, "glibc", 100, 1000000, 500, 0.01);
	add3(&t, "jemalloc", 150, 900000, 400, 0.01);
	add3(&t, "mimalloc", 152, 2000000, 390, 0.01);
	ar_res_finish(&t);
	ar_res_set_t s = set_of(&t, 1);
	ar_rep_advice_t ad;
	ar_rep_advise(&s, &t, &ad);
	EXPECT_STR(t.baseline, "jemalloc");
	EXPECT_STR(name_of(&ad.picks[SPEED]), "jemalloc"); /* mimalloc's 1.3 % lead is below the floor */
	EXPECT_STR(ad.picks[SPEED].leader->name, "mimalloc");
	EXPECT_STR(ad.picks[SPEED].verdict, "no meaningful difference");
	EXPECT_STR(name_of(&ad.picks[MEMORY]), "jemalloc"); /* the baseline leads: compared with the runner-up */
	EXPECT(ad.picks[MEMORY].significant);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ar_rep_print_advice(f, &s, AR_RES_TABLE);
	fclose(f);
	EXPECT(strstr(buf, "baseline jemalloc (recorded)") != NULL);
	EXPECT(strstr(buf, "speed         jemalloc (no meaningful difference: stay on the baseline)") != NULL);
	free(buf);
	ar_rep_advice_free(&ad);
	ar_res_trace_free(&t);
}

/* Predicted program figures, when every allocator has them, rank speed and
 * memory: here the replay's fastest (churn) is not the program's fastest. */
static void test_predictions_rank(void)
{
	ar_res_trace_t t;
	trace_init(&t, "predicted", 1);
	for (int k = -1; k <= 1; k++) {
		ar_res_run_t r;
		memset(&r, 0, sizeof r);
		for (int m = 0; m < AR_RES_NFIG; m++)
			r.fig[m] = NAN;
		r.run_id = next_run_id++;
		r.status = (char *)"ok";
		r.fig[AR_RES_P99] = 500;
		r.fig[AR_RES_OPS] = 100 * (1 + 0.01 * k);
		r.fig[AR_RES_HEAP] = 1e6;
		r.fig[AR_RES_PRED_TIME] = 1e9 * (1 + 0.01 * k);
		r.fig[AR_RES_PRED_RSS] = 5e7;
		ar_res_add_run(ar_res_alloc_slot(&t, "glibc", NULL), &r);
		r.fig[AR_RES_OPS] = 300 * (1 + 0.01 * k); /* 3x the churn speed ... */
		r.fig[AR_RES_PRED_TIME] = 1.2e9 * (1 + 0.01 * k); /* ... yet the program is slower */
		r.fig[AR_RES_PRED_RSS] = 4e7;
		ar_res_add_run(ar_res_alloc_slot(&t, "arena", NULL), &r);
	}
	ar_res_finish(&t);
	ar_res_set_t s = set_of(&t, 1);
	ar_rep_advice_t ad;
	ar_rep_advise(&s, &t, &ad);
	EXPECT_STR(ad.picks[SPEED].metric, "predicted_time_ns");
	EXPECT_STR(name_of(&ad.picks[SPEED]), "glibc");
	EXPECT(ad.picks[SPEED].significant);
	EXPECT_STR(ad.picks[MEMORY].metric, "predicted_peak_rss_bytes");
	EXPECT_STR(name_of(&ad.picks[MEMORY]), "arena");
	EXPECT(strstr(ad.picks[MEMORY].evidence, "0.80x glibc's") != NULL);
	ar_rep_advice_free(&ad);
	ar_res_trace_free(&t);
}

int main(void)
{
	if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
	    sqlite3_exec(db,
			 "CREATE TABLE rss_samples (run_id INTEGER, sample INTEGER, event INTEGER, "
			 "heap_rss_bytes INTEGER, anon_rss_bytes INTEGER, live_bytes INTEGER)",
			 NULL, NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, "test_recommend: cannot create the in-memory database\n");
		return 2;
	}
	RUN(test_clear_winners);
	RUN(test_overlap);
	RUN(test_tie);
	RUN(test_single_repetition);
	RUN(test_failed_runs);
	RUN(test_not_measured);
	RUN(test_freelist_threads);
	RUN(test_pool_shrinking);
	RUN(test_arena);
	RUN(test_print);
	RUN(test_noise_around_103);
	RUN(test_recorded_baseline);
	RUN(test_predictions_rank);
	sqlite3_close(db);
	return TEST_END();
}
