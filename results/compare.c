/*
 * compare.c — the comparison, computed in one place: an allocator's runs
 * (ar_res_add_run) become medians with min-max ranges over its ok
 * repetitions, the spread of ops/s, and ratios of medians to the baseline
 * (ar_res_finish); ar_res_significance is the rule that says whether one
 * allocator's lead over another is more than run-to-run noise. allocreplay
 * and allocreport both go through here; the SQL view allocator_comparison
 * (results/sql/) computes the same medians with window functions.
 *
 * Invariants: only runs with status "ok" enter an aggregate; a NAN figure
 * (not measured) is left out of its median, never counted as 0; the median
 * of an even count is the mean of the two middle values.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ar_results.h"

const char *const ar_res_fig_names[AR_RES_NFIG] = {
	"ops_per_sec", "p50_ns", "p99_ns", "p999_ns", "max_ns", "peak_heap_rss_bytes",
	"final_heap_rss_bytes", "fragmentation", "minor_faults", "major_faults", "failed_allocs",
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

enum ar_res_sig ar_res_significance(const ar_res_stat_t *best, const ar_res_stat_t *second, double rel)
{
	if (best->n < 2 || second->n < 2)
		return AR_RES_SIG_SINGLE;
	if (fabs(rel - 1) < 0.01)
		return AR_RES_SIG_TIE;
	if (ar_res_overlap(best, second))
		return AR_RES_SIG_OVERLAP;
	return AR_RES_SIG_YES;
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
	a->speed_vs_glibc = a->heap_vs_glibc = NAN;
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
					   &a->minor_faults, &a->major_faults, &a->failed_allocs};
	double *v = ar_res_xcalloc(a->nruns, sizeof *v);
	for (int m = 0; m < AR_RES_NFIG; m++) {
		size_t k = 0;
		for (size_t i = 0; i < a->nruns; i++)
			if (a->runs[i].status && !strcmp(a->runs[i].status, "ok"))
				v[k++] = a->runs[i].fig[m];
		*dst[m] = ar_res_stat(v, k);
	}
	free(v);
}

void ar_res_finish(ar_res_trace_t *t)
{
	for (size_t i = 0; i < t->nallocs; i++)
		aggregate(&t->allocs[i]);
	const ar_res_alloc_t *g = ar_res_find(t, AR_RES_BASELINE);
	for (size_t i = 0; g && i < t->nallocs; i++) {
		ar_res_alloc_t *a = &t->allocs[i];
		a->speed_vs_glibc = g->ops_per_sec.med > 0 ? a->ops_per_sec.med / g->ops_per_sec.med : NAN;
		a->heap_vs_glibc = g->heap_bytes.med > 0 ? a->heap_bytes.med / g->heap_bytes.med : NAN;
	}
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
	free(t->scenario);
	memset(t, 0, sizeof *t);
}
