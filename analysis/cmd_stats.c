/*
 * cmd_stats.c — `alloctrace stats [--json] [--top N] FILE`: what a program's
 * heap looks like, before choosing an allocator (heapstats.c does the
 * counting in one streaming pass; a second pass, only when stacks were
 * recorded, finds each allocation site's bytes live at the peak).
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloctrace.h"
#include "ar_cli.h"
#include "ar_escape.h"
#include "ar_numfmt.h"
#include "ar_symbolize.h"
#include "heapstats.h"
#include "route_candidates.h"

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

static void fmt_bytes(char *buf, size_t n, uint64_t v)
{
	ar_fmt_bytes(buf, n, (double)v, AR_FMT_ONE_DECIMAL);
}

static void fmt_ns(char *buf, size_t n, uint64_t v)
{
	if (v < 1000)
		snprintf(buf, n, "%" PRIu64 " ns", v);
	else if (v < 1000000)
		snprintf(buf, n, "%.1f us", (double)v / 1e3);
	else if (v < 1000000000)
		snprintf(buf, n, "%.1f ms", (double)v / 1e6);
	else
		snprintf(buf, n, "%.2f s", (double)v / 1e9);
}

/* A log2 histogram, buckets from the first to the last non-empty one. */
static void print_hist(const char *title, const uint64_t *h, int kind /* 0 bytes, 1 count, 2 ns */)
{
	int lo = -1, hi = -1;
	uint64_t total = 0, max = 0;
	for (int i = 0; i < AR_HS_LOG2; i++) {
		if (!h[i])
			continue;
		if (lo < 0)
			lo = i;
		hi = i;
		total += h[i];
		max = h[i] > max ? h[i] : max;
	}
	printf("%s\n", title);
	if (lo < 0) {
		printf("  (none)\n");
		return;
	}
	for (int i = lo; i <= hi; i++) {
		char a[32], b[32];
		uint64_t from = i ? (uint64_t)1 << i : 0, to = ((uint64_t)1 << (i + 1)) - 1;
		if (kind == 0) {
			fmt_bytes(a, sizeof a, from);
			fmt_bytes(b, sizeof b, to);
		} else if (kind == 2) {
			fmt_ns(a, sizeof a, from);
			fmt_ns(b, sizeof b, to);
		} else {
			snprintf(a, sizeof a, "%" PRIu64, from);
			snprintf(b, sizeof b, "%" PRIu64, to);
		}
		int bar = (int)(40.0 * (double)h[i] / (double)max + 0.5);
		printf("  %10s - %-10s %12" PRIu64 " %5.1f%% %.*s\n", a, b, h[i], pct(h[i], total), bar,
		       "########################################");
	}
}

static void json_hist(const char *name, const uint64_t *h)
{
	printf("\"%s\":[", name);
	int first = 1;
	for (int i = 0; i < AR_HS_LOG2; i++) {
		if (!h[i])
			continue;
		printf("%s{\"from\":%" PRIu64 ",\"count\":%" PRIu64 "}", first ? "" : ",", i ? (uint64_t)1 << i : 0, h[i]);
		first = 0;
	}
	printf("]");
}

/* Up to SITE_CALLERS callers after a site's frame, " <- f <- g": two call
 * paths through one line are two sites, and must not print as one. */
#define SITE_CALLERS 3
static void append_callers(ar_sym_t *sym, const uint64_t *fr, uint32_t depth, char *buf, size_t n)
{
	size_t len = strlen(buf);
	for (uint32_t i = 0; i < depth && i < SITE_CALLERS && len + 1 < n; i++) {
		ar_sym_frame_t f;
		ar_sym_lookup(sym, fr[i], &f);
		const char *m = f.module ? strrchr(f.module, '/') : NULL;
		m = m ? m + 1 : f.module;
		int w = f.function ? snprintf(buf + len, n - len, " <- %s", f.function)
			: m ? snprintf(buf + len, n - len, " <- %s+0x%" PRIx64, m, f.module_offset)
			    : snprintf(buf + len, n - len, " <- 0x%" PRIx64, f.addr);
		if (w < 0 || (size_t)w >= n - len)
			break;
		len += (size_t)w;
	}
	if (depth > SITE_CALLERS && len + 6 < n)
		strcat(buf, " <- ...");
}

