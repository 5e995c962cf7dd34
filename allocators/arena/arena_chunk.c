/*
 * arena_chunk.c — the life of an arena chunk: mapped (or taken from the
 * recycled list), filled by one thread, released, and recycled when its
 * last object dies. The counting protocol is described in arena.h.
 *
 * Recycled chunks wait on a list for the next thread that needs one, up to
 * ALLOCRR_ARENA_KEEP_CHUNKS of them; beyond that they go back to the kernel,
 * so an arena program's footprint falls after a burst instead of staying at
 * its peak (the pool's weakness), as long as whole chunks empty out.
 */
#include <stdatomic.h>

#include "arena.h"
#include "lock.h"
#include "os.h"
#include "util.h"

static ar_lock_t chunk_lock = AR_LOCK_INIT;
static arena_chunk_t *free_chunks;
static size_t nfree, keep_max;
static _Atomic uint64_t chunks_mapped, resets;

void arena_chunks_init(size_t keep)
{
	keep_max = keep;
}

static void prepare(arena_chunk_t *c)
{
	atomic_store_explicit(&c->count, ARENA_OWNED, memory_order_relaxed);
	c->bump = (char *)c + ARENA_CHUNK_HDR;
	c->end = (char *)c + ar_chunk_size();
}

arena_chunk_t *arena_chunk_get(void)
{
	arena_chunk_t *c;
	ar_lock(&chunk_lock);
	c = free_chunks;
	if (c) {
		free_chunks = c->next_free;
		nfree--;
	}
	ar_unlock(&chunk_lock);
	if (!c) {
		size_t size = ar_chunk_size();
		c = ar_os_map_aligned(size, size);
		if (!c)
			return NULL;
		c->hdr.kind = AR_CHUNK_ARENA;
		atomic_fetch_add_explicit(&chunks_mapped, 1, memory_order_relaxed);
	}
	prepare(c);
	return c;
}

/* c's last object died after its release: reuse or unmap it. */
static void recycle(arena_chunk_t *c)
{
	atomic_fetch_add_explicit(&resets, 1, memory_order_relaxed);
	ar_lock(&chunk_lock);
	if (nfree < keep_max) {
		c->next_free = free_chunks;
		free_chunks = c;
		nfree++;
		c = NULL;
	}
	ar_unlock(&chunk_lock);
	if (c) {
		c->hdr.kind = 0;
		atomic_fetch_sub_explicit(&chunks_mapped, 1, memory_order_relaxed);
		ar_os_unmap(c, ar_chunk_size());
	}
}

void arena_chunk_release(arena_chunk_t *c, uint64_t n)
{
	/* count = OWNED - frees; adding n - OWNED leaves n - frees = live. */
	uint64_t d = n - ARENA_OWNED;
	if (atomic_fetch_add_explicit(&c->count, d, memory_order_acq_rel) + d == 0)
		recycle(c);
}

uint64_t arena_chunk_put(arena_chunk_t *c)
{
	uint64_t left = atomic_fetch_sub_explicit(&c->count, 1, memory_order_acq_rel) - 1;
	if (left == 0)
		recycle(c);
	return left;
}

void arena_chunk_reset(arena_chunk_t *c)
{
	atomic_fetch_add_explicit(&resets, 1, memory_order_relaxed);
	prepare(c);
}

void arena_chunks_stats(ar_alloc_stats_t *out)
{
	ar_lock(&chunk_lock);
	out->chunks_free = nfree;
	ar_unlock(&chunk_lock);
	out->chunks_in_use = atomic_load_explicit(&chunks_mapped, memory_order_relaxed) - out->chunks_free;
	out->chunk_resets = atomic_load_explicit(&resets, memory_order_relaxed);
}

void arena_chunks_fork_prepare(void)
{
	ar_lock(&chunk_lock);
}

void arena_chunks_fork_parent(void)
{
	ar_unlock(&chunk_lock);
}

void arena_chunks_fork_child(void)
{
	ar_lock_reinit(&chunk_lock);
}
