/*
 * report_model.h — allocreport's internals: recommendations, SVG charts, the
 * HTML page and merging, all over the comparison the results module
 * (results/ar_results.h) loads from a results database and renders as
 * table, CSV, JSON or Markdown.
 *
 *   report_recommend.c  best allocator per goal with evidence and cautions
 *   report_svg.c        SVG primitives: scales, axes, ticks, legend, palette,
 *                       labels at the end of lines
 *   report_charts.c     the charts from the model: throughput, latency (all
 *                       calls and per operation), heap overhead, box plots,
 *                       thread scaling
 *   report_flame.c      a trace's allocation sites: the icicle layout of
 *                       folded stacks, its chart, the top-sites tables
 *   report_html.c       the self-contained HTML page
 *   report_merge.c      `allocreport merge`, running the results module's merge SQL
 *   report_diff.c       `allocreport diff`, the results module's diff and its --fail-if gate
 *
 * Invariants: the database is opened read-only except by merge; a figure the
 * database holds as NULL stays NAN here and prints as "-" (never 0); every
 * aggregate is over the allocator's runs with status 'ok' only; a trace's
 * results from different machines are never mixed (one ar_res_trace_t per
 * trace x machine, results/load.c) unless --across-machines.
 */
#ifndef ALLOCRR_REPORT_MODEL_H
#define ALLOCRR_REPORT_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ar_results.h"

/* ---- report_recommend.c ---- */
enum { AR_REP_GOALS = 4 };
typedef struct ar_rep_pick {
	const char *goal;   /* "speed", "memory", "tail latency", "balance" */
	const char *metric; /* the column compared */
	const ar_res_alloc_t *best, *second; /* the pick and its runner-up (NULL when alone) */
	const ar_res_alloc_t *leader;   /* the best median; best is the baseline instead when the
					 * leader is not meaningfully different from it */
	const ar_res_alloc_t *baseline; /* the trace's baseline among the candidates, or NULL */
	double best_value, second_value;
	int significant;     /* the verdict is "meaningful" */
	const char *verdict; /* "meaningful", "no meaningful difference", "undecided" */
	double interval_lo, interval_hi; /* bootstrap interval of the verdict's ratio (NAN: none) */
	char *evidence;     /* one paragraph: ratios, spreads, runner-up */
	char **warnings;
	size_t nwarnings;
} ar_rep_pick_t;

typedef struct ar_rep_advice {
	const ar_res_trace_t *trace;
	ar_rep_pick_t picks[AR_REP_GOALS]; /* best NULL when no allocator succeeded */
	char **cautions; /* pattern-specific warnings about allocators on this trace */
	size_t ncautions;
} ar_rep_advice_t;

void ar_rep_advise(const ar_res_set_t *rep, const ar_res_trace_t *t, ar_rep_advice_t *a);
void ar_rep_advice_free(ar_rep_advice_t *a);
void ar_rep_print_advice(FILE *f, const ar_res_set_t *rep, enum ar_res_format fmt);

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
/* The stroke-dasharray attribute (with its leading space) of an allocator's
 * lines: "" for the system allocators, dashed for allocrr's own, dotted for
 * unknown names; a second cue beside the colour. */
const char *ar_svg_dash(const char *allocator);
/* Names written at the right end of lines (x: just right of the plot area),
 * each at its line's last y (ys[i], pixels; NAN: none) in its colour, moved
 * apart vertically so no two overlap and kept within [top, bottom], with a
 * leader from the line's end to its label. At most 64. */
void ar_svg_end_labels(FILE *f, double x, const double *ys, const char *const *names, const char *const *colours,
		       size_t n, double top, double bottom);
/* The ticks ar_svg_xaxis would choose for a (at most max). */
size_t ar_svg_ticks(const ar_svg_axis_t *a, double *t, size_t max);
/* <svg> open with a title; close. */
void ar_svg_open(FILE *f, const char *id, int w, int h, const char *title);
void ar_svg_close(FILE *f);
/* Axes with ticks, grid lines and labels; fmt formats a tick value. The
 * x axis takes explicit tick values (ticks, nticks) or chooses them (NULL). */
typedef const char *(*ar_svg_fmt_fn)(char *buf, size_t n, double v);
void ar_svg_xaxis(FILE *f, const ar_svg_axis_t *x, double y_px, const char *label, ar_svg_fmt_fn fmt,
		  const double *ticks, size_t nticks);
/* The same with the first tick's label given (NULL: fmt's), e.g. "<= 11 ns"
 * where an axis starts at the timer's resolution. */
