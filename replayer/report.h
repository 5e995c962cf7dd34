/*
 * report.h — the worker -> parent protocol: text lines on a pipe, written by
 * the worker after the replay (never during it) and parsed by the parent
 * (runner.c), which alone writes SQLite. Text so a worker can be run by hand
 * and read; one tag letter per line kind:
 *
 *   A allocrr-worker <protocol version>
 *   V <verify rc> <path of the library serving malloc>
 *   S <name> <u64>                 scalar metric (names: see runner.c)
 *   H <kind> <count> <sum> <min> <max>   latency histogram totals, ticks
 *   B <kind> <bucket> <count>      a non-empty histogram bucket (hist.h)
 *   R <i> <event> <elapsed_ns> <anon_rss_bytes> <live_bytes>   RSS sample
 *   C <name> <u64 | -> <reason>    hardware counter; "-" = not available
 *   T <name> <u64>                 the allocator's own statistic
 *   E <status> <reason...>         the run failed (status: runs.status)
 *   Z                              end: anything after a missing Z is lost
 *
 * The writer (ar_rpt_*) formats integers itself and writes through a static
 * buffer with write(2): no stdio, no malloc, so reporting cannot disturb the
 * allocator under test even if it happened mid-run.
 */
#ifndef AR_REPORT_H
#define AR_REPORT_H

#include <stddef.h>
#include <stdint.h>

#define AR_RPT_PROTOCOL 1

typedef struct ar_rpt {
	int fd;
	int failed; /* a write failed: the parent will see no Z */
	size_t len;
	char buf[65536];
} ar_rpt_t;

void ar_rpt_init(ar_rpt_t *r, int fd);
/* Raw bytes (the caller writes the line structure). */
void ar_rpt_str(ar_rpt_t *r, const char *s);
/* Free text inside a line (reasons, paths): newlines become spaces. */
void ar_rpt_text(ar_rpt_t *r, const char *s);
void ar_rpt_u64(ar_rpt_t *r, uint64_t v);
/* " " then v */
void ar_rpt_sp_u64(ar_rpt_t *r, uint64_t v);
/* A whole "S name value\n" line, and the same for other tags. */
void ar_rpt_kv(ar_rpt_t *r, char tag, const char *name, uint64_t v);
void ar_rpt_flush(ar_rpt_t *r);

#endif
