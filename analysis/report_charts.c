/*
 * report_charts.c — the report's charts as inline SVG, from the model:
 *   throughput  median ops/s per allocator as bars, min-max over the
 *               repetitions as whiskers, the ratio to the trace's baseline
 *               above each bar;
 *   boxes       with >= AR_CHART_BOX_MIN repetitions: ops/s, p99 and peak
 *               heap RSS per repetition as box plots (quartiles, median,
 *               min-max whiskers, a dot per repetition);
 *   latency     the CDF of all calls per allocator (histogram buckets of
 *               its ok runs pooled), once on a linear axis and once on a
 *               "nines" axis (90 %, 99 %, 99.9 %...) that shows the tail,
 *               then a tail panel per operation (malloc, calloc, realloc,
 *               free...); every latency axis starts at the timer's
 *               resolution, below which calls cannot be told apart;
 *   rss         heap overhead (heap RSS minus the trace's exact live bytes)
 *               over the trace's events per allocator: the median over
 *               every ok repetition with a min-max band, named at its end;
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

/* The operations whose latency is stored per op (histogram.op), in the
 * order their panels appear. */
static const char *const lat_ops[] = {"malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc",
				      "memalign", "valloc", "pvalloc"};
enum { NLAT_OPS = sizeof lat_ops / sizeof *lat_ops };

/* The timer's resolution for t's latency axis: the largest median over its
 * allocators (calls at or below it cannot be told apart), NAN when no run
 * stored one (databases before schema 5). */
static double timer_floor(const ar_res_trace_t *t)
{
	double res = NAN;
	for (size_t i = 0; i < t->nallocs; i++) {
		double r = t->allocs[i].timer_res_ns.med;
		if (r > 0 && isfinite(r) && !(r <= res))
			res = r;
	}
	return res;
}

/* One latency panel: what it shows, over which x range (ns, log scale). */
typedef struct lat_panel {
	const char *kind, *what; /* chart id stem; "all calls" or an op name */
	int tail;                /* percentile ("nines") axis instead of a linear one */
	double xlo, xhi, res;    /* res: timer resolution (NAN: unknown), xlo = res when known */
} lat_panel_t;

static int latency_panel(FILE *f, const ar_res_trace_t *t, int idx, ar_res_cdf_t **cdf, const size_t *nc,
			 const lat_panel_t *p)
{
	char title[256];
	if (p->tail)
		snprintf(title, sizeof title, "%s: %s latency tail (percentile scale)", t->name, p->what);
	else
		snprintf(title, sizeof title, "%s: latency CDF (%s, ok runs pooled)", t->name, p->what);
	open_chart(f, p->kind, idx, t->sha256, title);
	ar_svg_axis_t x = {p->xlo, p->xhi, L, R, 1, 0};
	ar_svg_axis_t y = {0, p->tail ? 4 : 1, B, T, 0, 0};
	ar_svg_yaxis(f, &y, L, R, p->tail ? "percentile of calls" : "fraction of calls", p->tail ? fmt_nines : fmt_pct);
	double ticks[64];
	size_t nt = 0;
	char first[32];
	if (isfinite(p->res)) {
		/* the axis starts at the resolution; a decade tick too close to it would overprint its label */
		double at[64];
		size_t na = ar_svg_ticks(&x, at, 64);
		ticks[nt++] = p->xlo;
		for (size_t i = 0; i < na && nt < 64; i++)
			if (ar_svg_map(&x, at[i]) - ar_svg_map(&x, p->xlo) >= 48)
				ticks[nt++] = at[i];
		snprintf(first, sizeof first, "\u2264%.0f ns", ceil(p->res));
	}
	ar_svg_xaxis_first(f, &x, B, "latency per call (log scale)", ar_res_fmt_ns, nt ? ticks : NULL, nt,
			   nt ? first : NULL);
	const char *names[32];
	size_t nl = 0;
	int marks = 0;
	for (size_t i = 0; i < t->nallocs; i++) {
		if (!nc[i])
			continue;
		const ar_res_alloc_t *a = &t->allocs[i];
		double *px = ar_res_xcalloc(nc[i] + 1, sizeof *px), *py = ar_res_xcalloc(nc[i] + 1, sizeof *py);
		/* everything at or below the axis start is one point on it: the
		 * share of calls the timer could not resolve */
		double below = 0;
		size_t np = 0;
		for (size_t k = 0; k < nc[i]; k++)
			if (cdf[i][k].ns <= p->xlo)
				below = cdf[i][k].frac;
		for (size_t k = 0; k <= nc[i]; k++) {
			double ns = k ? cdf[i][k - 1].ns : p->xlo, fr = k ? cdf[i][k - 1].frac : below;
			if (k && ns <= p->xlo)
				continue;
			double v = p->tail ? (fr >= 1 ? 4 : fmin(4, -log10(1 - fr))) : fr;
			px[np] = ar_svg_map(&x, ns);
			py[np++] = ar_svg_map(&y, v);
		}
		fputs("<polyline class=\"mark cdf\" data-allocator=\"", f);
		ar_esc_html(f, a->name);
		fprintf(f, "\" data-points=\"%zu\" data-max-ns=\"%.6g\" data-below-res=\"%.6g\" stroke=\"%s\"%s", np,
			cdf[i][nc[i] - 1].ns, below, ar_svg_colour(a->name), ar_svg_dash(a->name));
		polyline(f, px, py, np);
		fputs("><title>", f);
		ar_esc_html(f, a->name);
		fprintf(f, ": %zu histogram buckets over %zu ok run(s)", nc[i] - 1, a->n_ok_runs);
		if (isfinite(p->res))
			fprintf(f, "; %.1f %% of calls at or below the timer's resolution (%.0f ns)", 100 * below,
				ceil(p->res));
		fputs("</title></polyline>\n", f);
		free(px);
		free(py);
		if (nl < 32)
			names[nl++] = a->name;
		marks++;
	}
	ar_svg_legend(f, R + 16, T + 20, names, nl);
	if (isfinite(p->res)) {
		char note[96];
		snprintf(note, sizeof note, "axis starts at the timer's resolution (%.0f ns): faster calls are drawn there",
			 ceil(p->res));
		ar_svg_text(f, R + 110, T - 4, "end", "note", note);
	}
	ar_svg_close(f);
	return marks;
}

