/*
 * worker_proto.h — the worker -> parent protocol: text lines on a pipe,
 * written by the worker after the replay (never during it) and parsed by the
 * parent (runner.c), which alone writes SQLite. Text so a worker can be run by hand
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
 * The writer (ar_wproto_*) formats integers itself and writes through a static
 * buffer with write(2): no stdio, no malloc, so reporting cannot disturb the
 * allocator under test even if it happened mid-run.
 */
#ifndef AR_WORKER_PROTO_H
#define AR_WORKER_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define AR_WPROTO_VERSION 1

typedef struct ar_wproto {
	int fd;
	int failed; /* a write failed: the parent will see no Z */
	size_t len;
	char buf[65536];
} ar_wproto_t;

void ar_wproto_init(ar_wproto_t *r, int fd);
/* Raw bytes (the caller writes the line structure). */
void ar_wproto_str(ar_wproto_t *r, const char *s);
/* Free text inside a line (reasons, paths): newlines become spaces. */
void ar_wproto_text(ar_wproto_t *r, const char *s);
void ar_wproto_u64(ar_wproto_t *r, uint64_t v);
/* " " then v */
void ar_wproto_sp_u64(ar_wproto_t *r, uint64_t v);
/* A whole "S name value\n" line, and the same for other tags. */
void ar_wproto_kv(ar_wproto_t *r, char tag, const char *name, uint64_t v);
void ar_wproto_flush(ar_wproto_t *r);

#endif
