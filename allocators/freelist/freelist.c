/*
 * freelist.c — liballocrr-freelist.so: the classic general-purpose
 * allocator, first fit over boundary-tagged chunks with immediate
 * coalescing (freelist_heap.c), all under one global lock.
 *
 * Design: requests below ALLOCRR_FREELIST_MMAP_THRESHOLD (128 KiB) are
 * carved from segments; free merges the chunk with free neighbours at once,
 * so free memory is always in the largest possible pieces and any size can
 * reuse it. Larger requests get their own mapping, given on free to the
 * bounded cache of freed mappings (map_cache.h) or back to the kernel, and
 * realloc moves them with mremap. realloc shrinks in place and grows into a
 * free successor when it can.
 *
 * Trade-off: the tightest memory use of our four for mixed sizes (memory
 * freed by one size serves any other, empty segments go back to the kernel)
 * and no per-thread state; but every call takes the same lock, so with
 * several threads the allocator serialises them and the lock's cache line
 * bounces between cores, and an allocation costs a list search where the
 * pools pop a list head.
 */
#include <stdatomic.h>
#include <string.h>

#include "core.h"
#include "freelist.h"
#include "lock.h"
#include "map_cache.h"
#include "os.h"
#include "tunables.h"
#include "util.h"

const char ar_core_name[] = "freelist";

static ar_lock_t fl_lock = AR_LOCK_INIT;
static size_t mmap_threshold;

/* Heap-chunk accounting, under fl_lock. */
static uint64_t heap_bytes, heap_allocs, heap_frees;
static uint64_t bin_in_use[FL_STAT_BINS], bin_allocs[FL_STAT_BINS];
/* Mapped blocks are made and unmade outside the lock. */
static _Atomic uint64_t map_blocks, map_bytes, map_allocs, map_frees;

void ar_core_init(void)
{
	size_t seg = ar_tunable_pow2("ALLOCRR_FREELIST_SEGMENT_SIZE", (size_t)1 << 20, (size_t)64 << 10,
				     (size_t)1 << 30);
	size_t thr = ar_tunable_size("ALLOCRR_FREELIST_MMAP_THRESHOLD", (size_t)128 << 10, 64, SIZE_MAX);
	size_t keep = ar_tunable_size("ALLOCRR_FREELIST_KEEP_SEGMENTS", 1, 0, (size_t)1 << 20);
	/* Every heap request (plus alignment slack) must fit a fresh segment. */
	mmap_threshold = thr < seg / 4 ? thr : seg / 4;
	fl_heap_init(seg, keep);
}

static void account(size_t usable, int born)
{
	unsigned b = fl_stat_bin(usable);
	if (born) {
		heap_bytes += usable;
		heap_allocs++;
		bin_allocs[b]++;
		bin_in_use[b]++;
	} else {
		heap_bytes -= usable;
		heap_frees++;
		bin_in_use[b]--;
	}
}

/* A heap chunk changed its usable size in place (realloc). */
static void account_resize(size_t old_usable, size_t new_usable)
{
	heap_bytes += new_usable - old_usable; /* modular: shrinking works too */
	bin_in_use[fl_stat_bin(old_usable)]--;
	bin_in_use[fl_stat_bin(new_usable)]++;
}

/* ---- blocks with their own mapping ------------------------------------------ */

/* Layout: [offset bytes][chunk header][payload to the end of the mapping];
 * prev_size holds the offset, which puts the payload at the alignment.
 * With zero set the first n bytes are zero (calloc). */
static void *map_alloc(size_t n, size_t align, int zero)
{
	size_t off = align <= AR_MIN_ALIGN ? 0 : align - FL_HDR;
	size_t len;
	if (__builtin_add_overflow(off + FL_HDR, n, &len) || len > SIZE_MAX - ar_page_size)
		return NULL;
	len = ar_align_up(len, ar_page_size);
	int fresh = 1;
	char *base = ar_mcache_get(len, align > ar_page_size ? align : ar_page_size, &fresh);
	if (!base)
		return NULL;
	fl_chunk_t *c = (fl_chunk_t *)(base + off);
	if (zero && !fresh)
		memset(fl_mem(c), 0, n);
	c->prev_size = off;
	c->size = (len - off) | FL_MMAPPED | FL_INUSE;
	atomic_fetch_add_explicit(&map_blocks, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&map_bytes, fl_size(c) - FL_HDR, memory_order_relaxed);
	atomic_fetch_add_explicit(&map_allocs, 1, memory_order_relaxed);
	return fl_mem(c);
}

static void map_free(fl_chunk_t *c)
{
	atomic_fetch_sub_explicit(&map_blocks, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&map_bytes, fl_size(c) - FL_HDR, memory_order_relaxed);
	atomic_fetch_add_explicit(&map_frees, 1, memory_order_relaxed);
	size_t off = c->prev_size, len = off + fl_size(c);
	c->size = 0; /* a second free now fails the in-use check */
	ar_mcache_put((char *)c - off, len);
}

