/*
 * trace_fixture.h — for unit tests that build a trace: a writer on an
 * unlinked temporary file (test_roundtrip.c), and around metadata records
 * the one event and the close that make it a complete trace
 * (test_process_info.c, replayer/tests/test_replay_recorded.c).
 */
#ifndef AR_TRACE_FIXTURE_H
#define AR_TRACE_FIXTURE_H

#include <stdlib.h>
#include <unistd.h>

#include "format.h"
#include "testing.h"

/* A writer of header h (zstd level 1) on a temporary file already
 * unlinked, whose descriptor goes to *fd for the reader; NULL on failure
 * (counted). */
static inline ar_writer_t *fixture_temp_writer(const ar_header_t *h, int *fd)
{
	char path[] = "/tmp/allocrr-unit-XXXXXX";
	*fd = mkstemp(path);
	EXPECT(*fd >= 0);
	unlink(path);
	ar_writer_t *w = NULL;
	ar_error_t err;
	EXPECT(ar_writer_open(&w, *fd, h, 1, NULL, &err) == 0);
	return w;
}

/* Write one malloc (seq 1, thread 0) to w and close it at end_ns with a
 * footer. */
static inline void fixture_one_event_and_close(ar_writer_t *w, uint64_t end_ns)
{
	static uint8_t mem[AR_EVENT_SLOT_BYTES * 4];
	ar_evbuf_t b;
	ar_error_t err;
	ar_evbuf_reset(&b, mem, sizeof mem, 0, 42);
	ar_event_t e = {.seq = 1, .op = AR_OP_MALLOC, .size = 10, .result = 0x1000, .time_ns = 160};
	EXPECT(ar_evbuf_append(&b, &e) == 0);
	EXPECT(ar_writer_write_events(w, &b, &err) == 0);
	EXPECT(ar_writer_close(w, end_ns, 1, &err) == 0);
}

#endif
