/*
 * render.c — the one way the comparison is printed, by allocreplay and
 * allocreport alike: per trace (x machine) in four formats: an aligned text
 * table, CSV (one row per trace x allocator, raw numbers, the machine last),
 * JSON (one document with "format_version": the whole model, medians with
 * min and max, and every run; docs/RESULTS.md "The comparison as JSON") and
 * Markdown. Every row is an
 * allocator: runs ok/total, then — when the replayer predicted them — the
 * predicted program time and peak RSS with their ratios to the baseline's,
 * first, since they are what the user asks about; then the raw replay
 * figures: medians over its ok runs with the min-max range, throughput and
 * peak heap RSS as ratios to the baseline's medians, spread of ops/s
 * ((max-min)/median), latency percentiles ("< N ns" at or below the timer's
 * resolution: not measurable, not zero), fragmentation, faults, NULL
 * results. Under the heading: the baseline and why, the reason there is no
 * prediction, how far replay is from the recorded program. Then hardware
 * counters when any was measured (else the reason they were not), and every
 * failed run with its status and reason. Every string from the database
 * (names, hosts, command lines, reasons: maybe merged from someone else's)
 * goes out through common/ar_escape.h for its format.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_escape.h"
#include "ar_results.h"

#define NCOLS AR_RES_NCOLS
#define CELL AR_RES_CELL

/* The predicted columns (only when the trace has predictions), then the replay's. */
static const char *const pred_columns[] = {"pred time", "x base", "pred peak RSS", "x base"};
static const char *const replay_columns[] = {"ops/s", "min-max", "x base", "spread", "p50", "p99",
					     "p99.9", "peak heap", "min-max", "x base", "frag", "faults",
					     "null ret"};
enum { NPRED = sizeof pred_columns / sizeof *pred_columns, NREPLAY = sizeof replay_columns / sizeof *replay_columns };
_Static_assert(2 + NPRED + NREPLAY <= NCOLS, "AR_RES_NCOLS too small");

typedef char row_t[NCOLS][CELL];

const char ar_res_columns_note[] =
	"medians over each allocator's ok runs, min-max over them; x base = ratio of medians to the baseline "
	"row's (marked; \"(recorded)\" when it is the allocator the program ran on); pred = predicted for the "
	"program (time = its CPU time, > 1 is slower); spread = (max-min)/median of ops/s; latency over the "
	"timed calls (1 in runs.timing_every), timer "
	"overhead subtracted, \"< N ns\" = at or below the timer's resolution; "
	"peak heap = peak RSS above the worker's baseline; frag = peak heap / peak live bytes; "
	"faults = minor/major page faults; null ret = allocations that returned NULL";

static void range(char *buf, const ar_res_stat_t *s, const char *(*fmt)(char *, size_t, double))
{
	char a[24], b[24];
	if (s->n < 2)
		snprintf(buf, CELL, "-");
	else if (s->min == s->max)
		snprintf(buf, CELL, "all equal");
	else
		snprintf(buf, CELL, "%s..%s", fmt(a, sizeof a, s->min), fmt(b, sizeof b, s->max));
}

static void ratio(char *buf, double v)
{
	if (isnan(v))
		snprintf(buf, CELL, "-");
	else
		snprintf(buf, CELL, "%.2f", v);
}

const char *ar_res_fmt_latency(char *buf, size_t n, double v, double res)
{
	if (!isnan(v) && res > 0 && v <= res)
		snprintf(buf, n, "< %.0f ns", ceil(res));
	else
		ar_res_fmt_ns(buf, n, v);
	return buf;
}

int ar_res_table_head(char (*r)[AR_RES_CELL], const ar_res_trace_t *t)
{
	int c = 0;
	snprintf(r[c++], CELL, "allocator");
	snprintf(r[c++], CELL, "runs");
	for (int k = 0; ar_res_has_predictions(t) && k < NPRED; k++)
		snprintf(r[c++], CELL, "%s", pred_columns[k]);
	for (int k = 0; k < NREPLAY; k++)
		snprintf(r[c++], CELL, "%s", replay_columns[k]);
	return c;
}

/* The row's name: marks the baseline, and the allocator the program ran on. */
static void row_name(char *buf, const ar_res_trace_t *t, const ar_res_alloc_t *a)
{
	int base = t->baseline && !strcmp(t->baseline, a->name);
	int rec = t->recorded_allocator && !strcmp(t->recorded_allocator, a->name);
	snprintf(buf, CELL, "%s%s", a->name,
		 base && rec ? " (recorded)" : base ? " (baseline)" : rec ? " (recorded, not baseline)" : "");
}