/* The first frame of a stack that is the program's own call site rather
 * than an allocator wrapper (libc, ld.so, libstdc++'s operator new), then
 * its callers. */
static void site_name(const ar_reader_t *r, ar_sym_t *sym, uint32_t id, char *buf, size_t n)
{
	uint32_t depth = 0;
	const uint64_t *fr = ar_reader_stack(r, id, &depth);
	snprintf(buf, n, fr ? "stack %u" : "stack %u (not defined in the trace)", id);
	if (!fr || !sym)
		return;
	for (uint32_t i = 0; i < depth; i++) {
		ar_sym_frame_t f;
		ar_sym_lookup(sym, fr[i], &f);
		const char *m = f.module ? strrchr(f.module, '/') : NULL;
		m = m ? m + 1 : f.module ? f.module : "";
		int wrapper = !strncmp(m, "libc.so", 7) || !strncmp(m, "ld-linux", 8) || !strncmp(m, "libstdc++", 9);
		if (!wrapper || i + 1 == depth) {
			ar_sym_format(&f, buf, n);
			append_callers(sym, fr + i + 1, depth - i - 1, buf, n);
			return;
		}
	}
}

typedef int (*site_cmp_fn)(const void *, const void *);
static int by_calls(const void *a, const void *b)
{
	const ar_hs_site_t *x = a, *y = b;
	return x->calls < y->calls ? 1 : x->calls > y->calls ? -1 : 0;
}
static int by_bytes(const void *a, const void *b)
{
	const ar_hs_site_t *x = a, *y = b;
	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}
static int by_live(const void *a, const void *b)
{
	const ar_hs_site_t *x = a, *y = b;
	return x->live_at_peak < y->live_at_peak ? 1 : x->live_at_peak > y->live_at_peak ? -1 : 0;
}

static void print_sites(const ar_reader_t *r, ar_sym_t *sym, const ar_heapstats_t *s, ar_hs_site_t *v, uint32_t n,
			const char *title, site_cmp_fn cmp, int top, int json)
{
	qsort(v, n, sizeof *v, cmp);
	if (!json)
		printf("%s\n", title);
	for (uint32_t i = 0; i < n && (int)i < top; i++) {
		char name[1024], b[32], l[32];
		site_name(r, sym, v[i].stack, name, sizeof name);
		if (json) {
			printf("%s{\"stack\":%u,\"calls\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"live_at_peak_bytes\":%" PRIu64
			       ",\"site\":",
			       i ? "," : "", v[i].stack, v[i].calls, v[i].bytes, v[i].live_at_peak);
			ar_esc_json(stdout, name);
			printf("}");
			continue;
		}
		fmt_bytes(b, sizeof b, v[i].bytes);
		fmt_bytes(l, sizeof l, v[i].live_at_peak);
		/* symbols and paths of the trace's modules (escaped, maybe cut) */
		printf("  %10" PRIu64 " calls %5.1f%%  %10s  %10s at peak  ", v[i].calls, pct(v[i].calls, s->allocs), b, l);
		ar_esc_term(stdout, name);
		putchar('\n');
	}
}

const ar_cmd_help_t ar_stats_help = {
	"alloctrace stats [OPTION]... FILE",
	"What the heap of the program recorded in FILE looks like, before choosing an\n"
	"allocator: size and lifetime histograms, live bytes over time and its peak,\n"
	"the process's RSS over time (recorded since format 1.1), per-thread rates,\n"
	"cross-thread frees, realloc growth, what a pool or an arena\n"
	"could serve, the top allocation sites when stacks were recorded, and (text\n"
	"only) the allocreplay --route rules worth measuring: sites of one fixed\n"
	"size that churn (pool) and sites freed in bursts (arena).",
	"      --json          print one JSON object instead of text\n"
	"      --top=N         list the N largest sizes and sites (default 10)\n",
};

