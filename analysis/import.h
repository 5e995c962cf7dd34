/*
 * import.h — what `alloctrace import` shares between its command
 * (cmd_import.c), its sink (import_sink.c: the one place that turns parsed
 * heap calls into a trace through the trace library's writer) and its
 * parsers, one per foreign format (import_memreplay.c, import_mtrace.c).
 *
 * A parser walks the input's lines in file order, which both formats make
 * the global order: the sink hands out sequence numbers in that order
 * (SPEC 4), so the trace replays the source's history exactly. A parser
 * never invents a fact the source lacks: no times (AR_HDR_NO_TIMES), no
 * stacks, no thread ids where the source has none.
 */
#ifndef AR_IMPORT_H
#define AR_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "ar_trace.h"

/* In the header's recorder version ("alloctrace import 1"): raised when the
 * same input would convert to other events. */
#define AR_IMPORT_VERSION 1

/* The input, mapped whole, and where the parse stands in it. */
typedef struct ar_imp_input {
	const char *path;        /* as the user named it, for messages */
	const char *p;           /* the bytes (NULL when len is 0) */
	size_t len;
	int mapped;              /* p is a private mapping of the file: each pass
				  * gives back the pages it has read (MADV_DONTNEED) */
	uint64_t line;           /* 1-based number of the line being parsed */
	size_t line_off;         /* byte offset of its first byte */
	int skip_bad;            /* --skip-bad: count a malformed line and go on */
	uint64_t bad_lines;      /* lines skipped under skip_bad */
	uint64_t first_bad_line; /* the first of them (0: none) */
	char msg[512];           /* what is wrong with line `line` (parse error) */
} ar_imp_input_t;

/* The line [s, e) (its '\n' and any '\r' before it excluded) is malformed:
 * record why in in->msg, naming the line, its offset and the text. Returns
 * -1, what a parser returns for a bad line. */
int ar_imp_bad_line(ar_imp_input_t *in, const char *s, const char *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Call fn on every line of in (without its "\n" or "\r\n"), keeping
 * in->line and in->line_off current. fn returns 0, -1 for a malformed line
 * (in->msg says why: fatal unless in->skip_bad) or a negative AR_E* code
 * from the sink (fatal). Returns 0, -1 or that code. */
int ar_imp_each_line(ar_imp_input_t *in, int (*fn)(void *ctx, const char *s, const char *e), void *ctx);

/* Number scanners for the hand-written line parsers, inline: they are
 * where an import spends its time. Each reads from *s (not past e), stores
 * the value, moves *s past it and returns 0, or returns -1 leaving *s alone
 * (no digits, or more than 64 bits). */
static inline int ar_imp_dec(const char **s, const char *e, uint64_t *v)
{
	const char *q = *s;
	uint64_t x = 0;
	unsigned d;
	while (q < e && (d = (unsigned)(*q - '0')) < 10) {
		if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, (uint64_t)d, &x))
			return -1;
		q++;
	}
	if (q == *s)
		return -1;
	*v = x;
	*s = q;
	return 0;
}

extern const uint8_t ar_imp_hex1[256]; /* 1 + a hex digit's value, 0 for other bytes */

/* Hex, with an optional 0x/0X prefix. */
static inline int ar_imp_hex(const char **s, const char *e, uint64_t *v)
{
	const char *q = *s;
	if (e - q > 2 && q[0] == '0' && (q[1] | 0x20) == 'x' && ar_imp_hex1[(unsigned char)q[2]])
		q += 2;
	const char *digits = q;
	uint64_t x = 0;
	unsigned d;
	while (q < e && (d = ar_imp_hex1[(unsigned char)*q]) != 0) {
		if (x >> 60)
			return -1; /* a 17th significant digit */
		x = x << 4 | (d - 1);
		q++;
	}
	if (q == digits)
		return -1;
	*v = x;
	*s = q;
	return 0;
}

/* Skip spaces and tabs; returns how many there were. */
static inline size_t ar_imp_blanks(const char **s, const char *e)
{
	const char *q = *s;
	while (q < e && (*q == ' ' || *q == '\t'))
		q++;
	size_t n = (size_t)(q - *s);
	*s = q;
	return n;
}

/* ---- the sink ---------------------------------------------------------- */
typedef struct ar_import ar_import_t;

typedef struct ar_imp_header {
	const char *source_format; /* "memory_replay", "mtrace" */
	const char *input_name;    /* shown in the header's command line */
	int has_times;             /* 0: AR_HDR_NO_TIMES, every time 0 */
	uint64_t start_mono_ns;    /* the source's clock at its earliest time */
	int has_stacks;            /* AR_HDR_STACKS */
} ar_imp_header_t;

/* Start a trace on fd (an empty file or a pipe). 0, or a negative code with
 * err filled. */
int ar_import_open(ar_import_t **out, int fd, const ar_imp_header_t *h, ar_error_t *err);

/* The dense thread index of OS thread `tid`, made on its first use (and
 * again after its ar_import_thread_exit: the kernel reuses tids). */
int ar_import_thread(ar_import_t *im, uint64_t tid, uint32_t *index);

/* Append e (op, ptr, align, count, size, result, time_ns, stack set by the
 * caller) for thread `index` as the next call in global order: the sink
 * gives it seq (and seq2 for realloc). 0 or a negative code. */
int ar_import_event(ar_import_t *im, uint32_t index, ar_event_t *e);

/* Thread `tid` is done (memory_replay's thread_done) at time_ns: its events
 * are written out and a THREAD_EXIT record says when in the sequence. */
int ar_import_thread_exit(ar_import_t *im, uint64_t tid, uint64_t time_ns);

/* The stack id of the one-frame stack `addr` (a caller's return address),
 * defined in the trace on its first use. */
int ar_import_stack(ar_import_t *im, uint64_t addr, uint32_t *id);

typedef struct ar_imp_totals {
	uint64_t events, threads, stacks, last_seq, end_time_ns;
} ar_imp_totals_t;

/* Write everything buffered and the footer (ok = 1), or give up without a
 * footer (ok = 0); free the sink either way. The fd is not closed. */
int ar_import_close(ar_import_t *im, int ok, ar_imp_totals_t *tot, ar_error_t *err);

/* ---- the parsers ---------------------------------------------------------- */
/* Each learns from the whole input what the header must say before any
 * event is written (times, callers), completes h (the caller sets
 * input_name), opens the sink on fd into *im and converts every line.
 * Returns 0, -1 for a malformed line (in->msg), or a negative AR_E* code
 * (err). *im, when not NULL, is the caller's to close, on failure too. */
int ar_imp_memreplay(ar_imp_input_t *in, ar_imp_header_t *h, int fd, ar_import_t **im, ar_error_t *err);
int ar_imp_mtrace(ar_imp_input_t *in, ar_imp_header_t *h, int fd, ar_import_t **im, ar_error_t *err);

#endif
