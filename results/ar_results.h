/*
 * ar_results.h — the results module: the one place that turns runs into a
 * comparison, and the one place that renders it. allocreplay (its table and
 * --json, from the runs it just made) and allocreport (table, CSV, JSON,
 * Markdown, HTML, --recommend, from a database) both build an
 * ar_res_set_t through ar_res_add_run + ar_res_finish and print it with
 * ar_res_print; the SQL view allocator_comparison computes the same medians
 * in SQL (results/sql, docs/RESULTS.md). tests/e2e/comparison_agree.sh checks
 * that every one of them gives the same figures.
 *
 *   db.c       open read-write (migrating the schema of results/sql/ forward)
 *              or read-only; the schema version; the merge SQL
 *   merge.c    folding one database into another (results/sql/merge.sql)
 *   compare.c  medians/min/max over repetitions, spread, the significance
 *              rule, one allocator's runs, ratios to the baseline
 *   load.c     the comparison read from a results database (read-only)
 *   render.c   the comparison as table, CSV, JSON (format_version) or Markdown
 *   format.c   number formats and the escapers for JSON, CSV and HTML
 *
 * Invariants: a figure not measured is NAN here, NULL in the database, "-"
 * in a table and null in JSON — never 0; every aggregate is over runs with
 * status "ok" only; the median of an even count is the mean of the middle
 * two (as the SQL view computes it); ratios are ratios of medians to the
 * baseline's medians (glibc), NAN when the baseline has none; a trace's
 * results from different hosts are never mixed (one ar_res_trace_t per
 * trace x host).
 */
#ifndef AR_RESULTS_H
#define AR_RESULTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

/* The version of the JSON document ar_res_print writes (docs/RESULTS.md). */
#define AR_RES_FORMAT_VERSION 1
/* The allocator every ratio is against. */
#define AR_RES_BASELINE "glibc"

/* Median, min and max of the values seen; all NAN when n == 0. */
typedef struct ar_res_stat {
	double med, min, max;
	int n;
} ar_res_stat_t;

/* The figures of one run, in this order everywhere (NAN = not measured). */
enum {
	AR_RES_OPS, AR_RES_P50, AR_RES_P99, AR_RES_P999, AR_RES_MAX, AR_RES_HEAP, AR_RES_FINAL,
	AR_RES_FRAG, AR_RES_MINF, AR_RES_MAJF, AR_RES_FAILED, AR_RES_NFIG
};
/* Their JSON / CSV / SQL names. */
extern const char *const ar_res_fig_names[AR_RES_NFIG];

/* One run as the comparison sees it. Strings may be NULL. */
typedef struct ar_res_run {
	int64_t run_id;   /* 0: not stored */
	char *run_uuid;   /* NULL: not stored */
	int repetition;
	char *status, *reason, *library_path;
	double ops, wall_ns;
	double fig[AR_RES_NFIG];
} ar_res_run_t;

typedef struct ar_res_fail {
	int64_t run_id;
	int repetition;
	char *status, *reason;
} ar_res_fail_t;

/* One hardware counter over an allocator's ok runs; reason when all NULL. */
typedef struct ar_res_counter {
	char *name;
	ar_res_stat_t value;
	char *reason;
} ar_res_counter_t;

typedef struct ar_res_alloc {
	char *name, *version;
	int runs_total, runs_ok;
	ar_res_stat_t ops_per_sec, p50_ns, p99_ns, p999_ns, max_ns;
	ar_res_stat_t heap_bytes, final_heap_bytes, frag, minor_faults, major_faults, failed_allocs;
	double speed_vs_glibc, heap_vs_glibc; /* ratios of medians; NAN without glibc */
	int64_t *ok_runs;                    /* run ids, by repetition */
	size_t n_ok_runs;
	ar_res_fail_t *fails;
	size_t nfails;
	ar_res_counter_t *counters;
	size_t ncounters;
	ar_res_run_t *runs; /* every run, in the order added */
	size_t nruns;
} ar_res_alloc_t;