int ar_cmd_stats(int argc, char **argv)
{
	enum { OPT_JSON = AR_OPT_OWN, OPT_TOP };
	static const struct option opts[] = {{"json", no_argument, NULL, OPT_JSON},
					     {"top", required_argument, NULL, OPT_TOP}, AR_CMD_SHARED_OPTIONS,
					     {NULL, 0, NULL, 0}};
	int json = 0, c;
	uint64_t top = 10;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == OPT_JSON)
			json = 1;
		else if (c == OPT_TOP) {
			if (ar_cmd_parse_u64(optarg, &top) != 0 || top < 1 || top > INT_MAX)
				return ar_cli_usage_error("stats: --top needs a number of lines, 1 or more, not '%s'",
							  optarg);
		} else
			return ar_cmd_other_option(c, argv, &ar_stats_help);
	}
	if (optind >= argc)
		return ar_cli_usage_error("stats: missing FILE, the trace to describe");
	if (optind + 1 < argc)
		return ar_cli_usage_error("stats: one FILE at a time ('%s' is a second one)", argv[optind + 1]);
	return ar_stats_run(argv[optind], json, (int)top, 1);
}

/* One pass over the events in merged order: 0, AR_ENOMEM, or the reader's
 * negative status. */
static int stats_pass(ar_reader_t *r, ar_heapstats_t *s)
{
	ar_event_t e;
	int rc;
	while ((rc = ar_reader_next_merged(r, &e)) == 1)
		if (ar_heapstats_add(s, &e))
			return AR_ENOMEM;
	/* after a corrupt block too: the figures are then those of the events before it */
	if (rc != AR_ENOMEM && ar_heapstats_finish(s))
		return AR_ENOMEM;
	return rc;
}

/* One trace's statistics and what printing them needs, gathered once
 * after the passes. */
typedef struct stats_view {
	const char *path;
	int top;
	ar_reader_t *r;
	const ar_header_t *h;
	ar_heapstats_t *s;
	uint64_t p50, p90, p99; /* request size percentiles */
	const ar_hs_size_t *sizes; /* most frequent first */
	uint64_t nsizes;
	ar_sym_t *sym;       /* NULL without stacks or symbolization */
	ar_hs_site_t *sites; /* the sites that allocated, or NULL */
	uint32_t nsites;
	ar_hs_rss_t rss;     /* the process's recorded RSS (format 1.1) */
	const ar_process_info_t *proc; /* NULL for older traces */
	int timed; /* 0: the source had no event times (AR_HDR_NO_TIMES), every time figure is unknown */
} stats_view_t;

/* Open the trace and the counters; 0, or 2 after saying why. */
static int open_stats(stats_view_t *v)
{
	v->r = ar_open_or_complain(v->path);
	if (!v->r)
		return 2;
	v->s = calloc(1, sizeof *v->s);
	if (!v->s) {
		ar_cli_error(v->path, "out of memory");
		ar_reader_close(v->r);
		return 2;
	}
	ar_heapstats_init(v->s, ar_reader_event_count(v->r));
	v->s->window = (ar_reader_header(v->r)->flags & AR_HDR_WINDOW) != 0; /* SPEC 6.11 */
	return 0;
}

static void close_stats(stats_view_t *v)
{
	free(v->sites);
	ar_sym_close(v->sym);
	ar_heapstats_free(v->s);
	free(v->s);
	ar_reader_close(v->r);
}

/* Count the events (a second pass for each site's bytes live at the peak,
 * stacks only) and say how much of the trace the figures cover. Returns 0,
 * 1 when the figures cover only the readable part of a truncated or corrupt
 * trace (exit status AR_EXIT_WARN), or -1 when there is nothing to print. */