/* The pooled CDF of op (NULL: every op) per allocator of t; returns how
 * many allocators have one and widens [*xlo, *xhi] to cover them. */
static size_t load_cdfs(const ar_res_set_t *rep, const ar_res_trace_t *t, const char *op, ar_res_cdf_t **cdf,
			size_t *nc, double *xlo, double *xhi)
{
	size_t with = 0;
	for (size_t i = 0; i < t->nallocs; i++) {
		cdf[i] = ar_res_latency_cdf_op(rep, t->allocs[i].ok_runs, t->allocs[i].n_ok_runs, op, &nc[i]);
		if (!nc[i])
			continue;
		with++;
		*xlo = fmin(*xlo, fmax(1, cdf[i][0].ns));
		*xhi = fmax(*xhi, cdf[i][nc[i] - 1].ns);
	}
	return with;
}

static void free_cdfs(ar_res_cdf_t **cdf, size_t *nc, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(cdf[i]);
		cdf[i] = NULL;
		nc[i] = 0;
	}
}

/* The x range of a panel: from the timer's resolution when known (else
 * the decade below the fastest bucket) to the decade above the slowest. */
static void latency_range(lat_panel_t *p, double xlo, double xhi, double res)
{
	p->res = res;
	xhi = pow(10, ceil(log10(xhi)));
	if (isfinite(res))
		xlo = res;
	else
		xlo = pow(10, floor(log10(xlo)));
	if (xhi <= xlo * 2)
		xhi = pow(10, ceil(log10(xlo * 10)));
	p->xlo = xlo;
	p->xhi = xhi;
}