typedef struct ar_res_trace {
	char *sha256, *name, *program, *status, *host;
	int64_t events, threads, calls, trace_allocs, peak_live_bytes, peak_live_blocks;
	int64_t cross_thread_deps;
	char *scenario; /* program without its --threads argument; NULL when it has none */
	ar_res_alloc_t *allocs; /* in the order they were first added */
	size_t nallocs;
} ar_res_trace_t;

/* One allocator's ops/s at each thread count of a scenario. */
typedef struct ar_res_series {
	char *scenario, *host;
	size_t npoints; /* thread counts, ascending */
	const ar_res_trace_t **points;
} ar_res_series_t;

/* A whole comparison: what a database (or one allocreplay) holds. */
typedef struct ar_res_set {
	sqlite3 *db;      /* NULL when built from runs in memory */
	const char *path; /* the database */
	int nhosts;
	ar_res_trace_t *traces;
	size_t ntraces;
	ar_res_series_t *series;
	size_t nseries;
} ar_res_set_t;

/* A sample of the RSS timeline (rss_samples). */
typedef struct ar_res_sample {
	double event, heap_rss_bytes, live_bytes;
} ar_res_sample_t;

/* A point of a latency CDF: fraction of calls that took less than ns. */
typedef struct ar_res_cdf {
	double ns, frac;
} ar_res_cdf_t;

/* ---- db.c ---- */
/* Open or create the results database at path for writing and migrate its
 * schema to ar_res_schema_version(). 0, or -1 with a sentence naming the
 * file in err (not a database, newer than this program, migration failed). */
int ar_res_db_open(const char *path, sqlite3 **db, char *err, size_t errcap);
/* Open path read-only (reports); 0, or -1 with *db to ask sqlite3_errmsg
 * (close it with ar_res_db_close). */
int ar_res_db_open_readonly(const char *path, sqlite3 **db);
void ar_res_db_close(sqlite3 *db);
/* Run sql (one or more statements) on db. Returns 0, or -1 with SQLite's
 * message in err. */
int ar_res_exec(sqlite3 *db, const char *sql, char *err, size_t cap);
/* The current schema version: PRAGMA user_version after every migration. */
int ar_res_schema_version(void);
/* The i-th migration's SQL (i from 0: brings user_version i to i+1), NULL
 * past the last. */
const char *ar_res_migration(int i);
/* results/sql/merge.sql: folds the database attached as "src" into "main"
 * (docs/RESULTS.md, "Merging databases"). */
extern const char ar_res_merge_sql[];

/* ---- merge.c ---- */
/* Create the missing file out as a copy of results database in (online
 * backup). 0, or -1 with a message on stderr (out not left behind). */
int ar_res_merge_create(const char *in, const char *out);
/* Open the results database out for merging into. 0, or -1 with a message. */
int ar_res_merge_open(const char *out, sqlite3 **db);
/* Merge results database in into the open db (named out in messages) in
 * one transaction. 0, or -1 with a message (db unchanged). */
int ar_res_merge_one(sqlite3 *db, const char *out, const char *in);

/* ---- compare.c ---- */
/* Median (mean of the middle two for even n), min, max of the non-NAN
 * values of v; v is reordered. */
ar_res_stat_t ar_res_stat(double *v, size_t n);
/* (max - min) / median, NAN when fewer than 2 values. */
double ar_res_spread(const ar_res_stat_t *s);
/* Do the [min, max] ranges of a and b overlap? */
int ar_res_overlap(const ar_res_stat_t *a, const ar_res_stat_t *b);
/* The significance rule of a pick: is best's lead over second (rel: the
 * ratio of their medians, >= 1 when best leads) more than noise? */
enum ar_res_sig {
	AR_RES_SIG_YES,     /* significant */
	AR_RES_SIG_SINGLE,  /* one of them has a single ok repetition: no spread */
	AR_RES_SIG_TIE,     /* medians within 1 % */
	AR_RES_SIG_OVERLAP, /* the min-max ranges overlap */
};
enum ar_res_sig ar_res_significance(const ar_res_stat_t *best, const ar_res_stat_t *second, double rel);
/* The allocator name of t, added (empty, version copied) when new. */
ar_res_alloc_t *ar_res_alloc_slot(ar_res_trace_t *t, const char *name, const char *version);
/* Add one run (copied) to allocator a. */
void ar_res_add_run(ar_res_alloc_t *a, const ar_res_run_t *r);
/* After every run is added: medians and ranges of every allocator of t and
 * the ratios to AR_RES_BASELINE. */
