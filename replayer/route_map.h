/*
 * route_map.h — the route map file allocreplay --route writes for the
 * worker (replayer/route.c writes it, worker_route.c reads it): which
 * allocator serves each allocation op of each stream of one workload.
 *
 * Layout (native, little-endian; a temporary file of one allocreplay
 * session, never kept):
 *   ar_route_map_header_t | ar_route_map_stream_t[nstreams] | owner bytes
 * Stream i of the map is stream i of the workload (same trace_index); its
 * nallocs owner bytes start at offset. An owner byte is 0 (the base
 * allocator) or k in 1..nroutes (the k-th --route library). Allocation ops
 * are counted as worker_route.h says, after the stream's prelude.
 */
#ifndef AR_ROUTE_MAP_H
#define AR_ROUTE_MAP_H

#include <stdint.h>

#include "workload.h"

#define AR_ROUTE_MAP_MAGIC 0x3150414d54524152ull /* "ARTRMAP1" */

typedef struct ar_route_map_header {
	uint64_t magic;
	uint32_t nstreams;
	uint32_t nroutes;
	uint64_t file_bytes;
} ar_route_map_header_t;

typedef struct ar_route_map_stream {
	uint32_t trace_index;
	uint32_t reserved;
	uint64_t nallocs;
	uint64_t offset;
} ar_route_map_stream_t;

/* 1 when kind (ar_wl_kind_t) is an allocation op the map has a byte for. */
static inline int ar_route_map_counts(unsigned kind)
{
	return kind == AR_WL_MALLOC || kind == AR_WL_CALLOC ||
	       (kind >= AR_WL_POSIX_MEMALIGN && kind <= AR_WL_PVALLOC);
}

/* Allocation ops of workload stream t after its prelude: from its counts
 * by kind, which leave the prelude out (workload.h). */
static inline uint64_t ar_route_map_allocs(const ar_wl_thread_t *t)
{
	uint64_t n = 0;
	for (unsigned k = 0; k < AR_WL_NCALLS; k++)
		n += ar_route_map_counts(k) ? t->ops_by_kind[k] : 0;
	return n;
}

#endif