int ar_chart_latency(FILE *f, const ar_res_set_t *rep, const ar_res_trace_t *t, int idx)
{
	ar_res_cdf_t **cdf = ar_res_xcalloc(t->nallocs + 1, sizeof *cdf);
	size_t *nc = ar_res_xcalloc(t->nallocs + 1, sizeof *nc);
	double res = timer_floor(t);
	double xlo = INFINITY, xhi = 0;
	int marks = 0;
	if (load_cdfs(rep, t, NULL, cdf, nc, &xlo, &xhi) && xhi > 0) {
		lat_panel_t p = {"latency-cdf", "all calls", 0, 0, 0, NAN};
		latency_range(&p, xlo, xhi, res);
		marks += latency_panel(f, t, idx, cdf, nc, &p);
		p.kind = "latency-tail";
		p.tail = 1;
		marks += latency_panel(f, t, idx, cdf, nc, &p);
	}
	free_cdfs(cdf, nc, t->nallocs);
	for (int o = 0; o < NLAT_OPS; o++) {
		xlo = INFINITY;
		xhi = 0;
		if (load_cdfs(rep, t, lat_ops[o], cdf, nc, &xlo, &xhi) && xhi > 0) {
			char kind[40];
			snprintf(kind, sizeof kind, "latency-op-%s", lat_ops[o]);
			for (char *c = kind; *c; c++)
				if (*c == '_')
					*c = '-';
			lat_panel_t p = {kind, lat_ops[o], 1, 0, 0, NAN};
			latency_range(&p, xlo, xhi, res);
			marks += latency_panel(f, t, idx, cdf, nc, &p);
		}
		free_cdfs(cdf, nc, t->nallocs);
	}
	free(cdf);
	free(nc);
	return marks;
}

/* ---- heap overhead over the replay ---- */

/* One allocator's overhead line: per sample of its first ok run, the median,
 * min and max of heap RSS minus live bytes over the ok runs sampled at the
 * same event. */
typedef struct overhead {
	size_t n;   /* samples */
	int runs;   /* ok runs with a timeline */
	double *event, *med, *min, *max;
	double peak_med; /* the largest median */
} overhead_t;

enum { MAX_REPS = 256 };

static void overhead_load(const ar_res_set_t *rep, const ar_res_alloc_t *a, overhead_t *o)
{
	memset(o, 0, sizeof *o);
	size_t nr = a->n_ok_runs < MAX_REPS ? a->n_ok_runs : MAX_REPS;
	if (!nr)
		return;
	ar_res_sample_t **tl = ar_res_xcalloc(nr, sizeof *tl);
	size_t *n = ar_res_xcalloc(nr, sizeof *n);
	for (size_t r = 0; r < nr; r++) {
		tl[r] = ar_res_timeline(rep, a->ok_runs[r], &n[r]);
		o->runs += n[r] > 0;
	}
	o->n = n[0];
	o->event = ar_res_xcalloc(o->n + 1, sizeof *o->event);
	o->med = ar_res_xcalloc(o->n + 1, sizeof *o->med);
	o->min = ar_res_xcalloc(o->n + 1, sizeof *o->min);
	o->max = ar_res_xcalloc(o->n + 1, sizeof *o->max);
	double *v = ar_res_xcalloc(nr, sizeof *v);
	o->peak_med = -INFINITY;
	for (size_t k = 0; k < o->n; k++) {
		size_t nv = 0;
		o->event[k] = tl[0][k].event;
		for (size_t r = 0; r < nr; r++)
			if (k < n[r] && tl[r][k].event == tl[0][k].event)
				v[nv++] = tl[r][k].heap_rss_bytes - tl[r][k].live_bytes;
		ar_res_stat_t s = ar_res_stat(v, nv);
		o->med[k] = s.med;
		o->min[k] = s.min;
		o->max[k] = s.max;
		if (s.med > o->peak_med)
			o->peak_med = s.med;
	}
	free(v);
	for (size_t r = 0; r < nr; r++)
		free(tl[r]);
	free(tl);
	free(n);
}

static void overhead_free(overhead_t *o)
{
	free(o->event);
	free(o->med);
	free(o->min);
	free(o->max);
}

