/*
 * cmd_dump.c — `alloctrace dump [--extra] [--stacks] FILE`: every event, one line, in
 * global sequence order. The line format is a contract (SPEC 9) that tests
 * and users diff: decimal numbers, pointers as lowercase 0x hex, a NULL
 * result as 0x0, optional key=value fields only after the fixed ones.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "alloctrace.h"
#include "ar_cli.h"
#include "ar_escape.h"
#include "ar_symbolize.h"

static void print_event(FILE *out, const ar_reader_t *r, const ar_event_t *e, int extra)
{
	const ar_header_t *h = ar_reader_header(r);
	const ar_thread_info_t *t = ar_reader_thread(r, e->thread);
	fprintf(out, "%" PRIu64 " %" PRIu64 " ", e->seq, t ? t->os_tid : 0);
	/* A known op's name is checked against SPEC 3.1 when the header is read;
	 * a later version's is whatever the trace says: escaped. */
	if (e->op <= AR_OP_MAX_KNOWN)
		fputs(h->ops[e->op].name, out);
	else
		ar_esc_term(out, h->ops[e->op].name);
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
	/* SPEC 9, since 1.3: a window trace's free or realloc says the size of
	 * the block it ends, with or without --extra (a key=value field, after
	 * the fixed ones: a reader of the fixed fields is not disturbed). */
	if (e->old_size)
		fprintf(out, " old_size=%" PRIu64, e->old_size);
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

const ar_cmd_help_t ar_dump_help = {
	"alloctrace dump [OPTION]... FILE",
	"Every event of the trace FILE, one line each, in global sequence order:\n"
	"SEQ TID OP ARGS [= RESULT], the stable format of trace-format/SPEC.md section 9.",
	"      --extra         add t=NS (time since start), seq2= (realloc), stack=ID,\n"
	"                      err=ERRNO to each line\n"
	"      --stacks        after each event with a stack, its frames, symbolised\n"
	"                      (implies --extra)\n",
};

int ar_cmd_dump(int argc, char **argv)
{
	enum { OPT_EXTRA = AR_OPT_OWN, OPT_STACKS };
	static const struct option opts[] = {{"extra", no_argument, NULL, OPT_EXTRA},
					     {"stacks", no_argument, NULL, OPT_STACKS}, AR_CMD_SHARED_OPTIONS,
					     {NULL, 0, NULL, 0}};
	int extra = 0, stacks = 0, c;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == OPT_EXTRA)
			extra = 1;
		else if (c == OPT_STACKS)
			stacks = 1;
		else
			return ar_cmd_other_option(c, argv, &ar_dump_help);
	}
	if (optind >= argc)
		return ar_cli_usage_error("dump: missing FILE, the trace to dump");
	if (optind + 1 < argc)
		return ar_cli_usage_error("dump: one FILE at a time ('%s' is a second one)", argv[optind + 1]);
	return ar_dump_run(argv[optind], extra, stacks, 1);
}

int ar_dump_run(const char *path, int extra, int stacks, int symbolize)
{
	ar_reader_t *r = ar_open_or_complain(path);
	if (!r)
		return 2;
	ar_sym_t *sym = NULL;
	int src;
	if (stacks && symbolize && (src = ar_sym_open(&sym, r, NULL)) != 0) {
		ar_cli_error(path, "cannot set up symbolisation: %s (without --stacks, dump needs none)", ar_strerror(src));
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
		ar_cli_error(path, "corrupt at byte offset %llu: %s (the events before it were dumped)",
			     (unsigned long long)ar_reader_error(r)->offset, ar_trace_problem(path, ar_reader_error(r)->msg));
		status = AR_EXIT_WARN;
	} else if (ar_reader_status(r) == AR_STATUS_TRUNCATED) {
		ar_cli_error(path, "%s (everything before byte offset %llu was dumped)",
			     ar_trace_problem(path, ar_reader_error(r)->msg), (unsigned long long)ar_reader_error(r)->offset);
		status = AR_EXIT_WARN;
	}
	ar_reader_close(r);
	if (fflush(stdout) != 0)
		return ar_cli_error("standard output", "%s", strerror(errno));
	return status;
}
