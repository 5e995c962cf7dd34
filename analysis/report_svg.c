/*
 * report_svg.c — the SVG primitives allocreport's charts are drawn with:
 * linear and log10 scales, "nice" axis bounds and ticks, axes with grid
 * lines, a legend, names at the ends of lines moved apart so they never
 * overlap, escaped text, and one fixed colour per allocator (plus a dash
 * pattern for allocrr's own) so the same allocator looks the same in every
 * chart. Output is plain SVG 1.1 inline in HTML: no script, no external
 * resource, styles from the page's <style> (classes: axis, grid, tick,
 * label, title, note, end-label).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ar_escape.h"
#include "report_model.h"

double ar_svg_map(const ar_svg_axis_t *a, double v)
{
	double lo = a->lo, hi = a->hi;
	if (a->log) {
		v = log10(v > 0 ? v : lo);
		lo = log10(lo);
		hi = log10(hi);
	}
	if (!(hi > lo))
		return (a->p0 + a->p1) / 2;
	double t = (v - lo) / (hi - lo);
	if (t < 0)
		t = 0;
	if (t > 1)
		t = 1;
	return a->p0 + t * (a->p1 - a->p0);
}

/* 1, 2 or 5 times a power of ten, at least x. */
static double nice_step(double x)
{
	double p = pow(10, floor(log10(x)));
	double m = x / p;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

double ar_svg_byte_unit(double v)
{
	double u = 1;
	while (v >= 1024 * u && u < 1099511627776.0)
		u *= 1024;
	return u;
}

/* The tick step of a linear axis over [lo, hi]. */
static double axis_step(double lo, double hi, double unit)
{
	if (!(unit > 0))
		unit = 1;
	return nice_step((hi - lo) / 5 / unit) * unit;
}

void ar_svg_nice(double *lo, double *hi, double unit)
{
	if (!(*hi > *lo)) {
		*hi = *lo > 0 ? *lo * 2 : 1;
		*lo = 0;
	}
	double step = axis_step(*lo, *hi, unit);
	*lo = floor(*lo / step) * step;
	*hi = ceil(*hi / step) * step;
}

static size_t auto_ticks(const ar_svg_axis_t *a, double *t, size_t max)
{
	size_t n = 0;
	if (a->log) {
		int k0 = (int)ceil(log10(a->lo) - 1e-9), k1 = (int)floor(log10(a->hi) + 1e-9);
		int sub = k1 - k0 < 2; /* fewer than 3 decades: 2x and 5x too */
		for (int k = k0 - 1; k <= k1 && n < max; k++)
			for (int m = 1; m <= 5 && n < max; m += (sub ? (m == 1 ? 1 : 3) : 5)) {
				double v = m * pow(10, k);
				if (v >= a->lo * (1 - 1e-9) && v <= a->hi * (1 + 1e-9))
					t[n++] = v;
			}
		return n;
	}
	double step = axis_step(a->lo, a->hi, a->unit);
	for (double v = ceil(a->lo / step) * step; v <= a->hi + step * 1e-6 && n < max; v += step)
		t[n++] = fabs(v) < step * 1e-9 ? 0 : v;
	return n;
}

/* Eight colours that stay apart on white, in print and for the common
 * colour-vision deficiencies: Okabe & Ito's palette with its yellow (too pale
 * for a line) replaced by a dark purple, its black by a dark grey. The
 * allocators allocrr ships are also drawn dashed (ar_svg_dash), so a pair
 * that looks alike in colour still differs in stroke. */
static const struct {
	const char *name, *colour;
	int ours;
} known[] = {
	{"glibc", "#0072b2", 0},    {"jemalloc", "#e69f00", 0}, {"tcmalloc", "#d55e00", 0}, {"mimalloc", "#009e73", 0},
	{"pool", "#cc79a7", 1},     {"arena", "#56b4e9", 1},    {"tlscache", "#6a3d9a", 1}, {"freelist", "#555555", 1},
};
static const char *const spare[] = {"#8c564b", "#bcbd22", "#17becf", "#7f7f7f", "#1f3a93"};

const char *ar_svg_colour(const char *allocator)
{
	for (size_t i = 0; i < sizeof known / sizeof *known; i++)
		if (!strcmp(known[i].name, allocator))
			return known[i].colour;
	unsigned h = 5381;
	for (const char *p = allocator; *p; p++)
		h = h * 33 + (unsigned char)*p;
	return spare[h % (sizeof spare / sizeof *spare)];
}

const char *ar_svg_dash(const char *allocator)
{
	for (size_t i = 0; i < sizeof known / sizeof *known; i++)
		if (!strcmp(known[i].name, allocator))
			return known[i].ours ? " stroke-dasharray=\"7 3\"" : "";
	return " stroke-dasharray=\"2 2\"";
}

/* Sort key for end labels: index into ys. */
static int by_y(const void *a, const void *b, const double *ys)
{
	double d = ys[*(const size_t *)a] - ys[*(const size_t *)b];
	return d < 0 ? -1 : d > 0;
}

void ar_svg_end_labels(FILE *f, double x, const double *ys, const char *const *names, const char *const *colours,
		       size_t n, double top, double bottom)
{
	enum { MAXL = 64, GAP = 12 };
	size_t idx[MAXL];
	double pos[MAXL];
	if (n > MAXL)
		n = MAXL;
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	/* insertion sort by the line's own y (n is small) */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && by_y(&idx[j - 1], &idx[j], ys) > 0; j--) {
			size_t t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	/* push down what overlaps, then up from the bottom what overflows */
	for (size_t i = 0; i < n; i++) {
		double y = isfinite(ys[idx[i]]) ? ys[idx[i]] + 4 : bottom;
		pos[i] = fmax(y, i ? pos[i - 1] + GAP : top + 4);
	}
	for (size_t i = n; i-- > 0;)
		if (pos[i] > bottom + 4 - (double)(n - 1 - i) * GAP)
			pos[i] = bottom + 4 - (double)(n - 1 - i) * GAP;
	fputs("<g class=\"end-labels\">\n", f);
	for (size_t i = 0; i < n; i++) {
		size_t k = idx[i];
		double y0 = isfinite(ys[k]) ? ys[k] : pos[i] - 4;
		fprintf(f, "<path d=\"M%.1f %.1fL%.1f %.1f\" stroke=\"%s\" stroke-width=\"1\" fill=\"none\"/>\n", x - 2,
			y0, x + 6, pos[i] - 4, colours[k]);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"start\" class=\"end-label\" style=\"fill:%s\">",
			x + 8, pos[i], colours[k]);
		ar_esc_html(f, names[k]);
		fputs("</text>\n", f);
	}
	fputs("</g>\n", f);
}

