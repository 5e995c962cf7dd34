/*
 * arena.h — internal types of the arena allocator: bump chunks that count
 * their live objects, and the per-thread state that fills them.
 *
 * Counting without atomics on the allocation path: while a chunk is being
 * filled by its owner thread, its counter holds ARENA_OWNED minus the number
 * of frees so far, and the owner counts its allocations privately (n). When
 * the owner lets go of the chunk (full, or thread exit) it adds n -
 * ARENA_OWNED, leaving exactly the number of live objects; from then on the
 * free that brings the counter to zero — or the release itself, if all were
 * already freed — recycles the chunk. Exactly one party sees zero, so a chunk
 * is recycled exactly once, and never while a thread still fills it.
 *
 * Block layout: a 16-byte header right before each block holds its usable
 * size and a check word (size ^ ARENA_MAGIC, cleared by free), which turns
 * a double free — fatal here, since it would recycle a chunk with live
 * objects — into an immediate abort.
 */
#ifndef AR_ALLOC_ARENA_H
#define AR_ALLOC_ARENA_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ar_alloc.h"
#include "chunk.h"

#define ARENA_OWNED ((uint64_t)1 << 62)
#define ARENA_MAGIC ((uint64_t)0x6172656e61626c6bull)
#define ARENA_CHUNK_HDR ((size_t)64)
#define ARENA_BLOCK_HDR ((size_t)16)
#define ARENA_BINS 48

typedef struct arena_chunk {
	ar_chunk_t hdr;         /* kind AR_CHUNK_ARENA */
	_Atomic uint64_t count; /* see above */
	char *bump, *end;       /* owner only: the unused tail */
	struct arena_chunk *next_free;
} arena_chunk_t;

typedef struct arena_block {
	uint64_t size;  /* usable bytes, a multiple of 16 */
	uint64_t check; /* size ^ ARENA_MAGIC while live, 0 once freed */
} arena_block_t;

/* Per-thread state. Counters are written by their thread only (relaxed
 * load + store) and summed by ar_core_stats. */
typedef struct arena_thread {
	arena_chunk_t *cur; /* chunk being filled, or NULL */
	uint64_t n;         /* objects allocated from cur since it became current */
	_Atomic uint64_t allocs, frees;
	_Atomic uint64_t bytes_alloc, bytes_freed; /* usable bytes */
	_Atomic uint64_t bin_allocs[ARENA_BINS];
	_Atomic int64_t bin_delta[ARENA_BINS]; /* live-block change per bin */
	struct arena_thread *next, *next_free;
	int live;
} arena_thread_t;

static inline arena_block_t *arena_block_of(const void *p)
{
	return (arena_block_t *)((char *)p - ARENA_BLOCK_HDR);
}

/* Bin of a usable size: bin i holds sizes in (2^(i+3), 2^(i+4)]. */
static inline unsigned arena_bin(uint64_t usable)
{
	unsigned b = usable <= 16 ? 0 : 60u - (unsigned)__builtin_clzll(usable - 1);
	return b < ARENA_BINS ? b : ARENA_BINS - 1;
}

static inline void arena_add(_Atomic uint64_t *c, uint64_t d)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + d, memory_order_relaxed);
}

static inline void arena_add_signed(_Atomic int64_t *c, int64_t d)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + d, memory_order_relaxed);
}

/* ---- arena_chunk.c ---- */

/* Configure chunk recycling: keep up to keep empty chunks for reuse. */
void arena_chunks_init(size_t keep);

/* A chunk ready to be filled (counter ARENA_OWNED, bump at the start), from
 * the recycled list or a new mapping; NULL when out of memory. */
arena_chunk_t *arena_chunk_get(void);

/* The owner stops filling c after n allocations. */
void arena_chunk_release(arena_chunk_t *c, uint64_t n);

/* One object of c died. Returns the counter's new value. */
uint64_t arena_chunk_put(arena_chunk_t *c);

/* Reset c, whose owner saw all n objects dead, to empty in place. */
void arena_chunk_reset(arena_chunk_t *c);

/* chunks_in_use, chunks_free, chunk_resets. */
void arena_chunks_stats(ar_alloc_stats_t *out);

void arena_chunks_fork_prepare(void);
void arena_chunks_fork_parent(void);
void arena_chunks_fork_child(void);

#endif
