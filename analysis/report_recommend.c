/*
 * report_recommend.c — `allocreport --recommend`: per trace (x machine), the
 * best allocator for speed, for memory, for tail latency (median p99 of all
 * calls) and the best balance of the three, each with its evidence: the
 * medians, their min-max ranges over repetitions, the ratio to the trace's
 * baseline (what the program ran on: results/ar_results.h) and to the
 * runner-up.
 *
 * Speed and memory are ranked by the predicted program time and predicted
 * process peak RSS when every candidate has them (the replayer's prediction
 * for the program, runs.predicted_*), else by the replay's median ops/s and
 * peak heap RSS; the metric of each pick names which.
 *
 * The verdict (results/compare.c, ar_res_significance: a 5 % effect floor
 * and a bootstrap interval of the ratio of medians) compares the leader —
 * the candidate with the best median — with the baseline: when the
 * difference is not meaningful the pick is the baseline ("no meaningful
 * difference": stay on what you run); when it is, the pick is the leader,
 * with a warning if the runner-up is not meaningfully different from it.
 * When the leader is the baseline, it is compared with the runner-up. A
 * side with a single repetition leaves the verdict undecided: the pick is
 * the leader, marked so. Allocators with a failed run on the trace are not
 * picked (unless every allocator failed somewhere).
 *
 * Cautions name patterns known to hurt an allocator, read from the trace and
 * the database, never assumed: long-lived objects among short-lived churn for
 * arena (live bytes of the trace's second half stay high while it allocates
 * many times its peak block count; with the measured fragmentation), several
 * threads on freelist's single lock (trace threads; measured speed and p99,
 * and its scaling when the scenario ran at other thread counts), a live set
 * that shrinks for pool (which never returns chunks; measured final heap).
 *
 * Balance score: the geometric mean of speed relative to the fastest, peak
 * heap relative to the smallest (a heap below one page counts as one page)
 * and p99 relative to the lowest; 1.0 would be best at all three.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_escape.h"
#include "report_model.h"

enum { G_SPEED, G_MEMORY, G_TAIL, G_BALANCE };

static const char *const goal_name[AR_REP_GOALS] = {"speed", "memory", "tail latency", "balance"};

static void push(char ***v, size_t *n, char *s)
{
	*v = realloc(*v, (*n + 1) * sizeof **v);
	if (!*v)
		exit(2);
	(*v)[(*n)++] = s;
}

static double page_floor(double b) { return b < 4096 ? 4096 : b; }

/* What the picks of one trace compare: predicted or replay figures, and the
 * bests over the candidates for the balance score. */
typedef struct ctx {
	int pred_time, pred_rss; /* rank speed / memory by the predicted figures */
	double speed, heap, p99; /* bests: highest ops/s or lowest predicted time, lowest heap, lowest p99 */
} ctx_t;

static int higher_better(const ctx_t *c, int goal)
{
	return goal == G_BALANCE || (goal == G_SPEED && !c->pred_time);
}

static const char *metric_of(const ctx_t *c, int goal)
{
	switch (goal) {
	case G_SPEED: return c->pred_time ? "predicted_time_ns" : "ops_per_sec";
	case G_MEMORY: return c->pred_rss ? "predicted_peak_rss_bytes" : "peak_heap_rss_bytes";
	case G_TAIL: return "p99_ns";
	default: return "balance_score";
	}
}

/* The run figure (AR_RES_*) a goal other than balance compares. */
static int fig_of(const ctx_t *c, int goal)
{
	return goal == G_SPEED ? (c->pred_time ? AR_RES_PRED_TIME : AR_RES_OPS)
	     : goal == G_MEMORY ? (c->pred_rss ? AR_RES_PRED_RSS : AR_RES_HEAP)
			       : AR_RES_P99;
}

static double balance(const ctx_t *c, double speed, double heap, double p99)
{
	if (!(speed > 0) || isnan(heap) || !(p99 > 0))
		return NAN;
	double s = c->pred_time ? c->speed / speed : speed / c->speed;
	return cbrt(s * (page_floor(c->heap) / page_floor(heap)) * (c->p99 / p99));
}

static ar_res_stat_t stat_of(const ar_res_alloc_t *a, int fig)
{
	switch (fig) {
	case AR_RES_PRED_TIME: return a->pred_time_ns;
	case AR_RES_OPS: return a->ops_per_sec;
	case AR_RES_PRED_RSS: return a->pred_rss_bytes;
	case AR_RES_HEAP: return a->heap_bytes;
	default: return a->p99_ns;
	}
}

/* The compared figure of a as a stat (median, min, max); for balance the
 * score of the medians, and of the worst and best figures. */
