/*
 * cmd_diff.c — `alloctrace diff [--format table|json] [--fail-if EXPR]... A B`:
 * what changed in a program's heap between two traces of it (a baseline A
 * and a new run B): calls per op, allocations, bytes, peak live bytes and
 * blocks, leaks, the size and lifetime histograms `alloctrace stats` prints
 * (both sides counted by heapstats.c, the same code), and, when both traces
 * carry stacks, the allocation sites whose figures changed, keyed by their
 * symbolised caller chain (sites.h), never by address: two runs of one
 * binary put it at different addresses.
 *
 * Invariants: the verdict "no difference" covers every count, byte, peak,
 * histogram bucket and site figure; times (duration, lifetimes in ns) vary
 * from run to run and are shown apart, outside the verdict. Trace figures
 * are exact, so every change is real: --fail-if rules (ar_gate.h) judge
 * every change, there is no noise to test for. A site present on one side
 * only changes from 0 (its change prints as "new").
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloctrace.h"
#include "ar_cli.h"
#include "ar_escape.h"
#include "ar_gate.h"
#include "heapstats.h"
#include "sites.h"

enum { DIFF_MAX_RULES = 64 };

/* One trace, counted. */
typedef struct diff_side {
	const char *path;
	ar_reader_t *r;
	ar_heapstats_t s;
	uint64_t peak_blocks;       /* the most blocks live at once */
	int partial;                /* the figures are of a readable prefix */
	ar_sites_t *sites;          /* NULL: no stacks, or see sites_problem */
	const char *sites_problem;  /* why sites is NULL, for the output */
} diff_side_t;

/* One whole-trace figure: gate name, text label, and how to read it. */
typedef struct diff_metric {
	const char *name, *label;
	uint64_t (*get)(const diff_side_t *d);
} diff_metric_t;

static uint64_t m_events(const diff_side_t *d) { return d->s.events; }
static uint64_t m_allocs(const diff_side_t *d) { return d->s.allocs; }
static uint64_t m_frees(const diff_side_t *d) { return d->s.frees; }
static uint64_t m_failed(const diff_side_t *d) { return d->s.failed; }
static uint64_t m_bytes(const diff_side_t *d) { return d->s.requested_bytes; }
static uint64_t m_peak_live(const diff_side_t *d) { return d->s.peak_live_bytes; }
static uint64_t m_peak_blocks(const diff_side_t *d) { return d->peak_blocks; }
static uint64_t m_leaked(const diff_side_t *d) { return d->s.never_freed_bytes; }
static uint64_t m_leaked_blocks(const diff_side_t *d) { return d->s.never_freed; }
static uint64_t m_threads(const diff_side_t *d) { return d->s.nthreads; }
static uint64_t m_cross(const diff_side_t *d) { return d->s.cross_thread_frees; }

static const diff_metric_t metrics[] = {
	{"events", "events", m_events},
	{"allocs", "allocations", m_allocs},
	{"frees", "frees", m_frees},
	{"failed", "failed allocations", m_failed},
	{"bytes", "requested bytes", m_bytes},
	{"peak_live", "peak live bytes", m_peak_live},
	{"peak_blocks", "peak live blocks", m_peak_blocks},
	{"leaked", "leaked bytes (never freed)", m_leaked},
	{"leaked_blocks", "leaked blocks", m_leaked_blocks},
	{"threads", "threads", m_threads},
	{"cross_frees", "cross-thread frees", m_cross},
};
#define NMETRICS (sizeof metrics / sizeof *metrics)

/* Per-site figures, gated with a "site_" prefix. */
static const struct {
	const char *name;
	ar_site_metric_t which; /* for ar_site_value where it applies */
} site_metrics[] = {
	{"site_calls", AR_SITE_CALLS},
	{"site_bytes", AR_SITE_BYTES},
	{"site_live_at_peak", AR_SITE_LIVE_AT_PEAK},
	{"site_temporary", AR_SITE_TEMPORARY},
	{"site_leaked", AR_SITE_LEAKED},
};
#define NSITE_METRICS (sizeof site_metrics / sizeof *site_metrics)

