/*
 * report_charts.c — the report's charts as inline SVG, from the model:
 *   throughput  median ops/s per allocator as bars, min-max over the
 *               repetitions as whiskers, the ratio to the trace's baseline
 *               above each bar;
 *   latency     the CDF of all calls per allocator (histogram buckets of
 *               its ok runs pooled), once on a linear axis and once on a
 *               "nines" axis (90 %, 99 %, 99.9 %...) that shows the tail;
 *   rss         heap RSS over the trace's events per allocator (its first
 *               ok run) against the trace's exact live bytes (dashed);
 *   scaling     median ops/s against thread count per allocator for one
 *               scenario replayed at several thread counts (results/load.c
 *               says how such traces are recognised), whiskers min-max.
 * Every data mark carries class="mark" and data-* attributes with the
 * numbers it draws, so a test (or a reader of the source) can check them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_escape.h"
#include "report_model.h"

enum { W = 575, H = 330, L = 76, R = 445, T = 36, B = H - 52 };

static const char *fmt_pct(char *buf, size_t n, double v)
{
	snprintf(buf, n, "%.0f%%", 100 * v);
	return buf;
}

/* A "nines" value v = -log10(1 - F) as a percentile label. */
static const char *fmt_nines(char *buf, size_t n, double v)
{
	double p = 100 * (1 - pow(10, -v));
	int dec = v <= 2 ? 0 : (int)ceil(v - 2 - 1e-9);
	snprintf(buf, n, "%.*f%%", dec, p);
	return buf;
}

static const char *fmt_threads(char *buf, size_t n, double v)
{
	snprintf(buf, n, "%.0f", v);
	return buf;
}

static void open_chart(FILE *f, const char *kind, int idx, const char *sha, const char *title)
{
	char id[64];
	snprintf(id, sizeof id, "%s-%d", kind, idx);
	ar_svg_open(f, id, W, H, title);
	fprintf(f, "<desc>chart=%s trace=", kind);
	ar_esc_html(f, sha);
	fputs("</desc>\n", f);
}

int ar_chart_throughput(FILE *f, const ar_res_trace_t *t, int idx)
{
	char title[256];
	snprintf(title, sizeof title, "%s: throughput (median ops/s, whiskers min-max over repetitions)", t->name);
	open_chart(f, "throughput", idx, t->sha256, title);
	double top = 0;
	for (size_t i = 0; i < t->nallocs; i++)
		if (t->allocs[i].ops_per_sec.max > top)
			top = t->allocs[i].ops_per_sec.max;
	double lo = 0, hi = top > 0 ? top * 1.08 : 1;
	ar_svg_nice(&lo, &hi, 0);
	ar_svg_axis_t y = {lo, hi, B, T, 0, 0};
	ar_svg_yaxis(f, &y, L, R + 110, "ops/s", ar_res_fmt_num);
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", L, B, R + 110, B);
	double slot = (double)(R + 110 - L) / (double)(t->nallocs ? t->nallocs : 1);
	int marks = 0;
	for (size_t i = 0; i < t->nallocs; i++) {
		const ar_res_alloc_t *a = &t->allocs[i];
		double cx = L + slot * ((double)i + 0.5), bw = slot * 0.55;
		ar_svg_text(f, cx, B + 16, "middle", "tick", a->name);
		if (!a->runs_ok) {
			ar_svg_text(f, cx, B - 8, "middle", "fail", "no ok run");
			continue;
		}
		const ar_res_stat_t *s = &a->ops_per_sec;
		double yb = ar_svg_map(&y, s->med), y0 = ar_svg_map(&y, s->min), y1 = ar_svg_map(&y, s->max);
		char v[32], mn[32], mx[32];
		fputs("<rect class=\"mark bar\" data-allocator=\"", f);
		ar_esc_html(f, a->name);
		fprintf(f, "\" data-median=\"%.6g\" data-min=\"%.6g\" "
			   "data-max=\"%.6g\" data-runs=\"%d\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			   "fill=\"%s\"><title>",
			s->med, s->min, s->max, s->n, cx - bw / 2, yb, bw, B - yb, ar_svg_colour(a->name));
		ar_esc_html(f, a->name);
		fprintf(f, ": median %s ops/s, min %s, max %s over %d ok run(s)</title></rect>\n",
			ar_res_fmt_num(v, sizeof v, s->med), ar_res_fmt_num(mn, sizeof mn, s->min),
			ar_res_fmt_num(mx, sizeof mx, s->max), s->n);
		if (s->n >= 2)
			fprintf(f, "<path class=\"whisker\" d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f\"/>\n", cx, y0,
				y1, cx - bw / 5, y0, cx + bw / 5, cx - bw / 5, y1, cx + bw / 5);
		char lab[48];
		if (!isnan(a->speed_vs_baseline))
			snprintf(lab, sizeof lab, "%.2fx", a->speed_vs_baseline);
		else
			snprintf(lab, sizeof lab, "%s", v);
		ar_svg_text(f, cx, (y1 < yb ? y1 : yb) - 6, "middle", "value", lab);
		marks++;
	}
	char *note = ar_res_strf("label: ops/s relative to %s's median (the baseline)", t->baseline ? t->baseline : "-");
	ar_svg_text(f, R + 110, H - 10, "end", "note", note);
	free(note);
	ar_svg_close(f);
	return marks;
}

