/*
 * pool_heap.c — the per-class pools described in pool_heap.h.
 *
 * A class carves blocks lazily from the unused tail of its newest chunk, so
 * a fresh 1 MiB chunk costs only the pages actually handed out; freed blocks
 * go to the head of the class's free list and are reused first (LIFO: the
 * most recently freed block is the one most likely still in cache).
 */
#include "pool_heap.h"

#include <string.h>

#include "core.h"
#include "large.h"
#include "lock.h"
#include "os.h"
#include "util.h"

typedef struct pool_class {
	ar_lock_t lock;
	void *free_list;
	char *bump, *bump_end; /* unused tail of the newest chunk */
	uint64_t out;          /* blocks handed out and not given back */
	uint64_t nfree;        /* blocks on free_list */
	uint64_t allocs;       /* blocks handed out since start */
	uint64_t chunks;
	uint32_t size;
} __attribute__((aligned(64))) pool_class_t;

unsigned ar_pool_nclasses;
size_t ar_pool_max_size;
static pool_class_t classes[AR_SC_COUNT];

void ar_pool_heap_init(size_t max_size)
{
	ar_pool_nclasses = ar_sc_index(max_size) + 1;
	ar_pool_max_size = ar_sc_size(ar_pool_nclasses - 1);
	for (unsigned i = 0; i < AR_SC_COUNT; i++) {
		pool_class_t *k = &classes[i];
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
	k->chunks++;
	return 0;
}

void *ar_pool_alloc(unsigned cls)
{
	pool_class_t *k = &classes[cls];
	void *b;
	ar_lock(&k->lock);
	if (k->free_list) {
		b = k->free_list;
		k->free_list = *(void **)b;
		k->nfree--;
	} else {
		if (k->bump == k->bump_end && grow(k, cls) != 0) {
			ar_unlock(&k->lock);
			return NULL;
		}
		b = k->bump;
		k->bump += k->size;
	}
	k->out++;
	k->allocs++;
	ar_unlock(&k->lock);
	return b;
}

void ar_pool_free(unsigned cls, void *block)
{
	pool_class_t *k = &classes[cls];
	ar_lock(&k->lock);
	*(void **)block = k->free_list;
	k->free_list = block;
	k->nfree++;
	k->out--;
	ar_unlock(&k->lock);
}

unsigned ar_pool_alloc_batch(unsigned cls, unsigned n, void **head)
{
	pool_class_t *k = &classes[cls];
	void *list = NULL;
	unsigned got = 0;
	ar_lock(&k->lock);
	while (got < n && k->free_list) {
		void *b = k->free_list;
		k->free_list = *(void **)b;
		*(void **)b = list;
		list = b;
		got++;
	}
	k->nfree -= got;
	while (got < n) {
		if (k->bump == k->bump_end && grow(k, cls) != 0)
			break;
		void *b = k->bump;
		k->bump += k->size;
		*(void **)b = list;
		list = b;
		got++;
	}
	k->out += got;
	k->allocs += got;
	ar_unlock(&k->lock);
	*head = list;
	return got;
}

void ar_pool_free_batch(unsigned cls, void *head, void *tail, unsigned n)
{
	pool_class_t *k = &classes[cls];
	ar_lock(&k->lock);
	*(void **)tail = k->free_list;
	k->free_list = head;
	k->nfree += n;
	k->out -= n;
	ar_unlock(&k->lock);
}

void ar_pool_heap_stats(ar_alloc_stats_t *out)
{
	out->nbins = ar_pool_nclasses;
	for (unsigned i = 0; i < ar_pool_nclasses; i++) {
		pool_class_t *k = &classes[i];
		ar_alloc_bin_stats_t *b = &out->bins[i];
		ar_lock(&k->lock);
		b->block_bytes = k->size;
		b->blocks_in_use = k->out;
		b->blocks_free = k->nfree;
		b->allocs_total = k->allocs;
		b->chunks = k->chunks;
		ar_unlock(&k->lock);
		out->chunks_in_use += b->chunks;
	}
}

void ar_pool_heap_fork_prepare(void)
{
	for (unsigned i = 0; i < ar_pool_nclasses; i++)
		ar_lock(&classes[i].lock);
}

void ar_pool_heap_fork_parent(void)
{
	for (unsigned i = 0; i < ar_pool_nclasses; i++)
		ar_unlock(&classes[i].lock);
}

void ar_pool_heap_fork_child(void)
{
	for (unsigned i = 0; i < ar_pool_nclasses; i++)
		ar_lock_reinit(&classes[i].lock);
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