int ar_chart_rss(FILE *f, const ar_res_set_t *rep, const ar_res_trace_t *t, int idx)
{
	overhead_t *ov = ar_res_xcalloc(t->nallocs + 1, sizeof *ov);
	double ylo = 0, yhi = 0, xmax = (double)t->events;
	size_t with = 0;
	for (size_t i = 0; i < t->nallocs; i++) {
		overhead_load(rep, &t->allocs[i], &ov[i]);
		for (size_t k = 0; k < ov[i].n; k++) {
			if (isfinite(ov[i].min[k]))
				ylo = fmin(ylo, ov[i].min[k]);
			if (isfinite(ov[i].max[k]))
				yhi = fmax(yhi, ov[i].max[k]);
			if (isfinite(ov[i].event[k]))
				xmax = fmax(xmax, ov[i].event[k]);
		}
		with += ov[i].n > 0;
	}
	int marks = 0;
	if (with) {
		char title[256], pk[32];
		snprintf(title, sizeof title, "%s: heap overhead = heap RSS \u2212 live bytes (peak live %s)", t->name,
			 ar_res_fmt_bytes(pk, sizeof pk, (double)t->peak_live_bytes));
		open_chart(f, "rss", idx, t->sha256, title);
		double span = fmax(yhi - ylo, 1), unit = ar_svg_byte_unit(fmax(fabs(ylo), fabs(yhi)));
		double lo = ylo < 0 ? ylo - span * 0.03 : 0, hi = yhi + span * 0.05;
		ar_svg_nice(&lo, &hi, unit);
		ar_svg_axis_t y = {lo, hi, B, T, 0, unit};
		double xl = 0, xh = xmax;
		ar_svg_nice(&xl, &xh, 0);
		ar_svg_axis_t x = {0, xh, L, R, 0, 0};
		ar_svg_yaxis(f, &y, L, R, "heap RSS \u2212 live bytes", ar_res_fmt_bytes);
		ar_svg_xaxis(f, &x, B, "trace event", ar_res_fmt_num, NULL, 0);
		if (lo < 0) /* below the zero line the allocator holds less than is live (untouched pages) */
			fprintf(f, "<line class=\"zero\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", L,
				ar_svg_map(&y, 0), R, ar_svg_map(&y, 0));
		const char *names[64], *cols[64];
		double ends[64];
		size_t nl = 0;
		for (size_t i = 0; i < t->nallocs; i++) {
			const overhead_t *o = &ov[i];
			if (!o->n)
				continue;
			const ar_res_alloc_t *a = &t->allocs[i];
			const char *col = ar_svg_colour(a->name);
			double *px = ar_res_xcalloc(2 * o->n + 1, sizeof *px), *py = ar_res_xcalloc(2 * o->n + 1, sizeof *py);
			fputs("<g class=\"mark rss\" data-allocator=\"", f);
			ar_esc_html(f, a->name);
			fprintf(f, "\" data-runs=\"%d\" data-run-ids=\"", o->runs);
			for (size_t r = 0; r < a->n_ok_runs && r < MAX_REPS; r++)
				fprintf(f, "%s%lld", r ? " " : "", (long long)a->ok_runs[r]);
			fprintf(f, "\" data-points=\"%zu\" data-peak-overhead-bytes=\"%.0f\">\n", o->n, o->peak_med);
			if (o->runs >= 2) { /* the min-max band: max forwards, min backwards */
				size_t np = 0;
				for (size_t k = 0; k < o->n; k++) {
					px[np] = ar_svg_map(&x, o->event[k]);
					py[np++] = ar_svg_map(&y, o->max[k]);
				}
				for (size_t k = o->n; k-- > 0;) {
					px[np] = ar_svg_map(&x, o->event[k]);
					py[np++] = ar_svg_map(&y, o->min[k]);
				}
				fprintf(f, "<polygon class=\"band\" fill=\"%s\"", col);
				polyline(f, px, py, np);
				fputs("/>\n", f);
			}
			for (size_t k = 0; k < o->n; k++) {
				px[k] = ar_svg_map(&x, o->event[k]);
				py[k] = ar_svg_map(&y, o->med[k]);
			}
			fprintf(f, "<polyline stroke=\"%s\"%s", col, ar_svg_dash(a->name));
			polyline(f, px, py, o->n);
			fputs("><title>", f);
			ar_esc_html(f, a->name);
			fprintf(f, ": heap RSS \u2212 live bytes, median of %d run(s)%s; peak %s</title></polyline>\n", o->runs,
				o->runs >= 2 ? " (band: min-max)" : "", ar_res_fmt_bytes(pk, sizeof pk, o->peak_med));
			if (o->n <= 64)
				for (size_t k = 0; k < o->n; k++)
					fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"%s\"/>\n", px[k], py[k], col);
			fputs("</g>\n", f);
			if (nl < 64) {
				names[nl] = a->name;
				cols[nl] = col;
				ends[nl++] = py[o->n - 1];
			}
			free(px);
			free(py);
			marks++;
		}
		ar_svg_end_labels(f, R + 4, ends, names, cols, nl, T, B);
		ar_svg_text(f, R + 110, H - 10, "end", "note", "line: median over ok runs; band: min-max");
		ar_svg_close(f);
	}
	for (size_t i = 0; i < t->nallocs; i++)
		overhead_free(&ov[i]);
	free(ov);
	return marks;
}

