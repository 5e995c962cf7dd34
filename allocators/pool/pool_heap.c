/*
 * pool_heap.c — the per-class pools described in pool_heap.h.
 *
 * A class carves blocks lazily from the unused tail of its newest chunk, so
 * a fresh 1 MiB chunk costs only the pages actually handed out; freed blocks
 * go to the head of the class's free list and are reused first (LIFO: the
 * most recently freed block is the one most likely still in cache).
 *
 * The free list takes no lock (pool_list.h: one double-width swap per pop
 * or push); only carving and mapping a new chunk take the class's lock, so
 * the steady state of a program that frees what it allocates is lock-free.
 */
#include "pool_heap.h"

#include <stdatomic.h>
#include <string.h>

#include "core.h"
#include "large.h"
#include "lock.h"
#include "os.h"
#include "pool_list.h"
#include "single_thread.h"
#include "util.h"

typedef struct pool_class {
	pool_list_t free;           /* free blocks, shared without a lock (pool_list.h) */
	_Atomic uint64_t pop_wraps; /* times free.head.pops wrapped past 2^32 */
	ar_lock_t lock;             /* carving: bump, bump_end, carved, chunks */
	char *bump, *bump_end;      /* unused tail of the newest chunk */
	char *ready;                /* pages below this are faulted in (carve) */
	uint64_t carved;            /* blocks ever carved from chunks */
	uint64_t chunks;
	uint32_t size;
} __attribute__((aligned(64))) pool_class_t;

unsigned ar_pool_nclasses;
size_t ar_pool_max_size;
static pool_class_t classes[AR_SC_COUNT];

#if POOL_LIST_CAS
int ar_pool_list_lockfree;
#endif

void ar_pool_heap_init(size_t max_size)
{
	pool_list_probe(); /* before any list is used (pool_list.h) */
	ar_pool_nclasses = ar_sc_index(max_size) + 1;
	ar_pool_max_size = ar_sc_size(ar_pool_nclasses - 1);
	for (unsigned i = 0; i < AR_SC_COUNT; i++) {
		pool_class_t *k = &classes[i];
		pool_list_init(&k->free);
		ar_lock_reinit(&k->lock);
		k->size = (uint32_t)ar_sc_size(i);
	}
}

/* Map a new chunk for class k and make its blocks the carving region.
 * Called with k->lock held. Returns 0, or -1 when the kernel refuses. */
static int grow(pool_class_t *k, unsigned cls)
{
	size_t csize = ar_chunk_size();
	ar_pool_chunk_t *c = ar_os_map_aligned(csize, csize);
	if (!c)
		return -1;
	c->hdr.kind = AR_CHUNK_POOL;
	c->hdr.index = cls;
	c->block_size = k->size;
	c->recip = UINT64_MAX / k->size + 1;
	size_t room = csize - AR_POOL_CHUNK_HDR;
	k->bump = (char *)c + AR_POOL_CHUNK_HDR;
	k->bump_end = k->bump + room - room % k->size;
	k->ready = (char *)c + ar_page_size; /* the header's page, written above */
	k->chunks++;
	return 0;
}

/* Pop one free block of k, or NULL when its list is empty. */
static inline void *pop(pool_class_t *k)
{
	void *b;
	if (AR_UNLIKELY(pool_list_pop(&k->free, &b)))
		atomic_fetch_add_explicit(&k->pop_wraps, 1, memory_order_relaxed);
	return b;
}

/* Fault in the pages of k's chunk from k->ready up to at least end, in
 * steps of AR_POOL_POPULATE bytes (never past the chunk's carvable end):
 * the blocks carved next will be written there anyway, and one system call
 * costs less than a trap per page (os.h). Replays of D, 5 interleaved:
 * median 14.7 -> 22.3 M calls/s with 32 KiB steps; 16 KiB kept as fast
 * within the noise for less memory (peak heap 4.0 -> 4.2 MiB, 32 KiB: 4.6).
 * At most one step per class beyond what is carved. Called with k->lock
 * held. */
#define AR_POOL_POPULATE ((size_t)16 << 10)
static void populate(pool_class_t *k, const char *end)
{
	if (end <= k->ready)
		return;
	char *stop = k->ready + AR_POOL_POPULATE;
	if (stop < end)
		stop = (char *)end;
	char *limit = (char *)ar_align_up_ptr((uintptr_t)k->bump_end, ar_page_size);
	if (stop > limit)
		stop = limit;
	stop = (char *)ar_align_up_ptr((uintptr_t)stop, ar_page_size);
	ar_os_populate(k->ready, (size_t)(stop - k->ready));
	k->ready = stop;
}

/* Carve up to n never-used blocks of class cls, linked through their first
 * word in front of *list, under the class's lock. Returns how many. */
static unsigned carve(pool_class_t *k, unsigned cls, unsigned n, void **list)
{
	unsigned got = 0;
	int one = ar_one_thread(); /* nobody to exclude (single_thread.h) */
	if (!one)
		ar_lock(&k->lock);
	while (got < n) {
		if (k->bump == k->bump_end && grow(k, cls) != 0)
			break;
		void *b = k->bump;
		k->bump += k->size;
		populate(k, k->bump);
		*(void **)b = *list;
		*list = b;
		got++;
	}
	k->carved += got;
	if (!one)
		ar_unlock(&k->lock);
	return got;
}

void *ar_pool_alloc(unsigned cls)
{
	pool_class_t *k = &classes[cls];
	void *b = pop(k);
	if (AR_LIKELY(b != NULL))
		return b;
	return carve(k, cls, 1, &b) ? b : NULL;
}

void ar_pool_free(unsigned cls, void *block)
{
	pool_list_push(&classes[cls].free, block, block, 1);
}

