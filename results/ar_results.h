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
 *   schema_check.c  a database from elsewhere is allocrr's schema, nothing more
 *   merge.c    folding one database into another (results/sql/merge.sql)
 *   predict.c  the program time and peak RSS each allocator would give the
 *              recorded program, and how far replay is from the recording
 *   compare.c  medians/min/max over repetitions, spread, the significance
 *              rule, one allocator's runs, ratios to the baseline
 *   load.c     the comparison read from a results database (read-only)
 *   render.c   the comparison as table, CSV, JSON (format_version) or Markdown
 *   format.c   number formats and the escapers for JSON, CSV and HTML
 *   diff.c     two databases' comparisons side by side, with significance
 *   sites.c    a trace's allocation sites (table sites), stored and loaded
 *
 * Invariants: a figure not measured is NAN here, NULL in the database, "-"
 * in a table and null in JSON — never 0; every aggregate is over runs with
 * status "ok" only; the median of an even count is the mean of the middle
 * two (as the SQL view computes it); ratios are ratios of medians to the
 * baseline's medians, NAN when the baseline has none; a trace's results
 * from different machines are never mixed (one ar_res_trace_t per trace x
 * machine: host, CPU model and count, kernel, glibc, as runs store them)
 * unless asked (ar_res_load_machines' across_machines).
 *
 * The baseline of a trace is what the program ran on: the allocator the
 * recorder saw serving its malloc (traces.recorded_allocator) when that
 * allocator has ok runs on the trace, else glibc, else none; a caller may
 * ask for another (ar_res_trace_t.baseline_wanted, allocreport --baseline),
 * which is used where it has ok runs and otherwise falls back to that rule
 * with a note saying so (ar_res_trace_t.baseline_note).
 */
#ifndef AR_RESULTS_H
#define AR_RESULTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

/* The version of the JSON document ar_res_print writes (docs/RESULTS.md). */
#define AR_RES_FORMAT_VERSION 2
/* The baseline when the trace does not say what the program ran on (or that
 * allocator was not replayed): the system's allocator. */
#define AR_RES_BASELINE "glibc"
/* Below this relative difference two allocators are never called different
 * (ar_res_significance; docs/RESULTS.md "Significance" says why 5 %). */
#define AR_RES_EFFECT_FLOOR 0.05
/* Bootstrap resamples of the ratio of medians, and its interval (95 %). */
#define AR_RES_BOOTSTRAP 2000

/* Median, min and max of the values seen; all NAN when n == 0. */
typedef struct ar_res_stat {
	double med, min, max;
	int n;
} ar_res_stat_t;

/* The figures of one run, in this order everywhere (NAN = not measured). */
enum {
	AR_RES_OPS, AR_RES_P50, AR_RES_P99, AR_RES_P999, AR_RES_MAX, AR_RES_HEAP, AR_RES_FINAL,
	AR_RES_FRAG, AR_RES_MINF, AR_RES_MAJF, AR_RES_FAILED,
	/* schema 5 (runs.*): the timer's resolution (latencies at or below it
	 * print as "< N ns"), the prediction for the program under this
	 * allocator, and for runs of the recorded allocator how far replay is
	 * from the recorded program ((replay - recorded) / recorded) */
	AR_RES_TIMER_RES, AR_RES_PRED_TIME, AR_RES_PRED_RSS, AR_RES_FID_TIME, AR_RES_FID_RSS,
	AR_RES_NFIG
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
	double cpu_ns; /* user + system CPU time of the worker (NAN: unknown) */
	double peak_rss_bytes; /* the worker's peak anonymous RSS: allocator footprint + heap + its own */
	double fig[AR_RES_NFIG];
	char *prediction_reason; /* why fig[AR_RES_PRED_*] is NAN; NULL when set or unknown */
	char *fidelity_reason;   /* why fig[AR_RES_FID_*] is NAN */
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
	ar_res_stat_t timer_res_ns, pred_time_ns, pred_rss_bytes, fid_time_err, fid_rss_err;
	/* ratios of medians to the trace's baseline; NAN without one */
	double speed_vs_baseline, heap_vs_baseline;
	double pred_time_vs_baseline, pred_rss_vs_baseline; /* predicted time / baseline's: > 1 slower */
	const char *prediction_reason, *fidelity_reason; /* the first ok run's, or NULL */
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
	int64_t db_first_run; /* its first run's runs.run_id: finds its rows again (load.c) */
	char *machine;  /* "HOST (CPU, N CPUs, KERNEL, glibc V)" its runs ran on (load.c;
			 * allocreplay's: ar_res_machine_text) */
	int nmachines;  /* how many machines its runs ran on: 1, more only across machines */
	char *scenario; /* program without its --threads argument; NULL when it has none */
	/* What the recorded program ran on and measured (traces.recorded_*;
	 * NULL / NAN when unknown or the database predates schema 5). */
	char *recorded_allocator, *recorded_library, *recorded_version, *recorded_reason;
	double recorded_duration_ns, recorded_start_rss_bytes, recorded_peak_rss_bytes, recorded_rss_samples;
	double recorded_cpu_ns; /* user + system CPU time of the recorded process */
	double recorded_recorder_bytes; /* the recorder's own memory, inside the recorded RSS */
	double recorded_recorder_cpu_ns; /* the recorder's own CPU time, inside recorded_cpu_ns */
	/* A window trace's pre-existing bytes (traces.preexisting_bytes): its
	 * replay allocates them before the window, where the recorded start RSS
	 * already holds them; NAN for a whole program's trace. */
	double preexisting_bytes;
	/* Set before ar_res_finish to ask for a baseline (NULL: the rule above). */
	char *baseline_wanted;
	/* Set by ar_res_finish: the allocator every ratio is against (NULL: none
	 * has ok runs), whether it is the recorded one, and a sentence when the
	 * wanted or recorded allocator could not be the baseline. */
	char *baseline;
	int baseline_is_recorded;
	char *baseline_note;
	ar_res_alloc_t *allocs; /* in the order they were first added */
	size_t nallocs;
} ar_res_trace_t;

/* One allocator's ops/s at each thread count of a scenario. */
typedef struct ar_res_series {
	char *scenario, *host;
	const char *machine; /* its traces' (ar_res_trace_t.machine) */
	size_t npoints; /* thread counts, ascending */
	const ar_res_trace_t **points;
} ar_res_series_t;

/* A whole comparison: what a database (or one allocreplay) holds. */
typedef struct ar_res_set {
	sqlite3 *db;      /* NULL when built from runs in memory */
	const char *path; /* the database */
	int nhosts;          /* machines in the database (load.c's MACHINE_KEY) */
	int across_machines; /* ar_res_load_machines' */
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
 * schema to ar_res_schema_version(). An existing database is checked first
 * (ar_res_schema_check) and left untouched when refused. 0, or -1 with a
 * sentence naming the file in err (not a database, not allocrr's schema,
 * newer than this program, migration failed). A path starting "file:" is
 * an SQLite URI. */
int ar_res_db_open(const char *path, sqlite3 **db, char *err, size_t errcap);
/* Open path read-only (reports), hardened and checked like any database
 * allocrr did not create (ar_res_schema_check). 0, or -1 with a sentence
 * naming the file in err and *db NULL. */
int ar_res_db_open_readonly(const char *path, sqlite3 **db, char *err, size_t errcap);
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

/* ---- schema_check.c: databases from elsewhere (docs/RESULTS.md) ---- */
/* Harden a connection before it touches a database allocrr did not create:
 * SQLITE_DBCONFIG_DEFENSIVE, trusted_schema off, triggers disabled,
 * extension loading off. Every open in db.c and merge.c does it. */
void ar_res_db_harden(sqlite3 *db);
/* Is schema ("main", or an attached name) of db allocrr's own, as its
 * migrations 1..v build it (v = its PRAGMA user_version, at most
 * ar_res_schema_version())? Compared with those migrations run into an
 * in-memory database: no trigger; views and indexes only allocrr's, with
 * their SQL; allocrr's tables with their columns in order (name, declared
 * type, NOT NULL, default, primary key, collation, not generated), foreign
 * keys and keys; tables of its own allowed (not virtual ones), except at
 * version 0. verb says what is refused ("merge it", "write to it", "read
 * it"). Reads in one transaction when none is open. 0 with *version set
 * (may be NULL), or -1 with a sentence in err naming path and the first
 * unexpected object. */
int ar_res_schema_check(sqlite3 *db, const char *schema, const char *path, const char *verb, int *version,
			char *err, size_t errcap);

/* ---- merge.c ---- */
/* Check input in for merging (read-only): allocrr's schema of version
 * ar_res_schema_version(), messages naming out for a version mismatch. 0,
 * or -1 with a message on stderr. allocreport merge checks every input
 * before it writes anything. */
int ar_res_merge_check(const char *in, const char *out);
/* Open the results database out for merging into, creating it from
 * allocrr's schema (ar_res_db_open: checked, migrated) when missing;
 * *created says so. 0, or -1 with a message. */
int ar_res_merge_open(const char *out, sqlite3 **db, int *created);
/* Merge results database in, attached read-only and checked again, into
 * the open db (named out in messages) in one transaction
 * (results/sql/merge.sql). 0, or -1 with a message (db unchanged). */
int ar_res_merge_one(sqlite3 *db, const char *out, const char *in);
/* Remove the database file out and its -wal, -shm and -journal files (a
 * new OUT.db whose merge failed). */
void ar_res_merge_discard(const char *out);

/* ---- compare.c ---- */
/* Median (mean of the middle two for even n), min, max of the non-NAN
 * values of v; v is reordered. */
ar_res_stat_t ar_res_stat(double *v, size_t n);
/* (max - min) / median, NAN when fewer than 2 values. */
double ar_res_spread(const ar_res_stat_t *s);
/* Do the [min, max] ranges of a and b overlap? */
int ar_res_overlap(const ar_res_stat_t *a, const ar_res_stat_t *b);
/* Is a's difference from b meaningful? Over their repetitions (the values
 * of one figure, NANs ignored): the ratio of medians, oriented so that >= 1
 * means a is better (higher_better: a/b, else b/a), and its bootstrap
 * interval (AR_RES_BOOTSTRAP resamples of each side, fixed seed, so the same
 * values give the same answer; 2.5 and 97.5 percentiles). Meaningful when
 * the interval lies wholly outside 1 +- AR_RES_EFFECT_FLOOR. */
enum ar_res_sig {
	AR_RES_SIG_YES,    /* meaningful */
	AR_RES_SIG_SINGLE, /* undecided: a side has fewer than 2 repetitions */
	AR_RES_SIG_SMALL,  /* no meaningful difference: medians within the floor */
	AR_RES_SIG_NOISE,  /* no meaningful difference: the interval reaches into the floor */
};
typedef struct ar_res_verdict {
	enum ar_res_sig sig;
	double ratio, lo, hi; /* lo, hi NAN when undecided */
	int na, nb;           /* repetitions with a value */
} ar_res_verdict_t;
ar_res_verdict_t ar_res_significance(const double *a, size_t na, const double *b, size_t nb, int higher_better);
/* The values of figure fig (AR_RES_*) over a's ok runs, NANs left out, into
 * v (room for a->nruns); returns how many. */
size_t ar_res_values(const ar_res_alloc_t *a, int fig, double *v);
/* The allocator name of t, added (empty, version copied) when new. */
ar_res_alloc_t *ar_res_alloc_slot(ar_res_trace_t *t, const char *name, const char *version);
/* Add one run (copied) to allocator a. */
void ar_res_add_run(ar_res_alloc_t *a, const ar_res_run_t *r);
/* After every run is added (and again after baseline_wanted changes):
 * medians and ranges of every allocator of t, the baseline (the rule at the
 * top) and the ratios to it. */
void ar_res_finish(ar_res_trace_t *t);
/* Ask every trace of rep for baseline name and recompute. Returns how many
 * traces have it (ok runs); the others keep the default with a note. */
size_t ar_res_set_baseline(ar_res_set_t *rep, const char *name);
/* predict.c: each ok run's predicted program time and peak RSS under its
 * allocator, and for the recorded allocator's runs how far the replay is
 * from the recorded program (fig[AR_RES_PRED_*], fig[AR_RES_FID_*], or
 * their reasons), from the trace's recorded_* figures and the recorded
 * allocator's medians. Runs that already have them (read from a database)
 * keep them. ar_res_finish calls it first. */
void ar_res_predict(ar_res_trace_t *t);
/* Whether t holds any predicted figure / any fidelity figure or reason. */
int ar_res_has_predictions(const ar_res_trace_t *t);
/* The allocator carrying t's fidelity (the recorded allocator's runs), or NULL. */
const ar_res_alloc_t *ar_res_fidelity_of(const ar_res_trace_t *t);
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
/* The same, one ar_res_trace_t per trace x machine (a note on stderr for a
 * trace replayed on several), or with across_machines one per trace,
 * pooling every machine's runs (a note saying so). ar_res_load is this with
 * across_machines 0. Allocators replayed at several versions on one
 * machine are named in a note too. */
int ar_res_load_machines(ar_res_set_t *rep, const char *path, const char *filter, int across_machines,
			 int *usage);
void ar_res_free(ar_res_set_t *rep);
/* The RSS timeline of run_id in event order; *n samples, malloc'ed (NULL, 0
 * when none). */
ar_res_sample_t *ar_res_timeline(const ar_res_set_t *rep, int64_t run_id, size_t *n);
/* The pooled latency CDF of every call of the given runs (the histogram
 * buckets of all ops; a bucket op 'all', should one appear, is left out): one
 * point per bucket upper bound, ascending; malloc'ed. */
ar_res_cdf_t *ar_res_latency_cdf(const ar_res_set_t *rep, const int64_t *runs, size_t nruns, size_t *n);
/* The same for the calls of one operation (histogram.op: "malloc", "free",
 * "realloc", "calloc"...); op NULL pools every op like ar_res_latency_cdf.
 * NULL, 0 when those runs made no such call. */
ar_res_cdf_t *ar_res_latency_cdf_op(const ar_res_set_t *rep, const int64_t *runs, size_t nruns, const char *op,
				    size_t *n);

/* ---- sites.c: a trace's allocation sites (table sites, docs/RESULTS.md) ---- */
/* One site of a trace recorded with stacks (analysis/sites.h): its folded
 * caller chain, outermost frame first, ';'-joined, and its figures. */
typedef struct ar_res_site {
	char *stack;
	int64_t calls, bytes, live_at_peak_bytes, live_at_peak_blocks, temporary_calls, leaked_bytes,
		leaked_blocks;
} ar_res_site_t;
/* Replace the sites of the trace whose SHA-256 is trace_sha256 with
 * s[0..n), in one transaction (a savepoint: inside the caller's when one is
 * open). The trace need not have a traces row (the table has no foreign
 * key). 0, or -1 with a sentence in err (the old sites kept). */
int ar_res_sites_store(sqlite3 *db, const char *trace_sha256, const ar_res_site_t *s, size_t n, char *err,
		       size_t errcap);
/* The sites of trace_sha256, largest live_at_peak_bytes first (then by
 * bytes, then by stack), malloc'ed; NULL with *n = 0 when it has none (or
 * the database predates the table, or on error). */
ar_res_site_t *ar_res_sites_load(sqlite3 *db, const char *trace_sha256, size_t *n);
void ar_res_sites_free(ar_res_site_t *s, size_t n);

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
/* The comparison's columns of trace t (the predicted ones first when t has
 * predictions) and one allocator's cells as text (HTML uses them too); both
 * return the number of columns. The baseline row's name says "(baseline)",
 * or "(recorded)" when the baseline is the allocator the program ran on. */
enum { AR_RES_NCOLS = 19, AR_RES_CELL = 48 };
int ar_res_table_head(char (*cells)[AR_RES_CELL], const ar_res_trace_t *t);
int ar_res_fill_row(char (*cells)[AR_RES_CELL], const ar_res_trace_t *t, const ar_res_alloc_t *a);
/* A latency as a cell: "< N ns" when at or below the timer's resolution res
 * (N = res rounded up), else ar_res_fmt_ns. */
const char *ar_res_fmt_latency(char *buf, size_t n, double v, double res);
/* The sentences under a trace's heading, malloc'ed into lines: which
 * allocator is the baseline and why, the reason no prediction was made
 * (when none was) or what replay noted about the recording (when it
 * predicts: a window's sampled peak, a busy machine), what the predicted
 * time starts from, how far replay is from the recorded program (when
 * known). Returns how many (at most AR_RES_NOTES); the caller frees them. */
enum { AR_RES_NOTES = 5 };
int ar_res_trace_notes(const ar_res_trace_t *t, char *lines[AR_RES_NOTES]);
/* The footnote that says what the columns mean. */
extern const char ar_res_columns_note[];

/* ---- diff.c: two comparisons side by side (allocreport diff) ---- */
/* The figures a diff compares, by --fail-if name (docs/RESULTS.md,
 * "Comparing two databases"): fig is an AR_RES_* figure of the runs, or
 * negative for a figure of the trace itself (peak_live, allocs, events). */
enum { AR_RES_DIFF_NUM, AR_RES_DIFF_NS, AR_RES_DIFF_BYTES };
typedef struct ar_res_diff_metric {
	const char *name, *label;
	int fig, higher_better, kind; /* kind: AR_RES_DIFF_* unit */
} ar_res_diff_metric_t;
enum { AR_RES_DIFF_NMETRICS = 12 };
extern const ar_res_diff_metric_t ar_res_diff_metrics[AR_RES_DIFF_NMETRICS];
/* One allocator's figure (allocator NULL: the trace's own) before and after. */
typedef struct ar_res_diff_cell {
	const char *allocator;
	int metric; /* index in ar_res_diff_metrics */
	double old_med, new_med, change_pct; /* medians over ok runs; change as ar_gate_change_pct */
	ar_res_verdict_t verdict; /* ar_res_significance(NEW, OLD): ratio >= 1 means NEW is better */
	int exact;                /* a trace figure: no repetitions, a difference is real */
	const char *broken_rule;  /* set by the caller: the --fail-if rule it breaks, or NULL */
} ar_res_diff_cell_t;
/* A trace of NEW and its match in OLD (either NULL: on one side only). */
typedef struct ar_res_diff_pair {
	const ar_res_trace_t *old, *new;
	const char *matched_by; /* "sha256", or "name" (the trace file changed) */
	int other_host;         /* OLD and NEW were measured on different machines (ar_res_trace_t.machine) */
	ar_res_diff_cell_t *cells;
	size_t ncells;
	char **notes; /* allocators on one side only or without a successful run */
	size_t nnotes;
} ar_res_diff_pair_t;
typedef struct ar_res_diff {
	ar_res_diff_pair_t *pairs; /* NEW's traces in order, then OLD's unmatched ones */
	size_t npairs;
} ar_res_diff_t;
/* Pair the traces of new_ with those of old (same SHA-256, else same name;
 * the same host preferred) and compute every cell. d points into both sets:
 * free d before them. */
void ar_res_diff(const ar_res_set_t *old, const ar_res_set_t *new_, ar_res_diff_t *d);
void ar_res_diff_free(ar_res_diff_t *d);
/* "meaningful", "undecided", "within 5%", "noise"; "exact" / "same" for trace figures. */
const char *ar_res_diff_verdict(const ar_res_diff_cell_t *c);
int ar_res_diff_significant(const ar_res_diff_cell_t *c);
/* Two run sets of one database: a copy of rep whose traces keep only the
 * runs with run_id in [first, last] (a trace left without runs is dropped),
 * their comparison recomputed (ar_res_finish; no counters). Free it with
 * ar_res_free (its db is NULL); rep may be freed first. */
void ar_res_select_runs(const ar_res_set_t *rep, int64_t first, int64_t last, ar_res_set_t *out);
/* The diff as a table (AR_RES_TABLE, any format but JSON) or one JSON document. */
void ar_res_diff_print(FILE *f, const ar_res_diff_t *d, const char *old_path, const char *new_path,
		       enum ar_res_format fmt);

/* ---- format.c ---- */
/* Human formats into buf: "6.80 M", "652.0 KiB", "1.2 us"; "-" for NAN. */
const char *ar_res_fmt_num(char *buf, size_t n, double v);
const char *ar_res_fmt_bytes(char *buf, size_t n, double v); /* common/ar_numfmt.h's ar_fmt_bytes */
const char *ar_res_fmt_ns(char *buf, size_t n, double v);
/* A machine for people, from the fields a run stores of it (runs.host,
 * cpu_model, cpus, kernel, glibc_version; NULL or empty = not stored):
 * "HOST (CPU, N CPUs, KERNEL, glibc V)", malloc'ed — the text load.c reads
 * from a database and the view allocator_comparison's machine column hold
 * for the same fields. */
char *ar_res_machine_text(const char *host, const char *cpu_model, long long cpus, const char *kernel,
			  const char *glibc_version);
/* malloc'ed printf; aborts the program on out of memory. */
char *ar_res_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *ar_res_strdup(const char *s); /* NULL stays NULL */
void *ar_res_xcalloc(size_t n, size_t size);
/* realloc that exits 2 on out of memory. */
void *ar_res_xrealloc(void *p, size_t size);
/* Text is written escaped for the target format by common/ar_escape.h. */
void ar_res_put_json_num(FILE *f, double v); /* null for NAN */

#endif