/* Polyline through pixel points, dropping those closer than half a pixel. */
static void polyline(FILE *f, const double *px, const double *py, size_t n)
{
	fputs(" points=\"", f);
	double lx = -1e9, ly = -1e9;
	for (size_t i = 0; i < n; i++) {
		if (i + 1 < n && fabs(px[i] - lx) < 0.5 && fabs(py[i] - ly) < 0.5)
			continue;
		fprintf(f, "%.1f,%.1f ", px[i], py[i]);
		lx = px[i];
		ly = py[i];
	}
	fputs("\"", f);
}

static int latency_panel(FILE *f, const ar_res_trace_t *t, int idx, ar_res_cdf_t **cdf, const size_t *nc,
			 double xlo, double xhi, int tail)
{
	char title[256];
	snprintf(title, sizeof title, tail ? "%s: latency tail (all calls, percentile scale)"
					   : "%s: latency CDF (all calls, ok runs pooled)",
		 t->name);
	open_chart(f, tail ? "latency-tail" : "latency-cdf", idx, t->sha256, title);
	ar_svg_axis_t x = {xlo, xhi, L, R, 1, 0};
	ar_svg_axis_t y = {0, tail ? 4 : 1, B, T, 0, 0};
	ar_svg_yaxis(f, &y, L, R, tail ? "percentile of calls" : "fraction of calls", tail ? fmt_nines : fmt_pct);
	ar_svg_xaxis(f, &x, B, "latency per call (log scale)", ar_res_fmt_ns, NULL, 0);
	const char *names[32], *cols[32];
	enum ar_svg_swatch kinds[32];
	size_t nl = 0;
	int marks = 0;
	for (size_t i = 0; i < t->nallocs; i++) {
		if (!nc[i])
			continue;
		const ar_res_alloc_t *a = &t->allocs[i];
		double *px = ar_res_xcalloc(nc[i], sizeof *px), *py = ar_res_xcalloc(nc[i], sizeof *py);
		for (size_t k = 0; k < nc[i]; k++) {
			double fr = cdf[i][k].frac;
			double v = tail ? (fr >= 1 ? 4 : fmin(4, -log10(1 - fr))) : fr;
			px[k] = ar_svg_map(&x, cdf[i][k].ns);
			py[k] = ar_svg_map(&y, v);
		}
		fputs("<polyline class=\"mark cdf\" data-allocator=\"", f);
		ar_esc_html(f, a->name);
		fprintf(f, "\" data-points=\"%zu\" data-max-ns=\"%.6g\" stroke=\"%s\"", nc[i], cdf[i][nc[i] - 1].ns,
			ar_svg_colour(a->name));
		polyline(f, px, py, nc[i]);
		fputs("><title>", f);
		ar_esc_html(f, a->name);
		fprintf(f, ": %zu histogram buckets over %zu ok run(s)</title></polyline>\n", nc[i] - 1, a->n_ok_runs);
		free(px);
		free(py);
		if (nl < 32) {
			names[nl] = a->name;
			cols[nl] = ar_svg_colour(a->name);
			kinds[nl++] = AR_SW_LINE;
		}
		marks++;
	}
	ar_svg_legend(f, R + 20, T + 20, names, cols, kinds, nl);
	ar_svg_close(f);
	return marks;
}

