/*
 * diff.c — two comparisons side by side (`allocreport diff OLD.db NEW.db`):
 * each trace of NEW paired with its trace in OLD (same SHA-256, else the
 * same name: a trace recorded again is another file), and for each
 * allocator both have, each figure's median before and after, the change in
 * percent and whether it is meaningful — ar_res_significance over the ok
 * repetitions of each side, the same rule (and the same 5 % floor) that
 * tells two allocators apart in one database.
 *
 * Invariants: medians are over ok runs only and NAN figures are left out
 * (a figure measured on neither side makes no cell); a pair whose sides
 * come from different machines (load.c) is flagged (other_host), never quietly
 * compared, since the change then mixes the code with the machine; a trace
 * or an allocator present on one side only is listed, not dropped. The
 * trace's own figures (peak live bytes, allocations) are exact counts: they
 * are meaningful whenever they differ.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_escape.h"
#include "ar_gate.h"
#include "ar_results.h"

/* Figures from the trace itself, outside the runs (fig < 0). */
enum { TRACE_PEAK_LIVE = -1, TRACE_ALLOCS = -2, TRACE_EVENTS = -3 };

const ar_res_diff_metric_t ar_res_diff_metrics[AR_RES_DIFF_NMETRICS] = {
	{"ops_s", "ops/s", AR_RES_OPS, 1, AR_RES_DIFF_NUM},
	{"p50", "p50", AR_RES_P50, 0, AR_RES_DIFF_NS},
	{"p99", "p99", AR_RES_P99, 0, AR_RES_DIFF_NS},
	{"p999", "p99.9", AR_RES_P999, 0, AR_RES_DIFF_NS},
	{"max", "max latency", AR_RES_MAX, 0, AR_RES_DIFF_NS},
	{"heap_rss", "peak heap RSS", AR_RES_HEAP, 0, AR_RES_DIFF_BYTES},
	{"frag", "fragmentation", AR_RES_FRAG, 0, AR_RES_DIFF_NUM},
	{"pred_time", "predicted time", AR_RES_PRED_TIME, 0, AR_RES_DIFF_NS},
	{"pred_rss", "predicted RSS", AR_RES_PRED_RSS, 0, AR_RES_DIFF_BYTES},
	{"peak_live", "peak live bytes", TRACE_PEAK_LIVE, 0, AR_RES_DIFF_BYTES},
	{"allocs", "allocations", TRACE_ALLOCS, 0, AR_RES_DIFF_NUM},
	{"events", "events", TRACE_EVENTS, 0, AR_RES_DIFF_NUM},
};

