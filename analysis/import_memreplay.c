/*
 * import_memreplay.c — Android's memory_replay text format (what bionic's
 * malloc debug writes with record_allocs) into a trace:
 *
 *   <tid>: malloc <ptr> <size>
 *   <tid>: calloc <ptr> <nmemb> <size>
 *   <tid>: memalign <ptr> <align> <size>
 *   <tid>: realloc <new> <old> <size>
 *   <tid>: free <ptr>
 *   <tid>: thread_done 0x0
 *
 * tid and sizes decimal, pointers hex (0x0 is NULL: a failed call, free(NULL),
 * realloc(NULL, n), or realloc(p, 0) that freed p). Newer Android versions
 * append the call's start and end times (ns, CLOCK_MONOTONIC) to each line,
 * thread_done one or two: either every call line has them or none does.
 * File order is the global order. Each call keeps its op; its time is its
 * end time (the recorder stamps a call once it returned) counted from the
 * earliest time in the file, which is the trace's start; without times
 * every time is 0 and the header says so (AR_HDR_NO_TIMES).
 */
#include <string.h>

#include "import.h"

typedef enum { L_NONE, L_CALL, L_DONE } line_kind_t;

/* One parsed line. */
typedef struct mr_line {
	line_kind_t kind;
	uint64_t tid;
	ar_event_t ev;     /* op and arguments of a call */
	unsigned ntimes;   /* 0, 1 (thread_done only) or 2 */
	uint64_t time[2];
} mr_line_t;

typedef struct mr_ctx {
	ar_imp_input_t *in;
	ar_import_t *im;
	int has_times;     /* -1 until the first call line says */
	uint64_t base;     /* the earliest time in the file */
	int first_pass;    /* 1: only learn has_times and base */
	mr_line_t l;
} mr_ctx_t;

/* Argument words of each op after its result pointer: what they fill. */
enum { A_PTR, A_ALIGN, A_COUNT, A_SIZE };
static const struct {
	const char *name;
	size_t len;
	uint8_t op;
	uint8_t nargs;
	uint8_t arg[3]; /* after the first pointer (result, or free's input) */
	const char *args; /* what they are, for messages */
} ops[] = {
	{"malloc", 6, AR_OP_MALLOC, 1, {A_SIZE}, "a decimal size"},
	{"calloc", 6, AR_OP_CALLOC, 2, {A_COUNT, A_SIZE}, "a decimal count and size"},
	{"memalign", 8, AR_OP_MEMALIGN, 2, {A_ALIGN, A_SIZE}, "a decimal alignment and size"},
	{"realloc", 7, AR_OP_REALLOC, 2, {A_PTR, A_SIZE}, "the old pointer (hex) and a decimal size"},
	{"free", 4, AR_OP_FREE, 0, {0}, ""},
	{"thread_done", 11, 0, 0, {0}, ""},
};
#define NOPS (sizeof ops / sizeof *ops)

/* The op word at *s: its index in ops, or -1. */
static int op_word(const char **s, const char *e)
{
	const char *q = *s;
	while (q < e && *q != ' ' && *q != '\t')
		q++;
	size_t n = (size_t)(q - *s);
	for (int i = 0; i < (int)NOPS; i++)
		if (ops[i].len == n && **s == ops[i].name[0] && !memcmp(*s, ops[i].name, n)) {
			*s = q;
			return i;
		}
	return -1;
}

/* Parse [s, e) into c->l. 0, or -1 with the message (ar_imp_bad_line). */
static int parse(mr_ctx_t *c, const char *s, const char *e)
{
	const char *b = s, *q = s;
	mr_line_t *l = &c->l;
	memset(l, 0, sizeof *l);
	ar_imp_blanks(&q, e);
	if (q == e)
		return 0; /* a blank line */
	if (ar_imp_dec(&q, e, &l->tid) != 0 || q == e || *q != ':')
		return ar_imp_bad_line(c->in, b, e, "expected '<tid>: <call> ...' with a decimal thread id");
	q++;
	ar_imp_blanks(&q, e);
	int i = op_word(&q, e);
	if (i < 0)
		return ar_imp_bad_line(c->in, b, e, "expected a call (malloc, calloc, memalign, realloc, free, "
						    "thread_done) after the thread id");
	uint64_t first;
	if (!ar_imp_blanks(&q, e) || ar_imp_hex(&q, e, &first) != 0)
		return ar_imp_bad_line(c->in, b, e, "%s needs a hex pointer after it (below 2^64)", ops[i].name);
	l->kind = ops[i].op ? L_CALL : L_DONE;
	l->ev.op = ops[i].op;
	if (ops[i].op == AR_OP_FREE)
		l->ev.ptr = first;
	else
		l->ev.result = first;
	for (unsigned a = 0; a < ops[i].nargs; a++) {
		int ptr = ops[i].arg[a] == A_PTR;
		uint64_t v;
		if (!ar_imp_blanks(&q, e) || (ptr ? ar_imp_hex(&q, e, &v) : ar_imp_dec(&q, e, &v)) != 0)
			return ar_imp_bad_line(c->in, b, e, "%s needs %s after its pointer (numbers below 2^64)",
					       ops[i].name, ops[i].args);
		*(ops[i].arg[a] == A_PTR ? &l->ev.ptr : ops[i].arg[a] == A_ALIGN ? &l->ev.align
				       : ops[i].arg[a] == A_COUNT ? &l->ev.count : &l->ev.size) = v;
	}
	while (ar_imp_blanks(&q, e) && q < e) {
		if (l->ntimes == 2 || ar_imp_dec(&q, e, &l->time[l->ntimes]) != 0)
			return ar_imp_bad_line(c->in, b, e, "unexpected text after the %s", l->ntimes ? "times" : "call");
		l->ntimes++;
	}
	if (q != e)
		return ar_imp_bad_line(c->in, b, e, "unexpected text after the %s", l->ntimes ? "times" : "call");
	if (l->kind == L_CALL && l->ntimes == 1)
		return ar_imp_bad_line(c->in, b, e, "one time where a call has two (start and end) or none");
	if (l->kind == L_CALL && c->has_times >= 0 && (l->ntimes == 2) != c->has_times)
		return ar_imp_bad_line(c->in, b, e, "%s, unlike the lines before it",
				       c->has_times ? "no times" : "times");
	if (l->kind == L_CALL && c->has_times < 0)
		c->has_times = l->ntimes == 2;
	return 0;
}

