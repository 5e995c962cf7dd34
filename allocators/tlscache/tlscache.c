/*
 * tlscache.c — liballocrr-tlscache.so: thread-local caches per size class in
 * front of a central segregated heap (the pool's, pool_heap.c).
 *
 * Design: a small malloc pops the calling thread's list for its class (no
 * lock, no atomic RMW); on a miss the thread takes a batch of blocks from the
 * central class under that class's lock (ALLOCRR_TLSCACHE_BATCH, at most
 * 64 KiB). A free pushes the block onto the freeing thread's list, whoever
 * allocated it; a list longer than two batches, or a cache above
 * ALLOCRR_TLSCACHE_MAX_BYTES, sends blocks back in batches. At thread exit
 * the whole cache returns to the central heap. Requests above
 * ALLOCRR_TLSCACHE_MAX_SIZE get their own mapping (large.c).
 *
 * Trade-off: the common case costs a few instructions and scales with
 * threads, and cross-thread frees are as cheap as local ones; but every
 * thread may park up to the cap in free blocks nobody else can use (memory
 * grows with the thread count), a producer/consumer pair moves blocks
 * through the central lock in batches, and the central chunks, like the
 * pool's, are never returned to the kernel.
 */
#include <stdatomic.h>
#include <string.h>

#include "core.h"
#include "large.h"
#include "pool_heap.h"
#include "tcache.h"
#include "tunables.h"
#include "util.h"

const char ar_core_name[] = "tlscache";

/* Traffic of threads without a cache (exiting threads, or no memory for a
 * cache): straight to the central heap. */
static _Atomic uint64_t direct_allocs[AR_SC_COUNT], direct_frees;
static _Atomic int64_t direct_padding;

void ar_core_init(void)
{
	size_t chunk = ar_tunable_pow2("ALLOCRR_TLSCACHE_CHUNK_SIZE", (size_t)256 << 10, (size_t)64 << 10,
				       (size_t)1 << 30);
	size_t max = ar_tunable_size("ALLOCRR_TLSCACHE_MAX_SIZE", (size_t)32 << 10, 16, AR_SC_LIMIT);
	size_t batch = ar_tunable_size("ALLOCRR_TLSCACHE_BATCH", 32, 1, 1024);
	size_t cap = ar_tunable_size("ALLOCRR_TLSCACHE_MAX_BYTES", (size_t)1 << 20, 0, (size_t)1 << 32);
	while (max > 16 && ar_sc_size(ar_sc_index(max)) > (chunk - AR_POOL_CHUNK_HDR) / 4)
		max = ar_sc_size(ar_sc_index(max) - 1);
	ar_chunk_set_size(chunk);
	ar_pool_heap_init(max);
	ar_tc_init(batch, cap);
}

static void *alloc_small(unsigned cls);

static __attribute__((noinline)) void *alloc_slow(unsigned cls)
{
	if (ar_tc_self == NULL && ar_tc_create() != NULL)
		return alloc_small(cls);
	void *p = ar_pool_alloc(cls);
	if (p)
		atomic_fetch_add_explicit(&direct_allocs[cls], 1, memory_order_relaxed);
	return p;
}

static inline void *alloc_small(unsigned cls)
{
	ar_tcache_t *tc = ar_tc_self;
	if (AR_LIKELY((uintptr_t)tc > (uintptr_t)TC_DEAD)) {
		tc_bin_t *b = &tc->bins[cls];
		void *p = b->head;
		if (AR_LIKELY(p != NULL)) {
			void *next = *(void **)p;
			b->head = next;
			/* The next hit reads next's link: start that miss now (a
			 * freed block is often long cold; prefetching NULL is
			 * harmless). */
			__builtin_prefetch(next);
			tc_set_count(b, tc_get_count(b) - 1);
			return p;
		}
		return ar_tc_refill(tc, cls);
	}
	return alloc_slow(cls);
}

/* Push block onto tc's bin of class cls; flush when the bin or the cache
 * grew past its limit. */
static inline void push(ar_tcache_t *tc, unsigned cls, char *block)
{
	tc_bin_t *b = &tc->bins[cls];
	*(void **)block = b->head;
	b->head = block;
	uint32_t n = tc_get_count(b) + 1;
	tc_set_count(b, n);
	tc->cached_bytes += b->block_bytes;
	b->frees++;
	if (AR_UNLIKELY(n > b->limit || tc->cached_bytes > ar_tc_cap))
		ar_tc_overflow(tc, cls);
}

/* A free the fast path does not take: a thread without a cache yet, or
 * past its exit (TC_DEAD), or p inside its block (an aligned allocation's
 * padding to account for). Out of line, so the fast path saves no
 * registers. */