static int same_str(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

/* ---- pairing traces ---- */

/* The trace of old matching t: same SHA-256 on the same machine (host,
 * CPU, kernel, glibc: load.c), else same SHA-256 anywhere, else the same
 * name on the same machine, else the same
 * name anywhere; not one already taken. NULL when none. */
static const ar_res_trace_t *match(const ar_res_set_t *old, const ar_res_trace_t *t, const char *taken,
				   const char **by)
{
	for (int pass = 0; pass < 4; pass++) {
		int by_name = pass >= 2, any_host = pass & 1;
		for (size_t i = 0; i < old->ntraces; i++) {
			const ar_res_trace_t *o = &old->traces[i];
			if (taken[i] || (!any_host && !same_str(o->machine, t->machine)))
				continue;
			if (by_name ? same_str(o->name, t->name) : same_str(o->sha256, t->sha256)) {
				*by = by_name ? "name" : "sha256";
				return o;
			}
		}
	}
	return NULL;
}

static ar_res_diff_pair_t *new_pair(ar_res_diff_t *d)
{
	d->pairs = ar_res_xrealloc(d->pairs, (d->npairs + 1) * sizeof *d->pairs);
	ar_res_diff_pair_t *p = &d->pairs[d->npairs++];
	memset(p, 0, sizeof *p);
	return p;
}

static void add_note(ar_res_diff_pair_t *p, char *note)
{
	p->notes = ar_res_xrealloc(p->notes, (p->nnotes + 1) * sizeof *p->notes);
	p->notes[p->nnotes++] = note;
}

static ar_res_diff_cell_t *new_cell(ar_res_diff_pair_t *p)
{
	p->cells = ar_res_xrealloc(p->cells, (p->ncells + 1) * sizeof *p->cells);
	ar_res_diff_cell_t *c = &p->cells[p->ncells++];
	memset(c, 0, sizeof *c);
	return c;
}

/* ---- cells ---- */

/* The median of a's ok values of fig; NAN when none. */
static double median_of(const ar_res_alloc_t *a, int fig, double *v)
{
	return ar_res_stat(v, ar_res_values(a, fig, v)).med;
}

/* One allocator's figure m on both sides; no cell when neither measured it. */
static void alloc_cell(ar_res_diff_pair_t *p, const ar_res_alloc_t *oa, const ar_res_alloc_t *na, int m)
{
	const ar_res_diff_metric_t *dm = &ar_res_diff_metrics[m];
	double *vo = ar_res_xcalloc(oa->nruns + 1, sizeof *vo), *vn = ar_res_xcalloc(na->nruns + 1, sizeof *vn);
	double *tmp = ar_res_xcalloc(oa->nruns + na->nruns + 1, sizeof *tmp);
	size_t no = ar_res_values(oa, dm->fig, vo), nn = ar_res_values(na, dm->fig, vn);
	if (no || nn) {
		ar_res_diff_cell_t *c = new_cell(p);
		c->allocator = na->name;
		c->metric = m;
		c->old_med = median_of(oa, dm->fig, tmp);
		c->new_med = median_of(na, dm->fig, tmp);
		c->change_pct = ar_gate_change_pct(c->old_med, c->new_med);
		/* oriented: ratio >= 1 means NEW is better */
		c->verdict = ar_res_significance(vn, nn, vo, no, dm->higher_better);
	}
	free(vo);
	free(vn);
	free(tmp);
}

static double trace_figure(const ar_res_trace_t *t, int fig)
{
	return fig == TRACE_PEAK_LIVE ? (double)t->peak_live_bytes
	       : fig == TRACE_ALLOCS  ? (double)t->trace_allocs
				      : (double)t->events;
}

/* The trace's own figures: exact, so a difference is always meaningful. */
static void trace_cells(ar_res_diff_pair_t *p)
{
	for (int m = 0; m < AR_RES_DIFF_NMETRICS; m++) {
		if (ar_res_diff_metrics[m].fig >= 0)
			continue;
		ar_res_diff_cell_t *c = new_cell(p);
		c->metric = m;
		c->old_med = trace_figure(p->old, ar_res_diff_metrics[m].fig);
		c->new_med = trace_figure(p->new, ar_res_diff_metrics[m].fig);
		c->change_pct = ar_gate_change_pct(c->old_med, c->new_med);
		c->exact = 1;
		c->verdict = (ar_res_verdict_t){c->old_med == c->new_med ? AR_RES_SIG_SMALL : AR_RES_SIG_YES,
						NAN, NAN, NAN, 1, 1};
	}
}

/* Every allocator of the pair, in NEW's order; those on one side only as notes. */
static void pair_cells(ar_res_diff_pair_t *p)
{
	trace_cells(p);
	for (size_t i = 0; i < p->new->nallocs; i++) {
		const ar_res_alloc_t *na = &p->new->allocs[i], *oa = ar_res_find(p->old, na->name);
		if (!oa) {
			add_note(p, ar_res_strf("%s was replayed in NEW only", na->name));
			continue;
		}
		if (!oa->runs_ok || !na->runs_ok) {
			add_note(p, ar_res_strf("%s has no successful run in %s", na->name,
						!oa->runs_ok && !na->runs_ok ? "either" : oa->runs_ok ? "NEW" : "OLD"));
			continue;
		}
		for (int m = 0; m < AR_RES_DIFF_NMETRICS; m++)
			if (ar_res_diff_metrics[m].fig >= 0)
				alloc_cell(p, oa, na, m);
	}
	for (size_t i = 0; i < p->old->nallocs; i++)
		if (!ar_res_find(p->new, p->old->allocs[i].name))
			add_note(p, ar_res_strf("%s was replayed in OLD only", p->old->allocs[i].name));
}

void ar_res_diff(const ar_res_set_t *old, const ar_res_set_t *new_, ar_res_diff_t *d)
{
	memset(d, 0, sizeof *d);
	char *taken = ar_res_xcalloc(old->ntraces + 1, 1);
	for (size_t i = 0; i < new_->ntraces; i++) {
		const ar_res_trace_t *t = &new_->traces[i];
		ar_res_diff_pair_t *p = new_pair(d);
		p->new = t;
		p->old = match(old, t, taken, &p->matched_by);
		if (!p->old)
			continue;
		taken[p->old - old->traces] = 1;
		p->other_host = !same_str(p->old->machine, t->machine);
		pair_cells(p);
	}
	for (size_t i = 0; i < old->ntraces; i++)
		if (!taken[i])
			new_pair(d)->old = &old->traces[i];
	free(taken);
}

void ar_res_diff_free(ar_res_diff_t *d)
{
	for (size_t i = 0; i < d->npairs; i++) {
		for (size_t k = 0; k < d->pairs[i].nnotes; k++)
			free(d->pairs[i].notes[k]);
		free(d->pairs[i].notes);
		free(d->pairs[i].cells);
	}
	free(d->pairs);
	memset(d, 0, sizeof *d);
}

const char *ar_res_diff_verdict(const ar_res_diff_cell_t *c)
{
	if (c->exact)
		return c->verdict.sig == AR_RES_SIG_YES ? "exact" : "same";
	switch (c->verdict.sig) {
	case AR_RES_SIG_YES:
		return "meaningful";
	case AR_RES_SIG_SINGLE:
		return "undecided";
	case AR_RES_SIG_SMALL:
		return "within 5%";
	case AR_RES_SIG_NOISE:
		return "noise";
	}
	return "?";
}

int ar_res_diff_significant(const ar_res_diff_cell_t *c) { return c->verdict.sig == AR_RES_SIG_YES; }

/* ---- printing ---- */

static const char *fmt_value(char *buf, size_t n, double v, int kind)
{
	if (kind == AR_RES_DIFF_NS)
		return ar_res_fmt_ns(buf, n, v);
	if (kind == AR_RES_DIFF_BYTES)
		return ar_res_fmt_bytes(buf, n, v);
	return ar_res_fmt_num(buf, n, v);
}

static const char *trace_label(const ar_res_diff_pair_t *p)
{
	const ar_res_trace_t *t = p->new ? p->new : p->old;
	return t->name ? t->name : t->sha256;
}

static void text_pair_head(FILE *f, const ar_res_diff_pair_t *p)
{
	const ar_res_trace_t *t = p->new ? p->new : p->old;
	fputs("\ntrace ", f);
	ar_esc_term(f, trace_label(p));
	fprintf(f, " (%.12s", t->sha256 ? t->sha256 : "?");
	if (p->old && p->new && p->matched_by && !strcmp(p->matched_by, "name"))
		fprintf(f, "; OLD %.12s, matched by name: the trace itself changed", p->old->sha256 ? p->old->sha256 : "?");
	fputs("), host ", f);
	ar_esc_term(f, t->host ? t->host : "unknown");
	fputc('\n', f);
	if (!p->old || !p->new) {
		fprintf(f, "  only in %s: nothing to compare\n", p->old ? "OLD" : "NEW");
		return;
	}
	if (p->other_host) {
		fputs(same_str(p->old->host, p->new->host) ? "  DIFFERENT MACHINES: OLD ran on " : "  DIFFERENT HOSTS: OLD ran on ", f);
		ar_esc_term(f, p->old->machine ? p->old->machine : "unknown");
		fputs(", NEW on ", f);
		ar_esc_term(f, p->new->machine ? p->new->machine : "unknown");
		fputs(": every change below mixes the machine with the code\n", f);
	}
}

static void text_cell(FILE *f, const ar_res_diff_cell_t *c)
{
	const ar_res_diff_metric_t *m = &ar_res_diff_metrics[c->metric];
	char o[32], n[32], pct[32], why[96] = "";
	if (c->verdict.sig == AR_RES_SIG_SINGLE && !c->exact)
		snprintf(why, sizeof why, " (%d vs %d repetitions)", c->verdict.nb, c->verdict.na);
	else if (!c->exact && !isnan(c->verdict.lo))
		snprintf(why, sizeof why, " (gain %.3fx, 95%% %.3f-%.3f)", c->verdict.ratio, c->verdict.lo,
			 c->verdict.hi);
	fprintf(f, "  %-12s %-15s %12s %12s %9s  %s%s%s%s\n", c->allocator ? c->allocator : "(trace)", m->label,
		fmt_value(o, sizeof o, c->old_med, m->kind), fmt_value(n, sizeof n, c->new_med, m->kind),
		ar_gate_fmt_pct(pct, sizeof pct, c->change_pct), ar_res_diff_verdict(c), why,
		c->broken_rule ? "  FAIL " : "", c->broken_rule ? c->broken_rule : "");
}

static void print_table(FILE *f, const ar_res_diff_t *d, const char *old_path, const char *new_path)
{
	fputs("OLD ", f);
	ar_esc_term(f, old_path);
	fputs("\nNEW ", f);
	ar_esc_term(f, new_path);
	fputc('\n', f);
	for (size_t i = 0; i < d->npairs; i++) {
		const ar_res_diff_pair_t *p = &d->pairs[i];
		text_pair_head(f, p);
		if (!p->old || !p->new)
			continue;
		fprintf(f, "  %-12s %-15s %12s %12s %9s  %s\n", "allocator", "metric", "OLD", "NEW", "change",
			"significance");
		for (size_t k = 0; k < p->ncells; k++)
			text_cell(f, &p->cells[k]);
		for (size_t k = 0; k < p->nnotes; k++) {
			fputs("  note: ", f);
			ar_esc_term(f, p->notes[k]);
			fputc('\n', f);
		}
	}
	fputs("\nsignificance: gain = how many times better NEW is than OLD (ratio of medians,\n"
	      "oriented: > 1 better, < 1 worse); meaningful = its 95% bootstrap interval lies\n"
	      "outside 1 +- 5%; undecided = a side has fewer than 2 repetitions (allocreplay\n"
	      "--repeat); within 5% / noise = no meaningful difference; exact / same = a figure\n"
	      "of the trace itself, which does not vary.\n",
	      f);
}

static void json_cell(FILE *f, const ar_res_diff_cell_t *c, int first)
{
	fprintf(f, "%s{\"allocator\":", first ? "" : ",");
	ar_esc_json(f, c->allocator);
	fprintf(f, ",\"metric\":\"%s\",\"old\":", ar_res_diff_metrics[c->metric].name);
	ar_res_put_json_num(f, c->old_med);
	fputs(",\"new\":", f);
	ar_res_put_json_num(f, c->new_med);
	fputs(",\"change_pct\":", f);
	ar_res_put_json_num(f, isinf(c->change_pct) ? NAN : c->change_pct);
	fprintf(f, ",\"significance\":\"%s\",\"ratio\":", ar_res_diff_verdict(c));
	ar_res_put_json_num(f, c->verdict.ratio);
	fputs(",\"interval\":[", f);
	ar_res_put_json_num(f, c->verdict.lo);
	fputc(',', f);
	ar_res_put_json_num(f, c->verdict.hi);
	fprintf(f, "],\"repetitions\":[%d,%d],\"failed_rule\":", c->verdict.nb, c->verdict.na);
	ar_esc_json(f, c->broken_rule);
	fputc('}', f);
}

static void json_pair(FILE *f, const ar_res_diff_pair_t *p, int first)
{
	fprintf(f, "%s{\"name\":", first ? "" : ",");
	ar_esc_json(f, trace_label(p));
	fputs(",\"old_sha256\":", f);
	ar_esc_json(f, p->old ? p->old->sha256 : NULL);
	fputs(",\"new_sha256\":", f);
	ar_esc_json(f, p->new ? p->new->sha256 : NULL);
	fputs(",\"matched_by\":", f);
	ar_esc_json(f, p->matched_by);
	fputs(",\"old_host\":", f);
	ar_esc_json(f, p->old ? p->old->host : NULL);
	fputs(",\"new_host\":", f);
	ar_esc_json(f, p->new ? p->new->host : NULL);
	fputs(",\"old_machine\":", f);
	ar_esc_json(f, p->old ? p->old->machine : NULL);
	fputs(",\"new_machine\":", f);
	ar_esc_json(f, p->new ? p->new->machine : NULL);
	fprintf(f, ",\"same_host\":%s,\"cells\":[", p->old && p->new && !p->other_host ? "true" : "false");
	for (size_t k = 0; k < p->ncells; k++)
		json_cell(f, &p->cells[k], k == 0);
	fputs("],\"notes\":[", f);
	for (size_t k = 0; k < p->nnotes; k++) {
		fputs(k ? "," : "", f);
		ar_esc_json(f, p->notes[k]);
	}
	fputs("]}", f);
}

void ar_res_diff_print(FILE *f, const ar_res_diff_t *d, const char *old_path, const char *new_path,
		       enum ar_res_format fmt)
{
	if (fmt != AR_RES_JSON) {
		print_table(f, d, old_path, new_path);
		return;
	}
	fputs("{\"format_version\":1,\"old\":", f);
	ar_esc_json(f, old_path);
	fputs(",\"new\":", f);
	ar_esc_json(f, new_path);
	fputs(",\"traces\":[", f);
	for (size_t i = 0; i < d->npairs; i++)
		json_pair(f, &d->pairs[i], i == 0);
	fputs("]}\n", f);
}

/* ---- two run sets of one database ---- */

/* A deep copy of src's description (strings duplicated), without runs. */
static void copy_trace_head(ar_res_trace_t *t, const ar_res_trace_t *src)
{
	*t = *src;
	t->sha256 = ar_res_strdup(src->sha256);
	t->name = ar_res_strdup(src->name);
	t->program = ar_res_strdup(src->program);
	t->status = ar_res_strdup(src->status);
	t->host = ar_res_strdup(src->host);
	t->machine = ar_res_strdup(src->machine);
	t->scenario = ar_res_strdup(src->scenario);
	t->recorded_allocator = ar_res_strdup(src->recorded_allocator);
	t->recorded_library = ar_res_strdup(src->recorded_library);
	t->recorded_version = ar_res_strdup(src->recorded_version);
	t->recorded_reason = ar_res_strdup(src->recorded_reason);
	t->baseline_wanted = ar_res_strdup(src->baseline_wanted);
	t->baseline = t->baseline_note = NULL;
	t->allocs = NULL;
	t->nallocs = 0;
}

void ar_res_select_runs(const ar_res_set_t *rep, int64_t first, int64_t last, ar_res_set_t *out)
{
	memset(out, 0, sizeof *out);
	out->path = rep->path;
	out->nhosts = rep->nhosts;
	out->traces = ar_res_xcalloc(rep->ntraces + 1, sizeof *out->traces);
	for (size_t i = 0; i < rep->ntraces; i++) {
		const ar_res_trace_t *src = &rep->traces[i];
		ar_res_trace_t *t = &out->traces[out->ntraces];
		copy_trace_head(t, src);
		for (size_t j = 0; j < src->nallocs; j++) {
			const ar_res_alloc_t *a = &src->allocs[j];
			for (size_t k = 0; k < a->nruns; k++)
				if (a->runs[k].run_id >= first && a->runs[k].run_id <= last)
					ar_res_add_run(ar_res_alloc_slot(t, a->name, a->version), &a->runs[k]);
		}
		if (!t->nallocs) {
			ar_res_trace_free(t);
			continue;
		}
		ar_res_finish(t);
		out->ntraces++;
	}
}
