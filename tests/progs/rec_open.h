/*
 * rec_open.h — how the recorder tests' own trace checkers (rec_tracecheck,
 * torture_check) open a trace: through the public reader only, and an
 * unreadable trace ends the checker with status 2 and the reader's message,
 * so a test can tell "unreadable" from "read, and wrong" (status 1).
 */
#ifndef REC_OPEN_H
#define REC_OPEN_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "ar_trace.h"

static inline ar_reader_t *open_or_die(const char *path)
{
	ar_reader_t *r;
	ar_error_t err;
	if (ar_reader_open(&r, path, &err) != 0) {
		fprintf(stderr, "%s: %s (offset %" PRIu64 ")\n", path, err.msg, err.offset);
		exit(2);
	}
	return r;
}

#endif