int ar_res_fill_row(char (*r)[AR_RES_CELL], const ar_res_trace_t *t, const ar_res_alloc_t *a)
{
	int c = 0;
	row_name(r[c++], t, a);
	snprintf(r[c++], CELL, "%d/%d", a->runs_ok, a->runs_total);
	if (ar_res_has_predictions(t)) {
		ar_res_fmt_ns(r[c++], CELL, a->pred_time_ns.med);
		ratio(r[c++], a->pred_time_vs_baseline);
		ar_res_fmt_bytes(r[c++], CELL, a->pred_rss_bytes.med);
		ratio(r[c++], a->pred_rss_vs_baseline);
	}
	ar_res_fmt_num(r[c++], CELL, a->ops_per_sec.med);
	range(r[c++], &a->ops_per_sec, ar_res_fmt_num);
	ratio(r[c++], a->speed_vs_baseline);
	double sp = ar_res_spread(&a->ops_per_sec);
	if (isnan(sp))
		snprintf(r[c++], CELL, "-");
	else
		snprintf(r[c++], CELL, "%.1f%%", 100 * sp);
	double res = a->timer_res_ns.med;
	ar_res_fmt_latency(r[c++], CELL, a->p50_ns.med, res);
	ar_res_fmt_latency(r[c++], CELL, a->p99_ns.med, res);
	ar_res_fmt_latency(r[c++], CELL, a->p999_ns.med, res);
	ar_res_fmt_bytes(r[c++], CELL, a->heap_bytes.med);
	range(r[c++], &a->heap_bytes, ar_res_fmt_bytes);
	ratio(r[c++], a->heap_vs_baseline);
	ratio(r[c++], a->frag.med);
	char mi[24], ma[24];
	if (isnan(a->minor_faults.med))
		snprintf(r[c++], CELL, "-");
	else
		snprintf(r[c++], CELL, "%s/%s", ar_res_fmt_num(mi, sizeof mi, a->minor_faults.med),
			 ar_res_fmt_num(ma, sizeof ma, a->major_faults.med));
	ar_res_fmt_num(r[c++], CELL, a->failed_allocs.med);
	return c;
}

/* A signed relative error as "+12 %" / "-4 %", or "n/a" (with the reason). */
static char *rel_error(const char *what, const ar_res_stat_t *s, const char *why)
{
	if (s->n)
		return ar_res_strf("%s %+.0f %%", what, 100 * s->med);
	return ar_res_strf("%s n/a%s%s%s", what, why ? " (" : "", why ? why : "", why ? ")" : "");
}

/* Why a replay's peak RSS falls far short of the recorded one when the
 * program's memory is mostly not malloc's (an interpreter's or a VM's own
 * mmap'ed heaps, a compiler's GC pages): the trace's live malloc'd bytes
 * peaked well below the recorded RSS's growth. Replay holds only the malloc
 * part; the predicted peak RSS keeps the rest (predict.c). NULL otherwise. */
static char *not_malloc_memory(const ar_res_trace_t *t, const ar_res_stat_t *err)
{
	double peak = t->recorded_peak_rss_bytes;
	if (t->recorded_recorder_bytes > 0 && t->recorded_recorder_bytes < peak)
		peak -= t->recorded_recorder_bytes;
	double growth = peak - t->recorded_start_rss_bytes, live = (double)t->peak_live_bytes;
	if (!err->n || !(err->med < -0.10) || !(growth > 0) || !(live >= 0) || live > growth / 2)
		return NULL;
	char l[32], g[32];
	ar_res_fmt_bytes(l, sizeof l, live);
	ar_res_fmt_bytes(g, sizeof g, growth);
	return ar_res_strf("most of this program's memory is not malloc's: its live malloc'd bytes peaked at %s "
			   "while its RSS grew by %s; replay holds the malloc part, the predicted peak RSS adds "
			   "the rest",
			   l, g);
}