void ar_res_finish(ar_res_trace_t *t);
/* The allocator named name in t, or NULL. */
const ar_res_alloc_t *ar_res_find(const ar_res_trace_t *t, const char *name);
/* Free what t holds (not t itself). */
void ar_res_trace_free(ar_res_trace_t *t);

/* ---- load.c ---- */
/* Open path read-only and load every trace (or those matching filter: a
 * SHA-256 prefix or a trace name). Returns 0, or -1 with a message on stderr
 * (missing file, not a results database, filter matches nothing: then *usage
 * is set to 1 so the caller exits 1, else 2). */
int ar_res_load(ar_res_set_t *rep, const char *path, const char *filter, int *usage);
void ar_res_free(ar_res_set_t *rep);
/* The RSS timeline of run_id in event order; *n samples, malloc'ed (NULL, 0
 * when none). */
ar_res_sample_t *ar_res_timeline(const ar_res_set_t *rep, int64_t run_id, size_t *n);
/* The pooled latency CDF of every call of the given runs (the histogram
 * buckets of all ops; a bucket op 'all', should one appear, is left out): one
 * point per bucket upper bound, ascending; malloc'ed. */
ar_res_cdf_t *ar_res_latency_cdf(const ar_res_set_t *rep, const int64_t *runs, size_t nruns, size_t *n);

/* ---- render.c ---- */
enum ar_res_format { AR_RES_TABLE, AR_RES_CSV, AR_RES_JSON, AR_RES_MARKDOWN };
/* The whole comparison in one format; JSON is one document with
 * "format_version" (docs/RESULTS.md, "The comparison as JSON"). */
void ar_res_print(FILE *f, const ar_res_set_t *rep, enum ar_res_format fmt);
/* The JSON document piece by piece, for a writer that has one trace at a
 * time (allocreplay): begin, each trace (first = 1 for the first), end with
 * the thread-scaling series (none: NULL, 0). */
void ar_res_json_begin(FILE *f, const char *database);
void ar_res_json_trace(FILE *f, const ar_res_trace_t *t, int first);
void ar_res_json_end(FILE *f, const ar_res_series_t *series, size_t nseries);
/* One trace's table (AR_RES_TABLE or AR_RES_MARKDOWN): heading, a row per
 * allocator, counters, failed runs. */
void ar_res_print_trace(FILE *f, const ar_res_set_t *rep, const ar_res_trace_t *t, int md);
/* The comparison's columns, and one allocator's cells as text (HTML uses them too). */
enum { AR_RES_NCOLS = 15, AR_RES_CELL = 48 };
extern const char *const ar_res_columns[AR_RES_NCOLS];
void ar_res_fill_row(char (*cells)[AR_RES_CELL], const ar_res_alloc_t *a);
/* The footnote that says what the columns mean. */
extern const char ar_res_columns_note[];

/* ---- format.c ---- */
/* Human formats into buf: "6.80 M", "652.0 KiB", "1.2 us"; "-" for NAN. */
const char *ar_res_fmt_num(char *buf, size_t n, double v);
const char *ar_res_fmt_bytes(char *buf, size_t n, double v);
const char *ar_res_fmt_ns(char *buf, size_t n, double v);
/* malloc'ed printf; aborts the program on out of memory. */
char *ar_res_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *ar_res_strdup(const char *s); /* NULL stays NULL */
void *ar_res_xcalloc(size_t n, size_t size);
/* realloc that exits 2 on out of memory. */
void *ar_res_xrealloc(void *p, size_t size);
/* Writers that escape for the target format. */
void ar_res_put_json_str(FILE *f, const char *s); /* NULL: null */
void ar_res_put_csv_str(FILE *f, const char *s);
void ar_res_put_html(FILE *f, const char *s);
void ar_res_put_json_num(FILE *f, double v); /* null for NAN */

#endif
