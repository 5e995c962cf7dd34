/*
 * synth.h — a deterministic synthetic malloc-heavy event stream, for tests
 * and benchmarks of the trace format: per thread a window of 1024 live
 * slots, 40 distinct sizes 16 B - 64 KiB skewed small, a malloc/calloc/realloc/free mix,
 * and addresses from a simulated size-class allocator (LIFO reuse of freed
 * addresses, bump allocation otherwise) so pointer deltas look like a real
 * program's. Sequence numbers and times obey SPEC 4 across threads.
 */
#ifndef AR_SYNTH_H
#define AR_SYNTH_H

#include "ar_trace.h"

#define AR_SYNTH_SLOTS 1024
#define AR_SYNTH_CLASSES 48
#define AR_SYNTH_REUSE 64

typedef struct ar_synth_thread {
	uint64_t slot_ptr[AR_SYNTH_SLOTS];
	uint64_t slot_size[AR_SYNTH_SLOTS];
	uint64_t bump;
	uint64_t reuse[AR_SYNTH_CLASSES][AR_SYNTH_REUSE];
	uint32_t nreuse[AR_SYNTH_CLASSES];
} ar_synth_thread_t;

typedef struct ar_synth {
	uint64_t rng, seq, time_ns;
	uint32_t nthreads;
	ar_synth_thread_t *threads;
} ar_synth_t;

/* Returns 0, or -1 when memory for the thread states is short. */
int ar_synth_init(ar_synth_t *s, uint32_t nthreads, uint64_t seed);
void ar_synth_free(ar_synth_t *s);
/* The next event, made by thread `t` (< nthreads). */
void ar_synth_next(ar_synth_t *s, uint32_t t, ar_event_t *e);
/* A random number from the stream's generator (for callers choosing threads). */
uint64_t ar_synth_rand(ar_synth_t *s);

#endif
