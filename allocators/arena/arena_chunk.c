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
#include "single_thread.h"
#include "util.h"

/* New chunks are cut from slabs of ARENA_SLAB bytes (or one chunk, when
 * chunks are larger), mapped in one system call: an aligned mapping is
 * three calls (mmap, and munmap of the slack on each side). The slab's
 * untouched chunks cost address space only. */
#define ARENA_SLAB ((size_t)1 << 20)

static ar_lock_t chunk_lock = AR_LOCK_INIT;
static arena_chunk_t *free_chunks;
static char *slab_next, *slab_end; /* never-used chunks of the newest slab */
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
	c->top = NULL;
}

/* A never-used chunk: the next of the current slab, or the first of a new
 * one. Its pages are faulted in at once (ar_os_populate): its owner will
 * bump through all of them, and one system call costs less than a trap per
 * page (on D, 1 M calls: 52 -> 12 ms of system time, 4.7 -> 8.1 M calls/s,
 * 256 KiB chunks). NULL when the kernel refuses. */
static arena_chunk_t *fresh_chunk(void)
{
	size_t size = ar_chunk_size(), slab = size < ARENA_SLAB ? ARENA_SLAB : size;
	char *c = NULL;
	ar_lock(&chunk_lock);
	if (slab_next == slab_end && slab > size) {
		/* Under the lock, so two threads never map two slabs at once;
		 * this happens once per slab (four 256 KiB chunks). */
		char *s = ar_os_map_aligned(slab, size);
		if (s) {
			slab_next = s;
			slab_end = s + slab;
		}
	}
	if (slab_next != slab_end) {
		c = slab_next;
		slab_next += size;
	}
	ar_unlock(&chunk_lock);
	if (!c)
		c = ar_os_map_aligned(size, size);
	if (c)
		ar_os_populate(c, size);
	return (arena_chunk_t *)c;
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
		c = fresh_chunk();
		if (!c)
			return NULL;
		c->hdr.kind = AR_CHUNK_ARENA;
		atomic_fetch_add_explicit(&chunks_mapped, 1, memory_order_relaxed);
	}
	prepare(c);
	return c;
}

/* Add d to c's counter and return the new value: one locked instruction,
 * or a plain load and store while the process has one thread
 * (single_thread.h): one locked instruction less per free on one thread. */
static inline uint64_t count_add(arena_chunk_t *c, uint64_t d)
{
	if (ar_one_thread()) {
		uint64_t v = atomic_load_explicit(&c->count, memory_order_relaxed) + d;
		atomic_store_explicit(&c->count, v, memory_order_relaxed);
		return v;
	}
	return atomic_fetch_add_explicit(&c->count, d, memory_order_acq_rel) + d;
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
	if (count_add(c, d) == 0)
		recycle(c);
}

uint64_t arena_chunk_put(arena_chunk_t *c)
{
	uint64_t left = count_add(c, (uint64_t)-1);
	if (left == 0)
		recycle(c);
	return left;
}

void arena_chunk_reset(arena_chunk_t *c)
{
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