static ar_res_stat_t figure(const ar_res_alloc_t *a, int goal, const ctx_t *c)
{
	if (goal != G_BALANCE)
		return stat_of(a, fig_of(c, goal));
	ar_res_stat_t sp = stat_of(a, fig_of(c, G_SPEED)), hp = stat_of(a, fig_of(c, G_MEMORY));
	int n = sp.n < a->p99_ns.n ? sp.n : a->p99_ns.n;
	double worst_speed = c->pred_time ? sp.max : sp.min, best_speed = c->pred_time ? sp.min : sp.max;
	ar_res_stat_t s = {balance(c, sp.med, hp.med, a->p99_ns.med), balance(c, worst_speed, hp.max, a->p99_ns.max),
			   balance(c, best_speed, hp.min, a->p99_ns.min), n};
	return s;
}

/* The compared figure of each ok run of a (NANs left out) into v (room for
 * a->nruns); for balance each run's own score. Returns how many. */
static size_t run_values(const ar_res_alloc_t *a, int goal, const ctx_t *c, double *v)
{
	if (goal != G_BALANCE)
		return ar_res_values(a, fig_of(c, goal), v);
	size_t k = 0;
	for (size_t i = 0; i < a->nruns; i++) {
		const ar_res_run_t *r = &a->runs[i];
		if (!r->status || strcmp(r->status, "ok"))
			continue;
		double b = balance(c, r->fig[fig_of(c, G_SPEED)], r->fig[fig_of(c, G_MEMORY)], r->fig[AR_RES_P99]);
		if (!isnan(b))
			v[k++] = b;
	}
	return k;
}

static int better(const ctx_t *c, int goal, double x, double y)
{
	if (isnan(y))
		return !isnan(x);
	if (isnan(x))
		return 0;
	return higher_better(c, goal) ? x > y : x < y;
}

static const char *fmt_fig(char *buf, size_t n, const ctx_t *c, int goal, double v)
{
	char t[32];
	switch (goal) {
	case G_SPEED:
		if (c->pred_time)
			ar_res_fmt_ns(buf, n, v);
		else
			snprintf(buf, n, "%s ops/s", ar_res_fmt_num(t, sizeof t, v));
		break;
	case G_MEMORY: ar_res_fmt_bytes(buf, n, v); break;
	case G_TAIL: ar_res_fmt_ns(buf, n, v); break;
	default: snprintf(buf, n, "%.2f", v);
	}
	return buf;
}

static char *describe_range(const ctx_t *c, int goal, const ar_res_stat_t *s)
{
	char a[40], b[40];
	if (s->n < 2)
		return ar_res_strf("1 run, no spread");
	double sp = ar_res_spread(s);
	if (isnan(sp))
		return ar_res_strf("%s..%s over %d runs", fmt_fig(a, sizeof a, c, goal, s->min),
				   fmt_fig(b, sizeof b, c, goal, s->max), s->n);
	return ar_res_strf("%s..%s over %d runs, spread %.1f%%", fmt_fig(a, sizeof a, c, goal, s->min),
			   fmt_fig(b, sizeof b, c, goal, s->max), s->n, 100 * sp);
}

static void append(char **ev, char *more)
{
	char *n = ar_res_strf("%s%s", *ev, more);
	free(*ev);
	free(more);
	*ev = n;
}

/* The verdict of a against b on goal. */
static ar_res_verdict_t verdict(const ar_res_alloc_t *a, const ar_res_alloc_t *b, int goal, const ctx_t *c)
{
	double *va = ar_res_xcalloc(a->nruns + b->nruns, sizeof *va), *vb = va + a->nruns;
	size_t na = run_values(a, goal, c, va), nb = run_values(b, goal, c, vb);
	ar_res_verdict_t v = ar_res_significance(va, na, vb, nb, higher_better(c, goal));
	free(va);
	return v;
}

/* The verdict as a sentence: "X is 1.31x better than Y (95 % interval ...)". */
static char *say_verdict(const ar_res_verdict_t *v, const char *a, const char *b)
{
	if (v->sig == AR_RES_SIG_SINGLE)
		return ar_res_strf("undecided: %s has a single successful repetition, so no verdict is possible; "
				   "rerun allocreplay with --repeat 5",
				   v->na < 2 ? a : b);
	if (v->sig == AR_RES_SIG_SMALL)
		return ar_res_strf("no meaningful difference: %s is %.3fx %s, within the %.0f%% floor below which a "
				   "difference is never meaningful",
				   a, v->ratio, b, 100 * AR_RES_EFFECT_FLOOR);
	return ar_res_strf("%s%s is %.2fx %s (95%% bootstrap interval %.2f..%.2f over %d and %d repetitions%s)",
			   v->sig == AR_RES_SIG_NOISE ? "no meaningful difference: " : "", a, v->ratio, b, v->lo, v->hi,
			   v->na, v->nb,
			   v->sig == AR_RES_SIG_NOISE ? ", which reaches within the 5% floor" : ", outside the 5% floor");
}

