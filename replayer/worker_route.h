/*
 * worker_route.h — allocreplay --route in the worker: chosen allocations
 * served by one of our allocators (its prefixed build,
 * liballocrr-NAME-prefixed.so, dlopened at start-up), the rest by the base
 * allocator, the one LD_PRELOAD put in front of glibc, in one process.
 *
 * The decision is the parent's (replayer/route.h): a route map file gives,
 * per stream, one owner byte per allocation op of the stream after its
 * prelude, in stream order (0 = base, k = the k-th --route library). An
 * allocation op is malloc, calloc, posix_memalign, aligned_alloc, memalign,
 * valloc or pvalloc; realloc(NULL, n) and a window trace's pre-existing
 * blocks always go to the base. The worker writes the owner of the block in
 * its slot when it allocates; free and realloc go to the slot's owner, so a
 * block stays with the allocator that made it. The owner is written before
 * the slot's SIGNAL (release) and read after the consumer's WAIT (acquire),
 * like the slot's pointer.
 *
 * Command line (added by allocreplay):
 *   --route NAME=PATH   the k-th routed allocator (k = 1, 2, ... in order)
 *   --route-map FILE    the owner bytes (format: route.h)
 * Start-up refuses (status wrong_allocator) a library whose
 * allocrr_NAME_malloc dladdr does not place in PATH, and (status error) a
 * map that does not fit the workload: stream count, thread indices,
 * allocation ops per stream, owner bytes beyond the routes given.
 *
 * The proof (T lines, stored in allocator_stats): route.base.calls and
 * route.base.allocs (calls and allocation ops the worker sent to the base),
 * route.NAME.calls and route.NAME.allocs (to each routed allocator), and
 * route.NAME.allocs_total, route.NAME.frees_total (the deltas over the
 * replay window of the routed allocator's own counters),
 * route.NAME.bytes_mapped_peak and route.NAME.bytes_in_use.
 */
#ifndef AR_WORKER_ROUTE_H
#define AR_WORKER_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "ar_alloc.h"
#include "route_map.h"
#include "workload.h"

/* Routed allocators in one run at most (our four). */
#define AR_ROUTE_MAX 4

/* One routed allocator's prefixed API. */
typedef struct ar_route_api {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	void (*free)(void *);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	ar_allocator_stats_fn stats;
	char name[32];
	uint64_t base_allocs, base_frees, end_allocs, end_frees;
} ar_route_api_t;

/* Per replay thread: what it sent where (index 0 = base). */
typedef struct ar_route_count {
	uint64_t calls[AR_ROUTE_MAX + 1];
	uint64_t allocs[AR_ROUTE_MAX + 1];
} ar_route_count_t;

typedef struct ar_route {
	int n;                          /* routed allocators; 0: a plain replay */
	uint32_t nstreams;
	ar_route_api_t api[AR_ROUTE_MAX + 1]; /* [1..n] */
	uint8_t *slot_owner;            /* per slot: 0 base, k api[k] */
	const uint8_t **owners;         /* per stream: its allocation ops' owners */
	ar_route_count_t *count;        /* per stream */
} ar_route_t;

extern ar_route_t ar_route;

/* Take "--route" or "--route-map" with its value v: 1 when opt was one of
 * them (a bad value is reported by ar_route_open), else 0. */
int ar_route_option(const char *opt, const char *v);

/* Start-up, after the workload is mapped: dlopen and prove each library,
 * map and check the route map, map and touch the owner and count arrays.
 * 0 (also when not routed), or -1 with *status ("error" or
 * "wrong_allocator") and a message in msg. */
int ar_route_open(const ar_workload_t *w, const char **status, char *msg, size_t cap);

/* The routed allocators' own counters, before and after the window. */
void ar_route_baseline(void);
void ar_route_final(void);

/* The proof, as T lines (see the top). */
struct ar_wproto;
void ar_route_report(struct ar_wproto *r);

/* The allocator of op (index into ar_route.api, 0 = base), for stream
 * owners (advanced by one per allocation op in *nalloc). Sets the slot's
 * owner for a new block. */
static inline int ar_route_owner(const ar_wl_op_t *op, const uint8_t *owners, uint64_t *nalloc)
{
	uint32_t s = op->slot;
	int k;
	switch (op->kind) {
	case AR_WL_FREE:
		return s == AR_WL_NOSLOT ? 0 : ar_route.slot_owner[s];
	case AR_WL_REALLOC:
	case AR_WL_REALLOCARRAY:
		if (s == AR_WL_NOSLOT)
			return 0;
		if (op->flags & AR_WL_F_NOSRC) { /* realloc(NULL, n): a new block of the base's */
			ar_route.slot_owner[s] = 0;
			return 0;
		}
		return ar_route.slot_owner[s];
	default:
		k = owners[(*nalloc)++];
		if (s != AR_WL_NOSLOT)
			ar_route.slot_owner[s] = (uint8_t)k;
		return k;
	}
}

#endif
