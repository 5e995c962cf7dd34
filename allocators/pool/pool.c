/*
 * pool.c — liballocrr-pool.so: the classic object pool grown into a malloc.
 *
 * Design: requests up to ALLOCRR_POOL_MAX_SIZE (32 KiB) are rounded to one of
 * the size classes (size_class.h) and served from that class's pool
 * (pool_heap.c): pop the calling thread's shard of the class's lock-free
 * free list (one double-width compare-and-swap, pool_list.h; none while
 * the process has one thread) or, when it is empty, take another shard's
 * blocks or carve the next ones under the class's lock. Bigger requests get their own mapping (large.c),
 * which on free goes to the bounded cache of freed mappings (map_cache.h) or
 * the kernel.
 *
 * Trade-off: malloc and free are a handful of instructions plus one atomic
 * swap, and blocks of one size sit densely together; but chunks
 * are never returned and never change class, so memory freed in one class
 * cannot serve another: a program that frees a million 48-byte objects and
 * then allocates 64-byte ones keeps both footprints. With threads every
 * call is still one atomic swap, on the thread's own shard's line (pool's
 * lists are shared: any thread may take any shard's blocks); tlscache's
 * private per-thread lists need none.
 *
 * Aligned requests take a block of size + align - 16 bytes and return the
 * aligned address inside it, unless every block of the class is aligned
 * already; free() finds the block start again by division (multiplication by
 * the class's reciprocal), so interior pointers need no header, and finds
 * the class from the block's address (pool_heap.h, "reserved range")
 * without reading the chunk's header.
 */
#include <stdatomic.h>
#include <string.h>

#include "core.h"
#include "large.h"
#include "pool_heap.h"
#include "tunables.h"
#include "util.h"

const char ar_core_name[] = "pool";

/* Sum over live aligned blocks of (returned pointer - block start): that
 * part of a block is not usable by the program, so not "in use". */
static _Atomic int64_t padding;

void ar_core_init(void)
{
	size_t chunk = ar_tunable_pow2("ALLOCRR_POOL_CHUNK_SIZE", (size_t)256 << 10, (size_t)64 << 10,
				       (size_t)1 << 30);
	size_t max = ar_tunable_size("ALLOCRR_POOL_MAX_SIZE", (size_t)32 << 10, 16, AR_SC_LIMIT);
	/* A chunk must hold at least four blocks of the largest class. */
	while (max > 16 && ar_sc_size(ar_sc_index(max)) > (chunk - AR_POOL_CHUNK_HDR) / 4)
		max = ar_sc_size(ar_sc_index(max) - 1);
	ar_chunk_set_size(chunk);
	ar_pool_heap_init(max);
}

void *ar_core_malloc(size_t size)
{
	if (AR_LIKELY(size <= ar_pool_max_size))
		return ar_pool_alloc(ar_sc_index(size));
	return ar_large_alloc(size, AR_MIN_ALIGN, 0);
}

void *ar_core_calloc(size_t size)
{
	return ar_pool_heap_calloc(size, ar_pool_alloc);
}

static void add_padding(ptrdiff_t d)
{
	atomic_fetch_add_explicit(&padding, d, memory_order_relaxed);
}

void *ar_core_memalign(size_t align, size_t size)
{
	return ar_pool_heap_memalign(align, size, ar_pool_alloc, add_padding);
}

void ar_core_free(void *p)
{
	unsigned cls;
	char *b;
	if (AR_LIKELY(ar_pool_find(p, &cls, &b))) {
		if (AR_UNLIKELY(b != (char *)p))
			atomic_fetch_sub_explicit(&padding, (char *)p - b, memory_order_relaxed);
		ar_pool_free(cls, b);
		return;
	}
	ar_chunk_t *c = ar_chunk_of(p);
	if (c->kind == AR_CHUNK_LARGE)
		ar_large_free(c, p);
	else
		ar_fatal("free(): invalid pointer");
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
	ar_pool_heap_stats(out);
	for (unsigned i = 0; i < out->nbins; i++) {
		const ar_alloc_bin_stats_t *b = &out->bins[i];
		out->bytes_in_use += b->blocks_in_use * b->block_bytes;
		out->blocks_in_use += b->blocks_in_use;
		out->allocs_total += b->allocs_total;
		out->frees_total += b->allocs_total - b->blocks_in_use;
	}
	out->bytes_in_use -= (uint64_t)atomic_load_explicit(&padding, memory_order_relaxed);
	ar_large_stats(out);
}

void ar_core_fork_prepare(void)
{
	ar_pool_heap_fork_prepare();
}

void ar_core_fork_parent(void)
{
	ar_pool_heap_fork_parent();
}

void ar_core_fork_child(void)
{
	ar_pool_heap_fork_child();
}