int ar_res_trace_notes(const ar_res_trace_t *t, char *lines[AR_RES_NOTES])
{
	int n = 0;
	if (t->baseline_note)
		lines[n++] = ar_res_strdup(t->baseline_note);
	else if (t->baseline && t->baseline_is_recorded && t->recorded_library)
		lines[n++] = ar_res_strf("baseline: %s, the allocator the recorded program ran on (%s)", t->baseline,
					 t->recorded_library);
	else if (t->baseline && t->baseline_is_recorded)
		lines[n++] = ar_res_strf("baseline: %s, the allocator the recorded program ran on", t->baseline);
	else if (t->baseline)
		lines[n++] = ar_res_strf("baseline: %s%s", t->baseline,
					 t->baseline_wanted ? " (--baseline)"
					 : t->recorded_allocator ? ""
					 : " (the trace does not say which allocator the program ran on)");
	if (!ar_res_has_predictions(t)) {
		const char *why = NULL;
		for (size_t i = 0; i < t->nallocs && !why; i++)
			why = t->allocs[i].prediction_reason;
		if (why)
			lines[n++] = ar_res_strf("no prediction for the program: %s", why);
	} else {
		/* what replay learned about the recording, when it can still
		 * predict: a window's sampled peak, a busy machine */
		if (t->recorded_reason && t->recorded_reason[0])
			lines[n++] = ar_res_strf("about the recording: %s", t->recorded_reason);
	}
	if (ar_res_has_predictions(t) && t->recorded_cpu_ns > 0) {
		/* what every predicted time starts from (predict.c) */
		double rc = t->recorded_recorder_cpu_ns;
		if (rc > 0 && rc < t->recorded_cpu_ns)
			lines[n++] = ar_res_strf("predicted time from the program's CPU time: %.3f s (the recording's "
						 "%.3f s less the recorder's own %.3f s)",
						 (t->recorded_cpu_ns - rc) / 1e9, t->recorded_cpu_ns / 1e9, rc / 1e9);
		else
			lines[n++] = ar_res_strf("predicted time from the recording's CPU time: %.3f s (the "
						 "recorder's own part not known: a trace before format 2.0)",
						 t->recorded_cpu_ns / 1e9);
	}
	const ar_res_alloc_t *fa = ar_res_fidelity_of(t);
	if (fa && (fa->fid_time_err.n || fa->fid_rss_err.n || fa->fidelity_reason)) {
		char *rss = rel_error("peak RSS", &fa->fid_rss_err, fa->fid_rss_err.n ? NULL : fa->fidelity_reason);
		char *why = not_malloc_memory(t, &fa->fid_rss_err);
		if (why) {
			char *both = ar_res_strf("%s (%s)", rss, why);
			free(rss);
			free(why);
			rss = both;
		}
		char *dur = rel_error("duration", &fa->fid_time_err, fa->fid_time_err.n ? NULL : fa->fidelity_reason);
		lines[n++] = ar_res_strf("replay vs recorded program (%s): %s, %s", fa->name, rss, dur);
		free(rss);
		free(dur);
	}
	return n;
}

static int any_counter(const ar_res_trace_t *t)
{
	for (size_t i = 0; i < t->nallocs; i++)
		for (size_t k = 0; k < t->allocs[i].ncounters; k++)
			if (t->allocs[i].counters[k].value.n)
				return 1;
	return 0;
}

static const char *counter_reason(const ar_res_trace_t *t)
{
	for (size_t i = 0; i < t->nallocs; i++)
		for (size_t k = 0; k < t->allocs[i].ncounters; k++)
			if (t->allocs[i].counters[k].reason)
				return t->allocs[i].counters[k].reason;
	return NULL;
}

/* A string from the database (any of them may come from someone else's
 * file): escaped for markdown or for the terminal. */
static void put_s(FILE *f, int md, const char *s)
{
	ar_esc_put(f, md ? AR_ESC_MD : AR_ESC_TERM, s);
}

static void trace_heading(FILE *f, const ar_res_set_t *rep, const ar_res_trace_t *t, int md)
{
	char live[24];
	fputs(md ? "### " : "trace ", f);
	put_s(f, md, t->name);
	if (md && t->sha256 && strspn(t->sha256, "0123456789abcdef") == strlen(t->sha256)) {
		fprintf(f, "\n\nsha256 `%s`, ", t->sha256);
	} else if (md) { /* not hex (a hand-made database): no code span, escaped */
		fputs("\n\nsha256 ", f);
		put_s(f, md, t->sha256);
		fputs(", ", f);
	} else {
		char sha[13];
		snprintf(sha, sizeof sha, "%s", t->sha256);
		fputs("  sha256 ", f);
		put_s(f, md, sha);
		fputs("\n  ", f);
	}
	fprintf(f, "%" PRId64 " events, %" PRId64 " thread(s), %" PRId64 " calls, peak live %s, ", t->events,
		t->threads, t->calls, ar_res_fmt_bytes(live, sizeof live, (double)t->peak_live_bytes));
	put_s(f, md, t->status);
	if (rep->nhosts > 1 || t->nmachines > 1) { /* several machines: say which (load.c) */
		fputs(", machine ", f);
		put_s(f, md, t->machine ? t->machine : "(unknown)");
	}
	if (t->program) {
		fputs(md ? "; recorded as " : "\n  program: ", f);
		put_s(f, md, t->program);
	}
	fprintf(f, md ? "\n\n" : "\n");
	char *notes[AR_RES_NOTES];
	int nn = ar_res_trace_notes(t, notes);
	for (int i = 0; i < nn; i++) { /* they quote the database */
		fputs(md ? "" : "  ", f);
		put_s(f, md, notes[i]);
		fputs(md ? ".\n" : "\n", f);
		free(notes[i]);
	}
	if (md && nn)
		fputc('\n', f);
}

