/*
 * table.c — what allocreplay prints for each trace once its runs are done:
 * the comparison of the results module (results/ar_results.h), built from
 * the runs in memory with the very figures db.c stores (ar_db_run_figures)
 * and printed by the same code as allocreport's — as a table (medians over
 * ok repetitions, ratios of medians to glibc, spread, failed runs) or as
 * the JSON document of docs/RESULTS.md ("The comparison as JSON").
 *
 * Invariant: allocreplay's figures for a trace equal allocreport's for the
 * same runs (tests/e2e/comparison_agree.sh); nothing here computes a
 * median or a ratio itself.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

/* Add the runs of allocator name (all but name when skip) to rt. */
static void add_runs(ar_res_trace_t *rt, const ar_trace_info_t *t, ar_run_t *const *runs, size_t n,
		     const char *name, int skip)
{
	for (size_t i = 0; i < n; i++) {
		if ((strcmp(runs[i]->allocator, name) == 0) == skip)
			continue;
		ar_res_run_t f;
		ar_db_run_figures(t, runs[i], &f);
		ar_allocator_t a; /* its version, as db.c stores it in runs.allocator_version */
		int known = ar_registry_find(runs[i]->allocator, &a) == 0;
		ar_res_add_run(ar_res_alloc_slot(rt, runs[i]->allocator, known ? a.version : NULL), &f);
	}
}

static char *dup_or_null(const char *s)
{
	return s && s[0] ? ar_res_strdup(s) : NULL;
}

/* The comparison of one trace's runs, glibc first as allocreport loads it. */
void ar_table_build(ar_res_trace_t *rt, const ar_trace_info_t *t, ar_run_t *const *runs, size_t n)
{
	const ar_wl_header_t *w = t->wl;
	ar_machine_t m;
	ar_machine_probe(&m);
	memset(rt, 0, sizeof *rt);
	rt->sha256 = ar_res_strdup(t->sha256);
	rt->name = ar_res_strdup(t->name);
	rt->program = t->program[0] ? ar_res_strdup(t->program) : NULL;
	rt->status = ar_res_strdup(t->status);
	rt->host = m.host[0] ? ar_res_strdup(m.host) : NULL;
	/* the machine db.c stores with every run, as allocreport reads it back */
	rt->machine = ar_res_machine_text(m.host, m.cpu_model, m.cpus, m.kernel, m.glibc);
	rt->nmachines = 1;
	rt->events = (int64_t)w->events;
	rt->threads = (int64_t)w->nthreads;
	rt->calls = (int64_t)w->calls;
	rt->trace_allocs = (int64_t)w->trace_allocs;
	rt->peak_live_bytes = (int64_t)w->peak_live_bytes;
	rt->peak_live_blocks = (int64_t)w->peak_live_blocks;
	rt->recorded_allocator = dup_or_null(t->rec.allocator);
	rt->recorded_library = dup_or_null(t->rec.library);
	rt->recorded_version = dup_or_null(t->rec.version);
	rt->recorded_reason = dup_or_null(t->rec.reason);
	rt->recorded_duration_ns = t->rec.duration_ns;
	rt->recorded_start_rss_bytes = t->rec.start_rss_bytes;
	rt->recorded_peak_rss_bytes = t->rec.peak_rss_bytes;
	rt->recorded_rss_samples = (double)t->rec.rss_samples;
	rt->recorded_cpu_ns = t->rec.cpu_ns;
	rt->recorded_recorder_bytes = t->rec.recorder_bytes;
	rt->recorded_recorder_cpu_ns = t->rec.recorder_cpu_ns;
	rt->preexisting_bytes = w->window ? (double)w->preexisting_bytes : NAN;
	add_runs(rt, t, runs, n, AR_RES_BASELINE, 0);
	add_runs(rt, t, runs, n, AR_RES_BASELINE, 1);
	ar_res_finish(rt);
}

/* SPEC 6.11: a window trace began with a heap in use. Its pre-existing
 * blocks (freed or realloced in it) were allocated before the timed
 * window; the rest of the heap at its start was never seen, and is known
 * only as the allocator's figure less those, when the trace has it. */