static void pick(ar_rep_pick_t *p, int goal, const ar_res_alloc_t **cand, size_t nc, const ctx_t *c,
		 const ar_res_trace_t *t)
{
	memset(p, 0, sizeof *p);
	p->goal = goal_name[goal];
	p->metric = metric_of(c, goal);
	p->best_value = p->second_value = NAN;
	p->verdict = "undecided";
	p->interval_lo = p->interval_hi = NAN;
	const ar_res_alloc_t *base = NULL;
	for (size_t i = 0; i < nc; i++) {
		double v = figure(cand[i], goal, c).med;
		if (t->baseline && !strcmp(cand[i]->name, t->baseline) && !isnan(v))
			base = cand[i];
		if (better(c, goal, v, p->best_value)) {
			p->second = p->best;
			p->second_value = p->best_value;
			p->best = cand[i];
			p->best_value = v;
		} else if (better(c, goal, v, p->second_value)) {
			p->second = cand[i];
			p->second_value = v;
		}
	}
	if (!p->best)
		return;
	p->leader = p->best;
	p->baseline = base;
	/* the leader against the baseline, or (leader = baseline, or none) the runner-up */
	const ar_res_alloc_t *other = base && base != p->best ? base : p->second;
	ar_res_verdict_t v = {AR_RES_SIG_SINGLE, NAN, NAN, NAN, 0, 0};
	if (other) {
		v = verdict(p->best, other, goal, c);
		p->interval_lo = v.lo;
		p->interval_hi = v.hi;
		p->verdict = v.sig == AR_RES_SIG_YES ? "meaningful"
			   : v.sig == AR_RES_SIG_SINGLE ? "undecided" : "no meaningful difference";
	}
	if (other && other == base && (v.sig == AR_RES_SIG_SMALL || v.sig == AR_RES_SIG_NOISE)) {
		/* stay on what you run: the baseline is the pick, the leader its runner-up */
		p->second = p->best;
		p->second_value = p->best_value;
		p->best = base;
		p->best_value = figure(base, goal, c).med;
	}
	p->significant = v.sig == AR_RES_SIG_YES;

	ar_res_stat_t sb = figure(p->best, goal, c);
	char v1[48], v2[48], gv[48];
	char *rb = describe_range(c, goal, &sb);
	const char *what = goal == G_BALANCE		   ? "score "
			   : goal == G_SPEED && c->pred_time  ? "predicted program time "
			   : goal == G_MEMORY && c->pred_rss ? "predicted peak RSS "
							     : "";
	char *ev = ar_res_strf("%s: median %s%s (%s)", p->best->name, what, fmt_fig(v1, sizeof v1, c, goal, sb.med), rb);
	free(rb);
	if (base && p->best != base && goal != G_BALANCE) {
		double r = goal == G_SPEED ? (c->pred_time ? p->best->pred_time_vs_baseline : p->best->speed_vs_baseline)
			 : goal == G_MEMORY ? (c->pred_rss ? p->best->pred_rss_vs_baseline : p->best->heap_vs_baseline)
					    : p->best_value / base->p99_ns.med;
		if (!isnan(r))
			append(&ev, ar_res_strf(", %.2fx %s's %s", r, base->name,
						fmt_fig(gv, sizeof gv, c, goal, figure(base, goal, c).med)));
	}
	if (goal == G_MEMORY && !isnan(p->best->frag.med))
		append(&ev, ar_res_strf("; fragmentation %.2f (peak heap / peak live bytes %s)", p->best->frag.med,
					ar_res_fmt_bytes(v2, sizeof v2, (double)t->peak_live_bytes)));
	if (goal == G_TAIL)
		append(&ev, ar_res_strf("; its p99.9 %s, max %s", ar_res_fmt_ns(v1, sizeof v1, p->best->p999_ns.med),
					ar_res_fmt_ns(v2, sizeof v2, p->best->max_ns.med)));
	if (goal == G_BALANCE) {
		ar_res_stat_t sp = stat_of(p->best, fig_of(c, G_SPEED));
		double s = c->pred_time ? c->speed / sp.med : sp.med / c->speed;
		append(&ev, ar_res_strf("; %.2f of the fastest %s, %.2f of the smallest %s, %.2f of the lowest p99", s,
					c->pred_time ? "predicted time" : "ops/s",
					page_floor(c->heap) / page_floor(stat_of(p->best, fig_of(c, G_MEMORY)).med),
					c->pred_rss ? "predicted peak RSS" : "heap", c->p99 / p->best->p99_ns.med));
	}
	if (!p->second) {
		append(&ev, ar_res_strdup("; the only allocator with successful runs on this trace"));
		p->verdict = "undecided";
		p->evidence = ev;
		return;
	}
	ar_res_stat_t ss = figure(p->second, goal, c);
	double rel = higher_better(c, goal) ? sb.med / ss.med : ss.med / sb.med;
	char *rs = describe_range(c, goal, &ss);
	const char *word = goal == G_SPEED ? "faster" : goal == G_BALANCE ? "the score" : "smaller";
	if (p->best != p->leader) /* the baseline kept: its runner-up is the leader */
		append(&ev, ar_res_strf("; best median %s %s (%s): %.3fx %s than %s, not a meaningful difference",
					p->second->name, fmt_fig(v2, sizeof v2, c, goal, ss.med), rs, 1 / rel, word,
					p->best->name));
	else
		append(&ev, ar_res_strf("; runner-up %s %s (%s): %s is %.2fx %s", p->second->name,
					fmt_fig(v2, sizeof v2, c, goal, ss.med), rs, p->best->name, rel, word));
	free(rs);
	p->evidence = ev;

	const char *bn = p->leader->name, *on = other->name;
	char *said = say_verdict(&v, bn, on);
	if (p->best != p->leader)
		push(&p->warnings, &p->nwarnings,
		     ar_res_strf("%s; stay on %s, the baseline", said, p->best->name));
	else if (v.sig != AR_RES_SIG_YES)
		push(&p->warnings, &p->nwarnings, ar_res_strdup(said));
	else if (other == base && p->second != base) {
		/* meaningful against the baseline; is it against the runner-up? */
		ar_res_verdict_t v2nd = verdict(p->best, p->second, goal, c);
		if (v2nd.sig == AR_RES_SIG_SMALL || v2nd.sig == AR_RES_SIG_NOISE) {
			char *s2 = say_verdict(&v2nd, p->best->name, p->second->name);
			push(&p->warnings, &p->nwarnings,
			     ar_res_strf("%s and %s are both meaningfully better than %s, but between them: %s",
					 p->best->name, p->second->name, base->name, s2));
			free(s2);
		}
	}
	free(said);
}

