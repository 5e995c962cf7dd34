/*
 * livemap.h — live heap objects by address, for statistics that replay a
 * trace's allocations (live bytes, peak). Memory grows with the number of
 * live objects, not with the length of the trace.
 */
#ifndef AR_LIVEMAP_H
#define AR_LIVEMAP_H

#include <stdint.h>

#include "ar_trace.h"

/* A realloc's result, live from its seq2 on (SPEC 4). */
typedef struct ar_pending {
	uint64_t seq2, ptr, bytes;
} ar_pending_t;

typedef struct ar_livemap {
	uint64_t *keys, *vals; /* key 0 = empty: NULL is never live */
	uint64_t cap, len, tomb;
	ar_pending_t *pending; /* min-heap on seq2 */
	uint64_t npending, pending_cap;
	uint64_t live_bytes, peak_live_bytes, peak_seq;
	uint64_t unknown_frees; /* frees of pointers the trace never returned */
} ar_livemap_t;

void ar_livemap_init(ar_livemap_t *m);
void ar_livemap_free(ar_livemap_t *m);
/* Apply one event, given in sequence order (allocation, free or realloc,
 * as SPEC 5.5 defines their effect). A realloc releases its input at seq
 * and acquires its result at seq2, which may come after other threads'
 * events: the acquisition waits until the first event past seq2 (or
 * ar_livemap_finish). Returns 0 or AR_ENOMEM. */
int ar_livemap_apply(ar_livemap_t *m, const ar_event_t *e);
/* Apply the acquisitions still waiting for their seq2. */
int ar_livemap_finish(ar_livemap_t *m);
/* Bytes an allocation event asked for (count * size for calloc). */
uint64_t ar_event_request_bytes(const ar_event_t *e);

#endif
