/*
 * report_svg.c — the SVG primitives allocreport's charts are drawn with:
 * linear and log10 scales, "nice" axis bounds and ticks, axes with grid
 * lines, a legend, escaped text, and one fixed colour per allocator so the
 * same allocator has the same colour in every chart. Output is plain SVG 1.1
 * inline in HTML: no script, no external resource, styles from the page's
 * <style> (classes: axis, grid, tick, label, title).
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

static const struct {
	const char *name, *colour;
} known[] = {
	{"glibc", "#4e79a7"}, {"jemalloc", "#f28e2b"}, {"tcmalloc", "#e15759"}, {"mimalloc", "#76b7b2"},
	{"pool", "#59a14f"},  {"arena", "#b8860b"},    {"tlscache", "#b07aa1"}, {"freelist", "#d37295"},
};
static const char *const spare[] = {"#9c755f", "#7f7f7f", "#1f77b4", "#8c564b", "#17becf"};

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
		ar_svg_text(f, px, y_px + 16, "middle", "tick", fmt(buf, sizeof buf, t[i]));
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

void ar_svg_legend(FILE *f, double x, double y, const char *const *names, const char *const *colours,
		   const enum ar_svg_swatch *kinds, size_t n)
{
	fputs("<g class=\"legend\">\n", f);
	for (size_t i = 0; i < n; i++) {
		double yy = y + 18.0 * (double)i;
		if (kinds[i] == AR_SW_BOX)
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\"/>\n", x, yy - 9,
				colours[i]);
		else
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
				   "stroke-width=\"2\"%s/>\n",
				x, yy - 4, x + 16, yy - 4, colours[i],
				kinds[i] == AR_SW_DASHED ? " stroke-dasharray=\"4 3\"" : "");
		ar_svg_text(f, x + 22, yy, "start", "tick", names[i]);
	}
	fputs("</g>\n", f);
}
