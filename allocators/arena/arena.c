/*
 * arena.c — liballocrr-arena.so: the region (linear) allocator made
 * compatible with free().
 *
 * Design: each thread bump-allocates from its own chunk (256 KiB,
 * ALLOCRR_ARENA_CHUNK_SIZE): a block is a 16-byte header plus the request
 * rounded to 16 bytes, placed right after the previous one. free() only
 * decrements the owning chunk's live count (arena.h); when it reaches zero
 * the chunk is reset and reused as a whole. When the owner itself frees the
 * last object of the chunk it is filling, the chunk rewinds on the spot, so
 * a malloc/free pair keeps reusing the same cache-hot bytes; and when it
 * frees its newest block the bump pointer moves back over the dead blocks
 * on top (arena.h), so objects dying in reverse order of birth reuse their
 * bytes too. Blocks above
 * ALLOCRR_ARENA_LARGE_SIZE get their own mapping (large.c). realloc grows or
 * shrinks the newest block of the thread's chunk in place.
 *
 * Trade-off, stated plainly: allocation is a pointer bump with no lock and
 * no atomic operation, and short-lived objects die together cheaply; but
 * memory is reclaimed only a whole chunk at a time, so one long-lived object
 * pins its entire chunk (256 KiB) however small it is, and a program that
 * keeps a few survivors from each burst can grow without bound in chunks
 * that are almost empty. Freed space inside a chunk is never reused
 * individually.
 *
 * Threads: chunks are per thread, so allocation never contends; a free from
 * another thread is one atomic decrement. A thread's state (its chunk,
 * counters) is kept in os.c metadata and released at thread exit; threads
 * that allocate after their exit handler ran share one fallback state under
 * a lock.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "arena.h"
#include "core.h"
#include "large.h"
#include "lock.h"
#include "os.h"
#include "tunables.h"
#include "util.h"

const char ar_core_name[] = "arena";

#define TS_DEAD ((arena_thread_t *)1)
static __thread arena_thread_t *self_ts __attribute__((tls_model("initial-exec")));

static size_t large_threshold;
static ar_lock_t ts_lock = AR_LOCK_INIT;    /* the registry lists */
static ar_lock_t fallback_lock = AR_LOCK_INIT;
static arena_thread_t fallback;             /* for threads past their exit handler */
static arena_thread_t *ts_all, *ts_free;
static pthread_key_t ts_key;
static int ts_key_ok;

static void ts_exit(void *arg);

void ar_core_init(void)
{
	/* 256 KiB: a survivor pins a quarter of what it did with 1 MiB, and
	 * a chunk recycled soon is still in cache (docs/BENCHMARKS.md, issue
	 * 19, small blocks: S1's heap 6.0 -> 3.6 MiB for 256 KiB live; 64 KiB
	 * chunks gave 2.8 MiB but D unmapped hundreds of them, 350 us each). */
	size_t chunk = ar_tunable_pow2("ALLOCRR_ARENA_CHUNK_SIZE", (size_t)256 << 10, (size_t)64 << 10,
				       (size_t)1 << 30);
	size_t large = ar_tunable_size("ALLOCRR_ARENA_LARGE_SIZE", chunk / 8, 16, SIZE_MAX);
	if (large > chunk / 4)
		large = chunk / 4; /* so an aligned block plus its slack always fits a chunk */
	large_threshold = ar_align_up(large, AR_MIN_ALIGN);
	ar_chunk_set_size(chunk);
	/* Keep up to 8 MiB of empty chunks (at least 8) mapped for reuse:
	 * a recycled chunk's pages are resident, a new mapping's fault. */
	size_t keep = ((size_t)8 << 20) / chunk;
	arena_chunks_init(ar_tunable_size("ALLOCRR_ARENA_KEEP_CHUNKS", keep < 8 ? 8 : keep, 0, 1u << 20));
	fallback.live = 1;
	ts_all = &fallback;
	ts_key_ok = pthread_key_create(&ts_key, ts_exit) == 0;
}

/* ---- thread states ------------------------------------------------------- */

