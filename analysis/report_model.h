/*
 * report_model.h — allocreport's internals: the comparison model it loads from a
 * results database (docs/RESULTS.md), and the modules that render it.
 *
 *   report_data.c       load: traces x hosts, per-allocator medians over
 *                       repetitions (from run_summary), failures, counters,
 *                       thread-scaling series; timelines and histograms on demand
 *   report_stats.c      medians, ranges, number formatting, string helpers
 *   report_table.c      the comparison as table, csv, json or markdown
 *   report_recommend.c  best allocator per goal with evidence and cautions
 *   report_svg.c        SVG primitives: scales, axes, ticks, legend
 *   report_charts.c     the four charts from the model
 *   report_html.c       the self-contained HTML page
 *   report_merge.c      `allocreport merge`, running replayer/merge.sql
 *
 * Invariants: the database is opened read-only except by merge; a figure the
 * database holds as NULL stays NAN here and prints as "-" (never 0); every
 * aggregate is over the allocator's runs with status 'ok' only; a trace's
 * results from different hosts are never mixed (one ar_rep_trace_t per
 * trace x host).
 */
#ifndef ALLOCRR_REPORT_MODEL_H
#define ALLOCRR_REPORT_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

/* Median, min and max of the values seen; all NAN when n == 0. */
typedef struct ar_rep_stat {
	double med, min, max;
	int n;
} ar_rep_stat_t;

typedef struct ar_rep_fail {
	int64_t run_id;
	int repetition;
	char *status, *reason;
} ar_rep_fail_t;

/* One hardware counter over an allocator's ok runs; reason when all NULL. */
typedef struct ar_rep_counter {
	char *name;
	ar_rep_stat_t value;
	char *reason;
} ar_rep_counter_t;

typedef struct ar_rep_alloc {
	char *name, *version;
	int runs_total, runs_ok;
	ar_rep_stat_t ops_per_sec, p50_ns, p99_ns, p999_ns, max_ns;
	ar_rep_stat_t heap_bytes, final_heap_bytes, frag, minor_faults, major_faults, failed_allocs;
	double speed_vs_glibc, heap_vs_glibc; /* ratios of medians; NAN without glibc */
	int64_t *ok_runs;                    /* run ids, by repetition */
	size_t n_ok_runs;
	ar_rep_fail_t *fails;
	size_t nfails;
	ar_rep_counter_t *counters;
	size_t ncounters;
} ar_rep_alloc_t;

typedef struct ar_rep_trace {
	char *sha256, *name, *program, *status, *host;
	int64_t events, threads, calls, trace_allocs, peak_live_bytes, peak_live_blocks;
	int64_t cross_thread_deps;
	char *scenario; /* program without its --threads argument; NULL when it has none */
	ar_rep_alloc_t *allocs; /* glibc first, then in the order they first ran */
	size_t nallocs;
} ar_rep_trace_t;

/* One allocator's ops/s at each thread count of a scenario. */
typedef struct ar_rep_series {
	char *scenario, *host;
	size_t npoints;          /* thread counts, ascending */
	const ar_rep_trace_t **points;
} ar_rep_series_t;

typedef struct ar_rep {
	sqlite3 *db;
	const char *path;
	int nhosts;
	ar_rep_trace_t *traces;
	size_t ntraces;
	ar_rep_series_t *series;
	size_t nseries;
} ar_rep_t;

/* A sample of the RSS timeline (rss_samples). */
typedef struct ar_rep_sample {
	double event, heap_rss_bytes, live_bytes;
} ar_rep_sample_t;

/* A point of a latency CDF: fraction of calls that took less than ns. */
typedef struct ar_rep_cdf {
	double ns, frac;
} ar_rep_cdf_t;

/* ---- report_data.c ---- */
/* Open path read-only and load every trace (or those matching filter: a
 * SHA-256 prefix or a trace name). Returns 0, or -1 with a message on stderr
 * (missing file, not a results database, filter matches nothing: then *usage
 * is set to 1 so the caller exits 1, else 2). */
int ar_rep_load(ar_rep_t *rep, const char *path, const char *filter, int *usage);
void ar_rep_free(ar_rep_t *rep);
/* The allocator named name in t, or NULL. */
const ar_rep_alloc_t *ar_rep_find(const ar_rep_trace_t *t, const char *name);
/* The RSS timeline of run_id in event order; *n samples, malloc'ed (NULL, 0
 * when none). */
ar_rep_sample_t *ar_rep_timeline(const ar_rep_t *rep, int64_t run_id, size_t *n);
/* The pooled latency CDF of every call of the given runs (the histogram
 * buckets of all ops; a bucket op 'all', should one appear, is left out): one point per bucket
 * upper bound, ascending; malloc'ed. */
ar_rep_cdf_t *ar_rep_latency_cdf(const ar_rep_t *rep, const int64_t *runs, size_t nruns, size_t *n);

/* ---- report_stats.c ---- */
ar_rep_stat_t ar_rep_stat(double *v, size_t n); /* sorts v */
/* (max - min) / median, NAN when fewer than 2 values. */
double ar_rep_spread(const ar_rep_stat_t *s);
/* Do the [min, max] ranges of a and b overlap? */
int ar_rep_overlap(const ar_rep_stat_t *a, const ar_rep_stat_t *b);
/* Human formats into buf: "6.80 M", "652.0 KiB", "1.2 us"; "-" for NAN. */
const char *ar_rep_fmt_num(char *buf, size_t n, double v);
const char *ar_rep_fmt_bytes(char *buf, size_t n, double v);
const char *ar_rep_fmt_ns(char *buf, size_t n, double v);
/* malloc'ed printf; aborts the program on out of memory. */
char *ar_rep_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *ar_rep_strdup(const char *s); /* NULL stays NULL */
void *ar_rep_xcalloc(size_t n, size_t size);
/* Writers that escape for the target format. */
void ar_rep_put_json_str(FILE *f, const char *s);
void ar_rep_put_csv_str(FILE *f, const char *s);
void ar_rep_put_html(FILE *f, const char *s);
void ar_rep_put_json_num(FILE *f, double v); /* null for NAN */