static void print_window(FILE *out, const ar_wl_header_t *w)
{
	if (!w->window)
		return;
	fprintf(out, "  note: a recording window (#%u): %llu pre-existing block(s), %llu bytes, allocated untimed "
		     "before it; ", w->window_index, (unsigned long long)w->preexisting_blocks,
		(unsigned long long)w->preexisting_bytes);
	if (!w->heap_at_start_bytes)
		fprintf(out, "the heap in use at its start is unknown, so what it never saw is unknown\n");
	else if (w->heap_at_start_bytes >= w->preexisting_bytes)
		fprintf(out, "the heap held %llu bytes at its start, %llu of them never seen (not replayed)\n",
			(unsigned long long)w->heap_at_start_bytes,
			(unsigned long long)(w->heap_at_start_bytes - w->preexisting_bytes));
	else
		fprintf(out, "the allocator said %llu bytes in use at its start, less than those blocks: what it "
			     "never saw is unknown\n", (unsigned long long)w->heap_at_start_bytes);
	/* Measured on a redis window (docs/FIDELITY.md): after the same warm-up
	 * load, real tcmalloc held 8 MiB less than jemalloc and grew as much in
	 * the window; replayed from the blocks alone it held 4 MiB more and grew
	 * 13 MiB more. The recorded allocator's history is in the recorded RSS
	 * that anchors the prediction; no other allocator's is anywhere. */
	fprintf(out, "  note: each allocator replays this window from its live blocks laid out afresh: what an "
		     "allocator keeps from a program's past (free memory it holds, fragmentation) is in the "
		     "recorded RSS for the recorded allocator only, so the other allocators' predicted peak RSS "
		     "leaves out their own past (a redis window: tcmalloc +22 %%, arena -35 %%; docs/FIDELITY.md)\n");
}

/* What the table does not say: the workload's own notes. */
static void print_notes(FILE *out, const ar_trace_info_t *t)
{
	const ar_wl_header_t *w = t->wl;
	fprintf(out, "  %llu calls replayed%s\n", (unsigned long long)w->calls,
		t->cache_hit ? "  (workload from cache)" : "");
	if (w->skipped_unknown_frees || w->unknown_reallocs || w->lost_blocks)
		fprintf(out, "  note: %llu free(s) of pointers the trace never returned skipped, %llu "
			     "realloc(s) of such pointers replayed as realloc(NULL), %llu block(s) "
			     "never freed because their free is missing\n",
			(unsigned long long)w->skipped_unknown_frees,
			(unsigned long long)w->unknown_reallocs, (unsigned long long)w->lost_blocks);
	if (strcmp(t->status, "complete"))
		fprintf(out, "  note: the trace is %s; its valid prefix was replayed\n", t->status);
	print_window(out, w);
}

void ar_table_print_built(FILE *out, const ar_trace_info_t *t, const ar_res_trace_t *rt)
{
	ar_res_set_t set = {.path = NULL, .nhosts = 1, .traces = (ar_res_trace_t *)rt, .ntraces = 1};
	fputc('\n', out);
	ar_res_print_trace(out, &set, rt, 0);
	print_notes(out, t);
	fprintf(out, "(%s)\n", ar_res_columns_note);
}

void ar_table_print(FILE *out, const ar_trace_info_t *t, ar_run_t *const *runs, size_t n)
{
	ar_res_trace_t rt;
	ar_table_build(&rt, t, runs, n);
	ar_table_print_built(out, t, &rt);
	ar_res_trace_free(&rt);
}

void ar_json_begin(FILE *out, const char *db_path)
{
	ar_res_json_begin(out, db_path);
}

void ar_json_print_built(FILE *out, const ar_res_trace_t *rt, int first)
{
	ar_res_json_trace(out, rt, first);
}

void ar_json_runs(FILE *out, const ar_trace_info_t *t, ar_run_t *const *runs, size_t n, int first)
{
	ar_res_trace_t rt;
	ar_table_build(&rt, t, runs, n);
	ar_res_json_trace(out, &rt, first);
	ar_res_trace_free(&rt);
}

void ar_json_end(FILE *out)
{
	ar_res_json_end(out, NULL, 0);
}