void ar_svg_xaxis_first(FILE *f, const ar_svg_axis_t *x, double y_px, const char *label, ar_svg_fmt_fn fmt,
			const double *ticks, size_t nticks, const char *first);
void ar_svg_yaxis(FILE *f, const ar_svg_axis_t *y, double x_px, double x_end, const char *label,
		  ar_svg_fmt_fn fmt);
/* A legend column at (x, y): each allocator's line (colour and dash as
 * drawn) and its name. */
void ar_svg_legend(FILE *f, double x, double y, const char *const *names, size_t n);
/* Escaped text at (x, y) with an anchor ("start", "middle", "end"). */
void ar_svg_text(FILE *f, double x, double y, const char *anchor, const char *cls, const char *text);

/* ---- report_charts.c ---- */
/* Each writes its <svg> chart(s); returns the number of data marks. */
int ar_chart_throughput(FILE *f, const ar_res_trace_t *t, int idx);
/* The CDF of all calls, its tail on a percentile axis, and one tail panel
 * per operation the runs made (malloc, calloc, realloc, free, ...); the
 * latency axis starts at the timer's resolution. */
int ar_chart_latency(FILE *f, const ar_res_set_t *rep, const ar_res_trace_t *t, int idx);
/* Heap overhead (heap RSS minus the trace's live bytes) over the replay,
 * median of every ok repetition with its min-max band. */
int ar_chart_rss(FILE *f, const ar_res_set_t *rep, const ar_res_trace_t *t, int idx);
/* Box plots of ops/s, p99 latency and peak heap RSS over the repetitions,
 * when some allocator has at least AR_CHART_BOX_MIN ok runs; else nothing. */
enum { AR_CHART_BOX_MIN = 5 };
int ar_chart_boxes(FILE *f, const ar_res_trace_t *t, int idx);
int ar_chart_scaling(FILE *f, const ar_res_series_t *s, int idx);

/* ---- report_flame.c ---- */
/* An icicle layout of folded stacks ("outer;...;inner" with a value each):
 * one rectangle per node of their prefix tree, the root ("all") at depth 0,
 * x0..x1 the node's share of the total in [0, 1] (children left to right,
 * largest first, ties by name, starting at their parent's x0). Values that
 * are not finite or not positive count as 0; a node narrower than min_frac
 * of the total is left out with its subtree (counted in omitted), as is any
 * depth beyond max_depth. Frame names point into names (owned). */
typedef struct ar_flame_rect {
	const char *frame;
	int depth;
	double x0, x1, value;
} ar_flame_rect_t;
typedef struct ar_flame {
	ar_flame_rect_t *rects; /* parents before children */
	size_t n;
	double total;
	int depth;       /* deepest depth drawn */
	size_t omitted;  /* nodes left out (too narrow or too deep) */
	char *names;     /* the frame strings */
} ar_flame_t;
/* 0, or -1 on out of memory (fl empty). */
int ar_flame_layout(const char *const *stacks, const double *values, size_t n, double min_frac, int max_depth,
		    ar_flame_t *fl);
void ar_flame_free(ar_flame_t *fl);
/* The sites of t in rep's database (ar_res_sites_load), or NULL, 0. */
ar_res_site_t *ar_rep_sites(const ar_res_set_t *rep, const ar_res_trace_t *t, size_t *n);
/* The flame charts (by bytes allocated, by live bytes at the peak) and the
 * top-sites table of one trace's sites, inside a <section class="sites">;
 * nothing when n == 0. Returns the number of rectangles drawn. */
int ar_rep_html_sites(FILE *f, const ar_res_trace_t *t, const ar_res_site_t *s, size_t n, int idx);
/* The top sites of every trace that has some, as a text table after the
 * comparison (allocreport's table output). */
void ar_rep_print_sites(FILE *f, const ar_res_set_t *rep);

/* ---- report_html.c ---- */
/* Write the whole report to path. Returns 0, or -1 with a message on stderr. */
int ar_rep_html(const ar_res_set_t *rep, const char *path);

/* ---- report_merge.c ---- */
/* `allocreport merge OUT.db IN.db...`: returns the exit status. */
int ar_rep_merge(int argc, char **argv);

/* ---- report_diff.c ---- */
/* `allocreport diff [OPTION]... OLD.db NEW.db`: returns the exit status
 * (4, AR_GATE_EXIT, when a --fail-if rule tripped). */
int ar_rep_diff(int argc, char **argv);

#endif
