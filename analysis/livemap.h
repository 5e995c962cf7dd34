/*
 * livemap.h — live heap objects by address, replayed from a trace in
 * sequence order, for statistics (live bytes and their peak in info, every
 * object's birth and death in stats). Memory grows with the number of live
 * objects, not with the length of the trace.
 *
 * What is live, and when, is the trace library's live set (ar_liveset_t in
 * ar_trace.h: SPEC 4 and 5.5, shared with the replay compiler); this file
 * keeps, for each live object, the record statistics want (where and when
 * it was born, by which thread and stack), tagged onto the set's blocks.
 */
#ifndef AR_LIVEMAP_H
#define AR_LIVEMAP_H

#include <stdint.h>

#include "ar_trace.h"

/* One live object: where it came from. */
typedef struct ar_live_obj {
	uint64_t ptr;
	uint64_t bytes;    /* requested (count * size for calloc) */
	uint64_t born_seq; /* seq2 for a realloc's result */
	uint64_t born_ns;
	uint64_t born_event; /* ordinal of the allocating event among those applied */
	uint64_t aux;        /* the caller's, given to ar_livemap_apply */
	uint32_t thread, stack;
} ar_live_obj_t;

/* Called for every object an event releases, before it is forgotten (by is
 * NULL when a newer object took over its address without a release). */
typedef void (*ar_livemap_released_fn)(void *ctx, const ar_live_obj_t *obj, const ar_event_t *by);
/* Called for every object once it is live (live_bytes already counts it). */
typedef void (*ar_livemap_acquired_fn)(void *ctx, const ar_live_obj_t *obj);

typedef struct ar_livemap {
	ar_liveset_t set;   /* the blocks; each tag indexes objs */
	ar_live_obj_t *objs; /* records, reused through a free list */
	uint64_t *free_objs, nfree, nobjs, objs_cap;
	uint64_t events; /* events applied */
	/* Copies of the set's counters, current whenever a callback runs and
	 * after each call (see ar_liveset_t). */
	uint64_t len, live_bytes, peak_live_bytes, peak_seq;
	uint64_t unknown_frees; /* releases of pointers the trace never returned */
	/* In a window trace (ar_livemap_set_window): blocks released that the
	 * window never saw allocated, known by their old_size (SPEC 6.11), and
	 * their bytes (saturated). peak_live_bytes counts them; live_bytes,
	 * len and the callbacks are about the blocks the trace allocated. */
	uint64_t preexisting_blocks, preexisting_bytes;
	ar_livemap_released_fn released;
	ar_livemap_acquired_fn acquired;
	void *ctx;
} ar_livemap_t;

/* The callbacks may be NULL. */
void ar_livemap_init(ar_livemap_t *m, ar_livemap_released_fn released, ar_livemap_acquired_fn acquired, void *ctx);
void ar_livemap_free(ar_livemap_t *m);
/* The trace is a window (its header has AR_HDR_WINDOW): releases that
 * carry an old_size of addresses not live are pre-existing blocks (see
 * ar_liveset_t.window). Call before the first event. */
void ar_livemap_set_window(ar_livemap_t *m, int window);
/* Apply one event, given in sequence order; aux is stored with the objects
 * it allocates. Returns 0 or AR_ENOMEM. */
int ar_livemap_apply(ar_livemap_t *m, const ar_event_t *e, uint64_t aux);
/* Apply the acquisitions still waiting for their seq2 (after the last event). */
int ar_livemap_finish(ar_livemap_t *m);
/* Apply the waiting acquisitions with seq2 < seq: what ar_livemap_apply does
 * first, for callers that look objects up before applying an event. */
int ar_livemap_advance(ar_livemap_t *m, uint64_t seq);
/* The live object at ptr, or NULL. Valid until the next apply. */
const ar_live_obj_t *ar_livemap_find(const ar_livemap_t *m, uint64_t ptr);
/* Call fn for every object still live. */
void ar_livemap_each(const ar_livemap_t *m, void (*fn)(void *ctx, const ar_live_obj_t *obj), void *ctx);
/* ar_event_request_bytes(), the bytes an allocation event asked for, is
 * the trace library's (ar_trace.h). */

/* a + b, or 2^64-1 when that overflows: totals of a trace's byte counts. */
static inline uint64_t ar_sat_add(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

#endif