/* The cells, escaped (an allocator's name comes from the database), in
 * aligned columns or as a markdown table. */
static void print_rows(FILE *f, row_t *rows, size_t n, int ncols, int md)
{
	size_t w[NCOLS] = {0};
	char **shown = ar_res_xcalloc(n * (size_t)ncols, sizeof *shown);
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < ncols; c++) {
			char **e = &shown[i * (size_t)ncols + (size_t)c];
			if (!(*e = ar_esc_dup(md ? AR_ESC_MD : AR_ESC_TERM, rows[i][c])))
				*e = ar_res_strdup("(out of memory)");
			if (strlen(*e) > w[c])
				w[c] = strlen(*e);
		}
	for (size_t i = 0; i < n; i++) {
		for (int c = 0; c < ncols; c++) {
			const char *e = shown[i * (size_t)ncols + (size_t)c];
			if (md)
				fprintf(f, "| %s ", e);
			else if (c == 0)
				fprintf(f, "%-*s", (int)w[c], e);
			else
				fprintf(f, "  %*s", (int)w[c], e);
		}
		fputs(md ? "|\n" : "\n", f);
		if (md && i == 0) {
			for (int c = 0; c < ncols; c++)
				fputs(c ? "|---:" : "|---", f);
			fputs("|\n", f);
		}
	}
	for (size_t i = 0; i < n * (size_t)ncols; i++)
		free(shown[i]);
	free(shown);
}

/* The reason of the first counter that was never measured, or NULL. */
static const char *unmeasured_reason(const ar_res_trace_t *t)
{
	for (size_t i = 0; i < t->nallocs; i++)
		for (size_t k = 0; k < t->allocs[i].ncounters; k++)
			if (!t->allocs[i].counters[k].value.n && t->allocs[i].counters[k].reason)
				return t->allocs[i].counters[k].reason;
	return NULL;
}

/* Measured counters per allocator (hardware ones by name, simulated ones as
 * sim.NAME, access_pass_ns), then why the unmeasured ones are missing. */
static void print_counters(FILE *f, const ar_res_trace_t *t, int md)
{
	if (!any_counter(t)) {
		const char *why = counter_reason(t);
		if (why) {
			fputs(md ? "\nHardware counters: not measured (" : "  counters: not measured (", f);
			put_s(f, md, why);
			fputs(md ? ").\n" : ")\n", f);
		}
		return;
	}
	fprintf(f, md ? "\nCounters (median per run; sim. = valgrind simulation):\n\n"
		      : "  counters (median per run; sim. = valgrind simulation):\n");
	for (size_t i = 0; i < t->nallocs; i++) {
		const ar_res_alloc_t *a = &t->allocs[i];
		char *name = ar_esc_dup(md ? AR_ESC_MD : AR_ESC_TERM, a->name);
		fprintf(f, md ? "- %s:" : "    %-10s", name ? name : "(out of memory)");
		free(name);
		for (size_t k = 0; k < a->ncounters; k++) {
			char v[24];
			if (!a->counters[k].value.n)
				continue;
			fputc(' ', f);
			put_s(f, md, a->counters[k].name);
			fprintf(f, " %s", ar_res_fmt_num(v, sizeof v, a->counters[k].value.med));
		}
		fputc('\n', f);
	}
	const char *why = unmeasured_reason(t);
	if (why) {
		fputs(md ? "\nHardware counters: not measured (" : "  counters: not measured (", f);
		put_s(f, md, why);
		fputs(md ? ").\n" : ")\n", f);
	}
}

