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
 * size, the distance back to the previous block of its chunk (0 for the
 * first since the chunk was last empty) and a check word (size and distance
 * ^ ARENA_MAGIC while live, ^ ARENA_FREED once freed), which turns a double
 * free — fatal here, since it would recycle a chunk with live objects —
 * into an immediate abort.
 *
 * The bump pointer goes back over dead blocks at the top (arena.c,
 * rewind_top): when the owner frees the newest block of the chunk it is
 * filling, the bump returns to the end of the block before it, and on
 * through every block below that is already dead. Objects that die in the
 * reverse order of their birth (temporaries, call-scoped buffers) then
 * reuse the same cache-hot bytes, as on a stack, while the chunk still
 * counts objects and is reclaimed whole exactly as before. A dead block's
 * check word is written by whichever thread freed it (release) and read by
 * the owner (acquire) before the owner reuses its bytes.
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
#define ARENA_FREED ((uint64_t)0x6172656e61646561ull)
#define ARENA_CHUNK_HDR ((size_t)64)
#define ARENA_BLOCK_HDR ((size_t)16)
#define ARENA_BINS 48

typedef struct arena_chunk {
	ar_chunk_t hdr;         /* kind AR_CHUNK_ARENA */
	_Atomic uint64_t count; /* see above */
	char *bump, *end;       /* owner only: the unused tail */
	char *top;              /* owner only: the newest block below bump, or NULL */
	struct arena_chunk *next_free;
} arena_chunk_t;

typedef struct arena_block {
	uint32_t size;  /* usable bytes, a multiple of 16 (< chunk size <= 1 GiB) */
	uint32_t prev;  /* bytes from the previous block's start to this one's, 0: first */
	uint64_t check; /* arena_check(b, ARENA_MAGIC) while live, (.., ARENA_FREED) once freed */
} arena_block_t;

static inline uint64_t arena_check(const arena_block_t *b, uint64_t magic)
{
	return ((uint64_t)b->prev << 32 | b->size) ^ magic;
}

/* Per-thread state. Counters are written by their thread only (relaxed
 * load + store) and summed by ar_core_stats. */
typedef struct arena_thread {
	arena_chunk_t *cur; /* chunk being filled, or NULL */
	uint64_t n;         /* objects allocated from cur since it became current */
	_Atomic uint64_t allocs, frees;
	_Atomic uint64_t resets; /* arena_chunk_reset calls of this thread */
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

/* Reset c, whose owner saw all n objects dead, to empty in place. The
 * caller counts it in its own resets (a shared counter here cost a locked
 * instruction per malloc/free pair). */
void arena_chunk_reset(arena_chunk_t *c);

/* chunks_in_use, chunks_free, chunk_resets (the recycled ones; the owners'
 * resets in place are added by the caller). */
void arena_chunks_stats(ar_alloc_stats_t *out);

void arena_chunks_fork_prepare(void);
void arena_chunks_fork_parent(void);
void arena_chunks_fork_child(void);

#endif