/* ---- box plots over repetitions ---- */

/* The q-quantile of sorted v[0..n) by linear interpolation (Hyndman & Fan type 7). */
static double quantile(const double *v, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t lo = (size_t)floor(h);
	return lo + 1 < n ? v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]) : v[n - 1];
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

typedef struct box_spec {
	const char *kind, *what, *unit_label;
	int fig;          /* AR_RES_* */
	int bytes;        /* a byte axis */
	ar_svg_fmt_fn fmt;
} box_spec_t;

static int box_chart(FILE *f, const ar_res_trace_t *t, int idx, const box_spec_t *b)
{
	double **v = ar_res_xcalloc(t->nallocs + 1, sizeof *v);
	size_t *nv = ar_res_xcalloc(t->nallocs + 1, sizeof *nv);
	double vlo = INFINITY, vhi = -INFINITY;
	for (size_t i = 0; i < t->nallocs; i++) {
		v[i] = ar_res_xcalloc(t->allocs[i].nruns + 1, sizeof **v);
		nv[i] = ar_res_values(&t->allocs[i], b->fig, v[i]);
		qsort(v[i], nv[i], sizeof **v, cmp_double);
		for (size_t k = 0; k < nv[i]; k++)
			if (isfinite(v[i][k])) {
				vlo = fmin(vlo, v[i][k]);
				vhi = fmax(vhi, v[i][k]);
			}
	}
	int marks = 0;
	if (vhi >= vlo) {
		char title[256];
		snprintf(title, sizeof title, "%s: %s per repetition (box: quartiles, whiskers: min-max)", t->name,
			 b->what);
		open_chart(f, b->kind, idx, t->sha256, title);
		/* a latency range over more than a decade and a half reads on a log axis */
		int lg = vlo > 0 && vhi / vlo > 30;
		double lo, hi, unit = b->bytes ? ar_svg_byte_unit(vhi) : 0;
		if (lg) {
			lo = pow(10, floor(log10(vlo)));
			hi = pow(10, ceil(log10(vhi)));
		} else {
			double pad = fmax(vhi - vlo, fabs(vhi) * 0.02) * 0.08;
			lo = fmax(0, vlo - pad);
			hi = vhi + pad;
			ar_svg_nice(&lo, &hi, unit);
		}
		ar_svg_axis_t y = {lo, hi, B, T, lg, unit};
		char ylab[64];
		snprintf(ylab, sizeof ylab, "%s%s", b->unit_label, lg ? " (log scale)" : "");
		ar_svg_yaxis(f, &y, L, R + 110, ylab, b->fmt);
		fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", L, B, R + 110, B);
		double slot = (double)(R + 110 - L) / (double)(t->nallocs ? t->nallocs : 1);
		for (size_t i = 0; i < t->nallocs; i++) {
			const ar_res_alloc_t *a = &t->allocs[i];
			double cx = L + slot * ((double)i + 0.5), bw = fmin(slot * 0.5, 40);
			const char *col = ar_svg_colour(a->name);
			ar_svg_text(f, cx, B + 16, "middle", "tick", a->name);
			if (!nv[i]) {
				ar_svg_text(f, cx, B - 8, "middle", "fail", a->runs_ok ? "not measured" : "no ok run");
				continue;
			}
			double *s = v[i];
			size_t n = nv[i];
			ar_res_stat_t st = ar_res_stat(s, n); /* the median every table prints */
			qsort(s, n, sizeof *s, cmp_double);
			double q1 = quantile(s, n, 0.25), q3 = quantile(s, n, 0.75);
			char m[32], l1[32], l3[32], mn[32], mx[32];
			fprintf(f, "<g class=\"mark %s\" data-allocator=\"", n >= AR_CHART_BOX_MIN ? "box" : "dots");
			ar_esc_html(f, a->name);
			fprintf(f, "\" data-n=\"%zu\" data-min=\"%.6g\" data-q1=\"%.6g\" data-median=\"%.6g\" "
				   "data-q3=\"%.6g\" data-max=\"%.6g\">\n<title>",
				n, st.min, q1, st.med, q3, st.max);
			ar_esc_html(f, a->name);
			fprintf(f, ": %s over %zu ok run(s): median %s, quartiles %s..%s, min %s, max %s</title>\n", b->what,
				n, b->fmt(m, sizeof m, st.med), b->fmt(l1, sizeof l1, q1), b->fmt(l3, sizeof l3, q3),
				b->fmt(mn, sizeof mn, st.min), b->fmt(mx, sizeof mx, st.max));
			if (n >= AR_CHART_BOX_MIN) {
				double yq1 = ar_svg_map(&y, q1), yq3 = ar_svg_map(&y, q3), ym = ar_svg_map(&y, st.med);
				double y0 = ar_svg_map(&y, st.min), y1 = ar_svg_map(&y, st.max);
				fprintf(f, "<path class=\"whisker\" d=\"M%.1f %.1fV%.1fM%.1f %.1fV%.1f"
					   "M%.1f %.1fH%.1fM%.1f %.1fH%.1f\"/>\n",
					cx, y0, yq1, cx, yq3, y1, cx - bw / 4, y0, cx + bw / 4, cx - bw / 4, y1, cx + bw / 4);
				fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
					   "fill-opacity=\"0.3\" stroke=\"%s\" stroke-width=\"1.5\"/>\n",
					cx - bw / 2, yq3, bw, fmax(yq1 - yq3, 1), col, col);
				fprintf(f, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"%s\" stroke-width=\"3\"/>\n", cx - bw / 2, ym,
					cx + bw / 2, col);
			}
			/* every repetition as a dot, spread sideways so equal values stay visible */
			for (size_t k = 0; k < n; k++) {
				double dx = n > 1 ? ((double)k / (double)(n - 1) - 0.5) * bw * 0.6 : 0;
				fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.3\" fill=\"%s\" fill-opacity=\"0.8\" "
					   "stroke=\"#fff\" stroke-width=\"0.5\"/>\n",
					cx + bw * 0.75 + dx * 0.5, ar_svg_map(&y, s[k]), col);
			}
			fputs("</g>\n", f);
			marks++;
		}
		ar_svg_close(f);
	}
	for (size_t i = 0; i < t->nallocs; i++)
		free(v[i]);
	free(v);
	free(nv);
	return marks;
}