static void print_failures(FILE *f, const ar_res_trace_t *t, int md)
{
	for (size_t i = 0; i < t->nallocs; i++)
		for (size_t k = 0; k < t->allocs[i].nfails; k++) {
			const ar_res_fail_t *fl = &t->allocs[i].fails[k];
			fputs(md ? "- failed: " : "  failed: ", f);
			put_s(f, md, t->allocs[i].name);
			fprintf(f, " repetition %d (run %lld): %s", fl->repetition, (long long)fl->run_id, md ? "**" : "");
			put_s(f, md, fl->status);
			fputs(md ? "** — " : ": ", f);
			put_s(f, md, fl->reason ? fl->reason : "no reason stored");
			fputc('\n', f);
		}
}

void ar_res_print_trace(FILE *f, const ar_res_set_t *rep, const ar_res_trace_t *t, int md)
{
	trace_heading(f, rep, t, md);
	row_t *rows = ar_res_xcalloc(t->nallocs + 1, sizeof *rows);
	int ncols = ar_res_table_head(rows[0], t);
	for (size_t k = 0; k < t->nallocs; k++)
		ar_res_fill_row(rows[k + 1], t, &t->allocs[k]);
	print_rows(f, rows, t->nallocs + 1, ncols, md);
	free(rows);
	print_counters(f, t, md);
	if (md)
		fputc('\n', f);
	print_failures(f, t, md);
}

static void print_text(FILE *f, const ar_res_set_t *rep, int md)
{
	if (md) {
		fputs("## Allocator comparison (", f);
		put_s(f, md, rep->path);
		fputs(")\n\n", f);
	}
	for (size_t i = 0; i < rep->ntraces; i++) {
		ar_res_print_trace(f, rep, &rep->traces[i], md);
		fputc('\n', f);
	}
	fprintf(f, md ? "_%s_\n" : "(%s)\n", ar_res_columns_note);
}

/* Union of the counter names in the model, for the CSV columns. */
static size_t counter_names(const ar_res_set_t *rep, const char **names, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < rep->ntraces; i++)
		for (size_t j = 0; j < rep->traces[i].nallocs; j++)
			for (size_t k = 0; k < rep->traces[i].allocs[j].ncounters; k++) {
				const char *c = rep->traces[i].allocs[j].counters[k].name;
				size_t m = 0;
				while (m < n && strcmp(names[m], c))
					m++;
				if (m == n && n < max)
					names[n++] = c;
			}
	return n;
}

static void csv_num(FILE *f, double v)
{
	fputc(',', f);
	if (!isnan(v))
		ar_res_put_json_num(f, v);
}

/* 1 when the median latency s is at or below a's timer resolution, 0 when
 * above, NAN when either is unknown. */
static double below(const ar_res_alloc_t *a, const ar_res_stat_t *s)
{
	if (isnan(s->med) || !(a->timer_res_ns.med > 0))
		return NAN;
	return s->med <= a->timer_res_ns.med;
}

