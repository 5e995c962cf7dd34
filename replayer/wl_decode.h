/*
 * wl_decode.h — decode a trace's events in global sequence order on a
 * second thread, handing them to the compiler in batches, so decoding (zstd
 * and the columnar decoder) and compiling share the two cores instead of
 * taking turns. Memory: a fixed ring of batches, never the trace.
 *
 * The consumer reads events where the producer wrote them (no copy): an
 * event handed out stays valid until the next call of ar_wld_next, which is
 * when its batch goes back to the producer.
 */
#ifndef AR_WL_DECODE_H
#define AR_WL_DECODE_H

#include <pthread.h>
#include <stdint.h>

#include "ar_trace.h"

#define AR_WLD_BATCH 4096 /* events per batch */
#define AR_WLD_RING 8     /* batches in flight */

typedef struct ar_wld_batch {
	ar_event_t ev[AR_WLD_BATCH];
	uint32_t n;
} ar_wld_batch_t;

typedef struct ar_wl_decoder {
	ar_reader_t *r;
	ar_wld_batch_t *ring;
	uint64_t produced, consumed; /* batches, under lock */
	int done;                    /* the producer has stopped */
	int rc;                      /* its last ar_reader_next_merged result: 0 end, <0 error */
	int stop;                    /* the consumer gave up: the producer must quit */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	/* The consumer's batch (NULL before the first and after the last):
	 * its events [pos, n) are still to be handed out. */
	const ar_wld_batch_t *cur;
	uint32_t pos, n;
} ar_wl_decoder_t;

/* Start decoding r (merged order) on a new thread. 0, or AR_ENOMEM. */
int ar_wld_start(ar_wl_decoder_t *d, ar_reader_t *r);
/* ar_wld_next past the end of the consumer's batch: hand it back, wait for
 * the next one. */
int ar_wld_next_batch(ar_wl_decoder_t *d, const ar_event_t **e);
/* The next event: 1 with *e pointing at it (valid until the next call), 0
 * at the end, or the reader's negative code (ar_reader_error(r) says
 * what). */
static inline int ar_wld_next(ar_wl_decoder_t *d, const ar_event_t **e)
{
	if (__builtin_expect(d->pos < d->n, 1)) {
		*e = &d->cur->ev[d->pos++];
		return 1;
	}
	return ar_wld_next_batch(d, e);
}
/* Stop (if still running) and join the thread; free the ring. */
void ar_wld_finish(ar_wl_decoder_t *d);

#endif
