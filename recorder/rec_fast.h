/*
 * rec_fast.h — the common case of a recorded call, inlined into each heap
 * hook (rec_hooks.c): the call succeeded, the thread has a buffer with room
 * that is not due to be flushed, no stacks are taken. Then the event goes
 * straight into the buffer's next slots (format.h's ar_evbuf_put: one
 * 32-byte slot for a malloc or free, two for a calloc or realloc; the
 * recorder is the event buffer's one producer and carries its own copy of
 * the trace-format objects) without building an ar_event_t, without
 * ar_evbuf_append's checks (a hook's events are valid by construction:
 * seqs from the global counter, in order), and without touching errno:
 * nothing on this path can change it, so the program sees what the real
 * function left. Everything else (the first event of a buffer, a full or
 * aged buffer, stacks, a NULL result, a window trace's old sizes) takes
 * the full path, rec_hooks.c's end(), with the same seqs and time.
 *
 * The cost this saves was measured with callgrind on bench_rec_workload's
 * `tight` loop (docs/BENCHMARKS.md, "Recorder"): the full path spent about
 * 320 instructions per event on the program's thread.
 */
#ifndef AR_REC_FAST_H
#define AR_REC_FAST_H

#include "format.h"
#include "rec_internal.h"

/* The calling thread's record on the hot path: one TLS load and a compare,
 * the creation and the generation change out of line. */
static inline __attribute__((always_inline)) rec_thread_t *rec_thread_self_fast(void)
{
	rec_thread_t *t = rec_tls.t;
	if (REC_LIKELY(t != NULL) && REC_LIKELY(t->gen == rec_generation))
		return t;
	return rec_thread_self();
}

/* Store the event of a call (in_shim set, in_call held by
 * rec_thread_enter) and release both: 1. Or 0, with *time set, when the
 * caller must take the full path instead, passing it *time: always when
 * `plain` is 0 (a NULL result, an old_size to carry). seq2 is 0 for an op
 * without one; aux is the op's count or alignment. */
static inline __attribute__((always_inline)) int rec_fast_event(rec_thread_t *t, int plain, unsigned op,
								 uint64_t seq, uint64_t seq2, uint64_t ptr,
								 uint64_t size, uint64_t aux, uint64_t result,
								 uint64_t *time)
{
	*time = rec_event_stamp(t, seq);
	if (REC_UNLIKELY(!plain))
		return 0;
	/* appending before cur is read: a signal handler that closes the
	 * trace takes cur from a thread it interrupted only outside this */
	rec_appending_begin(t);
	rec_buf_t *b = atomic_load_explicit(&t->cur, memory_order_relaxed);
	uint64_t first = atomic_load_explicit(&t->first_ns, memory_order_relaxed);
	ar_slot_event_t v = {.seq = seq, .seq2 = seq2, .time_ns = *time, .ptr = ptr, .result = result,
			     .size = size, .aux = aux, .op = (uint8_t)op};
	if (REC_UNLIKELY(!b) || REC_UNLIKELY(rec_cfg.stack_depth) ||
	    REC_UNLIKELY(!ar_evbuf_room(&b->eb, ar_slot_count(&v))) ||
	    REC_UNLIKELY(first == 0) || REC_UNLIKELY(*time + 1 - first > rec_cfg.flush_ns) ||
	    REC_UNLIKELY(t->exited)) {
		t->holding_event = 1; /* a signal deferred to here loses this event */
		rec_appending_end(t);
		t->holding_event = 0;
		return 0;
	}
	uint64_t last = seq2 ? seq2 : seq;
	ar_evbuf_put(&b->eb, &v, last);
	rec_appending_end(t);
	rec_stamp_done(&t->stamp, last);
	rec_call_leave(t);
	rec_tls.in_shim = 0;
	return 1;
}

#endif