static void print_csv(FILE *f, const ar_res_set_t *rep)
{
	const char *cn[32];
	size_t ncn = counter_names(rep, cn, 32);
	fputs("trace_sha256,trace_name,host,threads,allocator,allocator_version,baseline,recorded_allocator,"
	      "runs_ok,runs_total,predicted_time_ns,predicted_time_vs_baseline,predicted_peak_rss_bytes,"
	      "predicted_peak_rss_vs_baseline,"
	      "ops_per_sec,ops_per_sec_min,ops_per_sec_max,ops_per_sec_spread,speed_vs_baseline,"
	      "p50_ns,p99_ns,p999_ns,max_ns,peak_heap_rss_bytes,peak_heap_rss_bytes_min,"
	      "peak_heap_rss_bytes_max,heap_rss_vs_baseline,fragmentation,minor_faults,major_faults,"
	      "failed_allocs,timer_resolution_ns,p50_below_resolution,p99_below_resolution,"
	      "p999_below_resolution,fidelity_time_error,fidelity_rss_error,prediction_reason,fidelity_reason",
	      f);
	for (size_t k = 0; k < ncn; k++) {
		fputc(',', f);
		ar_esc_csv(f, cn[k]);
	}
	fputs(",failures,machine\n", f);
	for (size_t i = 0; i < rep->ntraces; i++) {
		const ar_res_trace_t *t = &rep->traces[i];
		for (size_t j = 0; j < t->nallocs; j++) {
			const ar_res_alloc_t *a = &t->allocs[j];
			ar_esc_csv(f, t->sha256);
			fputc(',', f);
			ar_esc_csv(f, t->name);
			fputc(',', f);
			ar_esc_csv(f, t->host);
			fprintf(f, ",%lld,", (long long)t->threads);
			ar_esc_csv(f, a->name);
			fputc(',', f);
			ar_esc_csv(f, a->version);
			fputc(',', f);
			ar_esc_csv(f, t->baseline);
			fputc(',', f);
			ar_esc_csv(f, t->recorded_allocator);
			fprintf(f, ",%d,%d", a->runs_ok, a->runs_total);
			const double v[] = {a->pred_time_ns.med, a->pred_time_vs_baseline, a->pred_rss_bytes.med,
					    a->pred_rss_vs_baseline, a->ops_per_sec.med, a->ops_per_sec.min,
					    a->ops_per_sec.max, ar_res_spread(&a->ops_per_sec), a->speed_vs_baseline,
					    a->p50_ns.med, a->p99_ns.med, a->p999_ns.med, a->max_ns.med,
					    a->heap_bytes.med, a->heap_bytes.min, a->heap_bytes.max, a->heap_vs_baseline,
					    a->frag.med, a->minor_faults.med, a->major_faults.med, a->failed_allocs.med,
					    a->timer_res_ns.med, below(a, &a->p50_ns), below(a, &a->p99_ns),
					    below(a, &a->p999_ns), a->fid_time_err.med, a->fid_rss_err.med};
			for (size_t k = 0; k < sizeof v / sizeof *v; k++)
				csv_num(f, v[k]);
			fputc(',', f);
			ar_esc_csv(f, a->prediction_reason);
			fputc(',', f);
			ar_esc_csv(f, a->fidelity_reason);
			for (size_t k = 0; k < ncn; k++) {
				double cv = NAN;
				for (size_t m = 0; m < a->ncounters; m++)
					if (!strcmp(a->counters[m].name, cn[k]))
						cv = a->counters[m].value.med;
				csv_num(f, cv);
			}
			fputc(',', f);
			char *fails = ar_res_strdup("");
			for (size_t k = 0; k < a->nfails; k++) {
				char *n = ar_res_strf("%s%s%s: %s", fails, k ? " | " : "", a->fails[k].status,
						      a->fails[k].reason ? a->fails[k].reason : "");
				free(fails);
				fails = n;
			}
			ar_esc_csv(f, fails);
			free(fails);
			fputc(',', f); /* last: columns are only ever added at the end */
			ar_esc_csv(f, t->machine);
			fputc('\n', f);
		}
	}
}

static void json_stat(FILE *f, const char *key, const ar_res_stat_t *s)
{
	fprintf(f, "\"%s\": {\"median\": ", key);
	ar_res_put_json_num(f, s->med);
	fputs(", \"min\": ", f);
	ar_res_put_json_num(f, s->min);
	fputs(", \"max\": ", f);
	ar_res_put_json_num(f, s->max);
	fprintf(f, ", \"n\": %d}", s->n);
}

/* One run, on one line; run_id and run_uuid null when it was not stored. */
static void json_run(FILE *f, const ar_res_run_t *r, int first)
{
	fputs(first ? "\n          {\"run_id\":" : ",\n          {\"run_id\":", f);
	ar_res_put_json_num(f, r->run_id > 0 ? (double)r->run_id : NAN);
	fputs(",\"run_uuid\":", f);
	ar_esc_json(f, r->run_uuid);
	fprintf(f, ",\"repetition\":%d,\"status\":", r->repetition);
	ar_esc_json(f, r->status);
	fputs(",\"reason\":", f);
	ar_esc_json(f, r->reason);
	fputs(",\"library_path\":", f);
	ar_esc_json(f, r->library_path);
	fputs(",\"ops\":", f);
	ar_res_put_json_num(f, r->ops);
	fputs(",\"wall_ns\":", f);
	ar_res_put_json_num(f, r->wall_ns);
	for (int m = 0; m < AR_RES_NFIG; m++) {
		fprintf(f, ",\"%s\":", ar_res_fig_names[m]);
		ar_res_put_json_num(f, r->fig[m]);
	}
	fputs(",\"prediction_reason\":", f);
	ar_esc_json(f, r->prediction_reason);
	fputs(",\"fidelity_reason\":", f);
	ar_esc_json(f, r->fidelity_reason);
	fputc('}', f);
}

