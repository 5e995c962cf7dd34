/*
 * cmd_stacks.c — `alloctrace stacks FILE`: every interned call stack of a
 * trace recorded with --stacks, symbolised (function, file:line where debug
 * info exists, inlined calls) against the trace's module map, with how many
 * events used it and what its allocations did (sites.h: calls, bytes, live
 * at the peak, temporary, leaked); `--folded` writes the sites in the
 * folded-stack format of flame graphs instead. Argument parsing and --db
 * are in cmd_stacks_db.c (it links the results database).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloctrace.h"
#include "ar_cli.h"
#include "ar_escape.h"
#include "ar_symbolize.h"
#include "sites.h"

void ar_print_stack(FILE *out, const ar_reader_t *r, ar_sym_t *sym, uint32_t id, const char *indent)
{
	uint32_t depth = 0;
	const uint64_t *frames = ar_reader_stack(r, id, &depth);
	if (!frames) {
		fprintf(out, "%s(stack %u is not defined in the trace)\n", indent, id);
		return;
	}
	for (uint32_t i = 0; i < depth; i++) {
		ar_sym_frame_t f[AR_SYM_INLINE_MAX] = {{.addr = frames[i]}};
		int n = sym ? ar_sym_lookup_inline(sym, frames[i], f, AR_SYM_INLINE_MAX) : 1;
		char buf[1024];
		/* the line of the address: the real function, with the file:line
		 * of the innermost code at it (an inlined call's) */
		ar_sym_frame_t line = n > 1 ? f[n - 1] : f[0];
		if (n > 1) {
			line.file = f[0].file;
			line.line = f[0].line;
		}
		/* escaped by ar_sym_format, but a long name may be cut inside a character */
		fprintf(out, "%s#%-2u 0x%" PRIx64 " ", indent, i, frames[i]);
		ar_esc_term(out, ar_sym_format(&line, buf, sizeof buf));
		fputc('\n', out);
		for (int k = 0; k < n - 1 && k < AR_SYM_INLINE_MAX - 1; k++) {
			fprintf(out, "%s      inlined ", indent);
			ar_esc_term(out, f[k].function ? f[k].function : "?");
			if (f[k + 1].file) {
				fputs(" called at ", out);
				ar_esc_term(out, f[k + 1].file);
				fprintf(out, ":%d", f[k + 1].line);
			}
			fputc('\n', out);
		}
	}
}

const ar_cmd_help_t ar_stacks_help = {
	"alloctrace stacks [--db DB] FILE\n"
	"alloctrace stacks --folded [--by calls|bytes|live-at-peak|temporary|leaked] [--db DB] FILE\n"
	"alloctrace stacks --ids-through=FUNCTION FILE",
	"Every call stack of the trace FILE, recorded with `allocrec --stacks`, with how\n"
	"many events used it, symbolised (function, file:line where debug information\n"
	"exists, inlined calls, C++ names demangled) against the modules the trace\n"
	"names, its caller chain as one line (outermost frame first) and what its\n"
	"allocations did: calls and bytes, blocks live when the trace's live bytes\n"
	"peaked, temporary allocations (freed by their thread with no other\n"
	"allocation of that thread in between, as heaptrack counts them) and blocks\n"
	"still live at the end (leaked). Frames without a symbol (a stripped or\n"
	"rebuilt module) show as MODULE+0xOFFSET, with a note on stderr.\n"
	"With --folded, one line per allocation site, \"main;f;g VALUE\": the format\n"
	"flamegraph.pl, inferno and speedscope read (docs/RESULTS.md, \"Allocation\n"
	"sites\", says how frames are written).",
	"      --folded        write folded stacks instead of the table\n"
	"      --by=METRIC     the value of each folded line: calls (default), bytes,\n"
	"                      live-at-peak (bytes), temporary (calls), leaked (bytes)\n"
	"      --db=DB         also store the sites in the results database DB (table\n"
	"                      sites, keyed by the trace's SHA-256; created if missing)\n"
	"      --ids-through=FUNCTION  print, one per line, the ids of the recorded\n"
	"                      stacks with a frame named FUNCTION (as the folded\n"
	"                      labels write it): for allocreplay --route NAME:stack=ID\n",
};

/* Open path for the sites commands: a trace with stacks, or a message. */
static ar_reader_t *open_with_stacks(const char *path)
{
	ar_reader_t *r = ar_open_or_complain(path);
	if (!r)
		return NULL;
	if (!(ar_reader_header(r)->flags & AR_HDR_STACKS) || ar_reader_stack_count(r) == 0) {
		ar_cli_error(path, "no call stacks (record with: allocrec --stacks ...)");
		ar_reader_close(r);
		return NULL;
	}
	return r;
}

