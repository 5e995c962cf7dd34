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
		fprintf(out, "%s#%-2u 0x%" PRIx64 " %s\n", indent, i, frames[i], ar_sym_format(&f, buf, sizeof buf));
	}
}

int ar_cmd_stacks(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: alloctrace stacks FILE\n");
		return 1;
	}
	return ar_stacks_run(argv[1], 1);
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
		fprintf(stderr, "alloctrace: %s has no call stacks (record with: allocrec --stacks ...)\n", path);
		ar_reader_close(r);
		return 2;
	}
	ar_sym_t *sym = NULL;
	uint32_t skipped = 0;
	if (symbolize && ar_sym_open(&sym, r, &skipped) != 0) {
		fprintf(stderr, "alloctrace: cannot set up symbolisation\n");
		ar_reader_close(r);
		return 2;
	}
	if (skipped)
		fprintf(stderr, "alloctrace: %u module(s) missing or rebuilt since recording: their frames show only module+offset\n",
			skipped);
	/* Count uses per defined stack in one streaming pass: the ids are the
	 * writer's (up to 2^32-1, SPEC 6.5), so they are sorted and searched,
	 * never used as an index; events naming an id no STACK record defines
	 * are counted apart. Memory: two words per defined stack. */
	uint32_t n = ar_reader_stack_count(r);
	uint64_t *ids = malloc((n ? n : 1) * sizeof *ids), *uses = calloc(n ? n : 1, sizeof *uses);
	if (!ids || !uses) {
		fprintf(stderr, "alloctrace: out of memory for %u stacks\n", n);
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
		fprintf(stderr, "alloctrace: %s: %" PRIu64 " event(s) name a stack id the trace does not define "
				"(not listed)\n", path, undefined);
	free(ids);
	free(uses);
	ar_sym_close(sym);
	int status = rc < 0 ? 2 : 0;
	if (rc < 0)
		fprintf(stderr, "alloctrace: %s: corrupt at byte offset %" PRIu64 ": %s\n", path,
			ar_reader_error(r)->offset, ar_reader_error(r)->msg);
	ar_reader_close(r);
	return status;
}