static __attribute__((noinline)) void free_slow(unsigned cls, char *block, const char *p)
{
	ar_tcache_t *tc = ar_tc_self;
	if (tc == NULL)
		tc = ar_tc_create();
	if ((uintptr_t)tc > (uintptr_t)TC_DEAD) {
		if (block != p)
			atomic_store_explicit(&tc->padding,
					      atomic_load_explicit(&tc->padding, memory_order_relaxed) - (p - block),
					      memory_order_relaxed);
		push(tc, cls, block);
		return;
	}
	if (block != p)
		atomic_fetch_sub_explicit(&direct_padding, p - block, memory_order_relaxed);
	ar_pool_free(cls, block);
	atomic_fetch_add_explicit(&direct_frees, 1, memory_order_relaxed);
}

/* block is the start of a class-cls block; p the pointer the program had. */
static inline void free_small(unsigned cls, char *block, const char *p)
{
	ar_tcache_t *tc = ar_tc_self;
	if (AR_UNLIKELY((uintptr_t)tc <= (uintptr_t)TC_DEAD || block != p))
		free_slow(cls, block, p);
	else
		push(tc, cls, block);
}

static void add_padding(ptrdiff_t d)
{
	ar_tcache_t *tc = ar_tc_self;
	if ((uintptr_t)tc > (uintptr_t)TC_DEAD)
		atomic_store_explicit(&tc->padding, atomic_load_explicit(&tc->padding, memory_order_relaxed) + d,
				      memory_order_relaxed);
	else
		atomic_fetch_add_explicit(&direct_padding, d, memory_order_relaxed);
}

void *ar_core_malloc(size_t size)
{
	if (AR_LIKELY(size <= ar_pool_max_size))
		return alloc_small(ar_sc_index(size));
	return ar_large_alloc(size, AR_MIN_ALIGN, 0);
}

void *ar_core_calloc(size_t size)
{
	return ar_pool_heap_calloc(size, alloc_small);
}

void *ar_core_memalign(size_t align, size_t size)
{
	return ar_pool_heap_memalign(align, size, alloc_small, add_padding);
}

/* A free outside the reserved range: a pool chunk found by its header
 * (the reservation refused or outgrown), a large block, or not ours. */
static __attribute__((noinline)) void free_other(void *p)
{
	unsigned cls;
	char *b;
	if (ar_pool_find(p, &cls, &b)) {
		free_small(cls, b, p);
		return;
	}
	ar_chunk_t *c = ar_chunk_of(p);
	if (c->kind == AR_CHUNK_LARGE)
		ar_large_free(c, p);
	else
		ar_fatal("free(): invalid pointer");
}

void ar_core_free(void *p)
{
	unsigned cls;
	char *b;
	if (AR_LIKELY(ar_pool_find_in_range(p, &cls, &b)))
		free_small(cls, b, p);
	else
		free_other(p);
}

size_t ar_core_usable_size(const void *p)
{
	return ar_pool_heap_usable_size(p);
}

void *ar_core_realloc(void *p, size_t size)
{
	return ar_pool_heap_realloc(p, size);
}

void ar_core_stats(ar_alloc_stats_t *out)
{
	uint64_t cached[AR_SC_COUNT] = { 0 }, allocs[AR_SC_COUNT] = { 0 }, cache_path = 0;
	int64_t padding = atomic_load_explicit(&direct_padding, memory_order_relaxed);
	/* Blocks out of the central heap minus blocks parked in caches. Under
	 * concurrency a batch moving between the two reads can make a class
	 * look negative for an instant: clamp, the quiescent figure is exact. */
	ar_pool_heap_stats(out);
	ar_tc_stats(out, cached, allocs, &padding);
	for (unsigned i = 0; i < out->nbins; i++) {
		ar_alloc_bin_stats_t *b = &out->bins[i];
		uint64_t direct = atomic_load_explicit(&direct_allocs[i], memory_order_relaxed);
		b->blocks_cached = cached[i];
		b->blocks_in_use = b->blocks_in_use > cached[i] ? b->blocks_in_use - cached[i] : 0;
		b->allocs_total = allocs[i] + direct;
		cache_path += allocs[i];
		out->bytes_in_use += b->blocks_in_use * b->block_bytes;
		out->blocks_in_use += b->blocks_in_use;
		out->allocs_total += b->allocs_total;
		out->bytes_cached += cached[i] * b->block_bytes;
	}
	out->cache_hits = cache_path - out->cache_misses;
	out->frees_total += atomic_load_explicit(&direct_frees, memory_order_relaxed);
	out->bytes_in_use -= (uint64_t)padding;
	ar_large_stats(out);
}

void ar_core_fork_prepare(void)
{
	ar_tc_fork_prepare();
	ar_pool_heap_fork_prepare();
}

void ar_core_fork_parent(void)
{
	ar_pool_heap_fork_parent();
	ar_tc_fork_parent();
}

void ar_core_fork_child(void)
{
	ar_pool_heap_fork_child();
	ar_tc_fork_child();
}