int ar_stacks_sites_status(const char *path, const ar_sites_t *m, const char *what)
{
	const ar_sites_summary_t *sum = ar_sites_summary(m);
	if (sum->status == AR_STATUS_COMPLETE)
		return AR_EXIT_OK;
	if (sum->status == AR_STATUS_CORRUPT)
		ar_cli_error(path, "corrupt at byte offset %" PRIu64 ": %s (%s are of the events before it)",
			     sum->error.offset, ar_trace_problem(path, sum->error.msg), what);
	else
		ar_cli_error(path, "%s (%s are of the events before byte offset %" PRIu64 ")",
			     ar_trace_problem(path, sum->error.msg), what, sum->error.offset);
	return AR_EXIT_WARN;
}

int ar_stacks_sites(const char *path, int symbolize, FILE *notes, ar_sites_t **out)
{
	*out = NULL;
	ar_reader_t *r = open_with_stacks(path);
	if (!r)
		return AR_EXIT_RUNTIME;
	ar_error_t err = {0};
	ar_sites_opts_t o = {.symbolize = symbolize, .notes = notes, .name = path};
	int rc = ar_sites_build(out, r, &o, &err);
	ar_reader_close(r);
	if (rc) {
		ar_cli_error(path, "%s", err.msg);
		return AR_EXIT_RUNTIME;
	}
	return AR_EXIT_OK;
}

int ar_stacks_folded_run(const char *path, int metric, int symbolize)
{
	ar_sites_t *m;
	int st = ar_stacks_sites(path, symbolize, stderr, &m);
	if (st)
		return st;
	if (ar_sites_write_folded(m, (ar_site_metric_t)metric, stdout) != 0) {
		ar_cli_error("-", "cannot write the folded stacks");
		ar_sites_free(m);
		return AR_EXIT_RUNTIME;
	}
	st = ar_stacks_sites_status(path, m, "the figures");
	ar_sites_free(m);
	return st;
}

/* Does the folded label have a frame named exactly function (fl bytes)? */
static int label_has_frame(const char *label, const char *function, size_t fl)
{
	for (const char *p = label; p; p = strchr(p, ';'), p = p ? p + 1 : NULL)
		if (!strncmp(p, function, fl) && (p[fl] == ';' || p[fl] == '\0'))
			return 1;
	return 0;
}