/* Facts about the trace's live set from an ok run's RSS timeline (the
 * live_bytes column is the trace's own, equal in every run). The last 10 %
 * of the events are left out where they could be a program's teardown. */
typedef struct live_facts {
	int known;
	double hold_share; /* median live bytes over events 50-90 % / peak live bytes */
	double dip_share;  /* lowest live bytes after the peak, before 80 % of the events, / peak */
	double churn;      /* blocks allocated / peak live blocks */
} live_facts_t;

static live_facts_t live_facts(const ar_res_set_t *rep, const ar_res_trace_t *t)
{
	live_facts_t lf = {0, NAN, NAN, NAN};
	int64_t run = -1;
	for (size_t i = 0; i < t->nallocs && run < 0; i++)
		if (t->allocs[i].n_ok_runs)
			run = t->allocs[i].ok_runs[0];
	size_t n = 0;
	ar_res_sample_t *s = run >= 0 ? ar_res_timeline(rep, run, &n) : NULL;
	double end = (double)t->events;
	if (n >= 4 && t->peak_live_bytes > 0 && end > 0) {
		double *mid = ar_res_xcalloc(n, sizeof *mid), peak = -1, dip = INFINITY;
		size_t nm = 0, at_peak = 0;
		for (size_t i = 0; i < n; i++) {
			if (s[i].event >= 0.5 * end && s[i].event <= 0.9 * end)
				mid[nm++] = s[i].live_bytes;
			if (s[i].live_bytes > peak)
				peak = s[i].live_bytes, at_peak = i;
		}
		for (size_t i = at_peak; i < n && s[i].event <= 0.8 * end; i++)
			dip = fmin(dip, s[i].live_bytes);
		if (nm) {
			lf.known = 1;
			lf.hold_share = ar_res_stat(mid, nm).med / (double)t->peak_live_bytes;
			lf.dip_share = isinf(dip) ? 1 : dip / (double)t->peak_live_bytes;
			lf.churn = t->peak_live_blocks ? (double)t->trace_allocs / (double)t->peak_live_blocks : NAN;
		}
		free(mid);
	}
	free(s);
	return lf;
}

static double others_frag(const ar_res_trace_t *t, const ar_res_alloc_t *not)
{
	double v[64];
	size_t n = 0;
	for (size_t i = 0; i < t->nallocs && n < 64; i++)
		if (&t->allocs[i] != not)
			v[n++] = t->allocs[i].frag.med;
	return ar_res_stat(v, n).med;
}

static const ar_res_series_t *series_of(const ar_res_set_t *rep, const ar_res_trace_t *t)
{
	for (size_t i = 0; i < rep->nseries; i++)
		for (size_t p = 0; p < rep->series[i].npoints; p++)
			if (rep->series[i].points[p] == t)
				return &rep->series[i];
	return NULL;
}