static arena_thread_t *ts_create(void)
{
	arena_thread_t *t;
	ar_lock(&ts_lock);
	t = ts_free;
	if (t) {
		ts_free = t->next_free;
	} else {
		t = ar_os_meta_alloc(sizeof *t);
		if (t) {
			t->next = ts_all;
			ts_all = t;
		}
	}
	if (t)
		t->live = 1;
	ar_unlock(&ts_lock);
	if (!t)
		return NULL;
	self_ts = t; /* before setspecific, which may re-enter malloc */
	if (ts_key_ok)
		pthread_setspecific(ts_key, t);
	return t;
}

static void ts_exit(void *arg)
{
	arena_thread_t *t = arg;
	if (t->cur)
		arena_chunk_release(t->cur, t->n);
	t->cur = NULL;
	self_ts = TS_DEAD;
	ar_lock(&ts_lock);
	t->live = 0;
	t->next_free = ts_free;
	ts_free = t;
	ar_unlock(&ts_lock);
}

/* Record in t's counters that a block of usable bytes was born (born=1,
 * new=1 for a real allocation, new=0 for the new size of a resized block)
 * or died (born=0). t is the calling thread's own state, or the fallback
 * under its lock: either way nobody else writes these counters concurrently. */
static inline void account(arena_thread_t *t, uint64_t usable, int born, int fresh)
{
	unsigned bin = arena_bin(usable);
	if (born) {
		arena_add(&t->bytes_alloc, usable);
		if (fresh)
			arena_add(&t->bin_allocs[bin], 1);
		arena_add_signed(&t->bin_delta[bin], 1);
	} else {
		arena_add(&t->bytes_freed, usable);
		arena_add_signed(&t->bin_delta[bin], -1);
	}
}

/* ---- allocation ------------------------------------------------------------ */

/* need (a multiple of 16) bytes aligned to align from t's chunk. Both are at
 * most large_threshold <= chunk/4, so they always fit an empty chunk. */
static void *bump_alloc(arena_thread_t *t, size_t need, size_t align)
{
	arena_chunk_t *c = t->cur;
	for (;;) {
		if (c) {
			uintptr_t p = ar_align_up_ptr((uintptr_t)c->bump + ARENA_BLOCK_HDR, align);
			if (p + need <= (uintptr_t)c->end) {
				arena_block_t *b = arena_block_of((void *)p);
				b->size = (uint32_t)need;
				b->prev = c->top ? (uint32_t)(p - (uintptr_t)c->top) : 0;
				b->check = arena_check(b, ARENA_MAGIC);
				c->top = (char *)p;
				c->bump = (char *)p + need;
				t->n++;
				account(t, need, 1, 1);
				return (void *)p;
			}
			/* Full. If every object already died, start over in place;
			 * otherwise let go and let the last free recycle it. */
			if (t->n && atomic_load_explicit(&c->count, memory_order_acquire) == ARENA_OWNED - t->n) {
				arena_chunk_reset(c);
				arena_add(&t->resets, 1);
				t->n = 0;
				continue;
			}
			arena_chunk_release(c, t->n);
			t->cur = NULL;
		}
		c = arena_chunk_get();
		if (!c)
			return NULL;
		t->cur = c;
		t->n = 0;
	}
}

static __attribute__((noinline)) void *alloc_slow(size_t need, size_t align)
{
	if (self_ts == NULL && ts_create() != NULL)
		return bump_alloc(self_ts, need, align);
	ar_lock(&fallback_lock);
	void *p = bump_alloc(&fallback, need, align);
	ar_unlock(&fallback_lock);
	return p;
}

static inline void *arena_alloc(size_t size, size_t align)
{
	size_t need = ar_align_up(size, AR_MIN_ALIGN);
	if (AR_UNLIKELY(need > large_threshold || align > large_threshold))
		return ar_large_alloc(size, align, 0);
	arena_thread_t *t = self_ts;
	if (AR_LIKELY((uintptr_t)t > (uintptr_t)TS_DEAD))
		return bump_alloc(t, need, align);
	return alloc_slow(need, align);
}

