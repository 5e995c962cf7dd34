/*
 * report_recommend.c — `allocreport --recommend`: per trace (x host), the
 * best allocator for speed (median ops/s), for memory (median peak heap
 * RSS), for tail latency (median p99 of all calls) and the best balance of
 * the three, each with its evidence: the medians, their min-max ranges over
 * repetitions, the ratio to glibc and to the runner-up.
 *
 * A pick is "not significant" when the best and the runner-up's min-max
 * ranges overlap, when either has a single successful repetition (no spread
 * measured), or when they differ by less than 1 %. Allocators with a failed
 * run on the trace are not picked (unless every allocator failed somewhere).
 *
 * Cautions name patterns known to hurt an allocator, read from the trace and
 * the database, never assumed: long-lived objects among short-lived churn for
 * arena (live bytes of the trace's second half stay high while it allocates
 * many times its peak block count; with the measured fragmentation), several
 * threads on freelist's single lock (trace threads; measured speed and p99,
 * and its scaling when the scenario ran at other thread counts), a live set
 * that shrinks for pool (which never returns chunks; measured final heap).
 *
 * Balance score: the geometric mean of ops/s relative to the fastest, peak
 * heap relative to the smallest (a heap below one page counts as one page)
 * and p99 relative to the lowest; 1.0 would be best at all three.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_model.h"

enum { G_SPEED, G_MEMORY, G_TAIL, G_BALANCE };

static const char *const goal_name[AR_REP_GOALS] = {"speed", "memory", "tail latency", "balance"};
static const char *const goal_metric[AR_REP_GOALS] = {"ops_per_sec", "peak_heap_rss_bytes", "p99_ns",
						      "balance_score"};

static void push(char ***v, size_t *n, char *s)
{
	*v = realloc(*v, (*n + 1) * sizeof **v);
	if (!*v)
		exit(2);
	(*v)[(*n)++] = s;
}

static double page_floor(double b) { return b < 4096 ? 4096 : b; }

/* Bests over the candidates, for the balance score. */
typedef struct bests {
	double ops, heap, p99;
} bests_t;

static double balance(const bests_t *b, double ops, double heap, double p99)
{
	if (!(ops > 0) || isnan(heap) || !(p99 > 0))
		return NAN;
	return cbrt((ops / b->ops) * (page_floor(b->heap) / page_floor(heap)) * (b->p99 / p99));
}

/* The compared figure of a as a stat (median, min, max). */
static ar_res_stat_t figure(const ar_res_alloc_t *a, int goal, const bests_t *b)
{
	switch (goal) {
	case G_SPEED: return a->ops_per_sec;
	case G_MEMORY: return a->heap_bytes;
	case G_TAIL: return a->p99_ns;
	default: {
		int n = a->ops_per_sec.n < a->p99_ns.n ? a->ops_per_sec.n : a->p99_ns.n;
		ar_res_stat_t s = {balance(b, a->ops_per_sec.med, a->heap_bytes.med, a->p99_ns.med),
				   balance(b, a->ops_per_sec.min, a->heap_bytes.max, a->p99_ns.max),
				   balance(b, a->ops_per_sec.max, a->heap_bytes.min, a->p99_ns.min), n};
		return s;
	}
	}
}

static int better(int goal, double x, double y)
{
	if (isnan(y))
		return !isnan(x);
	if (isnan(x))
		return 0;
	return goal == G_SPEED || goal == G_BALANCE ? x > y : x < y;
}

static const char *fmt_fig(char *buf, size_t n, int goal, double v)
{
	char t[32];
	switch (goal) {
	case G_SPEED: snprintf(buf, n, "%s ops/s", ar_res_fmt_num(t, sizeof t, v)); break;
	case G_MEMORY: ar_res_fmt_bytes(buf, n, v); break;
	case G_TAIL: ar_res_fmt_ns(buf, n, v); break;
	default: snprintf(buf, n, "%.2f", v);
	}
	return buf;
}

static char *describe_range(int goal, const ar_res_stat_t *s)
{
	char a[32], b[32];
	if (s->n < 2)
		return ar_res_strf("1 run, no spread");
	double sp = ar_res_spread(s);
	if (isnan(sp))
		return ar_res_strf("%s..%s over %d runs", fmt_fig(a, sizeof a, goal, s->min),
				   fmt_fig(b, sizeof b, goal, s->max), s->n);
	return ar_res_strf("%s..%s over %d runs, spread %.1f%%", fmt_fig(a, sizeof a, goal, s->min),
			   fmt_fig(b, sizeof b, goal, s->max), s->n, 100 * sp);
}

