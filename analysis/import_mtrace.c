/*
 * import_mtrace.c — glibc's mtrace(3) log (MALLOC_TRACE) into a trace.
 * What glibc writes (malloc/mtrace-impl.c, mtrace.c before 2.34):
 *
 *   = Start                      mtrace() began; "= End" when muntrace() ran
 *   @ CALLER + 0xPTR 0xSIZE      an allocation: malloc, calloc (nmemb * size),
 *                                memalign, posix_memalign, aligned_alloc,
 *                                valloc, pvalloc and realloc(NULL, n) alike;
 *                                PTR "(nil)" when it failed; size 0 is "0"
 *   @ CALLER - 0xPTR             free(PTR) (free(NULL) is not logged), and
 *                                realloc(PTR, 0), which freed PTR
 *   @ CALLER < 0xOLD             realloc(OLD, SIZE) returned NEW: these two
 *   @ CALLER > 0xNEW 0xSIZE      lines, always adjacent (one lock)
 *   @ CALLER ! 0xOLD 0xSIZE      realloc(OLD, SIZE) failed
 *
 * CALLER is "[0xADDR]", "./prog:[0xADDR]" or "prog:(sym+0x1f)[0xADDR]"
 * (dladdr's file and symbol, then the return address); the "@ ..." part is
 * missing when the caller is unknown. The log has no threads, no times and
 * no alignments: "+" lines become malloc, "<"/">" pairs and "!" realloc,
 * "-" free; the trace has one thread (OS tid unknown, 0) and every time 0
 * (AR_HDR_NO_TIMES). Each distinct caller address becomes a one-frame stack
 * (AR_HDR_STACKS when any line names one): it is the call's return address,
 * the innermost frame the recorder would keep. The file and symbol are not
 * kept: a MODULE record needs the load address, which the log does not have.
 */
#include <string.h>

#include "import.h"

typedef struct mt_ctx {
	ar_imp_input_t *in;
	ar_import_t *im;
	int has_stacks;
	/* A "<" line waiting for its ">" */
	int pending;
	uint64_t pending_old, pending_line, pending_caller;
	size_t pending_off;
	const char *pending_s, *pending_e; /* its text */
	int pending_has_caller;
} mt_ctx_t;

/* A pointer as %p prints it: 0x... or "(nil)". */
static int ptr_word(const char **s, const char *e, uint64_t *v)
{
	if (e - *s >= 5 && !memcmp(*s, "(nil)", 5)) {
		*s += 5;
		*v = 0;
		return 0;
	}
	if (e - *s < 3 || (*s)[0] != '0' || ((*s)[1] | 0x20) != 'x')
		return -1;
	return ar_imp_hex(s, e, v);
}

/* A size as %#lx prints it: 0x... or a lone "0". */
static int size_word(const char **s, const char *e, uint64_t *v)
{
	if (*s < e && **s == '0' && (*s + 1 == e || (*s)[1] == ' ' || (*s)[1] == '\t')) {
		*s += 1;
		*v = 0;
		return 0;
	}
	return ptr_word(s, e, v) == 0 && *v ? 0 : -1;
}

/* "@ CALLER " at *s: the address in CALLER's last "[...]" before the
 * "] X " that starts the call (a file name may hold anything). 1 with
 * *addr and *s at the op character, 0 when there is no caller, -1 when
 * malformed. */
static int caller(const char **s, const char *e, uint64_t *addr)
{
	const char *q = *s;
	if (q == e || *q != '@')
		return 0;
	for (const char *r = q; (r = memchr(r, ']', (size_t)(e - r))) != NULL; r++) {
		if (e - r < 4 || r[1] != ' ' || !strchr("+-<>!", r[2]) || r[3] != ' ')
			continue;
		const char *open = r;
		while (open > q && *open != '[')
			open--;
		const char *a = open + 1;
		if (*open != '[' || ptr_word(&a, r, addr) != 0 || a != r)
			return -1;
		*s = r + 2;
		return 1;
	}
	return -1;
}

/* Turn a call into an event of the one thread. */
static int emit(mt_ctx_t *c, uint8_t op, uint64_t ptr, uint64_t size, uint64_t result, int has_caller,
		uint64_t addr)
{
	ar_event_t ev = {.op = op, .ptr = ptr, .size = size, .result = result};
	uint32_t t;
	int rc = ar_import_thread(c->im, 0, &t);
	if (rc == 0 && has_caller && c->has_stacks)
		rc = ar_import_stack(c->im, addr, &ev.stack);
	return rc ? rc : ar_import_event(c->im, t, &ev);
}

