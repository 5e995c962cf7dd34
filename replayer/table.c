/*
 * table.c — what allocreplay prints: per trace, one line per allocator with
 * the median over its successful repetitions (ops/s and peak heap RSS also
 * as a ratio to glibc's median), the spread of ops/s over repetitions, and
 * every failed run with its reason; or the same runs as JSON (--json).
 *
 * Medians, not means: the method practitioners agree on (REFERENCES.md §1)
 * quotes the median of several repetitions and shows the spread.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Aggregate of one allocator's successful runs. */
typedef struct agg {
	const char *name;
	size_t ok, total;
	double ops_per_sec, ops_min, ops_max, p50, p99, p999, heap, frag, faults;
} agg_t;

static double run_ops_per_sec(const ar_run_t *r)
{
	uint64_t c, w;
	return ar_run_scalar(r, "calls", &c) && ar_run_scalar(r, "wall_ns", &w) && w
		       ? (double)c * 1e9 / (double)w
		       : NAN;
}

static double run_heap(const ar_run_t *r)
{
	uint64_t b, p;
	if (!ar_run_scalar(r, "baseline_rss_bytes", &b) || !ar_run_scalar(r, "peak_rss_bytes", &p))
		return NAN;
	return p > b ? (double)(p - b) : 0;
}

static void aggregate(agg_t *g, const char *name, ar_run_t *const *runs, size_t n, uint64_t peak_live)
{
	memset(g, 0, sizeof *g);
	g->name = name;
	double *v[7];
	for (int i = 0; i < 7; i++)
		v[i] = calloc(n ? n : 1, sizeof(double));
	g->ops_min = INFINITY;
	g->ops_max = 0;
	for (size_t i = 0; i < n; i++) {
		const ar_run_t *r = runs[i];
		if (strcmp(r->allocator, name))
			continue;
		g->total++;
		if (strcmp(r->status, AR_ST_OK))
			continue;
		size_t k = g->ok++;
		double ops = run_ops_per_sec(r);
		uint64_t f = 0;
		ar_run_scalar(r, "minor_faults", &f);
		v[0][k] = ops;
		v[1][k] = r->lat[AR_WL_NCALLS].p50_ns;
		v[2][k] = r->lat[AR_WL_NCALLS].p99_ns;
		v[3][k] = r->lat[AR_WL_NCALLS].p999_ns;
		v[4][k] = run_heap(r);
		v[5][k] = peak_live ? v[4][k] / (double)peak_live : NAN;
		v[6][k] = (double)f;
		if (ops < g->ops_min)
			g->ops_min = ops;
		if (ops > g->ops_max)
			g->ops_max = ops;
	}
	g->ops_per_sec = median(v[0], g->ok);
	g->p50 = median(v[1], g->ok);
	g->p99 = median(v[2], g->ok);
	g->p999 = median(v[3], g->ok);
	g->heap = median(v[4], g->ok);
	g->frag = median(v[5], g->ok);
	g->faults = median(v[6], g->ok);
	for (int i = 0; i < 7; i++)
		free(v[i]);
}

static const char *human(double v, char *buf, size_t cap, const char *const *units)
{
	int u = 0;
	while (fabs(v) >= 1000 && units[u + 1]) {
		v /= 1000;
		u++;
	}
	if (isnan(v))
		snprintf(buf, cap, "-");
	else
		snprintf(buf, cap, v < 10 && u ? "%.2f%s" : "%.1f%s", v, units[u]);
	return buf;
}

static const char *bytes_h(double v, char *buf, size_t cap)
{
	static const char *const u[] = { " B", " KiB", " MiB", " GiB", " TiB" };
	int i = 0;
	if (isnan(v))
		return snprintf(buf, cap, "-"), buf;
	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	snprintf(buf, cap, "%.1f%s", v, u[i]);
	return buf;
}

static const char *num(double v, const char *fmt, char *buf, size_t cap)
{
	if (isnan(v) || isinf(v))
		snprintf(buf, cap, "-");
	else
		snprintf(buf, cap, fmt, v);
	return buf;
}