static int count_events(stats_view_t *v)
{
	const char *path = v->path;
	ar_reader_t *r = v->r;
	int rc = stats_pass(r, v->s);
	if (rc == 0 && v->s->nsites > 1) {
		ar_reader_rewind(r);
		ar_heapstats_rewind(v->s);
		rc = stats_pass(r, v->s);
	}
	if (rc == AR_ENOMEM) {
		ar_cli_error(path, "out of memory tracking %" PRIu64 " live objects (the trace's live set; try a "
				   "machine with more memory)", v->s->live_objects);
		return -1;
	}
	if (ar_reader_status(r) == AR_STATUS_TRUNCATED && rc == 0)
		ar_cli_error(path, "%s; statistics cover the readable part", ar_trace_problem(path, ar_reader_error(r)->msg));
	/* A block that failed to index or to merge ends the readable part: the
	 * numbers below are of the events before it, and the exit status says so. */
	int corrupt = rc < 0 || ar_reader_status(r) == AR_STATUS_CORRUPT;
	if (corrupt)
		ar_cli_error(path, "corrupt at byte offset %" PRIu64 ": %s; statistics cover the events before it",
			     ar_reader_error(r)->offset, ar_trace_problem(path, ar_reader_error(r)->msg));
	return corrupt || ar_reader_status(r) == AR_STATUS_TRUNCATED;
}

/* Derive what both outputs print: thread ids, size percentiles and top
 * sizes, the symbolizer and the list of sites that allocated. */
static void prepare_view(stats_view_t *v, int symbolize)
{
	ar_heapstats_t *s = v->s;
	v->h = ar_reader_header(v->r);
	v->timed = !(v->h->flags & AR_HDR_NO_TIMES);
	for (uint32_t i = 0; i < s->nthreads; i++) {
		const ar_thread_info_t *ti = ar_reader_thread(v->r, s->threads[i].index);
		s->threads[i].os_tid = ti ? ti->os_tid : 0;
	}
	v->p50 = ar_heapstats_size_percentile(s, 0.5);
	v->p90 = ar_heapstats_size_percentile(s, 0.9);
	v->p99 = ar_heapstats_size_percentile(s, 0.99);
	v->sizes = ar_heapstats_top_sizes(s, &v->nsizes);
	if (s->nsites > 1 && symbolize)
		ar_sym_open(&v->sym, v->r, NULL);
	v->proc = ar_reader_process(v->r);
	if (ar_heapstats_rss(v->r, &v->rss) != 0)
		ar_cli_error(v->path, "out of memory summarising %u RSS samples; left out", ar_reader_rss_count(v->r));
	if (s->nsites > 1 && (v->sites = malloc(s->nsites * sizeof *v->sites)) != NULL)
		for (uint32_t i = 1; i < s->nsites; i++)
			if (s->sites[i].calls)
				v->sites[v->nsites++] = s->sites[i];
}

/* ---- --json: one object ---- */

/* A time figure, or null in a trace whose source recorded no times. */
static void json_ns(const stats_view_t *v, uint64_t ns)
{
	if (v->timed)
		printf("%" PRIu64, ns);
	else
		fputs("null", stdout);
}

static void json_calls_and_sizes(const stats_view_t *v)
{
	const ar_heapstats_t *s = v->s;
	printf("{\"events\":%" PRIu64 ",\"duration_ns\":", s->events);
	json_ns(v, s->last_time_ns);
	printf(",\"calls\":{");
	int first = 1;
	for (unsigned op = 1; op < AR_OP_LIMIT; op++)
		if (v->h->ops[op].name[0] && s->calls_by_op[op] && !ar_op_is_sized(v->h, op)) {
			fputs(first ? "" : ",", stdout);
			ar_esc_json(stdout, v->h->ops[op].name); /* the trace's op table */
			printf(":%" PRIu64, s->calls_by_op[op]);
			first = 0;
		}
	printf("},\"allocations\":%" PRIu64 ",\"frees\":%" PRIu64 ",\"free_null\":%" PRIu64 ",\"failed\":%" PRIu64
	       ",\"unknown_frees\":%" PRIu64 ",\"requested_bytes\":%" PRIu64 ",\"size_p50\":%" PRIu64
	       ",\"size_p90\":%" PRIu64 ",\"size_p99\":%" PRIu64 ",\"distinct_sizes\":%" PRIu64 ",",
	       s->allocs, s->frees, s->free_null, s->failed, s->unknown_frees, s->requested_bytes, v->p50, v->p90,
	       v->p99, v->nsizes);
	json_hist("size_log2", s->size_log2);
	printf(",\"top_sizes\":[");
	for (uint64_t i = 0; i < v->nsizes && (int)i < v->top; i++)
		printf("%s{\"size\":%" PRIu64 ",\"count\":%" PRIu64 "}", i ? "," : "", v->sizes[i].size,
		       v->sizes[i].count);
	printf("],");
}