/* Resize a mapped block to hold n bytes by remapping; NULL if impossible. */
static void *map_realloc(fl_chunk_t *c, size_t n)
{
	size_t off = c->prev_size, old_len = off + fl_size(c), len;
	if (__builtin_add_overflow(off + FL_HDR, n, &len) || len > SIZE_MAX - ar_page_size)
		return NULL;
	len = ar_align_up(len, ar_page_size);
	char *base = (char *)c - off;
	base = ar_mcache_resize(base, old_len, len, ar_page_size);
	if (!base)
		return NULL;
	c = (fl_chunk_t *)(base + off);
	size_t old_usable = fl_size(c) - FL_HDR;
	c->size = (len - off) | FL_MMAPPED | FL_INUSE;
	atomic_fetch_sub_explicit(&map_bytes, old_usable, memory_order_relaxed);
	atomic_fetch_add_explicit(&map_bytes, fl_size(c) - FL_HDR, memory_order_relaxed);
	return fl_mem(c);
}

/* ---- the core API -------------------------------------------------------------- */

void *ar_core_malloc(size_t size)
{
	size_t cs = fl_request(size);
	if (cs >= mmap_threshold)
		return map_alloc(size, AR_MIN_ALIGN, 0);
	ar_lock(&fl_lock);
	fl_chunk_t *c = fl_heap_take(cs);
	if (c)
		account(fl_size(c) - 8, 1);
	ar_unlock(&fl_lock);
	return c ? fl_mem(c) : NULL;
}

void *ar_core_calloc(size_t size)
{
	if (fl_request(size) >= mmap_threshold)
		return map_alloc(size, AR_MIN_ALIGN, 1);
	void *p = ar_core_malloc(size);
	if (p)
		memset(p, 0, size);
	return p;
}

void *ar_core_memalign(size_t align, size_t size)
{
	size_t cs = fl_request(size);
	if (cs >= mmap_threshold || align >= mmap_threshold || cs + align >= mmap_threshold)
		return map_alloc(size, align, 0);
	ar_lock(&fl_lock);
	fl_chunk_t *c = fl_heap_take_aligned(cs, align);
	if (c)
		account(fl_size(c) - 8, 1);
	ar_unlock(&fl_lock);
	return c ? fl_mem(c) : NULL;
}

void ar_core_free(void *p)
{
	fl_chunk_t *c = fl_of(p);
	if (c->size & FL_MMAPPED) {
		if (AR_UNLIKELY(!(c->size & FL_INUSE)))
			ar_fatal("free(): invalid pointer or double free");
		map_free(c);
		return;
	}
	ar_lock(&fl_lock);
	if (AR_UNLIKELY(!(c->size & FL_INUSE)))
		ar_fatal("free(): invalid pointer or double free");
	account(fl_size(c) - 8, 0);
	fl_heap_give(c);
	ar_unlock(&fl_lock);
}

size_t ar_core_usable_size(const void *p)
{
	const fl_chunk_t *c = fl_of(p);
	if (AR_UNLIKELY(!(c->size & FL_INUSE)))
		ar_fatal("malloc_usable_size(): invalid pointer");
	return (c->size & FL_MMAPPED) ? fl_size(c) - FL_HDR : fl_size(c) - 8;
}

void *ar_core_realloc(void *p, size_t size)
{
	fl_chunk_t *c = fl_of(p);
	size_t cs = fl_request(size);
	if (AR_UNLIKELY(!(c->size & FL_INUSE)))
		ar_fatal("realloc(): invalid pointer");
	if (c->size & FL_MMAPPED) {
		size_t usable = fl_size(c) - FL_HDR;
		if (size <= usable && size > usable / 2)
			return p;
		if (cs >= mmap_threshold) {
			void *q = map_realloc(c, size);
			if (q)
				return q;
		}
		return ar_realloc_by_copy(p, size);
	}
	if (cs < mmap_threshold) {
		ar_lock(&fl_lock);
		size_t old = fl_size(c) - 8;
		if (fl_heap_resize(c, cs) == 0) {
			account_resize(old, fl_size(c) - 8);
			ar_unlock(&fl_lock);
			return p;
		}
		ar_unlock(&fl_lock);
	}
	return ar_realloc_by_copy(p, size);
}

void ar_core_stats(ar_alloc_stats_t *out)
{
	out->nbins = FL_STAT_BINS;
	ar_lock(&fl_lock);
	for (unsigned i = 0; i < FL_STAT_BINS; i++) {
		out->bins[i].block_bytes = (uint64_t)16 << i;
		out->bins[i].blocks_in_use = bin_in_use[i];
		out->bins[i].allocs_total = bin_allocs[i];
		out->blocks_in_use += bin_in_use[i];
	}
	out->bytes_in_use = heap_bytes;
	out->allocs_total = heap_allocs;
	out->frees_total = heap_frees;
	fl_heap_stats(out);
	ar_unlock(&fl_lock);
	uint64_t blocks = atomic_load_explicit(&map_blocks, memory_order_relaxed);
	uint64_t bytes = atomic_load_explicit(&map_bytes, memory_order_relaxed);
	out->large_blocks_in_use = blocks;
	out->large_bytes_in_use = bytes;
	out->blocks_in_use += blocks;
	out->bytes_in_use += bytes;
	out->allocs_total += atomic_load_explicit(&map_allocs, memory_order_relaxed);
	out->frees_total += atomic_load_explicit(&map_frees, memory_order_relaxed);
	ar_mcache_stats(out);
}

void ar_core_fork_prepare(void)
{
	ar_lock(&fl_lock);
}

void ar_core_fork_parent(void)
{
	ar_unlock(&fl_lock);
}

void ar_core_fork_child(void)
{
	ar_lock_reinit(&fl_lock);
}