int ar_chart_boxes(FILE *f, const ar_res_trace_t *t, int idx)
{
	size_t most = 0;
	for (size_t i = 0; i < t->nallocs; i++)
		if (t->allocs[i].n_ok_runs > most)
			most = t->allocs[i].n_ok_runs;
	if (most < AR_CHART_BOX_MIN)
		return 0;
	static const box_spec_t specs[] = {
		{"box-ops", "throughput", "ops/s", AR_RES_OPS, 0, ar_res_fmt_num},
		{"box-latency", "p99 latency", "p99", AR_RES_P99, 0, ar_res_fmt_ns},
		{"box-heap", "peak heap RSS", "bytes", AR_RES_HEAP, 1, ar_res_fmt_bytes},
	};
	int marks = 0;
	for (size_t k = 0; k < sizeof specs / sizeof *specs; k++)
		marks += box_chart(f, t, idx, &specs[k]);
	return marks;
}

int ar_chart_scaling(FILE *f, const ar_res_series_t *s, int idx)
{
	char title[512];
	snprintf(title, sizeof title, "thread scaling: %s", s->scenario);
	open_chart(f, "scaling", idx, NULL, title);
	/* Allocators in the order they first appear along the series. */
	const char *names[32], *cols[32];
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
				cols[nn++] = ar_svg_colour(a->name);
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
		fprintf(f, "\">\n<polyline stroke=\"%s\"%s", cols[k], ar_svg_dash(names[k]));
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
	ar_svg_legend(f, R + 16, T + 20, names, nn);
	ar_svg_text(f, R + 110, H - 10, "end", "note", "median ops/s, whiskers min-max");
	ar_svg_close(f);
	return marks;
}