int ar_chart_latency(FILE *f, const ar_res_set_t *rep, const ar_res_trace_t *t, int idx)
{
	ar_res_cdf_t **cdf = ar_res_xcalloc(t->nallocs, sizeof *cdf);
	size_t *nc = ar_res_xcalloc(t->nallocs, sizeof *nc);
	double xlo = INFINITY, xhi = 0;
	for (size_t i = 0; i < t->nallocs; i++) {
		cdf[i] = ar_res_latency_cdf(rep, t->allocs[i].ok_runs, t->allocs[i].n_ok_runs, &nc[i]);
		if (nc[i]) {
			xlo = fmin(xlo, fmax(1, cdf[i][0].ns));
			xhi = fmax(xhi, cdf[i][nc[i] - 1].ns);
		}
	}
	int marks = 0;
	if (xhi > 0) {
		xlo = pow(10, floor(log10(xlo)));
		xhi = pow(10, ceil(log10(xhi)));
		if (xhi <= xlo)
			xhi = xlo * 10;
		marks += latency_panel(f, t, idx, cdf, nc, xlo, xhi, 0);
		marks += latency_panel(f, t, idx, cdf, nc, xlo, xhi, 1);
	}
	for (size_t i = 0; i < t->nallocs; i++)
		free(cdf[i]);
	free(cdf);
	free(nc);
	return marks;
}

int ar_chart_rss(FILE *f, const ar_res_set_t *rep, const ar_res_trace_t *t, int idx)
{
	ar_res_sample_t **tl = ar_res_xcalloc(t->nallocs, sizeof *tl);
	size_t *n = ar_res_xcalloc(t->nallocs, sizeof *n);
	double ymax = 0, xmax = (double)t->events;
	size_t live_from = t->nallocs;
	for (size_t i = 0; i < t->nallocs; i++) {
		if (!t->allocs[i].n_ok_runs)
			continue;
		tl[i] = ar_res_timeline(rep, t->allocs[i].ok_runs[0], &n[i]);
		for (size_t k = 0; k < n[i]; k++) {
			ymax = fmax(ymax, fmax(tl[i][k].heap_rss_bytes, tl[i][k].live_bytes));
			xmax = fmax(xmax, tl[i][k].event);
		}
		if (n[i] && live_from == t->nallocs)
			live_from = i;
	}
	int marks = 0;
	if (live_from < t->nallocs) {
		char title[256];
		snprintf(title, sizeof title, "%s: heap RSS over the replay (first ok run) against live bytes", t->name);
		open_chart(f, "rss", idx, t->sha256, title);
		double lo = 0, hi = ymax * 1.05, unit = ar_svg_byte_unit(ymax);
		ar_svg_nice(&lo, &hi, unit);
		ar_svg_axis_t y = {0, hi, B, T, 0, unit};
		double xl = 0, xh = xmax;
		ar_svg_nice(&xl, &xh, 0);
		ar_svg_axis_t x = {0, xh, L, R, 0, 0};
		ar_svg_yaxis(f, &y, L, R, "bytes", ar_res_fmt_bytes);
		ar_svg_xaxis(f, &x, B, "trace event", ar_res_fmt_num, NULL, 0);
		const char *names[33], *cols[33];
		enum ar_svg_swatch kinds[33];
		size_t nl = 0;
		for (size_t i = 0; i <= t->nallocs; i++) {
			int live = i == t->nallocs;
			size_t j = live ? live_from : i;
			if (!n[j])
				continue;
			double *px = ar_res_xcalloc(n[j], sizeof *px), *py = ar_res_xcalloc(n[j], sizeof *py);
			double peak = 0;
			for (size_t k = 0; k < n[j]; k++) {
				double v = live ? tl[j][k].live_bytes : tl[j][k].heap_rss_bytes;
				px[k] = ar_svg_map(&x, tl[j][k].event);
				py[k] = ar_svg_map(&y, v);
				peak = fmax(peak, v);
			}
			const char *name = live ? "live bytes" : t->allocs[j].name;
			const char *col = live ? "#222" : ar_svg_colour(name);
			fprintf(f, "<polyline class=\"mark %s\" data-allocator=\"", live ? "live" : "rss");
			ar_esc_html(f, live ? "" : name);
			fprintf(f, "\" data-run=\"%lld\" data-points=\"%zu\" data-peak-bytes=\"%.0f\" stroke=\"%s\"%s",
				(long long)t->allocs[j].ok_runs[0], n[j], peak, col,
				live ? " stroke-dasharray=\"6 4\"" : "");
			polyline(f, px, py, n[j]);
			char pk[32];
			fputs("><title>", f);
			ar_esc_html(f, name);
			fprintf(f, ": %zu samples, peak %s (run %lld)</title></polyline>\n", n[j],
				ar_res_fmt_bytes(pk, sizeof pk, peak), (long long)t->allocs[j].ok_runs[0]);
			if (n[j] <= 64 && !live)
				for (size_t k = 0; k < n[j]; k++)
					fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.2\" fill=\"%s\"/>\n", px[k], py[k], col);
			free(px);
			free(py);
			if (nl < 33) {
				names[nl] = name;
				cols[nl] = col;
				kinds[nl++] = live ? AR_SW_DASHED : AR_SW_LINE;
			}
			marks += !live;
		}
		ar_svg_legend(f, R + 20, T + 20, names, cols, kinds, nl);
		ar_svg_close(f);
	}
	for (size_t i = 0; i < t->nallocs; i++)
		free(tl[i]);
	free(tl);
	free(n);
	return marks;
}

