/*
 * report_html.c — `allocreport --html FILE`: one self-contained HTML page
 * (no script, no external stylesheet, font, image or link target outside the
 * page; the favicon is an empty data: URL so a browser fetches nothing).
 * Per trace: what the trace is, its baseline (what the program ran on), how
 * far replay is from the recorded program, the comparison table (predicted
 * program figures first when there are any), failed runs, the
 * recommendations with their evidence and cautions, the charts
 * (report_charts.c), and for a trace recorded with stacks its allocation
 * sites (report_flame.c: flame charts and the top sites); then one
 * thread-scaling chart per scenario replayed at several thread counts. The page carries no timestamp, so the same
 * database gives the same file.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_cli.h"
#include "ar_escape.h"
#include "report_model.h"

static const char style[] =
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:1180px;"
	"color:#222;padding:0 16px}\n"
	"h1{font-size:22px}h2{font-size:18px;border-top:1px solid #ccc;padding-top:14px;margin-top:32px}"
	"h3{font-size:15px}\n"
	"table{border-collapse:collapse;font-size:12.5px;margin:8px 0}"
	"th,td{padding:3px 8px;border-bottom:1px solid #e3e3e3;text-align:right;white-space:nowrap}"
	"th:first-child,td:first-child{text-align:left}th{background:#f4f4f4}"
	"tr.baseline td{font-weight:bold}\n"
	".meta{color:#555}.warn{color:#a4400f}.ns{color:#a4400f;font-weight:normal}code{font-size:12px}\n"
	".charts{display:flex;flex-wrap:wrap;gap:12px}figure{margin:0}\n"
	"svg.chart{background:#fff;border:1px solid #ddd;max-width:100%;height:auto}"
	"svg text{font-family:sans-serif;font-size:11px;fill:#333}\n"
	"svg .title{font-size:12.5px;font-weight:bold}svg .label{font-size:11.5px}svg .note{fill:#777}"
	"svg .fail{fill:#a4400f}svg .value{font-size:10.5px}\n"
	"svg .axis{stroke:#444;stroke-width:1}svg .grid{stroke:#e6e6e6;stroke-width:1}"
	"svg .whisker{stroke:#222;stroke-width:1.3;fill:none}\n"
	"svg polyline{fill:none;stroke-width:2}svg .series .whisker{stroke-width:1}"
	"svg .band{fill-opacity:0.13;stroke:none}svg .zero{stroke:#555;stroke-width:1;stroke-dasharray:3 3}"
	"svg .end-label{font-size:11px;font-weight:bold}\n"
	"svg .flame-label{font-size:10.5px;fill:#111;pointer-events:none}svg g.frame:hover rect{stroke:#222;stroke-width:1}"
	"table.top-sites td.stack{text-align:left;white-space:normal;max-width:760px;overflow-wrap:anywhere}\n"
	".swatch{display:inline-block;width:10px;height:10px;margin-right:4px}\n";

static void para(FILE *f, const char *cls, const char *text)
{
	fprintf(f, "<p%s%s%s>", cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
	ar_esc_html(f, text);
	fputs("</p>\n", f);
}

static void trace_meta(FILE *f, const ar_res_trace_t *t)
{
	char live[32];
	fputs("<p class=\"meta\">SHA-256 <code>", f);
	ar_esc_html(f, t->sha256);
	fprintf(f, "</code><br>%lld events, %lld thread(s), %lld calls replayed, peak live %s (%lld blocks), status ",
		(long long)t->events, (long long)t->threads, (long long)t->calls,
		ar_res_fmt_bytes(live, sizeof live, (double)t->peak_live_bytes), (long long)t->peak_live_blocks);
	ar_esc_html(f, t->status);
	/* Always: a page is shared, and its figures are the machine's as much
	 * as the allocators' (one comparison per machine, load.c). */
	fputs("<br>machine ", f);
	ar_esc_html(f, t->machine ? t->machine : "(unknown)");
	if (t->program) {
		fputs("<br>recorded as <code>", f);
		ar_esc_html(f, t->program);
		fputs("</code>", f);
	}
	fputs("</p>\n", f);
	char *notes[AR_RES_NOTES];
	int nn = ar_res_trace_notes(t, notes);
	for (int i = 0; i < nn; i++) {
		para(f, "meta trace-note", notes[i]);
		free(notes[i]);
	}
}