unsigned ar_pool_alloc_batch(unsigned cls, unsigned n, void **head)
{
	pool_class_t *k = &classes[cls];
	void *list = NULL, *b;
	int wrapped = 0;
	/* A list of at most n blocks comes whole in one swap (the common case
	 * of tlscache, whose flushes push a batch and refills take one).
	 * Otherwise one pop per block: walking the shared list to cut n blocks
	 * off would follow links another thread may be overwriting. */
	unsigned got = pool_list_take_all(&k->free, n, &list, &wrapped);
	if (AR_UNLIKELY(wrapped))
		atomic_fetch_add_explicit(&k->pop_wraps, 1, memory_order_relaxed);
	while (got < n && (b = pop(k)) != NULL) {
		*(void **)b = list;
		list = b;
		got++;
	}
	if (got < n)
		got += carve(k, cls, n - got, &list);
	*head = list;
	return got;
}

void ar_pool_free_batch(unsigned cls, void *head, void *tail, unsigned n)
{
	pool_list_push(&classes[cls].free, head, tail, n);
}

void ar_pool_heap_stats(ar_alloc_stats_t *out)
{
	out->nbins = ar_pool_nclasses;
	for (unsigned i = 0; i < ar_pool_nclasses; i++) {
		pool_class_t *k = &classes[i];
		ar_alloc_bin_stats_t *b = &out->bins[i];
		ar_lock(&k->lock);
		uint64_t carved = k->carved, chunks = k->chunks;
		ar_unlock(&k->lock);
		pool_head_t h = pool_list_peek(&k->free);
		uint64_t wraps = atomic_load_explicit(&k->pop_wraps, memory_order_relaxed);
		uint64_t nfree = pool_head_count(h);
		b->block_bytes = k->size;
		/* Under concurrency a block carved after the carved count was
		 * read can already be on the list: clamp, quiescent is exact. */
		b->blocks_free = nfree < carved ? nfree : carved;
		b->blocks_in_use = carved - b->blocks_free;
		b->allocs_total = carved + (wraps << 32 | h.pops);
		b->chunks = chunks;
		out->chunks_in_use += b->chunks;
	}
}

void ar_pool_heap_fork_prepare(void)
{
	for (unsigned i = 0; i < ar_pool_nclasses; i++) {
		ar_lock(&classes[i].lock);
		pool_list_fork_prepare(&classes[i].free);
	}
}

void ar_pool_heap_fork_parent(void)
{
	for (unsigned i = 0; i < ar_pool_nclasses; i++) {
		pool_list_fork_parent(&classes[i].free);
		ar_unlock(&classes[i].lock);
	}
}

void ar_pool_heap_fork_child(void)
{
	for (unsigned i = 0; i < ar_pool_nclasses; i++) {
		pool_list_fork_child(&classes[i].free);
		ar_lock_reinit(&classes[i].lock);
	}
}

/* Shared by pool and tlscache, whose blocks are all pool or large blocks. */
size_t ar_pool_heap_usable_size(const void *p)
{
	ar_chunk_t *c = ar_chunk_of(p);
	if (c->kind == AR_CHUNK_POOL)
		return ar_pool_usable((const ar_pool_chunk_t *)c, p);
	if (c->kind == AR_CHUNK_LARGE)
		return ar_large_usable(c);
	ar_fatal("malloc_usable_size(): invalid pointer");
}

void *ar_pool_heap_realloc(void *p, size_t size)
{
	ar_chunk_t *c = ar_chunk_of(p);
	if (c->kind == AR_CHUNK_POOL) {
		if (ar_pool_realloc_in_place(ar_pool_usable((ar_pool_chunk_t *)c, p), size))
			return p;
		return ar_realloc_by_copy(p, size);
	}
	if (c->kind != AR_CHUNK_LARGE)
		ar_fatal("realloc(): invalid pointer");
	/* Stay a large block (resized in place or moved by mremap) unless it
	 * shrinks below half and fits a class. */
	if (size > ar_pool_max_size || size > ar_large_usable(c) / 2) {
		void *q = ar_large_realloc(c, p, size);
		if (q)
			return q;
	}
	return ar_realloc_by_copy(p, size);
}

/* calloc and memalign over a class allocator (the pool's own, or tlscache's
 * thread cache in front of it); add_padding learns the bytes memalign
 * skipped at the start of a block, which free gives back. */
void *ar_pool_heap_calloc(size_t size, void *(*alloc)(unsigned cls))
{
	if (size > ar_pool_max_size)
		return ar_large_alloc(size, AR_MIN_ALIGN, 1);
	void *p = alloc(ar_sc_index(size));
	if (p)
		memset(p, 0, size);
	return p;
}

void *ar_pool_heap_memalign(size_t align, size_t size, void *(*alloc)(unsigned cls),
			    void (*add_padding)(ptrdiff_t))
{
	if (size <= ar_pool_max_size && align <= ar_pool_max_size) {
		unsigned cls = ar_sc_index(size);
		/* Blocks start at chunk + 64 and step by the class size: when both
		 * are multiples of align, every block is aligned. */
		if (AR_POOL_CHUNK_HDR % align == 0 && ar_sc_size(cls) % align == 0)
			return alloc(cls);
		size_t need = size + align - AR_MIN_ALIGN;
		if (need <= ar_pool_max_size) {
			char *b = alloc(ar_sc_index(need));
			if (!b)
				return NULL;
			char *p = (char *)ar_align_up_ptr((uintptr_t)b, align);
			if (p != b)
				add_padding(p - b);
			return p;
		}
	}
	return ar_large_alloc(size, align, 0);
}
