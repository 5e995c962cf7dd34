/*
 * route_candidates.h — allocreplay --route rules that `alloctrace stats`
 * proposes (route_candidates.c says by which criteria).
 */
#ifndef AR_ROUTE_CANDIDATES_H
#define AR_ROUTE_CANDIDATES_H

#include "ar_trace.h"

/* Rewind r, walk its events and print the candidate rules (text output).
 * 0, or AR_ENOMEM (nothing printed). */
int ar_route_candidates(ar_reader_t *r);

#endif
