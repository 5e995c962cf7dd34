/*
 * predict.c — from the replay of a trace to what the recorded program would
 * see under each allocator (issue 14 items 5 and 6; docs/FIDELITY.md).
 *
 * The model keeps everything the replay does not see and swaps only the
 * allocator's part:
 *
 *   predicted time(X)     = recorded CPU time - the recorder's own CPU time
 *                           + (replay CPU(X) - replay CPU(R))
 *   predicted peak RSS(X) = recorded peak RSS - the recorder's own memory
 *                           + (replay peak RSS(X) - replay peak RSS(R))
 *
 * where R is the allocator the program ran on when it was recorded and the
 * replay figures of R are medians over its successful repetitions. Program
 * time is CPU time (user + system, every thread): what an allocator changes;
 * a server's wall time is set by its clients, a batch program's by the
 * machine's load as much as by its allocator. The recorder's own CPU time
 * (its writer, measured, and its work inside the program's calls, sampled:
 * recorder/rec_cost.h) is 10-25 % of an allocation-heavy program's; left
 * in, it lengthened every prediction and pulled every predicted ratio
 * towards 1. Its indirect cost (the program's own code slowed by the
 * writer beside it) is not measured and stays in. The replay's CPU time is the
 * worker's over the replay phase (the heap calls, the harness around them,
 * page faults from touching, waits). The replay's peak RSS is the worker's
 * whole anonymous peak, so an allocator's fixed start-up footprint (its
 * arenas and caches before the first call) counts as well as its heap; the
 * recorder's own memory, which the recorded VmHWM includes, is taken out
 * (SPEC 6.10: its buffers, and since allocrr-rec 1.1 the libraries only it
 * loaded, half a MB or more that weighs on a program of a few MB). Why a
 * difference and not the replay's ratio: replay runs only the heap calls,
 * so the ratio of two replays weighs the allocator as if the program did
 * nothing else — the exaggeration issue 14 measured (1.5-4x). The program's
 * own work and its memory outside the heap (code, stacks, its own mmaps)
 * stay what the recording saw.
 *
 * Fidelity, for the runs of R only: how far replay is from the recorded
 * program on what it can reproduce. Peak RSS: (RSS when recording started
 * + replayed heap peak - recorded peak RSS) / recorded peak RSS. Duration:
 * not comparable (an unpaced replay skips the program's work between calls),
 * stored NULL with that reason.
 *
 * A run that already carries a prediction or a reason (read from a
 * database: allocreplay stored what it computed here) keeps it, so a report
 * shows what was stored; runs without one (allocreplay's own, in memory, or
 * a database from before schema 5) get one computed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ar_results.h"

/* Median over the ok runs of a of the run's CPU time (cpu) or peak RSS. */
static double median_of(const ar_res_alloc_t *a, int cpu)
{
	double *v = ar_res_xcalloc(a->nruns ? a->nruns : 1, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < a->nruns; i++) {
		const ar_res_run_t *r = &a->runs[i];
		double x = cpu ? r->cpu_ns : r->peak_rss_bytes;
		if (r->status && !strcmp(r->status, "ok") && !isnan(x))
			v[n++] = x;
	}
	double m = ar_res_stat(v, n).med;
	free(v);
	return m;
}

/* A recorded figure the trace really holds (0 is "not recorded": a
 * comparison built in memory starts zeroed). */
static int known(double x)
{
	return !isnan(x) && x > 0;
}

/* Why no time can be predicted for t (NULL: it can), and why no peak RSS
 * can (NULL: it can); both malloc'ed. */