/* Every name --fail-if accepts: the figures above, per-op calls, per-site figures. */
static const char *const gate_names[] = {"events", "allocs", "frees", "failed", "bytes", "peak_live", "peak_blocks",
					 "leaked", "leaked_blocks", "threads", "cross_frees", "calls_*",
					 "site_calls", "site_bytes", "site_live_at_peak", "site_temporary",
					 "site_leaked", NULL};

typedef struct diff_opts {
	const char *a, *b;
	int json;
	ar_gate_rule_t rules[DIFF_MAX_RULES];
	int nrules;
} diff_opts_t;

/* A site that differs: its figures on each side (zeroes where absent). */
typedef struct site_row {
	const char *label;
	uint64_t a[NSITE_METRICS], b[NSITE_METRICS];
} site_row_t;

typedef struct diff_result {
	site_row_t *rows;
	size_t nrows, same; /* sites that differ; sites equal on both sides */
	int sites_compared;
	int identical;
	int violations;
} diff_result_t;

const ar_cmd_help_t ar_diff_help = {
	"alloctrace diff [OPTION]... A B",
	"What changed in the heap between two traces of the same program, A the\n"
	"baseline and B the new run: calls per op, allocations, requested bytes, peak\n"
	"live bytes and blocks, leaked bytes and blocks, the size and lifetime\n"
	"histograms of `alloctrace stats`, and, when both traces were recorded with\n"
	"allocrec --stacks, every allocation site whose figures changed (calls, bytes,\n"
	"bytes live at the peak, temporary allocations, leaked bytes), keyed by its\n"
	"symbolised caller chain as `alloctrace stacks --folded` prints it. Says \"no\n"
	"difference\" when every count, byte, histogram bucket and site is equal;\n"
	"durations and lifetimes in time vary between runs and are shown apart.\n"
	"\n"
	"--fail-if EXPR (repeatable; docs/CI.md) makes the exit status say whether B\n"
	"regressed: EXPR is METRIC>+N% or METRIC<-N% (also >=, <=), the change from A\n"
	"to B in percent (from 0, any increase is \"new\" and passes every > threshold).\n"
	"Trace figures are exact counts: every change is judged, none is noise.\n"
	"Metrics: events, allocs, frees, failed, bytes (requested), peak_live (bytes),\n"
	"peak_blocks, leaked (bytes never freed), leaked_blocks, threads, cross_frees,\n"
	"calls_OP (calls of one op, e.g. calls_malloc, calls_free); per site, each\n"
	"site that changed judged alone: site_calls, site_bytes, site_live_at_peak,\n"
	"site_temporary (calls), site_leaked (bytes).\n"
	"\n"
	"Exit status: 0 compared (whether or not the traces differ), 4 a --fail-if\n"
	"rule tripped (one line per violation on stderr), 3 compared, but a trace is\n"
	"truncated or corrupt and its figures are of its readable part, 1 usage error\n"
	"(a bad --fail-if names the expression), 2 a trace cannot be read.",
	"      --format=FMT    table (default) or json\n"
	"      --json          the same as --format=json\n"
	"      --fail-if=EXPR  exit 4 when a change passes EXPR's threshold (repeatable)\n",
};

/* ---- reading one trace ---- */

/* Count every event of d in sequence order (heapstats.c, as stats does)
 * and note the most blocks live at once. 0, or 2 after saying why. */
static int count_side(diff_side_t *d)
{
	if (!(d->r = ar_open_or_complain(d->path)))
		return 2;
	ar_heapstats_init(&d->s, ar_reader_event_count(d->r));
	d->s.window = (ar_reader_header(d->r)->flags & AR_HDR_WINDOW) != 0; /* SPEC 6.11 */
	ar_event_t e;
	int rc;
	while ((rc = ar_reader_next_merged(d->r, &e)) == 1) {
		if (ar_heapstats_add(&d->s, &e))
			return ar_cli_error(d->path, "out of memory tracking %" PRIu64 " live objects", d->s.live_objects);
		if (d->s.live_objects > d->peak_blocks)
			d->peak_blocks = d->s.live_objects;
	}
	if (rc == AR_ENOMEM || ar_heapstats_finish(&d->s))
		return ar_cli_error(d->path, "out of memory counting the trace");
	if (rc < 0 || ar_reader_status(d->r) != AR_STATUS_COMPLETE) {
		const ar_error_t *err = ar_reader_error(d->r);
		ar_cli_error(d->path, "%s at byte offset %" PRIu64 ": %s; the diff covers the events before it",
			     ar_reader_status(d->r) == AR_STATUS_TRUNCATED ? "truncated" : "corrupt", err->offset,
			     ar_trace_problem(d->path, err->msg));
		d->partial = 1;
	}
	return 0;
}