static void json_alloc(FILE *f, const ar_res_alloc_t *a)
{
	fputs("        {\"name\": ", f);
	ar_esc_json(f, a->name);
	fputs(", \"version\": ", f);
	ar_esc_json(f, a->version);
	fprintf(f, ", \"runs_ok\": %d, \"runs_total\": %d,\n         ", a->runs_ok, a->runs_total);
	const struct {
		const char *k;
		const ar_res_stat_t *s;
	} st[] = {{"ops_per_sec", &a->ops_per_sec}, {"p50_ns", &a->p50_ns}, {"p99_ns", &a->p99_ns},
		  {"p999_ns", &a->p999_ns}, {"max_ns", &a->max_ns}, {"peak_heap_rss_bytes", &a->heap_bytes},
		  {"final_heap_rss_bytes", &a->final_heap_bytes}, {"fragmentation", &a->frag},
		  {"minor_faults", &a->minor_faults}, {"major_faults", &a->major_faults},
		  {"failed_allocs", &a->failed_allocs}, {"timer_resolution_ns", &a->timer_res_ns},
		  {"predicted_time_ns", &a->pred_time_ns}, {"predicted_peak_rss_bytes", &a->pred_rss_bytes},
		  {"fidelity_time_error", &a->fid_time_err}, {"fidelity_rss_error", &a->fid_rss_err}};
	for (size_t k = 0; k < sizeof st / sizeof *st; k++) {
		json_stat(f, st[k].k, st[k].s);
		fputs(",\n         ", f);
	}
	fputs("\"ops_per_sec_spread\": ", f);
	ar_res_put_json_num(f, ar_res_spread(&a->ops_per_sec));
	fputs(", \"speed_vs_baseline\": ", f);
	ar_res_put_json_num(f, a->speed_vs_baseline);
	fputs(", \"heap_rss_vs_baseline\": ", f);
	ar_res_put_json_num(f, a->heap_vs_baseline);
	fputs(",\n         \"predicted_time_vs_baseline\": ", f);
	ar_res_put_json_num(f, a->pred_time_vs_baseline);
	fputs(", \"predicted_peak_rss_vs_baseline\": ", f);
	ar_res_put_json_num(f, a->pred_rss_vs_baseline);
	fputs(", \"prediction_reason\": ", f);
	ar_esc_json(f, a->prediction_reason);
	fputs(", \"fidelity_reason\": ", f);
	ar_esc_json(f, a->fidelity_reason);
	const struct {
		const char *k;
		const ar_res_stat_t *s;
	} lat[] = {{"p50_ns", &a->p50_ns}, {"p99_ns", &a->p99_ns}, {"p999_ns", &a->p999_ns}, {"max_ns", &a->max_ns}};
	fputs(",\n         ", f);
	for (size_t k = 0; k < sizeof lat / sizeof *lat; k++) {
		double b = below(a, lat[k].s);
		fprintf(f, "%s\"%s_below_resolution\": %s", k ? ", " : "", lat[k].k,
			isnan(b) ? "null" : b ? "true" : "false");
	}
	fputs(",\n         \"counters\": {", f);
	for (size_t k = 0; k < a->ncounters; k++) {
		fprintf(f, "%s", k ? ", " : "");
		ar_esc_json(f, a->counters[k].name);
		fputs(": {\"median\": ", f);
		ar_res_put_json_num(f, a->counters[k].value.med);
		fputs(", \"reason\": ", f);
		ar_esc_json(f, a->counters[k].reason);
		fputc('}', f);
	}
	fputs("},\n         \"failures\": [", f);
	for (size_t k = 0; k < a->nfails; k++) {
		fprintf(f, "%s{\"run_id\": %lld, \"repetition\": %d, \"status\": ", k ? ", " : "",
			(long long)a->fails[k].run_id, a->fails[k].repetition);
		ar_esc_json(f, a->fails[k].status);
		fputs(", \"reason\": ", f);
		ar_esc_json(f, a->fails[k].reason);
		fputc('}', f);
	}
	fputs("],\n         \"runs\": [", f);
	for (size_t k = 0; k < a->nruns; k++)
		json_run(f, &a->runs[k], k == 0);
	fputs("]}", f);
}

void ar_res_json_begin(FILE *f, const char *database)
{
	/* the baseline is per trace (traces[].baseline) since format 2 */
	fprintf(f, "{\"format_version\": %d, \"database\": ", AR_RES_FORMAT_VERSION);
	ar_esc_json(f, database);
	fputs(",\n \"traces\": [\n", f);
}

