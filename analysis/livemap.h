/*
 * livemap.h — live heap objects by address, for statistics that replay a
 * trace's allocations (live bytes, peak). Memory grows with the number of
 * live objects, not with the length of the trace.
 */
#ifndef AR_LIVEMAP_H
#define AR_LIVEMAP_H

#include <stdint.h>

#include "ar_trace.h"

typedef struct ar_livemap {
	uint64_t *keys, *vals; /* key 0 = empty: NULL is never live */
	uint64_t cap, len, tomb;
	uint64_t live_bytes, peak_live_bytes, peak_seq;
	uint64_t unknown_frees; /* frees of pointers the trace never returned */
} ar_livemap_t;

void ar_livemap_init(ar_livemap_t *m);
void ar_livemap_free(ar_livemap_t *m);
/* Apply one event (allocation, free or realloc, as SPEC 5.5 defines their
 * effect). Returns 0 or AR_ENOMEM. */
int ar_livemap_apply(ar_livemap_t *m, const ar_event_t *e);
/* Bytes an allocation event asked for (count * size for calloc). */
uint64_t ar_event_request_bytes(const ar_event_t *e);

#endif