void ar_table_print(FILE *out, const ar_trace_info_t *t, ar_run_t *const *runs, size_t n)
{
	static const char *const ops_u[] = { "", " k", " M", " G", NULL };
	const ar_wl_header_t *w = t->wl;
	fprintf(out, "\ntrace %s  sha256 %.12s  %llu events, %u thread(s), %llu calls replayed%s\n",
		t->name, t->sha256, (unsigned long long)w->events, w->nthreads,
		(unsigned long long)w->calls, t->cache_hit ? "  (workload from cache)" : "");
	if (w->skipped_unknown_frees || w->unknown_reallocs || w->lost_blocks)
		fprintf(out, "  note: %llu free(s) of pointers the trace never returned skipped, %llu "
			     "realloc(s) of such pointers replayed as realloc(NULL), %llu block(s) "
			     "never freed because their free is missing\n",
			(unsigned long long)w->skipped_unknown_frees,
			(unsigned long long)w->unknown_reallocs, (unsigned long long)w->lost_blocks);
	if (strcmp(t->status, "complete"))
		fprintf(out, "  note: the trace is %s; its valid prefix was replayed\n", t->status);
	const char *names[64];
	size_t nn = 0;
	for (size_t i = 0; i < n && nn < 64; i++) {
		size_t j = 0;
		while (j < nn && strcmp(names[j], runs[i]->allocator))
			j++;
		if (j == nn)
			names[nn++] = runs[i]->allocator;
	}
	agg_t base;
	aggregate(&base, "glibc", runs, n, w->peak_live_bytes);
	fprintf(out, "%-10s %-7s %10s %6s %8s %8s %9s %11s %6s %6s %9s %7s\n", "allocator", "ok",
		"ops/s", "×glibc", "p50 ns", "p99 ns", "p99.9 ns", "peak heap", "×glibc", "frag",
		"faults", "spread");
	for (size_t i = 0; i < nn; i++) {
		agg_t g;
		aggregate(&g, names[i], runs, n, w->peak_live_bytes);
		char a[32], b[32], c[32], d[32], e[32], f[32], h[32], k[32], l[32], m[32], okb[16];
		snprintf(okb, sizeof okb, "%zu/%zu", g.ok, g.total);
		double spread = g.ok > 1 ? 100.0 * (g.ops_max - g.ops_min) / g.ops_per_sec : NAN;
		fprintf(out, "%-10s %-7s %10s %6s %8s %8s %9s %11s %6s %6s %9s %7s\n", g.name, okb,
			human(g.ops_per_sec, a, sizeof a, ops_u),
			num(g.ops_per_sec / base.ops_per_sec, "%.2f", b, sizeof b),
			num(g.p50, "%.0f", c, sizeof c), num(g.p99, "%.0f", d, sizeof d),
			num(g.p999, "%.0f", e, sizeof e), bytes_h(g.heap, f, sizeof f),
			num(base.heap > 0 ? g.heap / base.heap : NAN, "%.2f", h, sizeof h),
			num(g.frag, "%.2f", k, sizeof k), num(g.faults, "%.0f", l, sizeof l),
			g.ok > 1 ? num(spread, "±%.1f%%", m, sizeof m) : "-");
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(runs[i]->status, AR_ST_OK))
			fprintf(out, "  FAILED %s repetition %d: %s: %s\n", runs[i]->allocator,
				runs[i]->repetition, runs[i]->status, runs[i]->reason);
	fprintf(out, "(medians over successful repetitions; latency over all calls, timer overhead "
		     "subtracted; peak heap = peak RSS above the worker's baseline; frag = peak heap / "
		     "peak live bytes %llu; spread = (max-min)/median of ops/s)\n",
		(unsigned long long)w->peak_live_bytes);
}

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void json_num(FILE *out, const char *key, double v)
{
	fprintf(out, ",\"%s\":", key);
	if (isnan(v) || isinf(v))
		fputs("null", out);
	else
		fprintf(out, "%.6g", v);
}

void ar_json_runs(FILE *out, const ar_trace_info_t *t, ar_run_t *const *runs, size_t n, int first)
{
	fprintf(out, "%s{\"trace\":", first ? "" : ",\n");
	json_str(out, t->name);
	fprintf(out, ",\"sha256\":\"%s\",\"events\":%llu,\"threads\":%u,\"calls\":%llu,"
		     "\"peak_live_bytes\":%llu,\"runs\":[",
		t->sha256, (unsigned long long)t->wl->events, t->wl->nthreads,
		(unsigned long long)t->wl->calls, (unsigned long long)t->wl->peak_live_bytes);
	for (size_t i = 0; i < n; i++) {
		const ar_run_t *r = runs[i];
		fprintf(out, "%s\n  {\"allocator\":", i ? "," : "");
		json_str(out, r->allocator);
		/* null when the run could not be stored */
		fputs(",\"run_uuid\":", out);
		if (r->run_uuid[0])
			json_str(out, r->run_uuid);
		else
			fputs("null", out);
		fprintf(out, ",\"repetition\":%d,\"status\":", r->repetition);
		json_str(out, r->status);
		fputs(",\"reason\":", out);
		json_str(out, r->reason);
		fputs(",\"library_path\":", out);
		json_str(out, r->served);
		uint64_t v;
		json_num(out, "ops", ar_run_scalar(r, "calls", &v) ? (double)v : NAN);
		json_num(out, "wall_ns", ar_run_scalar(r, "wall_ns", &v) ? (double)v : NAN);
		json_num(out, "ops_per_sec", run_ops_per_sec(r));
		const ar_lat_t *l = &r->lat[AR_WL_NCALLS];
		int has = r->hist[AR_WL_NCALLS] != NULL;
		json_num(out, "p50_ns", has ? l->p50_ns : NAN);
		json_num(out, "p99_ns", has ? l->p99_ns : NAN);
		json_num(out, "p999_ns", has ? l->p999_ns : NAN);
		json_num(out, "max_ns", has ? l->max_ns : NAN);
		double heap = run_heap(r);
		json_num(out, "peak_heap_rss_bytes", heap);
		json_num(out, "fragmentation",
			 t->wl->peak_live_bytes ? heap / (double)t->wl->peak_live_bytes : NAN);
		json_num(out, "minor_faults", ar_run_scalar(r, "minor_faults", &v) ? (double)v : NAN);
		json_num(out, "failed_allocs", ar_run_scalar(r, "failed_allocs", &v) ? (double)v : NAN);
		fputc('}', out);
	}
	fputs("]}", out);
}
