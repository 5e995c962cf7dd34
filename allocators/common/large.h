/*
 * large.h — blocks too big for an allocator's chunks, each in its own
 * mapping (pool, arena and tlscache share this; freelist has its own).
 *
 * Layout: [header at a chunk boundary][padding][block ... up to a page end].
 * The block starts offset = max(64, align) bytes after the header, or exactly
 * one chunk after it when align exceeds the chunk size, so chunk.h's lookup
 * finds the header. malloc_usable_size is everything up to the mapping's end.
 */
#ifndef AR_ALLOC_LARGE_H
#define AR_ALLOC_LARGE_H

#include <stddef.h>

#include "ar_alloc.h"
#include "chunk.h"

/* A block of at least size bytes aligned to align (a power of two >= 16), or
 * NULL. With zero set its first size bytes are zero (calloc); otherwise it
 * may hold a freed block's bytes (its mapping came from map_cache.h). */
void *ar_large_alloc(size_t size, size_t align, int zero);

/* Free the large block p whose header is c (= ar_chunk_of(p)); its mapping
 * goes to the cache of freed mappings, or back to the kernel. */
void ar_large_free(ar_chunk_t *c, void *p);

/* malloc_usable_size of the large block whose header is c. */
size_t ar_large_usable(const ar_chunk_t *c);

/*
 * Resize the large block p to hold size bytes, in place or by moving its
 * pages with mremap (no copy). Returns the block's new address, or NULL when
 * neither worked; p is then untouched and the caller copies.
 */
void *ar_large_realloc(ar_chunk_t *c, void *p, size_t size);

/* Add large-block counts to out (large_*, bytes/blocks_in_use, totals). */
void ar_large_stats(ar_alloc_stats_t *out);

#endif