static void json_lifetimes_and_live(const stats_view_t *v)
{
	const ar_heapstats_t *s = v->s;
	json_hist("lifetime_events_log2", s->life_ops_log2);
	printf(",");
	if (v->timed)
		json_hist("lifetime_ns_log2", s->life_ns_log2);
	else
		printf("\"lifetime_ns_log2\":null");
	printf(",\"freed\":%" PRIu64 ",\"never_freed\":%" PRIu64 ",\"never_freed_bytes\":%" PRIu64
	       ",\"peak_live_bytes\":%" PRIu64 ",\"peak_seq\":%" PRIu64 ",\"peak_time_ns\":",
	       s->freed, s->never_freed, s->never_freed_bytes, s->peak_live_bytes, s->peak_seq);
	json_ns(v, s->peak_time_ns);
	printf(",\"live_bytes_at_end\":%" PRIu64 ",\"timeline\":%s", s->live_bytes, v->timed ? "[" : "null");
	for (uint32_t i = 0; v->timed && i < s->ntimeline; i++)
		printf("%s{\"time_ns\":%" PRIu64 ",\"live_bytes\":%" PRIu64 ",\"live_objects\":%" PRIu64 "}",
		       i ? "," : "", s->timeline[i].time_ns, s->timeline[i].live_bytes, s->timeline[i].live_objects);
	printf("%s,", v->timed ? "]" : "");
}

/* "process_rss": the RSS the recorder sampled (SPEC 6.9), null without samples. */
static void json_rss(const stats_view_t *v)
{
	const ar_hs_rss_t *x = &v->rss;
	if (!x->n) {
		printf("\"process_rss\":null,");
		return;
	}
	printf("\"process_rss\":{\"samples\":%u,\"min_bytes\":%" PRIu64 ",\"median_bytes\":%" PRIu64
	       ",\"peak_bytes\":%" PRIu64 ",\"peak_time_ns\":%" PRIu64 ",\"peak_seq\":%" PRIu64
	       ",\"first_time_ns\":%" PRIu64 ",\"last_time_ns\":%" PRIu64 ",\"vmhwm_bytes\":",
	       x->n, x->min_bytes, x->median_bytes, x->peak_bytes, x->peak_time_ns, x->peak_seq, x->first_time_ns,
	       x->last_time_ns);
	if (v->proc && v->proc->has_process && v->proc->peak_rss_bytes)
		printf("%" PRIu64, v->proc->peak_rss_bytes);
	else
		printf("null");
	printf(",\"points\":[");
	for (uint32_t i = 0; i < x->npoints; i++)
		printf("%s{\"time_ns\":%" PRIu64 ",\"seq\":%" PRIu64 ",\"rss_bytes\":%" PRIu64 "}", i ? "," : "",
		       x->points[i].time_ns, x->points[i].seq, x->points[i].rss_bytes);
	printf("]},");
}