static void pick(ar_rep_pick_t *p, int goal, const ar_res_alloc_t **cand, size_t nc, const bests_t *bs,
		 const ar_res_trace_t *t)
{
	memset(p, 0, sizeof *p);
	p->goal = goal_name[goal];
	p->metric = goal_metric[goal];
	p->best_value = p->second_value = NAN;
	for (size_t i = 0; i < nc; i++) {
		double v = figure(cand[i], goal, bs).med;
		if (better(goal, v, p->best_value)) {
			p->second = p->best;
			p->second_value = p->best_value;
			p->best = cand[i];
			p->best_value = v;
		} else if (better(goal, v, p->second_value)) {
			p->second = cand[i];
			p->second_value = v;
		}
	}
	if (!p->best)
		return;
	ar_res_stat_t sb = figure(p->best, goal, bs);
	char v1[48], v2[48], gv[48];
	char *rb = describe_range(goal, &sb);
	char *ev = ar_res_strf("%s: median %s%s (%s)", p->best->name, goal == G_BALANCE ? "score " : "",
			       fmt_fig(v1, sizeof v1, goal, sb.med), rb);
	free(rb);
	const ar_res_alloc_t *g = ar_res_find(t, "glibc");
	char *tmp;
	if (goal == G_SPEED && !isnan(p->best->speed_vs_glibc) && p->best != g) {
		tmp = ar_res_strf("%s, %.2fx glibc's %s", ev, p->best->speed_vs_glibc,
				  fmt_fig(gv, sizeof gv, goal, g->ops_per_sec.med));
		free(ev), ev = tmp;
	} else if (goal == G_MEMORY && !isnan(p->best->heap_vs_glibc) && p->best != g) {
		tmp = ar_res_strf("%s, %.2fx glibc's %s", ev, p->best->heap_vs_glibc,
				  fmt_fig(gv, sizeof gv, goal, g->heap_bytes.med));
		free(ev), ev = tmp;
	} else if (goal == G_TAIL && g && p->best != g && g->p99_ns.med > 0) {
		tmp = ar_res_strf("%s, %.2fx glibc's %s", ev, p->best_value / g->p99_ns.med,
				  fmt_fig(gv, sizeof gv, goal, g->p99_ns.med));
		free(ev), ev = tmp;
	}
	if (goal == G_MEMORY && !isnan(p->best->frag.med)) {
		char live[32];
		tmp = ar_res_strf("%s; fragmentation %.2f (peak heap / peak live bytes %s)", ev, p->best->frag.med,
				  ar_res_fmt_bytes(live, sizeof live, (double)t->peak_live_bytes));
		free(ev), ev = tmp;
	}
	if (goal == G_TAIL) {
		char a[32], b[32];
		tmp = ar_res_strf("%s; its p99.9 %s, max %s", ev, ar_res_fmt_ns(a, sizeof a, p->best->p999_ns.med),
				  ar_res_fmt_ns(b, sizeof b, p->best->max_ns.med));
		free(ev), ev = tmp;
	}
	if (goal == G_BALANCE) {
		double h = page_floor(p->best->heap_bytes.med);
		tmp = ar_res_strf("%s; %.2f of the fastest ops/s, %.2f of the smallest heap, %.2f of the lowest p99",
				  ev, p->best->ops_per_sec.med / bs->ops, page_floor(bs->heap) / h,
				  bs->p99 / p->best->p99_ns.med);
		free(ev), ev = tmp;
	}
	if (!p->second) {
		tmp = ar_res_strf("%s; the only allocator with successful runs on this trace", ev);
		free(ev), ev = tmp;
		p->evidence = ev;
		return;
	}
	ar_res_stat_t ss = figure(p->second, goal, bs);
	double rel = goal == G_SPEED || goal == G_BALANCE ? sb.med / ss.med : ss.med / sb.med;
	char *rs = describe_range(goal, &ss);
	tmp = ar_res_strf("%s; runner-up %s %s (%s): %s is %.2fx %s", ev, p->second->name,
			  fmt_fig(v2, sizeof v2, goal, ss.med), rs, p->best->name, rel,
			  goal == G_SPEED ? "faster" : goal == G_BALANCE ? "the score" : "smaller");
	free(rs);
	free(ev);
	p->evidence = tmp;

	enum ar_res_sig sig = ar_res_significance(&sb, &ss, rel);
	if (sig == AR_RES_SIG_SINGLE)
		push(&p->warnings, &p->nwarnings,
		     ar_res_strf("not significant: %s has a single successful repetition, so no spread was "
				 "measured; rerun allocreplay with --repeat 5",
				 sb.n < 2 ? p->best->name : p->second->name));
	else if (sig == AR_RES_SIG_TIE)
		push(&p->warnings, &p->nwarnings,
		     ar_res_strf("a tie: %s and %s differ by less than 1%%", p->best->name, p->second->name));
	else if (sig == AR_RES_SIG_OVERLAP) {
		char v3[48], v4[48];
		push(&p->warnings, &p->nwarnings,
		     ar_res_strf("not significant: the min-max ranges of %s (%s..%s) and %s (%s..%s) overlap, "
				 "so the %.2fx difference is within run-to-run spread",
				 p->best->name, fmt_fig(v1, sizeof v1, goal, sb.min),
				 fmt_fig(v2, sizeof v2, goal, sb.max), p->second->name,
				 fmt_fig(v3, sizeof v3, goal, ss.min), fmt_fig(v4, sizeof v4, goal, ss.max), rel));
	} else
		p->significant = 1;
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
	const ar_res_alloc_t *g = ar_res_find(t, "glibc");
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
				      "is serialised; measured here: %s ops/s (%.2fx glibc's), p99 %s (glibc %s)",
				      t->threads >= 4 ? "many" : "several", (long long)t->threads,
				      ar_res_fmt_num(o1, sizeof o1, fl->ops_per_sec.med), fl->speed_vs_glibc,
				      ar_res_fmt_ns(p1, sizeof p1, fl->p99_ns.med),
				      ar_res_fmt_ns(p2, sizeof p2, g ? g->p99_ns.med : NAN));
		const ar_res_series_t *s = series_of(rep, t);
		if (s) {
			const ar_res_alloc_t *f0 = ar_res_find(s->points[0], "freelist");
			if (f0 && !isnan(f0->speed_vs_glibc)) {
				char *c2 = ar_res_strf("%s; the same scenario at %lld thread(s): %.2fx glibc", c,
						       (long long)s->points[0]->threads, f0->speed_vs_glibc);
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
				 "pool %s, glibc %s",
				 100 * lf.dip_share, ar_res_fmt_bytes(b1, sizeof b1, po->final_heap_bytes.med),
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
	bests_t b = {NAN, NAN, NAN};
	for (size_t i = 0; i < nc; i++) {
		if (better(G_SPEED, cand[i]->ops_per_sec.med, b.ops))
			b.ops = cand[i]->ops_per_sec.med;
		if (better(G_MEMORY, cand[i]->heap_bytes.med, b.heap))
			b.heap = cand[i]->heap_bytes.med;
		if (better(G_TAIL, cand[i]->p99_ns.med, b.p99))
			b.p99 = cand[i]->p99_ns.med;
	}
	for (int g = 0; g < AR_REP_GOALS; g++)
		pick(&ad->picks[g], g, cand, nc, &b, t);
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

static void print_one(FILE *f, const ar_res_set_t *rep, const ar_rep_advice_t *ad, enum ar_res_format fmt, int first)
{
	const ar_res_trace_t *t = ad->trace;
	if (fmt == AR_RES_TABLE) {
		fprintf(f, "trace %s  sha256 %.12s  %lld thread(s)%s%s\n", t->name, t->sha256, (long long)t->threads,
			rep->nhosts > 1 ? "  host " : "", rep->nhosts > 1 && t->host ? t->host : "");
		for (int g = 0; g < AR_REP_GOALS; g++) {
			const ar_rep_pick_t *p = &ad->picks[g];
			fprintf(f, "  %-13s %s%s\n", p->goal, p->best ? p->best->name : "(no successful run)",
				p->best && !p->significant ? "  (not significant)" : "");
			if (p->evidence)
				fprintf(f, "      %s\n", p->evidence);
			for (size_t k = 0; k < p->nwarnings; k++)
				fprintf(f, "      ! %s\n", p->warnings[k]);
		}
		if (ad->ncautions)
			fprintf(f, "  cautions:\n");
		for (size_t k = 0; k < ad->ncautions; k++)
			fprintf(f, "      ! %s\n", ad->cautions[k]);
		fputc('\n', f);
	} else if (fmt == AR_RES_MARKDOWN) {
		fprintf(f, "### %s (%lld thread(s))\n\n", t->name, (long long)t->threads);
		for (int g = 0; g < AR_REP_GOALS; g++) {
			const ar_rep_pick_t *p = &ad->picks[g];
			fprintf(f, "- **%s: %s**%s", p->goal, p->best ? p->best->name : "(no successful run)",
				p->best && !p->significant ? " (not significant)" : "");
			if (p->evidence)
				fprintf(f, " — %s", p->evidence);
			fputc('\n', f);
			for (size_t k = 0; k < p->nwarnings; k++)
				fprintf(f, "  - warning: %s\n", p->warnings[k]);
		}
		for (size_t k = 0; k < ad->ncautions; k++)
			fprintf(f, "%s- caution: %s\n", k ? "" : "\n", ad->cautions[k]);
		fputc('\n', f);
	} else if (fmt == AR_RES_CSV) {
		for (int g = 0; g < AR_REP_GOALS; g++) {
			const ar_rep_pick_t *p = &ad->picks[g];
			fprintf(f, "%s,", t->sha256);
			ar_res_put_csv_str(f, t->name);
			fputc(',', f);
			ar_res_put_csv_str(f, t->host);
			fprintf(f, ",%s,%s,%s,", p->goal, p->metric, p->best ? p->best->name : "");
			if (!isnan(p->best_value))
				ar_res_put_json_num(f, p->best_value);
			fprintf(f, ",%s,", p->second ? p->second->name : "");
			if (!isnan(p->second_value))
				ar_res_put_json_num(f, p->second_value);
			fprintf(f, ",%d,", p->significant);
			ar_res_put_csv_str(f, p->evidence);
			fputc(',', f);
			char *w = ar_res_strdup("");
			for (size_t k = 0; k < p->nwarnings; k++) {
				char *n = ar_res_strf("%s%s%s", w, k ? " | " : "", p->warnings[k]);
				free(w);
				w = n;
			}
			ar_res_put_csv_str(f, w);
			free(w);
			fputc('\n', f);
		}
	} else {
		fprintf(f, "%s  {\"sha256\": \"%s\", \"name\": ", first ? "" : ",\n", t->sha256);
		ar_res_put_json_str(f, t->name);
		fputs(", \"host\": ", f);
		ar_res_put_json_str(f, t->host);
		fprintf(f, ", \"threads\": %lld,\n   \"picks\": [", (long long)t->threads);
		for (int g = 0; g < AR_REP_GOALS; g++) {
			const ar_rep_pick_t *p = &ad->picks[g];
			fprintf(f, "%s\n    {\"goal\": \"%s\", \"metric\": \"%s\", \"allocator\": ", g ? "," : "", p->goal,
				p->metric);
			ar_res_put_json_str(f, p->best ? p->best->name : NULL);
			fputs(", \"value\": ", f);
			ar_res_put_json_num(f, p->best_value);
			fputs(", \"runner_up\": ", f);
			ar_res_put_json_str(f, p->second ? p->second->name : NULL);
			fputs(", \"runner_up_value\": ", f);
			ar_res_put_json_num(f, p->second_value);
			fprintf(f, ", \"significant\": %s,\n     \"evidence\": ", p->significant ? "true" : "false");
			ar_res_put_json_str(f, p->evidence);
			fputs(", \"warnings\": [", f);
			for (size_t k = 0; k < p->nwarnings; k++) {
				fputs(k ? ", " : "", f);
				ar_res_put_json_str(f, p->warnings[k]);
			}
			fputs("]}", f);
		}
		fputs("],\n   \"cautions\": [", f);
		for (size_t k = 0; k < ad->ncautions; k++) {
			fputs(k ? ", " : "", f);
			ar_res_put_json_str(f, ad->cautions[k]);
		}
		fputs("]}", f);
	}
}

void ar_rep_print_advice(FILE *f, const ar_res_set_t *rep, enum ar_res_format fmt)
{
	if (fmt == AR_RES_CSV)
		fputs("trace_sha256,trace_name,host,goal,metric,allocator,value,runner_up,runner_up_value,"
		      "significant,evidence,warnings\n",
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
		fputs("A pick is not significant when the min-max ranges over repetitions overlap, when a single "
		      "repetition succeeded, or when the difference is below 1%. Balance = geometric mean of ops/s "
		      "relative to the fastest, peak heap relative to the smallest and p99 relative to the lowest.\n",
		      f);
}
