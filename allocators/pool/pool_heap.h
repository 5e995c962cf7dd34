/*
 * pool_heap.h — segregated fixed-size pools, one per size class: the pool
 * allocator's whole heap, and the central heap behind tlscache's thread
 * caches.
 *
 * Each class owns chunks (chunk.h) carved into equal blocks; free blocks of
 * a class form a singly linked list threaded through their first word. A
 * chunk belongs to one class forever and is never returned to the kernel:
 * the classic object pool, whose memory high-water mark is the sum of each
 * class's own high-water mark. The free list of a class is a set of
 * lock-free stacks (pool_list.h), one per shard of threads (pool_heap.c);
 * a lock per class guards only carving and growing, so allocating and
 * freeing recycled blocks never waits on another thread.
 *
 * Invariants, per class (the counts exact when no call is in flight):
 *   blocks carved = out + on the free list;
 *   every block lies wholly inside one chunk, at first + k * block_size;
 *   a chunk's unused tail [bump, bump_end) has never been handed out.
 */
#ifndef AR_ALLOC_POOL_HEAP_H
#define AR_ALLOC_POOL_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "ar_alloc.h"
#include "chunk.h"
#include "size_class.h"
#include "util.h"

/* Blocks start this far into a chunk: the header, rounded to a cache line. */
#define AR_POOL_CHUNK_HDR ((size_t)64)

typedef struct ar_pool_chunk {
	ar_chunk_t hdr;      /* kind AR_CHUNK_POOL, index = size class */
	uint32_t block_size; /* bytes */
	uint32_t unused;
	uint64_t recip;      /* floor(2^64 / block_size) + 1: divides by multiplying */
} ar_pool_chunk_t;

/* Classes 0 .. ar_pool_nclasses-1 are used; ar_pool_max_size is the block
 * size of the last one (the largest request the pools serve). */
extern unsigned ar_pool_nclasses;
extern size_t ar_pool_max_size;

/* Set up classes for requests up to max_size (<= AR_SC_LIMIT). The chunk
 * size must already be fixed (ar_chunk_set_size). */
void ar_pool_heap_init(size_t max_size);

/* One block of class cls, or NULL when no chunk can be mapped. */
void *ar_pool_alloc(unsigned cls);

/* Return block (its start, see ar_pool_block_start) to class cls. */
void ar_pool_free(unsigned cls, void *block);

/*
 * Take up to n blocks of class cls (free ones first, the calling thread's
 * shard before the others, then newly carved ones under one lock hold),
 * linked through their first word, NULL-terminated, into *head. Returns how many (0 only when the
 * class is empty and no chunk can be mapped).
 */
unsigned ar_pool_alloc_batch(unsigned cls, unsigned n, void **head);

/* Give back n blocks linked from head to tail (tail's link is overwritten),
 * to the calling thread's shard. */
void ar_pool_free_batch(unsigned cls, void *head, void *tail, unsigned n);

/*
 * Where free finds a block's class without reading its chunk's header.
 *
 * Chunk headers sit at chunk boundaries, so every header maps to the same
 * L1 set (set 0 of 64) as every other header and every page-aligned datum
 * of the program: with more than eight chunks in use a free that read the
 * header missed L1 once in four calls on A (callgrind). Instead chunks are
 * cut, in the order classes ask for them, from one reserved range
 * (ar_os_reserve), and a byte per chunk of the range names its class: the
 * class is class_of[(p - base) >> chunk_shift], the block geometry comes
 * from a small table, and both stay in cache. Chunks mapped outside the
 * range (the range refused or used up) are found through the header as
 * before. The headers are still written: realloc, malloc_usable_size and
 * the invalid-pointer check read them.
 *
 * Why not a slice of the range per class, the class then being (p - base)
 * >> shift with no table: the program's own data is then spread over one
 * region per class, 128 MiB apart, instead of lying in adjacent chunks.
 * Measured on perl (bench/fidelity/perl_churn.pl, 21 interleaved real runs,
 * docs/BENCHMARKS.md): CPU time 1.14x glibc's with slices, 0.97x with the
 * chunks side by side, while the allocator's own calls were as fast in
 * both; perf put the difference in perl's own code, which callgrind's
 * cache model (no TLB) does not reproduce.
 */
typedef struct ar_pool_region {
	uintptr_t base;      /* 0 when there is no range */
	uintptr_t len;       /* bytes of the range */
	uintptr_t in_chunk;  /* chunk size - 1 */
	unsigned chunk_shift; /* log2 of the chunk size */
	const uint8_t *class_of; /* per chunk of the range: the class it was cut for, + AR_POOL_INTERIOR */
} ar_pool_region_t;

/* In a chunk's class_of byte: memalign handed out a pointer inside one of
 * its blocks, so free must work out the block's start. A chunk without it
 * only ever handed out block starts, and free takes the pointer as it is
 * (a program may free only what it was given): the division by the block
 * size, 9 of tlscache's instructions a free, is left to chunks that need
 * it. Set before such a pointer is returned, never cleared (chunks live for
 * good). */