static void cautions(const ar_res_set_t *rep, const ar_res_trace_t *t, ar_rep_advice_t *ad)
{
	live_facts_t lf = live_facts(rep, t);
	const ar_res_alloc_t *g = t->baseline ? ar_res_find(t, t->baseline) : NULL;
	const char *gn = g ? g->name : "no baseline";
	const ar_res_alloc_t *a = ar_res_find(t, "arena");
	if (a && a->runs_ok) {
		double of = others_frag(t, a);
		int long_lived = lf.known && lf.hold_share >= 0.25 && lf.churn >= 4;
		int measured = a->frag.med >= 1.5 * of;
		char *m = ar_res_strf("measured: arena fragmentation %.2f against %.2f, the median of the other "
				      "allocators%s",
				      a->frag.med, of, measured ? "" : " (small here)");
		if (long_lived)
			push(&ad->cautions, &ad->ncautions,
			     ar_res_strf("arena: long-lived objects among short-lived ones (through its second half "
					 "the trace holds a median %.0f%% of its peak live bytes while allocating %.1fx "
					 "its peak live block count in all); an arena recycles a chunk only when its last "
					 "object dies, so long-lived objects pin chunks; %s",
					 100 * lf.hold_share, lf.churn, m));
		else if (measured)
			push(&ad->cautions, &ad->ncautions,
			     ar_res_strf("arena: objects of different lifetimes share its chunks; %s", m));
		free(m);
	}
	const ar_res_alloc_t *fl = ar_res_find(t, "freelist");
	if (fl && fl->runs_ok && t->threads >= 2) {
		char p1[32], p2[32];
		char o1[32];
		char *c = ar_res_strf("freelist: %s threads (%lld) on one global lock, so every malloc and free "
				      "is serialised; measured here: %s ops/s (%.2fx %s's), p99 %s (%s %s)",
				      t->threads >= 4 ? "many" : "several", (long long)t->threads,
				      ar_res_fmt_num(o1, sizeof o1, fl->ops_per_sec.med), fl->speed_vs_baseline, gn,
				      ar_res_fmt_ns(p1, sizeof p1, fl->p99_ns.med), gn,
				      ar_res_fmt_ns(p2, sizeof p2, g ? g->p99_ns.med : NAN));
		const ar_res_series_t *s = series_of(rep, t);
		if (s) {
			const ar_res_alloc_t *f0 = ar_res_find(s->points[0], "freelist");
			if (f0 && !isnan(f0->speed_vs_baseline)) {
				char *c2 = ar_res_strf("%s; the same scenario at %lld thread(s): %.2fx %s", c,
						       (long long)s->points[0]->threads, f0->speed_vs_baseline,
						       s->points[0]->baseline ? s->points[0]->baseline : "-");
				free(c);
				c = c2;
			}
		}
		push(&ad->cautions, &ad->ncautions, c);
	}
	const ar_res_alloc_t *po = ar_res_find(t, "pool");
	if (po && po->runs_ok && lf.known && lf.dip_share <= 0.5) {
		char b1[32], b2[32];
		push(&ad->cautions, &ad->ncautions,
		     ar_res_strf("pool: the live set falls to %.0f%% of its peak well before the end of the trace, "
				 "and pool never returns chunks to the system; measured heap RSS after the replay: "
				 "pool %s, %s %s",
				 100 * lf.dip_share, ar_res_fmt_bytes(b1, sizeof b1, po->final_heap_bytes.med), gn,
				 ar_res_fmt_bytes(b2, sizeof b2, g ? g->final_heap_bytes.med : NAN)));
	}
	int max_ok = 0;
	for (size_t i = 0; i < t->nallocs; i++) {
		const ar_res_alloc_t *x = &t->allocs[i];
		if (x->runs_ok > max_ok)
			max_ok = x->runs_ok;
		if (!x->nfails)
			continue;
		const ar_res_fail_t *f0 = &x->fails[0];
		push(&ad->cautions, &ad->ncautions,
		     ar_res_strf("%s: %zu of %d runs failed (%s: %s); not recommended for this trace", x->name,
				 x->nfails, x->runs_total, f0->status, f0->reason ? f0->reason : "no reason stored"));
	}
	if (max_ok > 0 && max_ok < 3)
		push(&ad->cautions, &ad->ncautions,
		     ar_res_strf("every allocator has %d successful repetition(s) or fewer: ranges are rough; "
				 "allocreplay --repeat 5 gives firmer ones",
				 max_ok));
}

