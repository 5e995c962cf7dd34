/*
 * rec_expect.h — lets a test program say which heap calls it made, in the
 * line format of `alloctrace dump` without the SEQ and TID columns, so a
 * test can compare them with the trace. Lines are kept in a static buffer
 * and printed at the end: printing as we go would add stdio's own
 * allocations in the middle of the sequence.
 */
#ifndef REC_EXPECT_H
#define REC_EXPECT_H
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>

static char expect_buf[1 << 16];
static size_t expect_len;

__attribute__((format(printf, 1, 2))) static void expect(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(expect_buf + expect_len, sizeof expect_buf - expect_len, fmt, ap);
	va_end(ap);
	if (n > 0 && expect_len + (size_t)n + 1 < sizeof expect_buf) {
		expect_len += (size_t)n;
		expect_buf[expect_len++] = '\n';
	}
}

static void expect_print(void)
{
	fwrite(expect_buf, 1, expect_len, stdout);
}

#define P(x) ((unsigned long)(uintptr_t)(x))
#endif