void *ar_core_malloc(size_t size)
{
	return arena_alloc(size, AR_MIN_ALIGN);
}

void *ar_core_calloc(size_t size)
{
	if (ar_align_up(size, AR_MIN_ALIGN) > large_threshold)
		return ar_large_alloc(size, AR_MIN_ALIGN, 1);
	void *p = arena_alloc(size, AR_MIN_ALIGN);
	if (p)
		memset(p, 0, size); /* recycled chunks hold old data */
	return p;
}

void *ar_core_memalign(size_t align, size_t size)
{
	return arena_alloc(size, align);
}

/* ---- free, usable size, realloc ------------------------------------------------ */

static arena_block_t *checked_block(const void *p, const char *what)
{
	arena_block_t *b = arena_block_of(p);
	if (AR_UNLIKELY(__atomic_load_n(&b->check, __ATOMIC_RELAXED) != arena_check(b, ARENA_MAGIC)))
		ar_fatal(what);
	return b;
}

/* The owner's newest block c->top is dead: move the bump back to the end of
 * the newest block still alive (arena.h), or to the chunk's start. */
static void rewind_top(arena_chunk_t *c)
{
	char *q = c->top;
	for (;;) {
		const arena_block_t *b = arena_block_of(q);
		if (b->prev == 0) {
			c->top = NULL;
			c->bump = (char *)c + ARENA_CHUNK_HDR;
			return;
		}
		char *r = q - b->prev;
		const arena_block_t *rb = arena_block_of(r);
		if (__atomic_load_n(&rb->check, __ATOMIC_ACQUIRE) != arena_check(rb, ARENA_FREED)) {
			c->top = r;
			c->bump = r + rb->size;
			return;
		}
		q = r;
	}
}

static void arena_free(arena_chunk_t *c, void *p)
{
	arena_block_t *b = checked_block(p, "free(): invalid pointer or double free");
	uint64_t usable = b->size;
	/* Release: the owner may reuse these bytes once it reads this. */
	__atomic_store_n(&b->check, arena_check(b, ARENA_FREED), __ATOMIC_RELEASE);
	arena_thread_t *t = self_ts;
	if (AR_UNLIKELY(t == NULL))
		t = ts_create();
	if (AR_UNLIKELY((uintptr_t)t <= (uintptr_t)TS_DEAD)) {
		ar_lock(&fallback_lock);
		account(&fallback, usable, 0, 0);
		ar_unlock(&fallback_lock);
		arena_chunk_put(c);
		return;
	}
	account(t, usable, 0, 0);
	uint64_t left = arena_chunk_put(c);
	if (t->cur != c)
		return;
	/* The owner freed the last object of the chunk it is filling: start
	 * it over; or its newest block: give back the dead blocks on top. */
	if (left == ARENA_OWNED - t->n) {
		arena_chunk_reset(c);
		arena_add(&t->resets, 1);
		t->n = 0;
	} else if ((char *)p == c->top) {
		rewind_top(c);
	}
}

void ar_core_free(void *p)
{
	ar_chunk_t *c = ar_chunk_of(p);
	if (AR_LIKELY(c->kind == AR_CHUNK_ARENA))
		arena_free((arena_chunk_t *)c, p);
	else if (c->kind == AR_CHUNK_LARGE)
		ar_large_free(c, p);
	else
		ar_fatal("free(): invalid pointer");
}

size_t ar_core_usable_size(const void *p)
{
	ar_chunk_t *c = ar_chunk_of(p);
	if (c->kind == AR_CHUNK_ARENA)
		return checked_block(p, "malloc_usable_size(): invalid pointer")->size;
	if (c->kind == AR_CHUNK_LARGE)
		return ar_large_usable(c);
	ar_fatal("malloc_usable_size(): invalid pointer");
}