/* The last decimal word of [s, *e), preceded by a blank and at most 19
 * digits (anything longer goes to the full parse): 0 with *v and *e moved
 * to that blank, else -1. Read backwards, in one go. */
static int last_dec(const char *s, const char **e, uint64_t *v)
{
	const char *q = *e;
	uint64_t x = 0, scale = 1;
	unsigned d;
	while (q > s && (d = (unsigned)(q[-1] - '0')) < 10 && *e - q < 19) {
		x += d * scale;
		scale *= 10;
		q--;
	}
	if (q == *e || q == s || (q[-1] != ' ' && q[-1] != '\t'))
		return -1;
	*v = x;
	*e = q - 1;
	return 0;
}

/* The first pass over a file with times finds the earliest, which becomes
 * the trace's start. A call line's times are its last two words: read from
 * the end, which is most of why this pass costs a fraction of a parse. Any
 * other line (thread_done, a malformed one) is parsed whole; the second
 * pass checks every line anyway (a malformed line read as times here only
 * moves the start of a trace that is then not written). */
static int learn_line(void *ctx, const char *s, const char *e)
{
	mr_ctx_t *c = ctx;
	uint64_t t0, t1;
	const char *q = e;
	/* Under --skip-bad a malformed line's numbers must not count: parse all. */
	if (!c->in->skip_bad && last_dec(s, &q, &t1) == 0 && last_dec(s, &q, &t0) == 0) {
		c->base = t0 < c->base ? t0 : c->base;
		c->base = t1 < c->base ? t1 : c->base;
		return 0;
	}
	int rc = parse(c, s, e);
	for (unsigned k = 0; rc == 0 && k < c->l.ntimes; k++)
		if (c->l.time[k] < c->base)
			c->base = c->l.time[k];
	return rc;
}

/* Stop at the first call line: it says whether the file has times. */
static int probe_line(void *ctx, const char *s, const char *e)
{
	mr_ctx_t *c = ctx;
	int rc = parse(c, s, e);
	return rc ? rc : c->has_times >= 0;
}

static int convert_line(void *ctx, const char *s, const char *e)
{
	mr_ctx_t *c = ctx;
	int rc = parse(c, s, e);
	mr_line_t *l = &c->l;
	if (rc != 0 || l->kind == L_NONE)
		return rc;
	/* The line's last time: a call's end, thread_done's only or last one
	 * (a thread_done without one in a file with times: 0, unknown). */
	uint64_t t = c->has_times == 1 && l->ntimes ? l->time[l->ntimes - 1] - c->base : 0;
	if (l->kind == L_DONE)
		return ar_import_thread_exit(c->im, l->tid, t);
	uint32_t index;
	if ((rc = ar_import_thread(c->im, l->tid, &index)) != 0)
		return rc;
	l->ev.time_ns = t;
	return ar_import_event(c->im, index, &l->ev);
}

int ar_imp_memreplay(ar_imp_input_t *in, ar_imp_header_t *h, int fd, ar_import_t **im, ar_error_t *err)
{
	mr_ctx_t c = {.in = in, .has_times = -1, .base = UINT64_MAX};
	int skip = in->skip_bad;
	in->skip_bad = 1; /* the probe only looks for the first good call line */
	int rc = ar_imp_each_line(in, probe_line, &c);
	in->skip_bad = skip;
	in->bad_lines = in->first_bad_line = 0;
	if (rc < 0)
		return rc;
	if (c.has_times == 1 && (rc = ar_imp_each_line(in, learn_line, &c)) != 0)
		return rc;
	in->bad_lines = in->first_bad_line = 0;
	h->source_format = "memory_replay";
	h->has_times = c.has_times == 1;
	h->start_mono_ns = h->has_times && c.base != UINT64_MAX ? c.base : 0;
	h->has_stacks = 0;
	if (!h->has_times)
		c.base = 0;
	if ((rc = ar_import_open(im, fd, h, err)) != 0)
		return rc;
	c.im = *im;
	return ar_imp_each_line(in, convert_line, &c);
}