void ar_rep_advise(const ar_res_set_t *rep, const ar_res_trace_t *t, ar_rep_advice_t *ad)
{
	memset(ad, 0, sizeof *ad);
	ad->trace = t;
	const ar_res_alloc_t **cand = ar_res_xcalloc(t->nallocs, sizeof *cand);
	size_t nc = 0;
	for (int pass = 0; pass < 2 && !nc; pass++) /* pass 1: every failure excluded */
		for (size_t i = 0; i < t->nallocs; i++)
			if (t->allocs[i].runs_ok && (pass || !t->allocs[i].nfails))
				cand[nc++] = &t->allocs[i];
	/* predicted figures rank speed / memory only when every candidate has them */
	ctx_t c = {nc > 0, nc > 0, NAN, NAN, NAN};
	for (size_t i = 0; i < nc; i++) {
		c.pred_time &= cand[i]->pred_time_ns.n > 0;
		c.pred_rss &= cand[i]->pred_rss_bytes.n > 0;
	}
	for (size_t i = 0; i < nc; i++) {
		if (better(&c, G_SPEED, stat_of(cand[i], fig_of(&c, G_SPEED)).med, c.speed))
			c.speed = stat_of(cand[i], fig_of(&c, G_SPEED)).med;
		if (better(&c, G_MEMORY, stat_of(cand[i], fig_of(&c, G_MEMORY)).med, c.heap))
			c.heap = stat_of(cand[i], fig_of(&c, G_MEMORY)).med;
		if (better(&c, G_TAIL, cand[i]->p99_ns.med, c.p99))
			c.p99 = cand[i]->p99_ns.med;
	}
	for (int g = 0; g < AR_REP_GOALS; g++)
		pick(&ad->picks[g], g, cand, nc, &c, t);
	free(cand);
	cautions(rep, t, ad);
	/* A caution about the allocator picked for a goal travels with the pick. */
	for (int g = 0; g < AR_REP_GOALS; g++) {
		ar_rep_pick_t *p = &ad->picks[g];
		size_t nl = p->best ? strlen(p->best->name) : 0;
		for (size_t k = 0; p->best && k < ad->ncautions; k++)
			if (!strncmp(ad->cautions[k], p->best->name, nl) && ad->cautions[k][nl] == ':')
				push(&p->warnings, &p->nwarnings, ar_res_strdup(ad->cautions[k]));
	}
}

void ar_rep_advice_free(ar_rep_advice_t *ad)
{
	for (int g = 0; g < AR_REP_GOALS; g++) {
		free(ad->picks[g].evidence);
		for (size_t k = 0; k < ad->picks[g].nwarnings; k++)
			free(ad->picks[g].warnings[k]);
		free(ad->picks[g].warnings);
	}
	for (size_t k = 0; k < ad->ncautions; k++)
		free(ad->cautions[k]);
	free(ad->cautions);
}

/* What the table and Markdown print after a pick's name: nothing when
 * meaningful, else the verdict. */
static const char *verdict_tag(const ar_rep_pick_t *p)
{
	if (!p->best || p->significant)
		return "";
	if (!strcmp(p->verdict, "undecided"))
		return " (undecided: no verdict possible)";
	return p->best == p->baseline && p->best != p->leader ? " (no meaningful difference: stay on the baseline)"
							      : " (no meaningful difference)";
}

/* allocreplay --route runs (docs/RESULTS.md, "Routing"), named BASE+...:
 * each against its base allocator alone on the same trace, Berger-style —
 * the time gained and the memory it cost — from the replay's ops/s and
 * peak heap RSS (not the predictions: the question is about the heap
 * calls), with the verdict of the significance rule. Table and Markdown. */
static void print_routes(FILE *f, const ar_res_trace_t *t, enum ar_res_format fmt)
{
	const ctx_t c = {0, 0, NAN, NAN, NAN};
	int shown = 0;
	for (size_t i = 0; i < t->nallocs; i++) {
		const ar_res_alloc_t *r = &t->allocs[i], *b = NULL;
		const char *plus = strchr(r->name, '+');
		for (size_t k = 0; plus && r->runs_ok && k < t->nallocs; k++)
			if (t->allocs[k].runs_ok && strlen(t->allocs[k].name) == (size_t)(plus - r->name) &&
			    !strncmp(t->allocs[k].name, r->name, (size_t)(plus - r->name)))
				b = &t->allocs[k];
		if (!b)
			continue;
		ar_res_verdict_t vs = verdict(r, b, G_SPEED, &c), vm = verdict(r, b, G_MEMORY, &c);
		char *ss = say_verdict(&vs, r->name, b->name), *sm = say_verdict(&vm, r->name, b->name);
		char *line = ar_res_strf("%s vs %s alone: time gain %+.1f%% (median ops/s %.3g vs %.3g), memory cost "
					 "%+.1f%% (median peak heap %.0f vs %.0f bytes); speed: %s; memory: %s",
					 r->name, b->name, 100 * (r->ops_per_sec.med / b->ops_per_sec.med - 1),
					 r->ops_per_sec.med, b->ops_per_sec.med,
					 100 * (r->heap_bytes.med / b->heap_bytes.med - 1), r->heap_bytes.med,
					 b->heap_bytes.med, ss, sm);
		if (fmt == AR_RES_TABLE) {
			fputs(shown ? "      " : "  routes (allocreplay --route):\n      ", f);
			ar_esc_term(f, line);
			fputc('\n', f);
		} else {
			fputs(shown ? "- route: " : "\n- route: ", f);
			ar_esc_md(f, line);
			fputc('\n', f);
		}
		shown++;
		free(ss);
		free(sm);
		free(line);
	}
}