void *ar_core_realloc(void *p, size_t size)
{
	ar_chunk_t *ch = ar_chunk_of(p);
	if (ch->kind == AR_CHUNK_ARENA) {
		arena_chunk_t *c = (arena_chunk_t *)ch;
		arena_block_t *b = checked_block(p, "realloc(): invalid pointer");
		uint64_t usable = b->size;
		arena_thread_t *t = self_ts;
		size_t need = ar_align_up(size, AR_MIN_ALIGN);
		/* The newest block of our own chunk can move the bump pointer. */
		if ((uintptr_t)t > (uintptr_t)TS_DEAD && t->cur == c && (char *)p == c->top &&
		    need <= (size_t)(c->end - (char *)p)) {
			account(t, usable, 0, 0);
			account(t, need, 1, 0);
			b->size = (uint32_t)need;
			b->check = arena_check(b, ARENA_MAGIC);
			c->bump = (char *)p + need;
			return p;
		}
		if (size <= usable)
			return p; /* the tail cannot be reused anyway */
		return ar_realloc_by_copy(p, size);
	}
	if (ch->kind != AR_CHUNK_LARGE)
		ar_fatal("realloc(): invalid pointer");
	if (ar_align_up(size, AR_MIN_ALIGN) > large_threshold || size > ar_large_usable(ch) / 2) {
		void *q = ar_large_realloc(ch, p, size);
		if (q)
			return q;
	}
	return ar_realloc_by_copy(p, size);
}

/* ---- statistics and fork ------------------------------------------------------- */

void ar_core_stats(ar_alloc_stats_t *out)
{
	unsigned nbins = arena_bin(ar_chunk_size()) + 1;
	out->nbins = nbins;
	for (unsigned i = 0; i < nbins; i++)
		out->bins[i].block_bytes = (uint64_t)16 << i;
	uint64_t bytes_alloc = 0, bytes_freed = 0, resets = 0;
	ar_lock(&ts_lock);
	for (arena_thread_t *t = ts_all; t; t = t->next) {
		bytes_alloc += atomic_load_explicit(&t->bytes_alloc, memory_order_relaxed);
		bytes_freed += atomic_load_explicit(&t->bytes_freed, memory_order_relaxed);
		resets += atomic_load_explicit(&t->resets, memory_order_relaxed);
		for (unsigned i = 0; i < nbins; i++) {
			out->bins[i].allocs_total += atomic_load_explicit(&t->bin_allocs[i], memory_order_relaxed);
			out->bins[i].blocks_in_use +=
				(uint64_t)atomic_load_explicit(&t->bin_delta[i], memory_order_relaxed);
		}
		out->threads += (uint64_t)(t->live && t != &fallback);
	}
	ar_unlock(&ts_lock);
	for (unsigned i = 0; i < nbins; i++) {
		out->blocks_in_use += out->bins[i].blocks_in_use;
		out->allocs_total += out->bins[i].allocs_total;
	}
	out->frees_total = out->allocs_total - out->blocks_in_use;
	out->bytes_in_use = bytes_alloc - bytes_freed;
	arena_chunks_stats(out);
	out->chunk_resets += resets;
	ar_large_stats(out);
}

void ar_core_fork_prepare(void)
{
	ar_lock(&ts_lock);
	ar_lock(&fallback_lock);
	arena_chunks_fork_prepare();
}

void ar_core_fork_parent(void)
{
	arena_chunks_fork_parent();
	ar_unlock(&fallback_lock);
	ar_unlock(&ts_lock);
}

void ar_core_fork_child(void)
{
	arena_chunks_fork_child();
	ar_lock_reinit(&fallback_lock);
	ar_lock_reinit(&ts_lock);
	/* The other threads are gone: release the chunks they were filling so
	 * those can be recycled once their objects die. Counting stays exact
	 * even if a thread was mid-allocation: at worst an object it never
	 * returned keeps its chunk alive. */
	arena_thread_t *self = self_ts;
	for (arena_thread_t *t = ts_all; t; t = t->next) {
		if (t == self || t == &fallback || !t->live)
			continue;
		if (t->cur)
			arena_chunk_release(t->cur, t->n);
		t->cur = NULL;
		t->live = 0;
		t->next_free = ts_free;
		ts_free = t;
	}
}
