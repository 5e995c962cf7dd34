/*
 * tcache.h — per-thread caches of free blocks, one LIFO list per size class,
 * in front of the pool heap (pool_heap.h) which acts as the central heap.
 *
 * A thread's cache is touched only by that thread, so its fast paths take no
 * lock and make no atomic read-modify-write: a hit is a list pop, a free is a
 * list push. A block freed by another thread simply joins the freeing
 * thread's cache (blocks have no owner), which makes cross-thread frees as
 * cheap as local ones; the price is that memory can migrate between threads.
 *
 * Invariants:
 *   - bins[c] is a NULL-terminated list of exactly count free blocks of class
 *     c;
 *   - a list never holds more than 2 * batch(c) blocks;
 *   - cached_bytes >= the cache's size, the sum over c of count * class
 *     size: a free adds its block, a malloc takes nothing off (one add and
 *     a cache line less on the hit path), and when the sum passes the
 *     per-thread cap it is recounted exactly (ar_tc_overflow). So the cache
 *     never stays above the cap after a free returns;
 *   - counters other threads read for statistics (counts, misses, ...) are
 *     written only by the owner; readers load them relaxed (__atomic_load_n)
 *     and may see them a moment late. The two a hit or a free writes, a
 *     bin's count and frees, are plain aligned words the owner stores
 *     plainly: as _Atomic fields (relaxed stores, or volatile) gcc computed
 *     each address apart, 4 more instructions a free on S1 (callgrind).
 *     Elsewhere relaxed atomic stores;
 *   - a malloc counts nothing: every block a bin ever held came in by a free
 *     (frees) or a refill (moved_in) and left by a malloc, a flush
 *     (moved_out) or is still there (count), so the cache-path mallocs of
 *     class c are frees + moved_in - moved_out - count (ar_tc_stats).
 */
#ifndef AR_ALLOC_TCACHE_H
#define AR_ALLOC_TCACHE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ar_alloc.h"
#include "size_class.h"

/* A class's list, its free counter and the constants its fast paths
 * need side by side (32 bytes, two bins a line), so a hit reads and writes
 * one cache line for its class and computes nothing from the class number:
 * before, the block size was derived from it and the limit read from a
 * global table, 60 instructions a call on S1 against tcmalloc's 34
 * (callgrind; docs/BENCHMARKS.md). */
typedef struct tc_bin {
	void *head;
	uint32_t count;
	uint32_t block_bytes;   /* ar_sc_size(class) */
	uint32_t limit;         /* 2 * ar_tc_batch[class]: longer, a free flushes */
	uint64_t frees;         /* cache-path frees of this class */
} __attribute__((aligned(32))) tc_bin_t;

/* The cold fields come first: the cache starts at its mapping's page
 * boundary, the L1 set that every chunk header (chunk.h) maps to as well,
 * and a hot line there is evicted by the harness's or program's own
 * page-aligned data (callgrind on A: 227 k D1 misses before, 173 k with
 * this layout; glibc 25). */
typedef struct ar_tcache {
	struct ar_tcache *next;  /* every cache ever made (the registry) */
	struct ar_tcache *next_free;
	int live;
	_Atomic uint64_t misses, flushes;
	_Atomic int64_t padding; /* see pool.c: aligned blocks' unusable head */
	_Atomic uint64_t moved_in[AR_SC_COUNT];  /* blocks of class c from the central heap */
	_Atomic uint64_t moved_out[AR_SC_COUNT]; /* blocks of class c back to it */
	char cold[64];                           /* the hot fields start on a line of their own */
	size_t cached_bytes;
	tc_bin_t bins[AR_SC_COUNT];
} ar_tcache_t;

/* The calling thread's cache: NULL before its first malloc, TC_DEAD once its
 * cache was flushed at thread exit (later calls go to the central heap). */
#define TC_DEAD ((ar_tcache_t *)1)
extern __thread ar_tcache_t *ar_tc_self __attribute__((tls_model("initial-exec")));

/* Per-class transfer size and the per-thread cap, from the tunables. */
extern uint32_t ar_tc_batch[AR_SC_COUNT];
extern size_t ar_tc_cap;

/* Set up the batch sizes and the thread-exit key. Called from ar_core_init. */
void ar_tc_init(size_t batch, size_t cap_bytes);

/* Create the calling thread's cache; NULL when no memory for it (the thread
 * then works on the central heap directly). */
ar_tcache_t *ar_tc_create(void);

/* A block of class cls after a cache miss: refill from the central heap and
 * return one block (NULL when out of memory). */
void *ar_tc_refill(ar_tcache_t *tc, unsigned cls);

/* After a push made bin cls too long or cached_bytes pass the cap: give
 * blocks back. */
void ar_tc_overflow(ar_tcache_t *tc, unsigned cls);

/* Sum over every thread's cache: blocks cached and cache-path mallocs per
 * class (added to cached[], allocs[]), the aligned-block padding (added to
 * *padding), and frees_total, cache_misses, cache_flushes, threads (added
 * to out). */
void ar_tc_stats(ar_alloc_stats_t *out, uint64_t cached[AR_SC_COUNT], uint64_t allocs[AR_SC_COUNT],
		 int64_t *padding);

void ar_tc_fork_prepare(void);
void ar_tc_fork_parent(void);
void ar_tc_fork_child(void);

static inline void tc_set_count(tc_bin_t *b, uint32_t n)
{
	b->count = n;
}

static inline uint32_t tc_get_count(tc_bin_t *b)
{
	return b->count;
}

/* Owner-only counter increment: a plain load and store, no lock prefix. */
static inline void tc_add(_Atomic uint64_t *ctr, uint64_t n)
{
	atomic_store_explicit(ctr, atomic_load_explicit(ctr, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static inline void tc_bump(_Atomic uint64_t *ctr)
{
	tc_add(ctr, 1);
}

#endif
