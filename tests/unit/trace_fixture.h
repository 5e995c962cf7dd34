/*
 * trace_fixture.h — for unit tests that build a trace in memory around
 * metadata records: the one event and the close that make it a complete
 * trace (test_process_info.c, replayer/tests/test_replay_recorded.c).
 */
#ifndef AR_TRACE_FIXTURE_H
#define AR_TRACE_FIXTURE_H

#include "format.h"
#include "testing.h"

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
