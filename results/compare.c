/*
 * compare.c — the comparison, computed in one place: an allocator's runs
 * (ar_res_add_run) become medians with min-max ranges over its ok
 * repetitions, the spread of ops/s, the trace's baseline (what the program
 * ran on) and ratios of medians to it (ar_res_finish); ar_res_significance
 * is the rule that says whether one allocator's difference from another is
 * meaningful. allocreplay and allocreport both go through here; the SQL
 * view allocator_comparison (results/sql/) computes the same medians and
 * the same default baseline with window functions.
 *
 * Significance: a difference below AR_RES_EFFECT_FLOOR (5 %) is never
 * meaningful, however steady: replay exaggerates an allocator's share of a
 * program's time (issue 14 measured 1.5-4x), so 5 % in replay is a few
 * percent or less in the program, below what replay predicts reliably
 * (docs/RESULTS.md). Above it, the difference must hold over the
 * repetitions: a bootstrap of the ratio of medians (each side resampled
 * with replacement, a fixed-seed generator so a database always gives the
 * same verdict) whose 95 % interval must stay outside 1 +- the floor. With
 * 3 repetitions that is close to "the min-max ranges are apart by more than
 * the floor"; more repetitions tighten it.
 *
 * Invariants: only runs with status "ok" enter an aggregate; a NAN figure
 * (not measured) is left out of its median, never counted as 0; the median
 * of an even count is the mean of the two middle values.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ar_results.h"

const char *const ar_res_fig_names[AR_RES_NFIG] = {
	"ops_per_sec", "p50_ns", "p99_ns", "p999_ns", "max_ns", "peak_heap_rss_bytes",
	"final_heap_rss_bytes", "fragmentation", "minor_faults", "major_faults", "failed_allocs",
	"timer_resolution_ns", "predicted_time_ns", "predicted_peak_rss_bytes", "fidelity_time_error",
	"fidelity_rss_error",
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

ar_res_stat_t ar_res_stat(double *v, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i]))
			v[k++] = v[i];
	ar_res_stat_t s = {NAN, NAN, NAN, (int)k};
	if (!k)
		return s;
	qsort(v, k, sizeof *v, cmp_double);
	s.med = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
	s.min = v[0];
	s.max = v[k - 1];
	return s;
}

double ar_res_spread(const ar_res_stat_t *s)
{
	if (s->n < 2 || !(s->med > 0))
		return NAN;
	return (s->max - s->min) / s->med;
}

int ar_res_overlap(const ar_res_stat_t *a, const ar_res_stat_t *b)
{
	return a->min <= b->max && b->min <= a->max;
}

/* splitmix64: small, fast, and the same sequence everywhere. */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The median of n values drawn with replacement from v; tmp has room for n. */
static double resampled_median(const double *v, size_t n, double *tmp, uint64_t *seed)
{
	for (size_t i = 0; i < n; i++)
		tmp[i] = v[next_rand(seed) % n];
	return ar_res_stat(tmp, n).med;
}

/* Oriented so that >= 1 means a is better. */
static double oriented(double a, double b, int higher_better)
{
	return higher_better ? a / b : b / a;
}

ar_res_verdict_t ar_res_significance(const double *a, size_t na, const double *b, size_t nb, int higher_better)
{
	ar_res_verdict_t v = {AR_RES_SIG_SINGLE, NAN, NAN, NAN, 0, 0};
	double *x = ar_res_xcalloc(na + nb, sizeof *x), *y = x + na;
	for (size_t i = 0; i < na; i++)
		if (!isnan(a[i]))
			x[v.na++] = a[i];
	for (size_t i = 0; i < nb; i++)
		if (!isnan(b[i]))
			y[v.nb++] = b[i];
	double *tmp = ar_res_xcalloc(na + nb, sizeof *tmp);
	memcpy(tmp, x, (size_t)v.na * sizeof *x);
	double ma = ar_res_stat(tmp, (size_t)v.na).med;
	memcpy(tmp, y, (size_t)v.nb * sizeof *y);
	double mb = ar_res_stat(tmp, (size_t)v.nb).med;
	v.ratio = oriented(ma, mb, higher_better);
	if (v.na >= 2 && v.nb >= 2) {
		double *r = ar_res_xcalloc(AR_RES_BOOTSTRAP, sizeof *r);
		uint64_t seed = 0x616c6c6f63727221ULL; /* fixed: the same values give the same verdict */
		size_t k = 0;
		for (int i = 0; i < AR_RES_BOOTSTRAP; i++) {
			double ra = resampled_median(x, (size_t)v.na, tmp, &seed);
			double rb = resampled_median(y, (size_t)v.nb, tmp, &seed);
			double q = oriented(ra, rb, higher_better);
			if (!isnan(q) && !isinf(q))
				r[k++] = q;
		}
		ar_res_stat_t s = ar_res_stat(r, k); /* sorts r */
		if (s.n) {
			v.lo = r[(size_t)(0.025 * (double)k)];
			v.hi = r[(size_t)(0.975 * (double)k) < k ? (size_t)(0.975 * (double)k) : k - 1];
		}
		free(r);
		if (fabs(v.ratio - 1) < AR_RES_EFFECT_FLOOR || isnan(v.ratio))
			v.sig = AR_RES_SIG_SMALL;
		else if (isnan(v.lo) || (v.lo <= 1 + AR_RES_EFFECT_FLOOR && v.hi >= 1 - AR_RES_EFFECT_FLOOR))
			v.sig = AR_RES_SIG_NOISE;
		else
			v.sig = AR_RES_SIG_YES;
	}
	free(tmp);
	free(x);
	return v;
}

