/*
 * freelist.h — internal types of the freelist allocator: dlmalloc-style
 * chunks with boundary tags, kept in segments mapped from the kernel.
 *
 * A chunk is [prev_size][size|flags][payload...]. The payload of an in-use
 * chunk runs 8 bytes into the next chunk's prev_size field (only a free
 * chunk's size is stored there, as its footer), so malloc_usable_size is
 * size - 8. A free chunk keeps its list links at the start of its payload.
 *
 * Invariants (all under the allocator's one lock):
 *   - sizes are multiples of 16, at least FL_MIN_CHUNK; payloads are
 *     16-byte aligned;
 *   - no two free chunks are adjacent (freeing coalesces immediately), so a
 *     free chunk's predecessor is always in use;
 *   - FL_PREV_INUSE in a chunk's size is set exactly when the chunk before it
 *     is in use, and then prev_size belongs to that chunk's payload;
 *   - every free chunk is on exactly one bin list, the one for its size;
 *   - each segment ends with a fence chunk that looks in use, so coalescing
 *     never walks past the segment.
 */
#ifndef AR_ALLOC_FREELIST_H
#define AR_ALLOC_FREELIST_H

#include <stddef.h>
#include <stdint.h>

#include "ar_alloc.h"

#define FL_INUSE ((size_t)1)
#define FL_PREV_INUSE ((size_t)2)
#define FL_MMAPPED ((size_t)4)
#define FL_FLAGS ((size_t)15)
#define FL_HDR ((size_t)16)       /* prev_size + size */
#define FL_MIN_CHUNK ((size_t)32) /* header + two list links */
#define FL_SEG_HDR ((size_t)32)   /* segment header before the first chunk */
#define FL_NBINS 128
#define FL_STAT_BINS 48

typedef struct fl_chunk {
	size_t prev_size; /* footer of the previous chunk when it is free;
			   * mmapped chunks: offset from the mapping start */
	size_t size;      /* chunk bytes | FL_* flags */
	struct fl_chunk *fd, *bk; /* bin links, free chunks only */
} fl_chunk_t;

static inline size_t fl_size(const fl_chunk_t *c)
{
	return c->size & ~FL_FLAGS;
}

static inline fl_chunk_t *fl_next(const fl_chunk_t *c)
{
	return (fl_chunk_t *)((char *)c + fl_size(c));
}

static inline fl_chunk_t *fl_of(const void *p)
{
	return (fl_chunk_t *)((char *)p - FL_HDR);
}

static inline void *fl_mem(const fl_chunk_t *c)
{
	return (char *)c + FL_HDR;
}

/* Chunk size for a request of n bytes (n <= AR_MAX_REQUEST). */
static inline size_t fl_request(size_t n)
{
	size_t s = (n + 8 + 15) & ~(size_t)15;
	return s < FL_MIN_CHUNK ? FL_MIN_CHUNK : s;
}

/* Statistics bin of a usable size: (2^(i+3), 2^(i+4)], like arena's. */
static inline unsigned fl_stat_bin(uint64_t usable)
{
	unsigned b = usable <= 16 ? 0 : 60u - (unsigned)__builtin_clzll(usable - 1);
	return b < FL_STAT_BINS ? b : FL_STAT_BINS - 1;
}

/* ---- freelist_heap.c: the segment heap, called with the lock held ---- */

/* Segment size (a power of two; segments are aligned to it) and how many
 * completely empty segments to keep instead of unmapping them. */
void fl_heap_init(size_t segment_size, size_t keep_empty);

/* An in-use chunk of at least cs bytes (cs from fl_request), split to fit;
 * NULL when no segment can be mapped. cs <= segment size / 4. */
fl_chunk_t *fl_heap_take(size_t cs);

/* Like fl_heap_take, with the payload aligned to align (> 16). */
fl_chunk_t *fl_heap_take_aligned(size_t cs, size_t align);

/* Free an in-use chunk: coalesce with free neighbours, bin it (or unmap an
 * emptied segment). */
void fl_heap_give(fl_chunk_t *c);

/* Resize in-use chunk c to cs bytes in place: shrink by splitting off the
 * tail, grow by absorbing a free successor. 0 on success, -1 if it cannot. */
int fl_heap_resize(fl_chunk_t *c, size_t cs);

/* Free-chunk counts per statistics bin, segment count. */
void fl_heap_stats(ar_alloc_stats_t *out);

#endif
