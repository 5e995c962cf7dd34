/*
 * map_cache.h — a bounded cache of freed large-block mappings, shared by all
 * four allocators (large.c for pool, arena and tlscache; freelist's mapped
 * blocks), so that freeing a large block and allocating the next one costs
 * neither a munmap/mmap pair nor faulting every page in again.
 *
 * Policy (the "why" is in map_cache.c):
 *   - the cache is a set of free address ranges (freed mappings, merged
 *     with the free ranges they touch); it holds at most
 *       bound = min(ALLOCRR_LARGE_CACHE_MAX, live * ALLOCRR_LARGE_CACHE_PCT / 100,
 *                   live_peak * ALLOCRR_LARGE_CACHE_PEAK_PCT / 100 - live)
 *     where live is the bytes of mappings handed out and not yet returned and
 *     live_peak the most ever live: live and cached bytes together stay
 *     within 125 % (default) of the program's own peak of live large bytes;
 *     above the bound the oldest range gives back its tail (or all of it)
 *     first, and a freed mapping larger than the bound is unmapped at once.
 *     With no large block live the bound is 0: nothing stays cached.
 *   - a request takes the smallest range holding an aligned piece of its
 *     length (best fit); what lies before and after the piece stays free.
 *     Else the longest range is extended into the unmapped address space
 *     right below or above it (only the missing pages are new). Else a
 *     fresh mapping.
 *   - a shrinking block gives its tail to the cache; a growing one takes
 *     the free range right after it when there is one, else mremap.
 *   - at most AR_MCACHE_SLOTS ranges; one lock, held for a table scan only,
 *     never across a system call.
 * The debug build caches nothing (by default), so a use after free of a
 * large block still faults there.
 *
 * Every mapping handed out must come back through ar_mcache_put() with its
 * exact current length; cached bytes are part of os.c's bytes_mapped tally
 * and are reported as bytes_cached.
 */
#ifndef AR_ALLOC_MAP_CACHE_H
#define AR_ALLOC_MAP_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "ar_alloc.h"

#define AR_MCACHE_SLOTS 64

/* Read ALLOCRR_LARGE_CACHE_MAX (bytes, default 64 MiB, 0 = no cache; debug
 * build default 0), ALLOCRR_LARGE_CACHE_PCT (default 200, 0-1000) and
 * ALLOCRR_LARGE_CACHE_PEAK_PCT (default 125, 100-1000). Once, from the API's
 * initialisation, after ar_os_init(). */
void ar_mcache_init(void);

/*
 * A read/write mapping of exactly len bytes (a page multiple) starting at a
 * multiple of align (a power of two >= the page size), from the cache or
 * from the kernel. *fresh is set to 1 when every byte is zero (a new
 * mapping), 0 when it held a freed block. NULL when the kernel refuses.
 */
void *ar_mcache_get(size_t len, size_t align, int *fresh);

/* Count a mapping of len bytes that the caller made itself (ar_os_map) as
 * handed out; it comes back through ar_mcache_put() like the others. */
void ar_mcache_adopt(size_t len);

/* Take back the mapping [p, p+len) handed out by ar_mcache_get() (or
 * adopted): cache it or unmap it. errno is preserved. */
void ar_mcache_put(void *p, size_t len);

/*
 * Resize the handed-out mapping [p, p+old_len) to new_len bytes: in place
 * (a shrink gives the tail to the cache; a growth takes the free range
 * after it, or extends the mapping), else moved by mremap to a multiple of
 * align (pages travel, nothing is copied). Returns the mapping's address, or
 * NULL with the mapping untouched (e.g. it spans two kernel mappings: the
 * caller copies).
 */
void *ar_mcache_resize(void *p, size_t old_len, size_t new_len, size_t align);

/* What the cache holds and did, for tests and statistics. */
typedef struct ar_mcache_info {
	uint64_t max_bytes;    /* ALLOCRR_LARGE_CACHE_MAX */
	uint64_t live_pct;     /* ALLOCRR_LARGE_CACHE_PCT */
	uint64_t peak_pct;     /* ALLOCRR_LARGE_CACHE_PEAK_PCT */
	uint64_t live_bytes;   /* handed out, not returned */
	uint64_t live_peak;    /* the most ever handed out at once */
	uint64_t cached_bytes; /* held in the cache now */
	uint64_t cached_peak;  /* the most it ever held */
	uint64_t entries;      /* free ranges held now */
	uint64_t hits;         /* gets (and growths in place) served from free ranges */
	uint64_t misses;       /* gets that mapped fresh memory */
	uint64_t evictions;    /* ranges trimmed or unmapped to stay within the bound */
	uint64_t rejected;     /* puts unmapped at once (bound too small) */
} ar_mcache_info_t;

void ar_mcache_info(ar_mcache_info_t *out);

/* Add cached bytes to out->bytes_cached. */
void ar_mcache_stats(ar_alloc_stats_t *out);

void ar_mcache_fork_prepare(void);
void ar_mcache_fork_parent(void);
void ar_mcache_fork_child(void);

#endif