/* A "<" not followed by its ">": malformed (the message names the "<"
 * line), or counted and dropped. */
static int lost_pending(mt_ctx_t *c)
{
	c->pending = 0;
	if (!c->in->skip_bad) {
		c->in->line = c->pending_line;
		c->in->line_off = c->pending_off;
		return ar_imp_bad_line(c->in, c->pending_s, c->pending_e,
				       "a realloc's '<' line not followed by its '>' line");
	}
	if (!c->in->bad_lines++)
		c->in->first_bad_line = c->pending_line;
	return 0;
}

static int convert_line(void *ctx, const char *s, const char *e)
{
	mt_ctx_t *c = ctx;
	const char *q = s;
	if (ar_imp_blanks(&q, e), q == e)
		return 0;
	if (*q == '=') {
		q++;
		ar_imp_blanks(&q, e);
		const char *w = q;
		while (q < e && *q != ' ' && *q != '\t')
			q++;
		int start = q - w == 5 && !memcmp(w, "Start", 5), end = q - w == 3 && !memcmp(w, "End", 3);
		if ((!start && !end) || (ar_imp_blanks(&q, e), q != e))
			return ar_imp_bad_line(c->in, s, e, "a '=' line is '= Start' or '= End'");
		return c->pending ? lost_pending(c) : 0;
	}
	uint64_t addr = 0, ptr = 0, size = 0;
	int has_caller = caller(&q, e, &addr);
	if (has_caller < 0)
		return ar_imp_bad_line(c->in, s, e, "expected '@ CALLER[0xADDR] ' before the call");
	char op = *q;
	if (!strchr("+-<>!", op) || q + 1 >= e || q[1] != ' ')
		return ar_imp_bad_line(c->in, s, e, "expected a call: '+', '-', '<', '>' or '!', then a space");
	q += 2;
	if (ptr_word(&q, e, &ptr) != 0)
		return ar_imp_bad_line(c->in, s, e, "'%c' needs a pointer (0x... or (nil))", op);
	if ((op == '+' || op == '>' || op == '!') &&
	    (!ar_imp_blanks(&q, e) || size_word(&q, e, &size) != 0))
		return ar_imp_bad_line(c->in, s, e, "'%c' needs a size after its pointer (0x... or 0)", op);
	if (ar_imp_blanks(&q, e), q != e)
		return ar_imp_bad_line(c->in, s, e, "unexpected text after the call");
	if (c->pending && op != '>') {
		int rc = lost_pending(c);
		if (rc)
			return rc;
	}
	switch (op) {
	case '+':
		return emit(c, AR_OP_MALLOC, 0, size, ptr, has_caller, addr);
	case '-':
		if (!ptr)
			return ar_imp_bad_line(c->in, s, e, "'-' of (nil): glibc never logs free(NULL)");
		return emit(c, AR_OP_FREE, ptr, 0, 0, has_caller, addr);
	case '!':
		return emit(c, AR_OP_REALLOC, ptr, size, 0, has_caller, addr);
	case '<':
		c->pending = 1;
		c->pending_old = ptr;
		c->pending_line = c->in->line;
		c->pending_off = c->in->line_off;
		c->pending_s = s;
		c->pending_e = e;
		c->pending_has_caller = has_caller;
		c->pending_caller = addr;
		return 0;
	default: /* '>' */
		if (!c->pending)
			return ar_imp_bad_line(c->in, s, e, "a realloc's '>' line without the '<' line before it");
		if (!ptr)
			return ar_imp_bad_line(c->in, s, e, "'>' of (nil): a failed realloc is logged with '!'");
		c->pending = 0;
		return emit(c, AR_OP_REALLOC, c->pending_old, size, ptr, c->pending_has_caller, c->pending_caller);
	}
}

int ar_imp_mtrace(ar_imp_input_t *in, ar_imp_header_t *h, int fd, ar_import_t **im, ar_error_t *err)
{
	mt_ctx_t c = {.in = in};
	/* Any line naming a caller, found without parsing (a memchr's speed). */
	c.has_stacks = in->len && (in->p[0] == '@' || memmem(in->p, in->len, "\n@", 2) != NULL);
	h->source_format = "mtrace";
	h->has_times = 0;
	h->start_mono_ns = 0;
	h->has_stacks = c.has_stacks;
	int rc = ar_import_open(im, fd, h, err);
	if (rc != 0)
		return rc;
	c.im = *im;
	if ((rc = ar_imp_each_line(in, convert_line, &c)) != 0)
		return rc;
	return c.pending ? lost_pending(&c) : 0; /* the file ends after a '<' */
}