static void json_threads_and_patterns(const stats_view_t *v)
{
	const ar_heapstats_t *s = v->s;
	printf("\"threads\":[");
	for (uint32_t i = 0; i < s->nthreads; i++) {
		const ar_hs_thread_t *t = &s->threads[i];
		uint64_t span = t->last_ns - t->first_ns;
		printf("%s{\"tid\":%" PRIu64 ",\"calls\":%" PRIu64 ",\"allocations\":%" PRIu64 ",\"frees\":%" PRIu64
		       ",\"bytes\":%" PRIu64 ",\"calls_per_sec\":",
		       i ? "," : "", t->os_tid, t->calls, t->allocs, t->frees, t->bytes);
		if (v->timed)
			printf("%.0f", span ? (double)t->calls * 1e9 / (double)span : 0.0);
		else
			fputs("null", stdout);
		printf(",\"cross_thread_frees\":%" PRIu64 "}", t->cross_frees);
	}
	printf("],\"cross_thread_frees\":%" PRIu64 ",\"realloc\":{\"grow\":%" PRIu64 ",\"shrink\":%" PRIu64
	       ",\"same\":%" PRIu64 ",\"in_place\":%" PRIu64 ",\"from_null\":%" PRIu64 ",\"to_zero\":%" PRIu64
	       ",\"growth_factor\":{\"le_1.25\":%" PRIu64 ",\"le_1.5\":%" PRIu64 ",\"le_2\":%" PRIu64
	       ",\"le_4\":%" PRIu64 ",\"gt_4\":%" PRIu64 "}},\"small_allocations\":%" PRIu64
	       ",\"small_limit_bytes\":%d,\"arena_friendly_frees\":%" PRIu64 ",\"arena_window_calls\":%d",
	       s->cross_thread_frees, s->realloc_grow, s->realloc_shrink, s->realloc_same, s->realloc_in_place,
	       s->realloc_from_null, s->realloc_to_zero, s->realloc_factor[0], s->realloc_factor[1],
	       s->realloc_factor[2], s->realloc_factor[3], s->realloc_factor[4], s->small_allocs, AR_HS_SMALL,
	       s->arena_friendly, AR_HS_ARENA_OPS);
}

static void json_sites(const stats_view_t *v)
{
	if (!v->nsites)
		return;
	printf(",\"sites_by_calls\":[");
	print_sites(v->r, v->sym, v->s, v->sites, v->nsites, NULL, by_calls, v->top, 1);
	printf("],\"sites_by_bytes\":[");
	print_sites(v->r, v->sym, v->s, v->sites, v->nsites, NULL, by_bytes, v->top, 1);
	printf("],\"sites_by_live_at_peak\":[");
	print_sites(v->r, v->sym, v->s, v->sites, v->nsites, NULL, by_live, v->top, 1);
	printf("]");
}

static void print_json(const stats_view_t *v)
{
	json_calls_and_sizes(v);
	json_lifetimes_and_live(v);
	json_rss(v);
	json_threads_and_patterns(v);
	json_sites(v);
	ar_window_json(v->r, v->s->preexisting_blocks, v->s->preexisting_bytes);
	printf("}\n");
}

/* ---- text ---- */

static void text_calls_and_sizes(const stats_view_t *v)
{
	const ar_heapstats_t *s = v->s;
	char a[32], b[32], c[32];
	if (v->timed)
		fmt_ns(a, sizeof a, s->last_time_ns);
	else
		snprintf(a, sizeof a, "a time not recorded");
	ar_esc_term(stdout, v->path);
	printf(": %" PRIu64 " events over %s, %u threads\n\n", s->events, a, s->nthreads);
	printf("calls        ");
	for (unsigned op = 1; op < AR_OP_LIMIT; op++)
		if (v->h->ops[op].name[0] && s->calls_by_op[op])
		{
			putchar(' ');
			ar_esc_term(stdout, v->h->ops[op].name);
			printf(" %" PRIu64 " (%.1f%%)", s->calls_by_op[op], pct(s->calls_by_op[op], s->events));
		}
	fmt_bytes(a, sizeof a, s->requested_bytes);
	printf("\nallocations   %" PRIu64 " (%s requested), %" PRIu64 " failed; frees %" PRIu64 " (%" PRIu64
	       " of NULL)\n",
	       s->allocs, a, s->failed, s->frees, s->free_null);
	fmt_bytes(a, sizeof a, v->p50);
	fmt_bytes(b, sizeof b, v->p90);
	fmt_bytes(c, sizeof c, v->p99);
	printf("request size  median %s, p90 %s, p99 %s; %" PRIu64 " distinct sizes\n\n", a, b, c, v->nsizes);
	print_hist("request sizes (log2)", s->size_log2, 0);
	printf("\nmost frequent sizes\n");
	for (uint64_t i = 0; i < v->nsizes && (int)i < v->top; i++)
		printf("  %10" PRIu64 " B %12" PRIu64 " %5.1f%%\n", v->sizes[i].size, v->sizes[i].count,
		       pct(v->sizes[i].count, s->allocs));
	printf("\n");
}