/* The sites of d, when it has stacks (sites.h); a problem is kept as a
 * sentence for the output, never fatal: the whole-trace diff stands. */
static void build_sites(diff_side_t *d)
{
	if (!(ar_reader_header(d->r)->flags & AR_HDR_STACKS)) {
		d->sites_problem = "recorded without stacks (allocrec --stacks)";
		return;
	}
	ar_error_t err = {0};
	ar_sites_opts_t opt = {.symbolize = 1, .notes = stderr, .name = d->path};
	if (ar_sites_build(&d->sites, d->r, &opt, &err) != 0) {
		ar_cli_error(d->path, "cannot build its allocation sites: %s", err.msg[0] ? err.msg : "out of memory");
		d->sites = NULL;
		d->sites_problem = "its allocation sites could not be built";
	}
}

static void close_side(diff_side_t *d)
{
	ar_sites_free(d->sites);
	if (d->r)
		ar_heapstats_free(&d->s);
	ar_reader_close(d->r);
}

/* ---- comparing ---- */

static void site_values(const ar_site_t *s, uint64_t *v)
{
	for (size_t i = 0; i < NSITE_METRICS; i++)
		v[i] = s ? ar_site_value(s, site_metrics[i].which) : 0;
}

static uint64_t absdiff(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

/* Largest change in bytes first (then calls), ties by label: the reader
 * sees first what moved the heap most. */
static int by_change(const void *x, const void *y)
{
	const site_row_t *p = x, *q = y;
	for (int k = 1; k >= 0; k--) { /* [1] bytes, then [0] calls */
		uint64_t dp = absdiff(p->a[k], p->b[k]), dq = absdiff(q->a[k], q->b[k]);
		if (dp != dq)
			return dp < dq ? 1 : -1;
	}
	return strcmp(p->label, q->label);
}

/* Sites are ordered by label in both models (sites.h): one merge walk
 * finds those on one side only and those whose figures changed. */
static int diff_sites(const diff_side_t *a, const diff_side_t *b, diff_result_t *res)
{
	size_t na = ar_sites_count(a->sites), nb = ar_sites_count(b->sites), i = 0, j = 0;
	if (!(res->rows = calloc(na + nb + 1, sizeof *res->rows)))
		return -1;
	while (i < na || j < nb) {
		const ar_site_t *sa = i < na ? ar_sites_at(a->sites, i) : NULL;
		const ar_site_t *sb = j < nb ? ar_sites_at(b->sites, j) : NULL;
		int c = !sa ? 1 : !sb ? -1 : strcmp(sa->label, sb->label);
		site_row_t row = {.label = c <= 0 ? sa->label : sb->label};
		site_values(c <= 0 ? sa : NULL, row.a);
		site_values(c >= 0 ? sb : NULL, row.b);
		i += c <= 0;
		j += c >= 0;
		if (memcmp(row.a, row.b, sizeof row.a))
			res->rows[res->nrows++] = row;
		else
			res->same++;
	}
	qsort(res->rows, res->nrows, sizeof *res->rows, by_change);
	res->sites_compared = 1;
	return 0;
}

static int hist_equal(const uint64_t *x, const uint64_t *y) { return !memcmp(x, y, AR_HS_LOG2 * sizeof *x); }

/* Everything but times equal? */
static int identical(const diff_side_t *a, const diff_side_t *b, const diff_result_t *res)
{
	for (size_t i = 0; i < NMETRICS; i++)
		if (metrics[i].get(a) != metrics[i].get(b))
			return 0;
	if (memcmp(a->s.calls_by_op, b->s.calls_by_op, sizeof a->s.calls_by_op))
		return 0;
	if (!hist_equal(a->s.size_log2, b->s.size_log2) || !hist_equal(a->s.life_ops_log2, b->s.life_ops_log2))
		return 0;
	return !res->sites_compared || res->nrows == 0;
}

/* The name of op code op in either trace's op table ("" when neither has it). */
static const char *op_name(const diff_side_t *a, const diff_side_t *b, unsigned op)
{
	const ar_header_t *ha = ar_reader_header(a->r), *hb = ar_reader_header(b->r);
	if (ha->ops[op].name[0] && !ar_op_is_sized(ha, op))
		return ha->ops[op].name;
	if (hb->ops[op].name[0] && !ar_op_is_sized(hb, op))
		return hb->ops[op].name;
	return "";
}

/* ---- --fail-if ---- */

/* One violation on stderr: what, A -> B, the change, the rule. */
static void violation(const diff_opts_t *o, const ar_gate_rule_t *rule, const char *metric, const char *site,
		      uint64_t va, uint64_t vb, double chg)
{
	char pct[32];
	fprintf(stderr, "%s: regression: %s", ar_cli_tool(), metric);
	if (site) {
		fputs(" of site ", stderr);
		ar_esc_term(stderr, site);
	}
	fputs(" in ", stderr);
	ar_esc_term(stderr, o->b);
	fputs(" against ", stderr);
	ar_esc_term(stderr, o->a);
	fprintf(stderr, ": %" PRIu64 " -> %" PRIu64 " (%s) breaks --fail-if '", va, vb,
		ar_gate_fmt_pct(pct, sizeof pct, chg));
	ar_esc_term(stderr, rule->text);
	fputs("'\n", stderr);
}

/* Judge one figure against every rule naming it; returns the violations. */
static int judge(const diff_opts_t *o, const char *metric, const char *site, uint64_t va, uint64_t vb)
{
	int n = 0;
	double chg = ar_gate_change_pct((double)va, (double)vb);
	for (int i = 0; i < o->nrules; i++)
		if (!strcmp(o->rules[i].metric, metric) && ar_gate_trips(&o->rules[i], chg)) {
			violation(o, &o->rules[i], metric, site, va, vb, chg);
			n++;
		}
	return n;
}

static int judge_all(const diff_opts_t *o, const diff_side_t *a, const diff_side_t *b, const diff_result_t *res)
{
	int n = 0;
	for (size_t i = 0; i < NMETRICS; i++)
		n += judge(o, metrics[i].name, NULL, metrics[i].get(a), metrics[i].get(b));
	for (unsigned op = 1; op < AR_OP_LIMIT; op++) {
		const char *name = op_name(a, b, op);
		char m[AR_GATE_METRIC];
		if (name[0] && snprintf(m, sizeof m, "calls_%s", name) < (int)sizeof m)
			n += judge(o, m, NULL, a->s.calls_by_op[op], b->s.calls_by_op[op]);
	}
	for (size_t r = 0; r < res->nrows; r++)
		for (size_t k = 0; k < NSITE_METRICS; k++)
			n += judge(o, site_metrics[k].name, res->rows[r].label, res->rows[r].a[k], res->rows[r].b[k]);
	return n;
}

/* ---- text ---- */

static void text_row(const char *label, uint64_t va, uint64_t vb)
{
	char pct[32];
	printf("  %-28s %14" PRIu64 " %14" PRIu64 " %+14" PRId64 " %9s\n", label, va, vb, (int64_t)(vb - va),
	       ar_gate_fmt_pct(pct, sizeof pct, ar_gate_change_pct((double)va, (double)vb)));
}

/* A log2 histogram's buckets that differ, "(no change)" when none does. */
static void text_hist(const char *title, const uint64_t *ha, const uint64_t *hb)
{
	printf("\n%s\n", title);
	int any = 0;
	for (int i = 0; i < AR_HS_LOG2; i++) {
		if (ha[i] == hb[i])
			continue;
		char label[64];
		snprintf(label, sizeof label, "[%" PRIu64 ", %" PRIu64 "]", i ? (uint64_t)1 << i : 0,
			 ((uint64_t)1 << (i + 1)) - 1);
		text_row(label, ha[i], hb[i]);
		any = 1;
	}
	if (!any)
		printf("  (no change)\n");
}

static void text_head(const diff_side_t *a, const diff_side_t *b)
{
	printf("A  ");
	ar_esc_term(stdout, a->path);
	printf("\nB  ");
	ar_esc_term(stdout, b->path);
	printf("\n\n  %-28s %14s %14s %14s %9s\n", "", "A", "B", "B - A", "change");
}

static void text_totals(const diff_side_t *a, const diff_side_t *b)
{
	for (unsigned op = 1; op < AR_OP_LIMIT; op++) {
		const char *name = op_name(a, b, op);
		if (!name[0] || (!a->s.calls_by_op[op] && !b->s.calls_by_op[op]))
			continue;
		char label[64];
		snprintf(label, sizeof label, "calls %s", name);
		text_row(label, a->s.calls_by_op[op], b->s.calls_by_op[op]);
	}
	for (size_t i = 0; i < NMETRICS; i++)
		text_row(metrics[i].label, metrics[i].get(a), metrics[i].get(b));
}

static void text_sites(const diff_side_t *a, const diff_side_t *b, const diff_result_t *res)
{
	printf("\nallocation sites (by caller chain)\n");
	if (!res->sites_compared) {
		const diff_side_t *d = a->sites_problem ? a : b;
		printf("  not compared: ");
		ar_esc_term(stdout, d->path);
		printf(" %s\n", d->sites_problem ? d->sites_problem : "has no sites");
		return;
	}
	printf("  %zu changed, %zu the same\n", res->nrows, res->same);
	const diff_side_t *sides[2] = {a, b};
	for (int i = 0; i < 2; i++) {
		uint32_t n = ar_sites_summary(sides[i]->sites)->unsymbolised_modules;
		if (!n)
			continue;
		printf("  note: %s has %u module(s) missing, stripped or rebuilt since it was recorded: their frames\n"
		       "  are MODULE+OFFSET and do not match the same function's name on the other side\n",
		       i ? "B" : "A", n);
	}
	for (size_t r = 0; r < res->nrows; r++) {
		const site_row_t *row = &res->rows[r];
		printf("\n  ");
		ar_esc_term(stdout, row->label);
		putchar('\n');
		for (size_t k = 0; k < NSITE_METRICS; k++)
			if (row->a[k] != row->b[k] || k < 2)
				text_row(site_metrics[k].name + 5, row->a[k], row->b[k]);
	}
}

static void print_text(const diff_side_t *a, const diff_side_t *b, const diff_result_t *res)
{
	text_head(a, b);
	text_totals(a, b);
	text_hist("request sizes (log2 buckets, bytes): buckets that changed", a->s.size_log2, b->s.size_log2);
	text_hist("lifetime in events (log2 buckets): buckets that changed", a->s.life_ops_log2, b->s.life_ops_log2);
	text_sites(a, b, res);
	printf("\ntimes (vary between runs; not part of the verdict)\n");
	text_row("duration (ns)", a->s.last_time_ns, b->s.last_time_ns);
	text_hist("lifetime in time (log2 buckets, ns): buckets that changed", a->s.life_ns_log2, b->s.life_ns_log2);
	printf("\n%s\n", res->identical ? "no difference" : "the traces differ");
}

/* ---- JSON ---- */

/* {"a":..,"b":..,"delta":..,"change_pct":..}; change_pct null from 0 to more. */
static void json_change(uint64_t va, uint64_t vb)
{
	printf("{\"a\":%" PRIu64 ",\"b\":%" PRIu64 ",\"delta\":%" PRId64 ",\"change_pct\":", va, vb,
	       (int64_t)(vb - va));
	double chg = ar_gate_change_pct((double)va, (double)vb);
	if (isinf(chg))
		printf("null");
	else
		printf("%.6g", chg);
	printf("}");
}

static void json_pair(const char *name, uint64_t va, uint64_t vb, int first)
{
	printf("%s\"%s\":", first ? "" : ",", name);
	json_change(va, vb);
}

static void json_hist(const char *name, const uint64_t *ha, const uint64_t *hb)
{
	printf(",\"%s\":[", name);
	int first = 1;
	for (int i = 0; i < AR_HS_LOG2; i++) {
		if (!ha[i] && !hb[i])
			continue;
		printf("%s{\"from\":%" PRIu64 ",\"a\":%" PRIu64 ",\"b\":%" PRIu64 ",\"delta\":%" PRId64 "}",
		       first ? "" : ",", i ? (uint64_t)1 << i : 0, ha[i], hb[i], (int64_t)(hb[i] - ha[i]));
		first = 0;
	}
	printf("]");
}

static void json_side(const char *key, const diff_side_t *d)
{
	printf("\"%s\":{\"path\":", key);
	ar_esc_json(stdout, d->path);
	printf(",\"program\":");
	ar_esc_json(stdout, ar_reader_header(d->r)->cmdline);
	printf(",\"partial\":%s,\"stacks\":%s}", d->partial ? "true" : "false",
	       ar_reader_header(d->r)->flags & AR_HDR_STACKS ? "true" : "false");
}

static void json_sites(const diff_side_t *a, const diff_side_t *b, const diff_result_t *res)
{
	printf(",\"sites\":");
	if (!res->sites_compared) {
		const diff_side_t *d = a->sites_problem ? a : b;
		printf("{\"compared\":false,\"reason\":");
		ar_esc_json(stdout, d->sites_problem ? d->sites_problem : "no sites");
		printf("}");
		return;
	}
	printf("{\"compared\":true,\"unsymbolised_modules\":[%u,%u],\"same\":%zu,\"changed\":[",
	       ar_sites_summary(a->sites)->unsymbolised_modules, ar_sites_summary(b->sites)->unsymbolised_modules,
	       res->same);
	for (size_t r = 0; r < res->nrows; r++) {
		printf("%s{\"site\":", r ? "," : "");
		ar_esc_json(stdout, res->rows[r].label);
		for (size_t k = 0; k < NSITE_METRICS; k++)
			json_pair(site_metrics[k].name + 5, res->rows[r].a[k], res->rows[r].b[k], 0);
		printf("}");
	}
	printf("]}");
}

static void print_json(const diff_side_t *a, const diff_side_t *b, const diff_result_t *res)
{
	printf("{\"format_version\":1,");
	json_side("a", a);
	printf(",");
	json_side("b", b);
	printf(",\"identical\":%s,\"violations\":%d,\"calls\":{", res->identical ? "true" : "false",
	       res->violations);
	int first = 1;
	for (unsigned op = 1; op < AR_OP_LIMIT; op++) {
		const char *name = op_name(a, b, op);
		if (!name[0] || (!a->s.calls_by_op[op] && !b->s.calls_by_op[op]))
			continue;
		char key[64];
		ar_esc_str(AR_ESC_JSON, name, key, sizeof key); /* op names come from the traces */
		printf("%s%s:", first ? "" : ",", key);
		json_change(a->s.calls_by_op[op], b->s.calls_by_op[op]);
		first = 0;
	}
	printf("},\"metrics\":{");
	for (size_t i = 0; i < NMETRICS; i++)
		json_pair(metrics[i].name, metrics[i].get(a), metrics[i].get(b), i == 0);
	printf("}");
	json_hist("size_log2", a->s.size_log2, b->s.size_log2);
	json_hist("lifetime_events_log2", a->s.life_ops_log2, b->s.life_ops_log2);
	json_sites(a, b, res);
	printf(",\"times\":{");
	json_pair("duration_ns", a->s.last_time_ns, b->s.last_time_ns, 1);
	printf("}");
	json_hist("lifetime_ns_log2", a->s.life_ns_log2, b->s.life_ns_log2);
	printf("}\n");
}

/* ---- the command ---- */

/* Fill o from argv. Returns -1 to go on, or the exit status. */
static int parse_args(int argc, char **argv, diff_opts_t *o)
{
	enum { OPT_FORMAT = AR_OPT_OWN, OPT_JSON, OPT_FAIL_IF };
	static const struct option opts[] = {{"format", required_argument, NULL, OPT_FORMAT},
					     {"json", no_argument, NULL, OPT_JSON},
					     {"fail-if", required_argument, NULL, OPT_FAIL_IF},
					     AR_CMD_SHARED_OPTIONS,
					     {NULL, 0, NULL, 0}};
	int c;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == OPT_FORMAT) {
			if (strcmp(optarg, "table") && strcmp(optarg, "json"))
				return ar_cli_usage_error("diff: unknown format '%s' (table or json)", optarg);
			o->json = !strcmp(optarg, "json");
		} else if (c == OPT_JSON)
			o->json = 1;
		else if (c == OPT_FAIL_IF) {
			char err[1400];
			if (o->nrules == DIFF_MAX_RULES)
				return ar_cli_usage_error("diff: more than %d --fail-if rules", DIFF_MAX_RULES);
			if (ar_gate_parse(optarg, gate_names, &o->rules[o->nrules], err, sizeof err))
				return ar_cli_usage_error("diff: %s", err);
			o->nrules++;
		} else
			return ar_cmd_other_option(c, argv, &ar_diff_help);
	}
	if (argc - optind != 2)
		return ar_cli_usage_error(argc - optind < 2 ? "diff: needs two traces, A (the baseline) and B"
							    : "diff: two traces only, A and B ('%s' is a third)",
					  argv[optind + 2 < argc ? optind + 2 : 0]);
	o->a = argv[optind];
	o->b = argv[optind + 1];
	return -1;
}

