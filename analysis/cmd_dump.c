/*
 * cmd_dump.c — `alloctrace dump FILE [--extra]`: every event, one line, in
 * global sequence order. The line format is a contract (SPEC 9) that tests
 * and users diff: decimal numbers, pointers as lowercase 0x hex, a NULL
 * result as 0x0, optional key=value fields only after the fixed ones.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "alloctrace.h"
#include "ar_symbolize.h"

static void print_event(FILE *out, const ar_reader_t *r, const ar_event_t *e, int extra)
{
	const ar_header_t *h = ar_reader_header(r);
	const ar_thread_info_t *t = ar_reader_thread(r, e->thread);
	fprintf(out, "%" PRIu64 " %" PRIu64 " %s", e->seq, t ? t->os_tid : 0, h->ops[e->op].name);
	switch (e->op) {
	case AR_OP_MALLOC:
	case AR_OP_VALLOC:
	case AR_OP_PVALLOC:
		fprintf(out, " %" PRIu64, e->size);
		break;
	case AR_OP_CALLOC:
		fprintf(out, " %" PRIu64 " %" PRIu64, e->count, e->size);
		break;
	case AR_OP_REALLOC:
		fprintf(out, " 0x%" PRIx64 " %" PRIu64, e->ptr, e->size);
		break;
	case AR_OP_REALLOCARRAY:
		fprintf(out, " 0x%" PRIx64 " %" PRIu64 " %" PRIu64, e->ptr, e->count, e->size);
		break;
	case AR_OP_FREE:
		fprintf(out, " 0x%" PRIx64, e->ptr);
		break;
	case AR_OP_POSIX_MEMALIGN:
	case AR_OP_ALIGNED_ALLOC:
	case AR_OP_MEMALIGN:
		fprintf(out, " %" PRIu64 " %" PRIu64, e->align, e->size);
		break;
	default: { /* an op a later version added: print the fields it carries */
		unsigned f = h->ops[e->op].fields;
		if (f & AR_F_PTR)
			fprintf(out, " 0x%" PRIx64, e->ptr);
		if (f & AR_F_ALIGN)
			fprintf(out, " %" PRIu64, e->align);
		if (f & AR_F_COUNT)
			fprintf(out, " %" PRIu64, e->count);
		if (f & AR_F_SIZE)
			fprintf(out, " %" PRIu64, e->size);
	}
	}
	if (h->ops[e->op].fields & AR_F_RESULT)
		fprintf(out, " = 0x%" PRIx64, e->result);
	if (extra) {
		fprintf(out, " t=%" PRIu64, e->time_ns);
		if (e->seq2)
			fprintf(out, " seq2=%" PRIu64, e->seq2);
		if (e->stack)
			fprintf(out, " stack=%" PRIu32, e->stack);
		if (e->error)
			fprintf(out, " err=%" PRIu32, e->error);
	}
	fputc('\n', out);
}

int ar_cmd_dump(int argc, char **argv)
{
	const char *path = NULL;
	int extra = 0, stacks = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--extra"))
			extra = 1;
		else if (!strcmp(argv[i], "--stacks"))
			stacks = 1;
		else if (argv[i][0] == '-' || path) {
			path = NULL;
			break;
		} else
			path = argv[i];
	}
	if (!path) {
		fprintf(stderr, "usage: alloctrace dump FILE [--extra] [--stacks]\n"
				"  --extra   add t=NS (time since start), seq2= (realloc), stack=ID, err=ERRNO\n"
				"  --stacks  after each event with a stack, its frames, symbolised\n");
		return 1;
	}
	return ar_dump_run(path, extra, stacks, 1);
}

int ar_dump_run(const char *path, int extra, int stacks, int symbolize)
{
	ar_reader_t *r = ar_open_or_complain(path);
	if (!r)
		return 2;
	ar_sym_t *sym = NULL;
	if (stacks && symbolize && ar_sym_open(&sym, r, NULL) != 0) {
		fprintf(stderr, "alloctrace: cannot set up symbolisation\n");
		ar_reader_close(r);
		return 2;
	}
	ar_event_t e;
	int rc;
	while ((rc = ar_reader_next_merged(r, &e)) == 1) {
		print_event(stdout, r, &e, extra || stacks);
		if (stacks && e.stack)
			ar_print_stack(stdout, r, sym, e.stack, "    ");
	}
	ar_sym_close(sym);
	int status = 0;
	if (rc < 0 || ar_reader_status(r) == AR_STATUS_CORRUPT) {
		fprintf(stderr, "alloctrace: %s: corrupt at byte offset %llu: %s\n", path,
			(unsigned long long)ar_reader_error(r)->offset, ar_reader_error(r)->msg);
		status = 2;
	} else if (ar_reader_status(r) == AR_STATUS_TRUNCATED) {
		fprintf(stderr, "alloctrace: %s: %s (everything before byte offset %llu was dumped)\n", path,
			ar_reader_error(r)->msg, (unsigned long long)ar_reader_error(r)->offset);
	}
	ar_reader_close(r);
	if (fflush(stdout) != 0)
		return 2;
	return status;
}