#define AR_POOL_INTERIOR 0x80u

/* The range: 128 MiB of address space per class, 7 GiB for 56 classes, no
 * memory until a chunk is committed. Chunks above 128 MiB get no range. */
#define AR_POOL_RANGE_PER_CLASS_SHIFT 27

typedef struct ar_pool_geometry {
	uint64_t recip; /* as ar_pool_chunk_t.recip */
	uint64_t size;
} ar_pool_geometry_t;

extern ar_pool_region_t ar_pool_region;
extern ar_pool_geometry_t ar_pool_geometry[AR_SC_COUNT];

/* The start of the block containing p (p may point inside it when it came
 * from an aligned allocation). */
static inline char *ar_pool_block_start(const ar_pool_chunk_t *c, const void *p)
{
	char *first = (char *)c + AR_POOL_CHUNK_HDR;
	uint64_t off = (uint64_t)((const char *)p - first);
	uint64_t k = (uint64_t)(((unsigned __int128)off * c->recip) >> 64);
	return first + k * c->block_size;
}

/*
 * free's look-up: when p is a pool block (p may point inside it, as after
 * an aligned allocation), set *cls and *block (its start) and return 1;
 * otherwise return 0 (a large block or not ours: look at ar_chunk_of(p)).
 * Inside the reserved range the header is not read (above);
 * ar_pool_find_in_range looks there only (0: look at the header), for a
 * caller that keeps the header's path out of line.
 */
static inline int ar_pool_find_in_range(const void *p, unsigned *cls, char **block)
{
	uintptr_t off = (uintptr_t)p - 1 - ar_pool_region.base;
	if (AR_LIKELY(off < ar_pool_region.len)) {
		unsigned k = __atomic_load_n(&ar_pool_region.class_of[off >> ar_pool_region.chunk_shift],
					     __ATOMIC_RELAXED);
		if (AR_LIKELY(k < AR_POOL_INTERIOR)) {
			*cls = k;
			*block = (char *)p;
			return 1;
		}
		k -= AR_POOL_INTERIOR;
		const ar_pool_geometry_t *g = &ar_pool_geometry[k];
		/* p's distance from its chunk's first block (chunk + 64) */
		uint64_t boff = (off & ar_pool_region.in_chunk) + 1 - AR_POOL_CHUNK_HDR;
		uint64_t i = (uint64_t)(((unsigned __int128)boff * g->recip) >> 64);
		*cls = k;
		*block = (char *)p - (boff - i * g->size);
		return 1;
	}
	return 0;
}

static inline int ar_pool_find(const void *p, unsigned *cls, char **block)
{
	if (AR_LIKELY(ar_pool_find_in_range(p, cls, block)))
		return 1;
	const ar_chunk_t *c = ar_chunk_of(p);
	if (c->kind != AR_CHUNK_POOL)
		return 0;
	*cls = c->index;
	*block = ar_pool_block_start((const ar_pool_chunk_t *)c, p);
	return 1;
}

/* malloc_usable_size of p inside chunk c: up to the end of its block. */
static inline size_t ar_pool_usable(const ar_pool_chunk_t *c, const void *p)
{
	return (size_t)(ar_pool_block_start(c, p) + c->block_size - (const char *)p);
}

/*
 * realloc's in-place rule for a pool block of usable bytes: keep it when the
 * new size fits and no more than half the block would be wasted; otherwise
 * the caller moves it to the right class (a smaller one frees the big block).
 */
static inline int ar_pool_realloc_in_place(size_t usable, size_t size)
{
	return size <= usable && (size > usable / 2 || usable <= 32);
}

/* malloc_usable_size and realloc of a block that is a pool block or a
 * large block (allocators/common/large.h): what pool and tlscache share.
 * Anything else is an invalid pointer (ar_fatal). */
size_t ar_pool_heap_usable_size(const void *p);
void *ar_pool_heap_realloc(void *p, size_t size);

/* calloc and memalign of pool and tlscache, over their class allocator
 * `alloc`; add_padding(d) learns the d bytes memalign skipped in a block. */
void *ar_pool_heap_calloc(size_t size, void *(*alloc)(unsigned cls));
void *ar_pool_heap_memalign(size_t align, size_t size, void *(*alloc)(unsigned cls),
			    void (*add_padding)(ptrdiff_t));

/* Per class: bins[i].block_bytes, blocks_in_use (= blocks out of the heap),
 * blocks_free, chunks, allocs_total; plus chunks_in_use. Sets nbins. */
void ar_pool_heap_stats(ar_alloc_stats_t *out);

void ar_pool_heap_fork_prepare(void);
void ar_pool_heap_fork_parent(void);
void ar_pool_heap_fork_child(void);

#endif
