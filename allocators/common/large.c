/*
 * large.c — one mapping per large block; see large.h for the layout and
 * chunk.h for why the header sits at a chunk boundary.
 *
 * Mappings come from and go back to map_cache.c, so a freed block's mapping
 * (its pages still resident) can serve the next large block; every mapping
 * starts at a chunk boundary, where the header goes.
 *
 * Invariants: header->map_len is the exact length mapped from the header on
 * (what the cache gets back); header->offset is block - header, in
 * [64, chunk size]; the counters change together with the mapping.
 */
#include "large.h"

#include <stdatomic.h>
#include <string.h>

#include "map_cache.h"
#include "os.h"
#include "util.h"

#define LARGE_HDR ((size_t)64)

typedef struct ar_large {
	ar_chunk_t hdr; /* kind = AR_CHUNK_LARGE */
	size_t map_len;
	size_t offset;
} ar_large_t;

uintptr_t ar_chunk_mask = ~(uintptr_t)((1u << 20) - 1);

static _Atomic uint64_t large_blocks, large_bytes, large_allocs, large_frees;

void ar_chunk_set_size(size_t size)
{
	ar_chunk_mask = ~(uintptr_t)(size - 1);
}

void *ar_large_alloc(size_t size, size_t align, int zero)
{
	size_t chunk = ar_chunk_size(), offset, len;
	offset = align <= chunk ? (align > LARGE_HDR ? align : LARGE_HDR) : chunk;
	if (__builtin_add_overflow(offset, size, &len) || len > SIZE_MAX - ar_page_size)
		return NULL;
	len = ar_align_up(len, ar_page_size);
	char *h;
	int fresh = 1;
	if (align <= chunk) {
		h = ar_mcache_get(len, chunk, &fresh);
		if (!h)
			return NULL;
	} else {
		/* Rare: the header must sit one chunk below an align boundary,
		 * which no cached mapping promises. Over-map, then give back
		 * the slack on both sides. */
		size_t slack = align - ar_page_size, span;
		if (__builtin_add_overflow(len, slack, &span))
			return NULL;
		char *raw = ar_os_map(span);
		if (!raw)
			return NULL;
		h = (char *)ar_align_up_ptr((uintptr_t)raw + chunk, align) - chunk;
		size_t head = (size_t)(h - raw), tail = span - head - len;
		if (head)
			ar_os_unmap(raw, head);
		if (tail)
			ar_os_unmap(h + len, tail);
		ar_mcache_adopt(len);
	}
	if (zero && !fresh)
		memset(h + offset, 0, size);
	ar_large_t *l = (ar_large_t *)h;
	l->hdr.kind = AR_CHUNK_LARGE;
	l->map_len = len;
	l->offset = offset;
	atomic_fetch_add_explicit(&large_blocks, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&large_bytes, len - offset, memory_order_relaxed);
	atomic_fetch_add_explicit(&large_allocs, 1, memory_order_relaxed);
	return h + offset;
}

void ar_large_free(ar_chunk_t *c, void *p)
{
	ar_large_t *l = (ar_large_t *)c;
	if ((char *)p != (char *)l + l->offset)
		ar_fatal("free(): invalid pointer (inside a large block)");
	atomic_fetch_sub_explicit(&large_blocks, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&large_bytes, l->map_len - l->offset, memory_order_relaxed);
	atomic_fetch_add_explicit(&large_frees, 1, memory_order_relaxed);
	l->hdr.kind = 0; /* a double free now fails the kind check */
	ar_mcache_put(l, l->map_len);
}

size_t ar_large_usable(const ar_chunk_t *c)
{
	const ar_large_t *l = (const ar_large_t *)c;
	return l->map_len - l->offset;
}

void *ar_large_realloc(ar_chunk_t *c, void *p, size_t size)
{
	ar_large_t *l = (ar_large_t *)c;
	size_t offset = l->offset, old_len = l->map_len, len;
	if ((char *)p != (char *)l + offset)
		ar_fatal("realloc(): invalid pointer (inside a large block)");
	if (__builtin_add_overflow(offset, size, &len) || len > SIZE_MAX - ar_page_size)
		return NULL;
	len = ar_align_up(len, ar_page_size);
	l = ar_mcache_resize(l, old_len, len, ar_chunk_size());
	if (!l)
		return NULL;
	l->map_len = len;
	if (len >= old_len)
		atomic_fetch_add_explicit(&large_bytes, len - old_len, memory_order_relaxed);
	else
		atomic_fetch_sub_explicit(&large_bytes, old_len - len, memory_order_relaxed);
	return (char *)l + offset;
}

void ar_large_stats(ar_alloc_stats_t *out)
{
	uint64_t blocks = atomic_load_explicit(&large_blocks, memory_order_relaxed);
	uint64_t bytes = atomic_load_explicit(&large_bytes, memory_order_relaxed);
	out->large_blocks_in_use = blocks;
	out->large_bytes_in_use = bytes;
	out->blocks_in_use += blocks;
	out->bytes_in_use += bytes;
	out->allocs_total += atomic_load_explicit(&large_allocs, memory_order_relaxed);
	out->frees_total += atomic_load_explicit(&large_frees, memory_order_relaxed);
	ar_mcache_stats(out);
}
