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
		ar_sym_frame_t f;
		char buf[1024];
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
	ar_reader_t *r = ar_open_or_complain(argv[1]);
	if (!r)
		return 2;
	if (!(ar_reader_header(r)->flags & AR_HDR_STACKS) || ar_reader_stack_count(r) == 0) {
		fprintf(stderr, "alloctrace: %s has no call stacks (record with: allocrec --stacks ...)\n", argv[1]);
		ar_reader_close(r);
		return 2;
	}
	ar_sym_t *sym;
	uint32_t skipped = 0;
	if (ar_sym_open(&sym, r, &skipped) != 0) {
		fprintf(stderr, "alloctrace: cannot set up symbolisation\n");
		ar_reader_close(r);
		return 2;
	}
	if (skipped)
		fprintf(stderr, "alloctrace: %u module(s) missing or rebuilt since recording: their frames show only module+offset\n",
			skipped);
	/* Count uses per stack id in one streaming pass (ids are small, dense). */
	uint32_t n = ar_reader_stack_count(r);
	uint64_t max_id = 0;
	ar_event_t e;
	uint64_t *uses = NULL;
	size_t cap = 0;
	int rc;
	while ((rc = ar_reader_next(r, &e)) == 1) {
		if (!e.stack)
			continue;
		if (e.stack >= cap) {
			size_t ncap = cap ? cap : 1024;
			while (ncap <= e.stack)
				ncap *= 2;
			uint64_t *u = realloc(uses, ncap * sizeof *u);
			if (!u) {
				fprintf(stderr, "alloctrace: out of memory\n");
				return 2;
			}
			memset(u + cap, 0, (ncap - cap) * sizeof *u);
			uses = u;
			cap = ncap;
		}
		uses[e.stack]++;
		if (e.stack > max_id)
			max_id = e.stack;
	}
	printf("%u stacks\n", n);
	for (uint64_t id = 1; id <= (max_id > n ? max_id : n); id++) {
		if (!ar_reader_stack(r, (uint32_t)id, NULL))
			continue;
		printf("stack %" PRIu64 " (%" PRIu64 " events)\n", id, id < cap ? uses[id] : 0);
		ar_print_stack(stdout, r, sym, (uint32_t)id, "  ");
	}
	free(uses);
	ar_sym_close(sym);
	int status = rc < 0 ? 2 : 0;
	if (rc < 0)
		fprintf(stderr, "alloctrace: %s: %s\n", argv[1], ar_reader_error(r)->msg);
	ar_reader_close(r);
	return status;
}
