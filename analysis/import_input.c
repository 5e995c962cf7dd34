/*
 * import_input.c — reading a foreign text trace for `alloctrace import`:
 * the line loop over the mapped input, the table behind the number
 * scanners the parsers are built from (import.h: inline, no sscanf, which
 * would cost more than the rest of a line's import), and the message for a
 * malformed line, which names its number, its byte offset and shows its text
 * (escaped where it is printed).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "import.h"

#define DROP_BEHIND (64u << 20) /* a multiple of the page size */

int ar_imp_bad_line(ar_imp_input_t *in, const char *s, const char *e, const char *fmt, ...)
{
	char why[256], text[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	/* The line as it is, cut at 48 bytes: enough to find it by eye. Its
	 * bytes stay raw here: whoever prints the message escapes it for where
	 * it lands (ar_escape.h; ar_cli_error does), but a NUL would end the
	 * string early, so it is written as \x00 as the trace reader does. */
	size_t k = 0;
	for (const char *q = s; q < e && k + 8 < sizeof text; q++) {
		if (q - s == 48) {
			memcpy(text + k, "...", 3);
			k += 3;
			break;
		}
		if (*q) {
			text[k++] = *q;
		} else {
			memcpy(text + k, "\\x00", 4);
			k += 4;
		}
	}
	text[k] = 0;
	snprintf(in->msg, sizeof in->msg, "line %llu (byte offset %llu): %s: '%s'", (unsigned long long)in->line,
		 (unsigned long long)in->line_off, why, text);
	return -1;
}

int ar_imp_each_line(ar_imp_input_t *in, int (*fn)(void *ctx, const char *s, const char *e), void *ctx)
{
	in->line = 0;
	if (!in->len)
		return 0; /* p may be NULL: no arithmetic on it */
	const char *p = in->p, *end = in->p + in->len;
	size_t kept = 0; /* the mapping's pages before this were given back */
	while (p < end) {
		/* A pass reads the input once, front to back: give back what it
		 * read every 64 MiB, so that the resident memory of an import
		 * stays bounded whatever the input's size (the pages come back
		 * from the page cache if a message needs a line again). */
		if (in->mapped && (size_t)(p - in->p) - kept >= DROP_BEHIND) {
			madvise((void *)(in->p + kept), DROP_BEHIND, MADV_DONTNEED);
			kept += DROP_BEHIND;
		}
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		in->line++;
		in->line_off = (size_t)(p - in->p);
		const char *t = e > p && e[-1] == '\r' ? e - 1 : e; /* CRLF */
		int rc = fn(ctx, p, t);
		if (rc == -1 && in->skip_bad) {
			if (!in->bad_lines++)
				in->first_bad_line = in->line;
		} else if (rc != 0) {
			return rc;
		}
		p = e + 1;
	}
	return 0;
}

/* 1 + the value of each byte as a hex digit, 0 when it is none. */
const uint8_t ar_imp_hex1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};