static void reasons(const ar_res_trace_t *t, const ar_res_alloc_t *rec, double rec_cpu, double rec_rss,
		    char **no_time, char **no_rss)
{
	char *common = NULL;
	*no_time = *no_rss = NULL;
	if (!t->recorded_allocator)
		common = ar_res_strdup(t->recorded_reason ? t->recorded_reason
							  : "the trace does not say what the program ran on");
	else if (!rec || !rec->runs_ok)
		common = ar_res_strf("the recorded allocator (%s) has no successful replay of this trace",
				     t->recorded_allocator);
	if (common) {
		*no_time = common;
		*no_rss = ar_res_strdup(common);
		return;
	}
	if (!known(t->recorded_cpu_ns) || isnan(rec_cpu))
		*no_time = ar_res_strdup(!known(t->recorded_cpu_ns)
						 ? "the trace records no CPU time (recorded by an allocrr before the "
						   "PROCESS record had one, or not closed cleanly)"
						 : "the recorded allocator's replays report no CPU time");
	if (!known(t->recorded_peak_rss_bytes) || isnan(rec_rss))
		*no_rss = ar_res_strdup(!known(t->recorded_peak_rss_bytes)
						? (t->recorded_reason ? t->recorded_reason : "the trace records no peak RSS")
						: "the recorded allocator's replays report no peak RSS");
}

static int decided(const ar_res_run_t *r, int f1, int f2, const char *reason)
{
	return !isnan(r->fig[f1]) || !isnan(r->fig[f2]) || reason;
}

void ar_res_predict(ar_res_trace_t *t)
{
	const ar_res_alloc_t *rec = t->recorded_allocator ? ar_res_find(t, t->recorded_allocator) : NULL;
	double rec_cpu = rec ? median_of(rec, 1) : NAN, rec_rss = rec ? median_of(rec, 0) : NAN;
	char *no_time, *no_rss;
	reasons(t, rec, rec_cpu, rec_rss, &no_time, &no_rss);
	for (size_t k = 0; k < t->nallocs; k++) {
		ar_res_alloc_t *a = &t->allocs[k];
		for (size_t i = 0; i < a->nruns; i++) {
			ar_res_run_t *r = &a->runs[i];
			if (!r->status || strcmp(r->status, "ok"))
				continue;
			double heap = r->fig[AR_RES_HEAP];
			/* the recorder's share, unless a hostile figure would leave nothing */
			double program_peak = t->recorded_peak_rss_bytes;
			if (known(t->recorded_recorder_bytes) && t->recorded_recorder_bytes < program_peak)
				program_peak -= t->recorded_recorder_bytes;
			double program_cpu = t->recorded_cpu_ns;
			if (known(t->recorded_recorder_cpu_ns) && t->recorded_recorder_cpu_ns < program_cpu)
				program_cpu -= t->recorded_recorder_cpu_ns;
			if (!decided(r, AR_RES_PRED_TIME, AR_RES_PRED_RSS, r->prediction_reason)) {
				if (!no_time && !isnan(r->cpu_ns))
					r->fig[AR_RES_PRED_TIME] = program_cpu + (r->cpu_ns - rec_cpu);
				if (!no_rss && !isnan(r->peak_rss_bytes))
					r->fig[AR_RES_PRED_RSS] = program_peak + (r->peak_rss_bytes - rec_rss);
				const char *why = no_time ? no_time : no_rss;
				r->prediction_reason = why ? ar_res_strdup(why) : NULL;
			}
			if (a != rec || decided(r, AR_RES_FID_TIME, AR_RES_FID_RSS, r->fidelity_reason))
				continue;
			/* a window's replay allocates its pre-existing blocks
			 * again, which the start RSS already holds: counted once */
			double again = known(t->preexisting_bytes) ? t->preexisting_bytes : 0;
			if (!no_rss && !isnan(heap) && known(t->recorded_start_rss_bytes))
				r->fig[AR_RES_FID_RSS] =
					(t->recorded_start_rss_bytes + heap - again - program_peak) / program_peak;
			r->fidelity_reason = ar_res_strdup(
				"replay runs only the heap calls, not the program's work between "
				"them, so it cannot reproduce the recorded time, which anchors the "
				"predicted time instead");
		}
	}
	free(no_time);
	free(no_rss);
}