/* ---- report_table.c ---- */
enum ar_rep_format { AR_REP_TABLE, AR_REP_CSV, AR_REP_JSON, AR_REP_MARKDOWN };
void ar_rep_print(FILE *f, const ar_rep_t *rep, enum ar_rep_format fmt);
/* The comparison's columns, and one allocator's cells as text (HTML uses them too). */
enum { AR_REP_NCOLS = 15, AR_REP_CELL = 48 };
extern const char *const ar_rep_columns[AR_REP_NCOLS];
void ar_rep_fill_row(char (*cells)[AR_REP_CELL], const ar_rep_alloc_t *a);
/* The footnote that says what the columns mean. */
extern const char ar_rep_columns_note[];

/* ---- report_recommend.c ---- */
enum { AR_REP_GOALS = 4 };
typedef struct ar_rep_pick {
	const char *goal;   /* "speed", "memory", "tail latency", "balance" */
	const char *metric; /* the column compared */
	const ar_rep_alloc_t *best, *second; /* second NULL when alone */
	double best_value, second_value;
	int significant;    /* 0: the spread or a single repetition leaves it open */
	char *evidence;     /* one paragraph: ratios, spreads, runner-up */
	char **warnings;
	size_t nwarnings;
} ar_rep_pick_t;

typedef struct ar_rep_advice {
	const ar_rep_trace_t *trace;
	ar_rep_pick_t picks[AR_REP_GOALS]; /* best NULL when no allocator succeeded */
	char **cautions; /* pattern-specific warnings about allocators on this trace */
	size_t ncautions;
} ar_rep_advice_t;

void ar_rep_advise(const ar_rep_t *rep, const ar_rep_trace_t *t, ar_rep_advice_t *a);
void ar_rep_advice_free(ar_rep_advice_t *a);
void ar_rep_print_advice(FILE *f, const ar_rep_t *rep, enum ar_rep_format fmt);

/* ---- report_svg.c ---- */
typedef struct ar_svg_axis {
	double lo, hi;    /* data range */
	double p0, p1;    /* pixel range */
	int log;          /* log10 scale (lo > 0) */
	double unit;      /* linear ticks at nice multiples of this (1024 for bytes); 0 = 1 */
} ar_svg_axis_t;

double ar_svg_map(const ar_svg_axis_t *a, double v);
/* Round [lo, hi] out to "nice" bounds (multiples of a nice step in units of
 * unit; 0 = 1) for a linear axis. */
void ar_svg_nice(double *lo, double *hi, double unit);
/* The power of 1024 below v: the unit for a byte axis reaching v. */
double ar_svg_byte_unit(double v);
/* Colour of an allocator: fixed per known name, stable hash otherwise. */
const char *ar_svg_colour(const char *allocator);
/* <svg> open with a title; close. */
void ar_svg_open(FILE *f, const char *id, int w, int h, const char *title);
void ar_svg_close(FILE *f);
/* Axes with ticks, grid lines and labels; fmt formats a tick value. The
 * x axis takes explicit tick values (ticks, nticks) or chooses them (NULL). */
typedef const char *(*ar_svg_fmt_fn)(char *buf, size_t n, double v);
void ar_svg_xaxis(FILE *f, const ar_svg_axis_t *x, double y_px, const char *label, ar_svg_fmt_fn fmt,
		  const double *ticks, size_t nticks);
void ar_svg_yaxis(FILE *f, const ar_svg_axis_t *y, double x_px, double x_end, const char *label,
		  ar_svg_fmt_fn fmt);
/* A legend column at (x, y): a swatch (line, dashed line or box) and a name each. */
enum ar_svg_swatch { AR_SW_LINE, AR_SW_DASHED, AR_SW_BOX };
void ar_svg_legend(FILE *f, double x, double y, const char *const *names, const char *const *colours,
		   const enum ar_svg_swatch *kinds, size_t n);
/* Escaped text at (x, y) with an anchor ("start", "middle", "end"). */
void ar_svg_text(FILE *f, double x, double y, const char *anchor, const char *cls, const char *text);

/* ---- report_charts.c ---- */
/* Each writes one <figure> with an <svg>; returns the number of data marks. */
int ar_chart_throughput(FILE *f, const ar_rep_trace_t *t, int idx);
int ar_chart_latency(FILE *f, const ar_rep_t *rep, const ar_rep_trace_t *t, int idx);
int ar_chart_rss(FILE *f, const ar_rep_t *rep, const ar_rep_trace_t *t, int idx);
int ar_chart_scaling(FILE *f, const ar_rep_series_t *s, int idx);

/* ---- report_html.c ---- */
/* Write the whole report to path. Returns 0, or -1 with a message on stderr. */
int ar_rep_html(const ar_rep_t *rep, const char *path);

/* ---- report_merge.c ---- */
/* `allocreport merge OUT.db IN.db...`: returns the exit status. */
int ar_rep_merge(int argc, char **argv);
extern const char ar_rep_merge_sql[]; /* replayer/merge.sql, built in (report.mk) */

#endif