static void text_lifetimes_and_live(const stats_view_t *v)
{
	const ar_heapstats_t *s = v->s;
	char a[32], b[32], c[32];
	print_hist("lifetime in events (objects freed in the trace)", s->life_ops_log2, 1);
	printf("\n");
	if (v->timed)
		print_hist("lifetime in time", s->life_ns_log2, 2);
	else
		printf("lifetime in time: not recorded (the trace's source had no event times)\n");
	fmt_bytes(a, sizeof a, s->peak_live_bytes);
	if (v->timed)
		fmt_ns(b, sizeof b, s->peak_time_ns);
	else
		snprintf(b, sizeof b, "an unknown time");
	fmt_bytes(c, sizeof c, s->never_freed_bytes);
	printf("\nlive bytes    peak %s at %s (seq %" PRIu64 "); %" PRIu64 " objects (%s) never freed\n", a, b,
	       s->peak_seq, s->never_freed, c);
	if (s->window) { /* SPEC 6.11: the peak counts the pre-existing blocks, the timeline does not */
		ar_window_text(v->r, s->preexisting_blocks, s->preexisting_bytes);
		printf("(the peak counts the pre-existing blocks until each was freed; the timeline below shows only "
		       "blocks allocated in the window)\n");
	}
	if (!v->timed)
		return;
	printf("live bytes over time\n");
	uint64_t maxl = s->peak_live_bytes ? s->peak_live_bytes : 1;
	for (uint32_t i = 0; i < s->ntimeline; i += s->ntimeline > 20 ? s->ntimeline / 20 : 1) {
		fmt_ns(a, sizeof a, s->timeline[i].time_ns);
		fmt_bytes(b, sizeof b, s->timeline[i].live_bytes);
		printf("  %10s %10s %.*s\n", a, b, (int)(40 * s->timeline[i].live_bytes / maxl),
		       "########################################");
	}
}

static void text_rss(const stats_view_t *v)
{
	const ar_hs_rss_t *x = &v->rss;
	char a[32], b[32], c[32], d[32];
	if (!x->n) {
		printf("\nprocess RSS   not recorded in this trace (recorded since trace format 1.1)\n");
		return;
	}
	fmt_bytes(a, sizeof a, x->min_bytes);
	fmt_bytes(b, sizeof b, x->median_bytes);
	fmt_bytes(c, sizeof c, x->peak_bytes);
	fmt_ns(d, sizeof d, x->peak_time_ns);
	printf("\nprocess RSS   %u samples: min %s, median %s, peak %s at %s (seq %" PRIu64 ")", x->n, a, b, c, d,
	       x->peak_seq);
	if (v->proc && v->proc->has_process && v->proc->peak_rss_bytes) {
		fmt_bytes(a, sizeof a, v->proc->peak_rss_bytes);
		printf("; kernel peak (VmHWM) %s", a);
	}
	printf("\nprocess RSS over time (whole process, recorder included)\n");
	uint64_t maxr = x->peak_bytes ? x->peak_bytes : 1;
	for (uint32_t i = 0; i < x->npoints; i++) {
		fmt_ns(a, sizeof a, x->points[i].time_ns);
		fmt_bytes(b, sizeof b, x->points[i].rss_bytes);
		printf("  %10s %10s %.*s\n", a, b, (int)(40 * x->points[i].rss_bytes / maxr),
		       "########################################");
	}
}