void ar_res_json_trace(FILE *f, const ar_res_trace_t *t, int first)
{
	fputs(first ? "  {\"sha256\": " : ",\n  {\"sha256\": ", f);
	ar_esc_json(f, t->sha256);
	fputs(", \"name\": ", f);
	ar_esc_json(f, t->name);
	fputs(", \"program\": ", f);
	ar_esc_json(f, t->program);
	fputs(", \"host\": ", f);
	ar_esc_json(f, t->host);
	fputs(", \"machine\": ", f);
	ar_esc_json(f, t->machine);
	fputs(", \"status\": ", f);
	ar_esc_json(f, t->status);
	fputs(",\n   \"baseline\": ", f);
	ar_esc_json(f, t->baseline);
	fprintf(f, ", \"baseline_is_recorded\": %s, \"baseline_note\": ", t->baseline_is_recorded ? "true" : "false");
	ar_esc_json(f, t->baseline_note);
	fputs(",\n   \"recorded\": {\"allocator\": ", f);
	ar_esc_json(f, t->recorded_allocator);
	fputs(", \"library\": ", f);
	ar_esc_json(f, t->recorded_library);
	fputs(", \"version\": ", f);
	ar_esc_json(f, t->recorded_version);
	const struct {
		const char *k;
		double v;
	} rec[] = {{"duration_ns", t->recorded_duration_ns}, {"start_rss_bytes", t->recorded_start_rss_bytes},
		   {"peak_rss_bytes", t->recorded_peak_rss_bytes}, {"rss_samples", t->recorded_rss_samples},
		   {"cpu_ns", t->recorded_cpu_ns}, {"recorder_cpu_ns", t->recorded_recorder_cpu_ns}};
	for (size_t k = 0; k < sizeof rec / sizeof *rec; k++) {
		fprintf(f, ", \"%s\": ", rec[k].k);
		/* 0 from a trace built in memory (allocreplay) means not known */
		ar_res_put_json_num(f, rec[k].v > 0 || (rec[k].v == 0 && t->recorded_allocator) ? rec[k].v : NAN);
	}
	fputs(", \"reason\": ", f);
	ar_esc_json(f, t->recorded_reason);
	fprintf(f, "},\n   \"events\": %lld, \"threads\": %lld, \"calls\": %lld, \"peak_live_bytes\": %lld,"
		   "\n   \"allocators\": [\n",
		(long long)t->events, (long long)t->threads, (long long)t->calls, (long long)t->peak_live_bytes);
	for (size_t j = 0; j < t->nallocs; j++) {
		json_alloc(f, &t->allocs[j]);
		fputs(j + 1 < t->nallocs ? ",\n" : "\n", f);
	}
	fputs("   ]}", f);
}

static void json_series(FILE *f, const ar_res_series_t *s)
{
	fputs("{\"scenario\": ", f);
	ar_esc_json(f, s->scenario);
	fputs(", \"host\": ", f);
	ar_esc_json(f, s->host);
	fputs(", \"points\": [", f);
	for (size_t p = 0; p < s->npoints; p++) {
		fprintf(f, "%s{\"threads\": %lld, \"trace_sha256\": ", p ? ", " : "", (long long)s->points[p]->threads);
		ar_esc_json(f, s->points[p]->sha256);
		fputs(", \"ops_per_sec\": {", f);
		for (size_t j = 0; j < s->points[p]->nallocs; j++) {
			const ar_res_alloc_t *a = &s->points[p]->allocs[j];
			fputs(j ? ", " : "", f);
			ar_esc_json(f, a->name);
			fputs(": ", f);
			ar_res_put_json_num(f, a->ops_per_sec.med);
		}
		fputs("}}", f);
	}
	fputs("]}", f);
}

void ar_res_json_end(FILE *f, const ar_res_series_t *series, size_t nseries)
{
	fputs("\n ],\n \"scaling\": [", f);
	for (size_t i = 0; i < nseries; i++) {
		fputs(i ? ",\n  " : "\n  ", f);
		json_series(f, &series[i]);
	}
	fputs("]}\n", f);
}

static void print_json(FILE *f, const ar_res_set_t *rep)
{
	ar_res_json_begin(f, rep->path);
	for (size_t i = 0; i < rep->ntraces; i++)
		ar_res_json_trace(f, &rep->traces[i], i == 0);
	ar_res_json_end(f, rep->series, rep->nseries);
}

void ar_res_print(FILE *f, const ar_res_set_t *rep, enum ar_res_format fmt)
{
	switch (fmt) {
	case AR_RES_TABLE: print_text(f, rep, 0); break;
	case AR_RES_MARKDOWN: print_text(f, rep, 1); break;
	case AR_RES_CSV: print_csv(f, rep); break;
	case AR_RES_JSON: print_json(f, rep); break;
	}
}