int ar_chart_scaling(FILE *f, const ar_res_series_t *s, int idx)
{
	char title[512];
	snprintf(title, sizeof title, "thread scaling: %s (median ops/s, whiskers min-max)", s->scenario);
	open_chart(f, "scaling", idx, NULL, title);
	/* Allocators in the order they first appear along the series. */
	const char *names[32], *cols[32];
	enum ar_svg_swatch kinds[32];
	size_t nn = 0;
	double top = 0, ticks[64];
	for (size_t p = 0; p < s->npoints; p++) {
		if (p < 64)
			ticks[p] = (double)s->points[p]->threads;
		for (size_t i = 0; i < s->points[p]->nallocs; i++) {
			const ar_res_alloc_t *a = &s->points[p]->allocs[i];
			size_t k = 0;
			while (k < nn && strcmp(names[k], a->name))
				k++;
			if (k == nn && nn < 32) {
				names[nn] = a->name;
				cols[nn] = ar_svg_colour(a->name);
				kinds[nn++] = AR_SW_LINE;
			}
			if (a->ops_per_sec.max > top)
				top = a->ops_per_sec.max;
		}
	}
	double lo = 0, hi = top > 0 ? top * 1.05 : 1;
	ar_svg_nice(&lo, &hi, 0);
	ar_svg_axis_t y = {0, hi, B, T, 0, 0};
	double t0 = (double)s->points[0]->threads, t1 = (double)s->points[s->npoints - 1]->threads;
	ar_svg_axis_t x = {t0 / 1.25, t1 * 1.25, L, R, 1, 0};
	ar_svg_yaxis(f, &y, L, R, "ops/s", ar_res_fmt_num);
	ar_svg_xaxis(f, &x, B, "replay threads (log scale)", fmt_threads, ticks, s->npoints < 64 ? s->npoints : 64);
	int marks = 0;
	for (size_t k = 0; k < nn; k++) {
		double px[64], py[64];
		size_t np = 0;
		fputs("<g class=\"mark series\" data-allocator=\"", f);
		ar_esc_html(f, names[k]);
		fputs("\" data-values=\"", f);
		for (size_t p = 0; p < s->npoints && np < 64; p++) {
			const ar_res_alloc_t *a = ar_res_find(s->points[p], names[k]);
			if (!a || !a->runs_ok)
				continue;
			fprintf(f, "%s%lld:%.6g", np ? " " : "", (long long)s->points[p]->threads, a->ops_per_sec.med);
			px[np] = ar_svg_map(&x, (double)s->points[p]->threads);
			py[np++] = ar_svg_map(&y, a->ops_per_sec.med);
		}
		fprintf(f, "\">\n<polyline stroke=\"%s\"", cols[k]);
		polyline(f, px, py, np);
		fputs("/>\n", f);
		for (size_t p = 0, q = 0; p < s->npoints && q < np; p++) {
			const ar_res_alloc_t *a = ar_res_find(s->points[p], names[k]);
			if (!a || !a->runs_ok)
				continue;
			char v[32];
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>", px[q], py[q], cols[k]);
			ar_esc_html(f, names[k]);
			fprintf(f, ", %lld thread(s): %s ops/s</title></circle>\n", (long long)s->points[p]->threads,
				ar_res_fmt_num(v, sizeof v, a->ops_per_sec.med));
			/* whiskers of different allocators side by side, not on top of each other */
			double dx = ((double)k - (double)(nn - 1) / 2) * 3;
			if (a->ops_per_sec.n >= 2)
				fprintf(f, "<path class=\"whisker\" style=\"stroke:%s\" d=\"M%.1f %.1fV%.1f\"/>\n", cols[k],
					px[q] + dx, ar_svg_map(&y, a->ops_per_sec.min), ar_svg_map(&y, a->ops_per_sec.max));
			q++;
		}
		fputs("</g>\n", f);
		marks++;
	}
	ar_svg_legend(f, R + 20, T + 20, names, cols, kinds, nn);
	ar_svg_close(f);
	return marks;
}