static void print_one(FILE *f, const ar_res_set_t *rep, const ar_rep_advice_t *ad, enum ar_res_format fmt, int first)
{
	const ar_res_trace_t *t = ad->trace;
	/* Names, evidence and cautions quote the database: escaped (ar_escape.h). */
	if (fmt == AR_RES_TABLE) {
		char sha[13];
		snprintf(sha, sizeof sha, "%s", t->sha256);
		fputs("trace ", f);
		ar_esc_term(f, t->name);
		fputs("  sha256 ", f);
		ar_esc_term(f, sha);
		fprintf(f, "  %lld thread(s)%s", (long long)t->threads, rep->nhosts > 1 ? "  machine " : "");
		ar_esc_term(f, rep->nhosts > 1 ? t->machine : NULL);
		fputs("  baseline ", f);
		ar_esc_term(f, t->baseline ? t->baseline : "(none)");
		fprintf(f, "%s\n", t->baseline_is_recorded ? " (recorded)" : "");
		for (int g = 0; g < AR_REP_GOALS; g++) {
			const ar_rep_pick_t *p = &ad->picks[g];
			fprintf(f, "  %-13s ", p->goal);
			ar_esc_term(f, p->best ? p->best->name : "(no successful run)");
			fprintf(f, "%s\n", verdict_tag(p));
			if (p->evidence) {
				fputs("      ", f);
				ar_esc_term(f, p->evidence);
				fputc('\n', f);
			}
			for (size_t k = 0; k < p->nwarnings; k++) {
				fputs("      ! ", f);
				ar_esc_term(f, p->warnings[k]);
				fputc('\n', f);
			}
		}
		if (ad->ncautions)
			fprintf(f, "  cautions:\n");
		for (size_t k = 0; k < ad->ncautions; k++) {
			fputs("      ! ", f);
			ar_esc_term(f, ad->cautions[k]);
			fputc('\n', f);
		}
		print_routes(f, t, fmt);
		fputc('\n', f);
	} else if (fmt == AR_RES_MARKDOWN) {
		fputs("### ", f);
		ar_esc_md(f, t->name);
		fprintf(f, " (%lld thread(s), baseline ", (long long)t->threads);
		ar_esc_md(f, t->baseline ? t->baseline : "none");
		fprintf(f, "%s)\n\n", t->baseline_is_recorded ? ", recorded" : "");
		for (int g = 0; g < AR_REP_GOALS; g++) {
			const ar_rep_pick_t *p = &ad->picks[g];
			fprintf(f, "- **%s: ", p->goal);
			ar_esc_md(f, p->best ? p->best->name : "(no successful run)");
			fprintf(f, "**%s", verdict_tag(p));
			if (p->evidence) {
				fputs(" — ", f);
				ar_esc_md(f, p->evidence);
			}
			fputc('\n', f);
			for (size_t k = 0; k < p->nwarnings; k++) {
				fputs("  - warning: ", f);
				ar_esc_md(f, p->warnings[k]);
				fputc('\n', f);
			}
		}
		for (size_t k = 0; k < ad->ncautions; k++) {
			fputs(k ? "- caution: " : "\n- caution: ", f);
			ar_esc_md(f, ad->cautions[k]);
			fputc('\n', f);
		}
		print_routes(f, t, fmt);
		fputc('\n', f);
	} else if (fmt == AR_RES_CSV) {
		for (int g = 0; g < AR_REP_GOALS; g++) {
			const ar_rep_pick_t *p = &ad->picks[g];
			ar_esc_csv(f, t->sha256);
			fputc(',', f);
			ar_esc_csv(f, t->name);
			fputc(',', f);
			ar_esc_csv(f, t->host);
			fprintf(f, ",%s,%s,", p->goal, p->metric);
			ar_esc_csv(f, p->best ? p->best->name : NULL);
			fputc(',', f);
			if (!isnan(p->best_value))
				ar_res_put_json_num(f, p->best_value);
			fputc(',', f);
			ar_esc_csv(f, p->second ? p->second->name : NULL);
			fputc(',', f);
			if (!isnan(p->second_value))
				ar_res_put_json_num(f, p->second_value);
			fprintf(f, ",%d,%s,", p->significant, p->verdict);
			ar_esc_csv(f, t->baseline);
			fputc(',', f);
			ar_esc_csv(f, p->leader ? p->leader->name : NULL);
			fputc(',', f);
			if (!isnan(p->interval_lo))
				ar_res_put_json_num(f, p->interval_lo);
			fputc(',', f);
			if (!isnan(p->interval_hi))
				ar_res_put_json_num(f, p->interval_hi);
			fputc(',', f);
			ar_esc_csv(f, p->evidence);
			fputc(',', f);
			char *w = ar_res_strdup("");
			for (size_t k = 0; k < p->nwarnings; k++) {
				char *n = ar_res_strf("%s%s%s", w, k ? " | " : "", p->warnings[k]);
				free(w);
				w = n;
			}
			ar_esc_csv(f, w);
			free(w);
			fputc(',', f); /* last: columns are only ever added at the end */
			ar_esc_csv(f, t->machine);
			fputc('\n', f);
		}
	} else {
		fputs(first ? "  {\"sha256\": " : ",\n  {\"sha256\": ", f);
		ar_esc_json(f, t->sha256);
		fputs(", \"name\": ", f);
		ar_esc_json(f, t->name);
		fputs(", \"host\": ", f);
		ar_esc_json(f, t->host);
		fputs(", \"machine\": ", f);
		ar_esc_json(f, t->machine);
		fprintf(f, ", \"threads\": %lld,\n   \"picks\": [", (long long)t->threads);
		for (int g = 0; g < AR_REP_GOALS; g++) {
			const ar_rep_pick_t *p = &ad->picks[g];
			fprintf(f, "%s\n    {\"goal\": \"%s\", \"metric\": \"%s\", \"allocator\": ", g ? "," : "", p->goal,
				p->metric);
			ar_esc_json(f, p->best ? p->best->name : NULL);
			fputs(", \"value\": ", f);
			ar_res_put_json_num(f, p->best_value);
			fputs(", \"runner_up\": ", f);
			ar_esc_json(f, p->second ? p->second->name : NULL);
			fputs(", \"runner_up_value\": ", f);
			ar_res_put_json_num(f, p->second_value);
			fprintf(f, ", \"significant\": %s, \"verdict\": \"%s\", \"baseline\": ",
				p->significant ? "true" : "false", p->verdict);
			ar_esc_json(f, t->baseline);
			fputs(", \"leader\": ", f);
			ar_esc_json(f, p->leader ? p->leader->name : NULL);
			fputs(", \"interval\": [", f);
			ar_res_put_json_num(f, p->interval_lo);
			fputs(", ", f);
			ar_res_put_json_num(f, p->interval_hi);
			fputs("],\n     \"evidence\": ", f);
			ar_esc_json(f, p->evidence);
			fputs(", \"warnings\": [", f);
			for (size_t k = 0; k < p->nwarnings; k++) {
				fputs(k ? ", " : "", f);
				ar_esc_json(f, p->warnings[k]);
			}
			fputs("]}", f);
		}
		fputs("],\n   \"cautions\": [", f);
		for (size_t k = 0; k < ad->ncautions; k++) {
			fputs(k ? ", " : "", f);
			ar_esc_json(f, ad->cautions[k]);
		}
		fputs("]}", f);
	}
}