size_t ar_res_values(const ar_res_alloc_t *a, int fig, double *v)
{
	size_t k = 0;
	for (size_t i = 0; i < a->nruns; i++)
		if (a->runs[i].status && !strcmp(a->runs[i].status, "ok") && !isnan(a->runs[i].fig[fig]))
			v[k++] = a->runs[i].fig[fig];
	return k;
}

ar_res_alloc_t *ar_res_alloc_slot(ar_res_trace_t *t, const char *name, const char *version)
{
	for (size_t i = 0; i < t->nallocs; i++)
		if (!strcmp(t->allocs[i].name, name))
			return &t->allocs[i];
	t->allocs = ar_res_xrealloc(t->allocs, (t->nallocs + 1) * sizeof *t->allocs);
	ar_res_alloc_t *a = &t->allocs[t->nallocs++];
	memset(a, 0, sizeof *a);
	a->name = ar_res_strdup(name);
	a->version = ar_res_strdup(version);
	a->speed_vs_baseline = a->heap_vs_baseline = NAN;
	a->pred_time_vs_baseline = a->pred_rss_vs_baseline = NAN;
	return a;
}

static void add_fail(ar_res_alloc_t *a, const ar_res_run_t *r)
{
	a->fails = ar_res_xrealloc(a->fails, (a->nfails + 1) * sizeof *a->fails);
	ar_res_fail_t *fl = &a->fails[a->nfails++];
	fl->run_id = r->run_id;
	fl->repetition = r->repetition;
	fl->status = ar_res_strdup(r->status ? r->status : "?");
	fl->reason = ar_res_strdup(r->reason);
}

void ar_res_add_run(ar_res_alloc_t *a, const ar_res_run_t *r)
{
	a->runs = ar_res_xrealloc(a->runs, (a->nruns + 1) * sizeof *a->runs);
	ar_res_run_t *c = &a->runs[a->nruns++];
	*c = *r;
	c->run_uuid = ar_res_strdup(r->run_uuid);
	c->status = ar_res_strdup(r->status);
	c->reason = ar_res_strdup(r->reason);
	c->library_path = ar_res_strdup(r->library_path);
	c->prediction_reason = ar_res_strdup(r->prediction_reason);
	c->fidelity_reason = ar_res_strdup(r->fidelity_reason);
	a->runs_total++;
	if (!r->status || strcmp(r->status, "ok")) {
		add_fail(a, r);
		return;
	}
	a->runs_ok++;
	a->ok_runs = ar_res_xrealloc(a->ok_runs, (a->n_ok_runs + 1) * sizeof *a->ok_runs);
	a->ok_runs[a->n_ok_runs++] = r->run_id;
}

/* Medians and ranges of allocator a's ok runs. */
static void aggregate(ar_res_alloc_t *a)
{
	ar_res_stat_t *dst[AR_RES_NFIG] = {&a->ops_per_sec, &a->p50_ns, &a->p99_ns, &a->p999_ns,
					   &a->max_ns, &a->heap_bytes, &a->final_heap_bytes, &a->frag,
					   &a->minor_faults, &a->major_faults, &a->failed_allocs,
					   &a->timer_res_ns, &a->pred_time_ns, &a->pred_rss_bytes,
					   &a->fid_time_err, &a->fid_rss_err};
	double *v = ar_res_xcalloc(a->nruns, sizeof *v);
	for (int m = 0; m < AR_RES_NFIG; m++)
		*dst[m] = ar_res_stat(v, ar_res_values(a, m, v));
	free(v);
	a->prediction_reason = a->fidelity_reason = NULL;
	for (size_t i = 0; i < a->nruns; i++)
		if (a->runs[i].status && !strcmp(a->runs[i].status, "ok")) {
			if (!a->prediction_reason)
				a->prediction_reason = a->runs[i].prediction_reason;
			if (!a->fidelity_reason)
				a->fidelity_reason = a->runs[i].fidelity_reason;
		}
}

static const ar_res_alloc_t *with_ok_runs(const ar_res_trace_t *t, const char *name)
{
	const ar_res_alloc_t *a = name ? ar_res_find(t, name) : NULL;
	return a && a->runs_ok ? a : NULL;
}

/* The baseline by the rule of ar_results.h, and the note when the wanted
 * or the recorded allocator could not be it. */