/* The program of a trace: its command line's first word, without the directory. */
static void program_of(const diff_side_t *d, char *buf, size_t n)
{
	const char *cmd = ar_reader_header(d->r)->cmdline;
	size_t len = strcspn(cmd, " "), start = len;
	while (start > 0 && cmd[start - 1] != '/')
		start--;
	snprintf(buf, n, "%.*s", (int)(len - start), cmd + start);
}

/* Two different programs are compared all the same, but not silently. */
static void check_same_program(const diff_side_t *a, const diff_side_t *b)
{
	char pa[256], pb[256];
	program_of(a, pa, sizeof pa);
	program_of(b, pb, sizeof pb);
	if (pa[0] && pb[0] && strcmp(pa, pb))
		ar_cli_warn("%s records '%s' and %s records '%s': comparing different programs", a->path, pa, b->path,
			    pb);
}

/* count both → sites → compare → judge → print. */
static int diff_run(const diff_opts_t *o)
{
	diff_side_t a = {.path = o->a}, b = {.path = o->b};
	diff_result_t res = {0};
	int rc = count_side(&a);
	if (!rc)
		rc = count_side(&b);
	if (!rc) {
		check_same_program(&a, &b);
		build_sites(&a);
		if (a.sites) /* B's sites are only worth building to compare with A's */
			build_sites(&b);
		if (a.sites && b.sites && diff_sites(&a, &b, &res))
			rc = ar_cli_error(NULL, "out of memory comparing the allocation sites");
	}
	if (!rc) {
		res.identical = identical(&a, &b, &res);
		res.violations = judge_all(o, &a, &b, &res);
		if (o->json)
			print_json(&a, &b, &res);
		else
			print_text(&a, &b, &res);
		if (fflush(stdout) != 0)
			rc = ar_cli_error("standard output", "cannot write the diff");
		else
			rc = res.violations ? AR_GATE_EXIT : a.partial || b.partial ? AR_EXIT_WARN : AR_EXIT_OK;
	}
	free(res.rows);
	close_side(&a);
	close_side(&b);
	return rc;
}

int ar_cmd_diff(int argc, char **argv)
{
	diff_opts_t *o = calloc(1, sizeof *o);
	if (!o)
		return ar_cli_error(NULL, "out of memory");
	int rc = parse_args(argc, argv, o);
	if (rc < 0)
		rc = diff_run(o);
	free(o);
	return rc;
}
