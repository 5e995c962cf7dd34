/*
 * report_model.h — allocreport's internals: recommendations, SVG charts, the
 * HTML page and merging, all over the comparison the results module
 * (results/ar_results.h) loads from a results database and renders as
 * table, CSV, JSON or Markdown.
 *
 *   report_recommend.c  best allocator per goal with evidence and cautions
 *   report_svg.c        SVG primitives: scales, axes, ticks, legend
 *   report_charts.c     the four charts from the model
 *   report_html.c       the self-contained HTML page
 *   report_merge.c      `allocreport merge`, running the results module's merge SQL
 *
 * Invariants: the database is opened read-only except by merge; a figure the
 * database holds as NULL stays NAN here and prints as "-" (never 0); every
 * aggregate is over the allocator's runs with status 'ok' only; a trace's
 * results from different hosts are never mixed (one ar_res_trace_t per
 * trace x host).
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
int ar_chart_throughput(FILE *f, const ar_res_trace_t *t, int idx);
int ar_chart_latency(FILE *f, const ar_res_set_t *rep, const ar_res_trace_t *t, int idx);
int ar_chart_rss(FILE *f, const ar_res_set_t *rep, const ar_res_trace_t *t, int idx);
int ar_chart_scaling(FILE *f, const ar_res_series_t *s, int idx);

/* ---- report_html.c ---- */
/* Write the whole report to path. Returns 0, or -1 with a message on stderr. */
int ar_rep_html(const ar_res_set_t *rep, const char *path);

/* ---- report_merge.c ---- */
/* `allocreport merge OUT.db IN.db...`: returns the exit status. */
int ar_rep_merge(int argc, char **argv);

#endif