static void comparison_table(FILE *f, const ar_res_trace_t *t)
{
	fputs("<table class=\"comparison\">\n<tr>", f);
	char cells[AR_RES_NCOLS][AR_RES_CELL];
	int ncols = ar_res_table_head(cells, t);
	for (int c = 0; c < ncols; c++) {
		fputs("<th>", f);
		ar_esc_html(f, cells[c]);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	for (size_t i = 0; i < t->nallocs; i++) {
		ar_res_fill_row(cells, t, &t->allocs[i]);
		int base = t->baseline && !strcmp(t->baseline, t->allocs[i].name);
		fputs("<tr data-allocator=\"", f);
		ar_esc_html(f, t->allocs[i].name);
		fprintf(f, "\"%s>", base ? " class=\"baseline\"" : "");
		for (int c = 0; c < ncols; c++) {
			fputs("<td>", f);
			if (c == 0)
				fprintf(f, "<span class=\"swatch\" style=\"background:%s\"></span>",
					ar_svg_colour(t->allocs[i].name));
			ar_esc_html(f, cells[c]);
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	for (size_t i = 0; i < t->nallocs; i++)
		for (size_t k = 0; k < t->allocs[i].nfails; k++) {
			const ar_res_fail_t *fl = &t->allocs[i].fails[k];
			fputs("<p class=\"warn failed-run\">failed: ", f);
			ar_esc_html(f, t->allocs[i].name);
			fprintf(f, " repetition %d (run %lld): <b>", fl->repetition, (long long)fl->run_id);
			ar_esc_html(f, fl->status);
			fputs("</b> — ", f);
			ar_esc_html(f, fl->reason ? fl->reason : "no reason stored");
			fputs("</p>\n", f);
		}
}

static void advice(FILE *f, const ar_res_set_t *rep, const ar_res_trace_t *t)
{
	ar_rep_advice_t ad;
	ar_rep_advise(rep, t, &ad);
	fputs("<h3>Recommendations</h3>\n<ul class=\"recommendations\">\n", f);
	for (int g = 0; g < AR_REP_GOALS; g++) {
		const ar_rep_pick_t *p = &ad.picks[g];
		fprintf(f, "<li data-goal=\"%s\" data-verdict=\"%s\"><b>%s: ", p->goal, p->verdict, p->goal);
		ar_esc_html(f, p->best ? p->best->name : "(no successful run)");
		fputs("</b>", f);
		if (p->best && !p->significant)
			fprintf(f, " <span class=\"ns\">(%s%s)</span>", p->verdict,
				p->best == p->baseline && p->best != p->leader ? ": stay on the baseline" : "");
		if (p->evidence) {
			fputs(" — ", f);
			ar_esc_html(f, p->evidence);
		}
		for (size_t k = 0; k < p->nwarnings; k++) {
			fputs("<br><span class=\"warn\">⚠ ", f);
			ar_esc_html(f, p->warnings[k]);
			fputs("</span>", f);
		}
		fputs("</li>\n", f);
	}
	fputs("</ul>\n", f);
	if (ad.ncautions) {
		fputs("<p>Cautions:</p>\n<ul class=\"cautions\">\n", f);
		for (size_t k = 0; k < ad.ncautions; k++) {
			fputs("<li class=\"warn\">", f);
			ar_esc_html(f, ad.cautions[k]);
			fputs("</li>\n", f);
		}
		fputs("</ul>\n", f);
	}
	ar_rep_advice_free(&ad);
}

int ar_rep_html(const ar_res_set_t *rep, const char *path)
{
	const char *shown = ar_cli_is_stdio(path) ? "standard output" : path;
	FILE *f = ar_cli_open_output(path, "w");
	if (!f) {
		ar_cli_error(shown, "cannot create: %s", strerror(errno));
		return -1;
	}
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<link rel=\"icon\" href=\"data:,\">\n<title>allocrr report: ",
	      f);
	ar_esc_html(f, rep->path);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>allocrr report</h1>\n", style);
	fputs("<p class=\"meta\">database <code>", f);
	ar_esc_html(f, rep->path);
	fprintf(f, "</code>: %zu trace(s)%s, %zu thread-scaling series. Made by allocreport from the results of "
		   "allocreplay (docs/RESULTS.md).</p>\n<ul class=\"toc\">\n",
		rep->ntraces, rep->nhosts > 1 ? " x machine" : "", rep->nseries);
	for (size_t i = 0; i < rep->ntraces; i++) {
		fprintf(f, "<li><a href=\"#trace-%zu\">", i);
		ar_esc_html(f, rep->traces[i].name);
		fprintf(f, "</a> (%lld thread(s), %zu allocators", (long long)rep->traces[i].threads,
			rep->traces[i].nallocs);
		if (rep->nhosts > 1) { /* the same trace may be listed once per machine */
			fputs(", ", f);
			ar_esc_html(f, rep->traces[i].machine ? rep->traces[i].machine : "(unknown machine)");
		}
		fputs(")</li>\n", f);
	}
	if (rep->nseries)
		fputs("<li><a href=\"#scaling\">thread scaling</a></li>\n", f);
	fputs("</ul>\n", f);
	int marks = 0;
	for (size_t i = 0; i < rep->ntraces; i++) {
		const ar_res_trace_t *t = &rep->traces[i];
		fprintf(f, "<section class=\"trace\" id=\"trace-%zu\" data-sha256=\"", i);
		ar_esc_html(f, t->sha256);
		fputs("\">\n<h2>", f);
		ar_esc_html(f, t->name);
		fputs("</h2>\n", f);
		trace_meta(f, t);
		comparison_table(f, t);
		para(f, "meta", ar_res_columns_note);
		advice(f, rep, t);
		fputs("<div class=\"charts\">\n", f);
		marks += ar_chart_throughput(f, t, (int)i);
		marks += ar_chart_boxes(f, t, (int)i);
		marks += ar_chart_latency(f, rep, t, (int)i);
		marks += ar_chart_rss(f, rep, t, (int)i);
		fputs("</div>\n", f);
		size_t nsites;
		ar_res_site_t *sites = ar_rep_sites(rep, t, &nsites);
		marks += ar_rep_html_sites(f, t, sites, nsites, (int)i);
		ar_res_sites_free(sites, nsites);
		fputs("</section>\n", f);
	}
	if (rep->nseries) {
		fputs("<section id=\"scaling\">\n<h2>Thread scaling</h2>\n", f);
		para(f, "meta", "Traces whose recorded command lines differ only in their --threads argument (as "
				"`alloctrace gen SCENARIO --threads N` writes them), replayed on the same host.");
		fputs("<div class=\"charts\">\n", f);
		for (size_t i = 0; i < rep->nseries; i++)
			marks += ar_chart_scaling(f, &rep->series[i], (int)i);
		fputs("</div>\n</section>\n", f);
	}
	para(f, "meta", "Method: each allocator replayed the same compiled trace in its own process, one run at a "
			"time; medians over repetitions, whiskers and ranges are min-max over them; with at least 5 "
			"repetitions, box plots show their quartiles and every repetition as a dot. Latency CDFs "
			"pool the histogram buckets (log-linear, at most 0.78 % bucket error) of all ok runs, for all "
			"calls and per operation; the latency axis starts at the timer's resolution, below which calls "
			"cannot be told apart. Heap overhead is heap RSS minus the trace's exact live bytes at the "
			"same event (sampled at markers of the trace's event index): the memory the allocator holds "
			"beyond what the program uses, as the median over ok runs with a min-max band. Flame charts "
			"and top sites come from the trace's call sites (table sites), where it was recorded with "
			"stacks.");
	fputs("</body>\n</html>\n", f);
	if (ar_cli_close_output(f) != 0 || marks < 0) {
		ar_cli_error(shown, "writing the report failed: %s", strerror(errno));
		return -1;
	}
	return 0;
}