void ar_rep_print_advice(FILE *f, const ar_res_set_t *rep, enum ar_res_format fmt)
{
	if (fmt == AR_RES_CSV)
		fputs("trace_sha256,trace_name,host,goal,metric,allocator,value,runner_up,runner_up_value,"
		      "significant,verdict,baseline,leader,interval_lo,interval_hi,evidence,warnings,machine\n",
		      f);
	else if (fmt == AR_RES_JSON)
		fprintf(f, "{\"format_version\": %d, \"recommendations\": [\n", AR_RES_FORMAT_VERSION);
	else if (fmt == AR_RES_MARKDOWN)
		fputs("## Recommendations\n\n", f);
	for (size_t i = 0; i < rep->ntraces; i++) {
		ar_rep_advice_t ad;
		ar_rep_advise(rep, &rep->traces[i], &ad);
		print_one(f, rep, &ad, fmt, i == 0);
		ar_rep_advice_free(&ad);
	}
	if (fmt == AR_RES_JSON)
		fputs("\n]}\n", f);
	else if (fmt == AR_RES_TABLE || fmt == AR_RES_MARKDOWN)
		fputs("Verdicts: the leader (best median) is compared with the baseline (what the program ran on; "
		      "the runner-up when the leader is the baseline). A difference below 5% is never meaningful; "
		      "above, the 95% bootstrap interval of the ratio of medians over the repetitions must stay "
		      "outside 1 +- 5%. No meaningful difference: the pick is the baseline (stay on what you run). "
		      "A single repetition: undecided. Speed and memory rank the predicted program time and peak "
		      "RSS when every allocator has them, else the replay's ops/s and peak heap. Balance = geometric "
		      "mean of speed relative to the fastest, peak heap relative to the smallest and p99 relative "
		      "to the lowest.\n",
		      f);
}