static void text_threads(const stats_view_t *v)
{
	const ar_heapstats_t *s = v->s;
	printf("\nthreads\n  %10s %12s %12s %12s %14s %12s\n", "tid", "calls", "allocs", "frees", "calls/s",
	       "cross-frees");
	for (uint32_t i = 0; i < s->nthreads; i++) {
		const ar_hs_thread_t *t = &s->threads[i];
		uint64_t span = t->last_ns - t->first_ns;
		char rate[32] = "-";
		if (v->timed)
			snprintf(rate, sizeof rate, "%.0f", span ? (double)t->calls * 1e9 / (double)span : 0.0);
		printf("  %10" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %14s %12" PRIu64 "\n", t->os_tid,
		       t->calls, t->allocs, t->frees, rate, t->cross_frees);
	}
	printf("cross-thread frees  %" PRIu64 " (%.1f%% of frees of known blocks)\n", s->cross_thread_frees,
	       pct(s->cross_thread_frees, s->freed));
}

static void text_realloc_and_simpler(const stats_view_t *v)
{
	const ar_heapstats_t *s = v->s;
	uint64_t nre = s->calls_by_op[AR_OP_REALLOC] + s->calls_by_op[AR_OP_REALLOCARRAY];
	printf("\nrealloc       %" PRIu64 " calls: %" PRIu64 " grow, %" PRIu64 " shrink, %" PRIu64
	       " same size, %" PRIu64 " from NULL, %" PRIu64 " to 0; %.1f%% stayed in place\n",
	       nre, s->realloc_grow, s->realloc_shrink, s->realloc_same, s->realloc_from_null, s->realloc_to_zero,
	       pct(s->realloc_in_place, s->realloc_grow + s->realloc_shrink + s->realloc_same));
	printf("  growth factor  <=1.25: %" PRIu64 "  <=1.5: %" PRIu64 "  <=2: %" PRIu64 "  <=4: %" PRIu64
	       "  >4: %" PRIu64 "\n",
	       s->realloc_factor[0], s->realloc_factor[1], s->realloc_factor[2], s->realloc_factor[3],
	       s->realloc_factor[4]);
	printf("\nwhat simpler allocators could serve\n");
	printf("  small-object pool: %.1f%% of allocations ask for <= %d bytes\n", pct(s->small_allocs, s->allocs),
	       AR_HS_SMALL);
	printf("  arena: %.1f%% of freed objects die in their own thread within %d of its calls;"
	       " %.1f%% are freed by another thread; %" PRIu64 " never freed\n",
	       pct(s->arena_friendly, s->freed), AR_HS_ARENA_OPS, pct(s->cross_thread_frees, s->freed),
	       s->never_freed);
}

static void text_sites(const stats_view_t *v)
{
	if (v->nsites) {
		printf("\n");
		print_sites(v->r, v->sym, v->s, v->sites, v->nsites, "top allocation sites by calls", by_calls, v->top, 0);
		printf("\n");
		print_sites(v->r, v->sym, v->s, v->sites, v->nsites, "top allocation sites by bytes", by_bytes, v->top, 0);
		printf("\n");
		print_sites(v->r, v->sym, v->s, v->sites, v->nsites, "top allocation sites by bytes live at the peak",
			    by_live, v->top, 0);
	} else if (!(v->h->flags & AR_HDR_STACKS)) {
		printf("\n(no call stacks: record with allocrec --stacks for allocation sites)\n");
	}
}

static void print_text(const stats_view_t *v)
{
	text_calls_and_sizes(v);
	text_lifetimes_and_live(v);
	text_rss(v);
	text_threads(v);
	text_realloc_and_simpler(v);
	text_sites(v);
	if (ar_route_candidates(v->r) != 0)
		ar_cli_error(v->path, "out of memory looking for --route candidates; left out");
}

/* open → count → prepare → print. */
int ar_stats_run(const char *path, int json, int top, int symbolize)
{
	stats_view_t v = { .path = path, .top = top };
	if (open_stats(&v) != 0)
		return 2;
	int partial = count_events(&v);
	if (partial < 0) {
		close_stats(&v);
		return 2;
	}
	prepare_view(&v, symbolize);
	if (json)
		print_json(&v);
	else
		print_text(&v);
	close_stats(&v);
	return partial ? AR_EXIT_WARN : AR_EXIT_OK;
}
