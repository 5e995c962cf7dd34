/*
 * cmd_stacks.c — `alloctrace stacks FILE`: every interned call stack of a
 * trace recorded with --stacks, symbolised (function, file:line where debug
 * info exists) against the trace's module map, with how many events used it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloctrace.h"
#include "ar_cli.h"
#include "ar_escape.h"
#include "ar_symbolize.h"

void ar_print_stack(FILE *out, const ar_reader_t *r, ar_sym_t *sym, uint32_t id, const char *indent)
{
	uint32_t depth = 0;
	const uint64_t *frames = ar_reader_stack(r, id, &depth);
	if (!frames) {
		fprintf(out, "%s(stack %u is not defined in the trace)\n", indent, id);
		return;
	}
	for (uint32_t i = 0; i < depth; i++) {
		ar_sym_frame_t f = {.addr = frames[i]};
		char buf[1024];
		if (sym)
			ar_sym_lookup(sym, frames[i], &f);
		/* escaped by ar_sym_format, but a long name may be cut inside a character */
		fprintf(out, "%s#%-2u 0x%" PRIx64 " ", indent, i, frames[i]);
		ar_esc_term(out, ar_sym_format(&f, buf, sizeof buf));
		fputc('\n', out);
	}
}

const ar_cmd_help_t ar_stacks_help = {
	"alloctrace stacks FILE",
	"Every call stack of the trace FILE, recorded with `allocrec --stacks`, with how\n"
	"many events used it, symbolised (function, file:line where debug information\n"
	"exists, C++ names demangled) against the modules the trace names.",
	"",
};

int ar_cmd_stacks(int argc, char **argv)
{
	static const struct option opts[] = {AR_CMD_SHARED_OPTIONS, {NULL, 0, NULL, 0}};
	int c = getopt_long(argc, argv, ":h", opts, NULL); /* the first option, wherever it is */
	if (c != -1)
		return ar_cmd_other_option(c, argv, &ar_stacks_help);
	if (optind >= argc)
		return ar_cli_usage_error("stacks: missing FILE, a trace recorded with allocrec --stacks");
	if (optind + 1 < argc)
		return ar_cli_usage_error("stacks: one FILE at a time ('%s' is a second one)", argv[optind + 1]);
	return ar_stacks_run(argv[optind], 1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int ar_stacks_run(const char *path, int symbolize)
{
	ar_reader_t *r = ar_open_or_complain(path);
	if (!r)
		return 2;
	if (!(ar_reader_header(r)->flags & AR_HDR_STACKS) || ar_reader_stack_count(r) == 0) {
		ar_cli_error(path, "no call stacks (record with: allocrec --stacks ...)");
		ar_reader_close(r);
		return 2;
	}
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
	printf("%u stacks\n", n);
	for (uint32_t i = 0; i < n; i++) {
		printf("stack %" PRIu64 " (%" PRIu64 " events)\n", ids[i], uses[i]);
		ar_print_stack(stdout, r, sym, (uint32_t)ids[i], "  ");
	}
	if (undefined)
		ar_cli_error(path, "%" PRIu64 " event(s) name a stack id the trace does not define (not listed)",
			     undefined);
	free(ids);
	free(uses);
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