void ar_svg_text(FILE *f, double x, double y, const char *anchor, const char *cls, const char *text)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s%s%s>", x, y, anchor, cls ? " class=\"" : "",
		cls ? cls : "", cls ? "\"" : "");
	ar_esc_html(f, text);
	fputs("</text>\n", f);
}

void ar_svg_open(FILE *f, const char *id, int w, int h, const char *title)
{
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"%s\" class=\"chart\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" role=\"img\" aria-labelledby=\"%s-t\">\n<title id=\"%s-t\">",
		id, w, h, w, h, id, id);
	ar_esc_html(f, title);
	fputs("</title>\n", f);
	ar_svg_text(f, 10, 18, "start", "title", title);
}

void ar_svg_close(FILE *f) { fputs("</svg>\n", f); }

void ar_svg_xaxis(FILE *f, const ar_svg_axis_t *x, double y_px, const char *label, ar_svg_fmt_fn fmt,
		  const double *ticks, size_t nticks)
{
	ar_svg_xaxis_first(f, x, y_px, label, fmt, ticks, nticks, NULL);
}

size_t ar_svg_ticks(const ar_svg_axis_t *a, double *t, size_t max) { return auto_ticks(a, t, max); }

void ar_svg_xaxis_first(FILE *f, const ar_svg_axis_t *x, double y_px, const char *label, ar_svg_fmt_fn fmt,
			const double *ticks, size_t nticks, const char *first)
{
	double t[64];
	size_t n = ticks ? (nticks < 64 ? nticks : 64) : auto_ticks(x, t, 64);
	if (ticks)
		memcpy(t, ticks, n * sizeof *t);
	fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x->p0, y_px, x->p1,
		y_px);
	for (size_t i = 0; i < n; i++) {
		char buf[32];
		double px = ar_svg_map(x, t[i]);
		fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", px, y_px, px,
			y_px + 4);
		ar_svg_text(f, px, y_px + 16, "middle", "tick", i == 0 && first ? first : fmt(buf, sizeof buf, t[i]));
	}
	ar_svg_text(f, (x->p0 + x->p1) / 2, y_px + 34, "middle", "label", label);
}

void ar_svg_yaxis(FILE *f, const ar_svg_axis_t *y, double x_px, double x_end, const char *label,
		  ar_svg_fmt_fn fmt)
{
	double t[64];
	size_t n = auto_ticks(y, t, 64);
	fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x_px, y->p0, x_px,
		y->p1);
	for (size_t i = 0; i < n; i++) {
		char buf[32];
		double py = ar_svg_map(y, t[i]);
		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x_px, py, x_end,
			py);
		ar_svg_text(f, x_px - 5, py + 4, "end", "tick", fmt(buf, sizeof buf, t[i]));
	}
	double my = (y->p0 + y->p1) / 2;
	fprintf(f, "<text class=\"label\" text-anchor=\"middle\" transform=\"translate(%.1f %.1f) rotate(-90)\">",
		x_px - 58, my);
	ar_esc_html(f, label);
	fputs("</text>\n", f);
}

void ar_svg_legend(FILE *f, double x, double y, const char *const *names, size_t n)
{
	fputs("<g class=\"legend\">\n", f);
	for (size_t i = 0; i < n; i++) {
		double yy = y + 16.0 * (double)i;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2.2\"%s/>\n",
			x, yy - 4, x + 22, yy - 4, ar_svg_colour(names[i]), ar_svg_dash(names[i]));
		ar_svg_text(f, x + 27, yy, "start", "tick", names[i]);
	}
	fputs("</g>\n", f);
}