static const ar_res_alloc_t *choose_baseline(ar_res_trace_t *t)
{
	const ar_res_alloc_t *b = with_ok_runs(t, t->baseline_wanted);
	const ar_res_alloc_t *rec = with_ok_runs(t, t->recorded_allocator);
	const ar_res_alloc_t *dflt = rec ? rec : with_ok_runs(t, AR_RES_BASELINE);
	if (t->baseline_wanted && !b)
		t->baseline_note = ar_res_strf("--baseline %s: it has no successful run on this trace; ratios are "
					       "against %s instead",
					       t->baseline_wanted, dflt ? dflt->name : "nothing (no baseline)");
	else if (!t->baseline_wanted && t->recorded_allocator && !rec)
		t->baseline_note = ar_res_strf("the program ran on %s, which %s on this trace; ratios are against "
					       "%s instead (allocreplay -a %s replays it)",
					       t->recorded_allocator,
					       ar_res_find(t, t->recorded_allocator) ? "has no successful run"
										     : "was not replayed",
					       dflt ? dflt->name : "nothing", t->recorded_allocator);
	return b ? b : dflt;
}

static double ratio_of(double a, double b)
{
	return b > 0 ? a / b : NAN;
}

void ar_res_finish(ar_res_trace_t *t)
{
	ar_res_predict(t);
	for (size_t i = 0; i < t->nallocs; i++)
		aggregate(&t->allocs[i]);
	free(t->baseline);
	free(t->baseline_note);
	t->baseline = t->baseline_note = NULL;
	const ar_res_alloc_t *g = choose_baseline(t);
	t->baseline = g ? ar_res_strdup(g->name) : NULL;
	t->baseline_is_recorded = g && t->recorded_allocator && !strcmp(g->name, t->recorded_allocator);
	for (size_t i = 0; i < t->nallocs; i++) {
		ar_res_alloc_t *a = &t->allocs[i];
		a->speed_vs_baseline = g ? ratio_of(a->ops_per_sec.med, g->ops_per_sec.med) : NAN;
		a->heap_vs_baseline = g ? ratio_of(a->heap_bytes.med, g->heap_bytes.med) : NAN;
		a->pred_time_vs_baseline = g ? ratio_of(a->pred_time_ns.med, g->pred_time_ns.med) : NAN;
		a->pred_rss_vs_baseline = g ? ratio_of(a->pred_rss_bytes.med, g->pred_rss_bytes.med) : NAN;
	}
}

size_t ar_res_set_baseline(ar_res_set_t *rep, const char *name)
{
	size_t have = 0;
	for (size_t i = 0; i < rep->ntraces; i++) {
		ar_res_trace_t *t = &rep->traces[i];
		free(t->baseline_wanted);
		t->baseline_wanted = ar_res_strdup(name);
		ar_res_finish(t);
		have += t->baseline && name && !strcmp(t->baseline, name);
	}
	return have;
}

int ar_res_has_predictions(const ar_res_trace_t *t)
{
	for (size_t i = 0; i < t->nallocs; i++)
		if (t->allocs[i].pred_time_ns.n || t->allocs[i].pred_rss_bytes.n)
			return 1;
	return 0;
}

const ar_res_alloc_t *ar_res_fidelity_of(const ar_res_trace_t *t)
{
	const ar_res_alloc_t *rec = t->recorded_allocator ? ar_res_find(t, t->recorded_allocator) : NULL;
	if (rec && (rec->fid_time_err.n || rec->fid_rss_err.n || rec->fidelity_reason))
		return rec;
	for (size_t i = 0; i < t->nallocs; i++) /* the replayer sets them on the recorded allocator's runs */
		if (t->allocs[i].fid_time_err.n || t->allocs[i].fid_rss_err.n || t->allocs[i].fidelity_reason)
			return &t->allocs[i];
	return rec;
}

const ar_res_alloc_t *ar_res_find(const ar_res_trace_t *t, const char *name)
{
	for (size_t i = 0; i < t->nallocs; i++)
		if (!strcmp(t->allocs[i].name, name))
			return &t->allocs[i];
	return NULL;
}

static void free_alloc(ar_res_alloc_t *a)
{
	for (size_t k = 0; k < a->nfails; k++) {
		free(a->fails[k].status);
		free(a->fails[k].reason);
	}
	for (size_t k = 0; k < a->ncounters; k++) {
		free(a->counters[k].name);
		free(a->counters[k].reason);
	}
	for (size_t k = 0; k < a->nruns; k++) {
		free(a->runs[k].run_uuid);
		free(a->runs[k].status);
		free(a->runs[k].reason);
		free(a->runs[k].library_path);
		free(a->runs[k].prediction_reason);
		free(a->runs[k].fidelity_reason);
	}
	free(a->runs);
	free(a->fails);
	free(a->counters);
	free(a->ok_runs);
	free(a->name);
	free(a->version);
}

void ar_res_trace_free(ar_res_trace_t *t)
{
	for (size_t j = 0; j < t->nallocs; j++)
		free_alloc(&t->allocs[j]);
	free(t->allocs);
	free(t->sha256);
	free(t->name);
	free(t->program);
	free(t->status);
	free(t->host);
	free(t->machine);
	free(t->scenario);
	free(t->recorded_allocator);
	free(t->recorded_library);
	free(t->recorded_version);
	free(t->recorded_reason);
	free(t->baseline_wanted);
	free(t->baseline);
	free(t->baseline_note);
	memset(t, 0, sizeof *t);
}