int ar_stacks_ids_through_run(const char *path, const char *function)
{
	ar_reader_t *r = open_with_stacks(path);
	if (!r)
		return AR_EXIT_RUNTIME;
	uint32_t n = ar_reader_stack_count(r);
	uint32_t *ids = malloc((n ? n : 1) * sizeof *ids);
	if (!ids) {
		ar_reader_close(r);
		return ar_cli_error(path, "out of memory for %u stack ids", n);
	}
	for (uint32_t i = 0; i < n; i++)
		ar_reader_stack_at(r, i, &ids[i], NULL);
	ar_error_t err = {0};
	ar_sites_t *m;
	ar_sites_opts_t o = {.symbolize = 1, .notes = stderr, .name = path};
	int rc = ar_sites_build(&m, r, &o, &err);
	ar_reader_close(r);
	if (rc) {
		free(ids);
		return ar_cli_error(path, "%s", err.msg);
	}
	size_t fl = strlen(function);
	for (uint32_t i = 0; i < n; i++) {
		const ar_site_t *s = ar_sites_of_stack(m, ids[i]);
		if (s && label_has_frame(s->label, function, fl))
			printf("%" PRIu32 "\n", ids[i]);
	}
	free(ids);
	int st = fflush(stdout) == 0 ? ar_stacks_sites_status(path, m, "the stack ids")
				     : ar_cli_error("-", "cannot write the stack ids");
	ar_sites_free(m);
	return st;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* "calls 3, 96 bytes; live at peak 64 bytes in 2 blocks; temporary 1 (32 bytes); leaked 0 bytes in 0 blocks" */
static void print_figures(const ar_site_t *s, const char *indent)
{
	printf("%scalls %" PRIu64 ", %" PRIu64 " bytes; live at peak %" PRIu64 " bytes in %" PRIu64
	       " blocks; temporary %" PRIu64 " (%" PRIu64 " bytes); leaked %" PRIu64 " bytes in %" PRIu64 " blocks\n",
	       indent, s->calls, s->bytes, s->live_at_peak_bytes, s->live_at_peak_blocks, s->temporary_calls,
	       s->temporary_bytes, s->leaked_bytes, s->leaked_blocks);
}

/* The lines after the stacks: sites no STACK record describes, totals. */
static void print_other_sites(const ar_sites_t *m)
{
	for (size_t i = 0; i < ar_sites_count(m); i++) {
		const ar_site_t *s = ar_sites_at(m, i);
		if (s->label[0] != '[')
			continue;
		printf("site ");
		ar_esc_term(stdout, s->label);
		putchar('\n');
		print_figures(s, "  ");
	}
	const ar_sites_summary_t *sum = ar_sites_summary(m);
	printf("total: %" PRIu64 " allocations, %" PRIu64 " bytes; peak live %" PRIu64 " bytes; leaked %" PRIu64
	       " bytes in %" PRIu64 " blocks\n",
	       sum->calls, sum->bytes, sum->peak_live_bytes, sum->leaked_bytes, sum->leaked_blocks);
}

int ar_stacks_run(const char *path, int symbolize)
{
	ar_reader_t *r = open_with_stacks(path);
	if (!r)
		return 2;
	ar_sym_t *sym = NULL;
	uint32_t skipped = 0;
	int src;
	if (symbolize && (src = ar_sym_open(&sym, r, &skipped)) != 0) {
		ar_cli_error(path, "cannot set up symbolisation: %s", ar_strerror(src));
		ar_reader_close(r);
		return 2;
	}
	if (skipped)
		ar_cli_error(path, "%u module(s) missing or rebuilt since recording: their frames show only "
				   "module+offset", skipped);
	/* Count uses per defined stack in one streaming pass: the ids are the
	 * writer's (up to 2^32-1, SPEC 6.5), so they are sorted and searched,
	 * never used as an index; events naming an id no STACK record defines
	 * are counted apart. Memory: two words per defined stack. */
	uint32_t n = ar_reader_stack_count(r);
	uint64_t *ids = malloc((n ? n : 1) * sizeof *ids), *uses = calloc(n ? n : 1, sizeof *uses);
	ar_sites_t *m = NULL;
	ar_error_t err = {0};
	if (!ids || !uses) {
		ar_cli_error(path, "out of memory for %u stacks", n);
		free(ids);
		free(uses);
		ar_sym_close(sym);
		ar_reader_close(r);
		return 2;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t id = 0;
		ar_reader_stack_at(r, i, &id, NULL);
		ids[i] = id;
	}
	qsort(ids, n, sizeof *ids, cmp_u64);
	ar_event_t e;
	uint64_t undefined = 0;
	int rc;
	while ((rc = ar_reader_next(r, &e)) == 1) {
		if (!e.stack)
			continue;
		uint64_t *hit = bsearch(&(uint64_t){e.stack}, ids, n, sizeof *ids, cmp_u64);
		if (hit)
			uses[hit - ids]++;
		else
			undefined++;
	}
	/* what each stack's allocations did (a second pass, in sequence order) */
	ar_sites_opts_t o = {.symbolize = symbolize, .sym = sym, .notes = NULL, .name = path};
	if (ar_sites_build(&m, r, &o, &err) != 0)
		ar_cli_error(path, "%s: the figures per stack are left out", err.msg);
	else if (sym && ar_sites_summary(m)->bare_frames)
		ar_cli_error(path, "%" PRIu64 " frame(s) of the sites have no symbol (a stripped or missing module, or "
				   "code outside any): shown as module+offset", ar_sites_summary(m)->bare_frames);
	printf("%u stacks\n", n);
	for (uint32_t i = 0; i < n; i++) {
		printf("stack %" PRIu64 " (%" PRIu64 " events)\n", ids[i], uses[i]);
		const ar_site_t *s = ar_sites_of_stack(m, (uint32_t)ids[i]);
		if (s) {
			printf("  site ");
			ar_esc_term(stdout, s->label);
			putchar('\n');
			print_figures(s, "  ");
		}
		ar_print_stack(stdout, r, sym, (uint32_t)ids[i], "  ");
	}
	if (m)
		print_other_sites(m);
	if (undefined)
		ar_cli_error(path, "%" PRIu64 " event(s) name a stack id the trace does not define (not listed)",
			     undefined);
	free(ids);
	free(uses);
	ar_sites_free(m);
	ar_sym_close(sym);
	int status = AR_EXIT_OK;
	if (rc < 0) {
		ar_cli_error(path, "corrupt at byte offset %" PRIu64 ": %s (use counts are of the events before it)",
			     ar_reader_error(r)->offset, ar_trace_problem(path, ar_reader_error(r)->msg));
		status = AR_EXIT_WARN;
	} else if (ar_reader_status(r) == AR_STATUS_TRUNCATED) {
		ar_cli_error(path, "%s (use counts are of the events before byte offset %" PRIu64 ")",
			     ar_trace_problem(path, ar_reader_error(r)->msg), ar_reader_error(r)->offset);
		status = AR_EXIT_WARN;
	}
	ar_reader_close(r);
	return status;
}
