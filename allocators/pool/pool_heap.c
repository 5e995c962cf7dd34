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

/*
 * A class's free blocks are spread over AR_POOL_SHARDS lock-free lists
 * (shards). Each thread takes one shard at its first call, round robin
 * (threads beyond the count share), and pops from and pushes to that shard
 * only, so threads that allocate the same size no longer write one cache
 * line per call: on 2 cores, S2 (8 threads) and S1 on 4 threads ran pool
 * at 0.75x and 0.80x glibc with one list (docs/BENCHMARKS.md). A block
 * belongs to no shard: free pushes it onto the freeing thread's shard.
 * A thread whose shard is empty takes another shard's whole list in one
 * swap (a producer's blocks freed by a consumer come back this way, a batch
 * at a time) before it carves, and carves a few blocks at once into its
 * shard; it is still the same lock-free stack, any thread may pop any
 * shard, so no block is ever stranded with a thread that exited. This is
 * not a thread cache: nothing is private, every call is still one atomic
 * swap (none on one thread), only on a line no other thread writes.
 * tlscache's flushes and refills go through the same shards (a refill
 * looks at the thread's own shard first, then at the others).
 */
#define AR_POOL_SHARDS 8
#define AR_POOL_CARVE 8 /* blocks carved at once into a shard (threads) */

typedef struct pool_shard {
	pool_list_t list;
} __attribute__((aligned(64))) pool_shard_t;

/* [shard][class]: a thread's lists of every class are lines of their own,
 * each in its own L1 set. */
static pool_shard_t shards[AR_POOL_SHARDS][AR_SC_COUNT];
static _Atomic unsigned shards_taken; /* threads that took a shard, ever */
static __thread unsigned char my_shard __attribute__((tls_model("initial-exec"))); /* shard + 1 */

typedef struct pool_class {
	_Atomic uint64_t pop_wraps; /* times a shard's head.pops wrapped past 2^32 */
	_Atomic uint64_t moved;     /* blocks popped and pushed again internally */
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
ar_pool_region_t ar_pool_region;
ar_pool_geometry_t ar_pool_geometry[AR_SC_COUNT] __attribute__((aligned(64)));

/* How much of the reserved range chunks have taken (may run past its end:
 * those asking then map chunks elsewhere). */
static _Atomic uintptr_t region_used;

/* How much of it is committed (readable and writable), grown under
 * commit_lock in steps of AR_POOL_COMMIT_STEP (at least a chunk). Each
 * commit is an mprotect, which takes the process's mmap lock for writing
 * and so waits for every page fault and populate of the other threads, who
 * then wait for it: with one per 256 KiB chunk, replays of D on 4 threads
 * (2 cores) spent more of their context switches asleep in mprotect than
 * anywhere else (perf, sched:sched_switch). Committed but untouched memory
 * costs no RSS; it is in the tally (bytes_mapped) like any mapping. */
#define AR_POOL_COMMIT_STEP ((size_t)1 << 20)
static _Atomic uintptr_t region_committed;
static ar_lock_t commit_lock = AR_LOCK_INIT;

static void reserve_region(unsigned nclasses)
{
	size_t csize = ar_chunk_size();
	size_t len = (size_t)nclasses << AR_POOL_RANGE_PER_CLASS_SHIFT;
	if (csize > ((size_t)1 << AR_POOL_RANGE_PER_CLASS_SHIFT))
		return; /* every chunk is found through its header */
	/* a byte per chunk, faulted in as chunks are cut */
	size_t table = ar_align_up(len / csize, ar_page_size);
	uint8_t *class_of = ar_os_map(table);
	char *base = class_of ? ar_os_reserve(len, csize) : NULL;
	if (!base) {
		if (class_of)
			ar_os_unmap(class_of, table);
		return; /* every chunk is found through its header */
	}
	ar_pool_region.class_of = class_of;
	ar_pool_region.chunk_shift = (unsigned)__builtin_ctzll(csize);
	ar_pool_region.in_chunk = csize - 1;
	ar_pool_region.len = len;
	ar_pool_region.base = (uintptr_t)base;
}

/* Commit the reserved range up to at least end (a chunk boundary), a step
 * at a time, or only to end when the kernel refuses a whole step. */
static int commit_region(uintptr_t end, size_t csize)
{
	size_t step = AR_POOL_COMMIT_STEP > csize ? AR_POOL_COMMIT_STEP : csize;
	int rc = 0;
	ar_lock(&commit_lock);
	uintptr_t done = atomic_load_explicit(&region_committed, memory_order_relaxed);
	while (done < end) {
		size_t len = ar_pool_region.len - done < step ? ar_pool_region.len - done : step;
		if (ar_os_commit((char *)ar_pool_region.base + done, len) != 0) {
			len = end - done;
			if (ar_os_commit((char *)ar_pool_region.base + done, len) != 0) {
				rc = -1;
				break;
			}
		}
		done += len;
		atomic_store_explicit(&region_committed, done, memory_order_release);
	}
	ar_unlock(&commit_lock);
	return rc;
}

/* The next chunk of the reserved range, committed and named class cls, or
 * NULL when there is no range, it is used up or the kernel refuses. */
static ar_pool_chunk_t *chunk_from_region(unsigned cls, size_t csize)
{
	if (!ar_pool_region.base)
		return NULL;
	uintptr_t at = atomic_fetch_add_explicit(&region_used, csize, memory_order_relaxed);
	if (at >= ar_pool_region.len)
		return NULL;
	if (at + csize > atomic_load_explicit(&region_committed, memory_order_acquire) &&
	    commit_region(at + csize, csize) != 0)
		return NULL;
	/* Before any block of the chunk is handed out: whoever frees one got
	 * it through the class's lock or lists, after this store. */
	__atomic_store_n((uint8_t *)&ar_pool_region.class_of[at >> ar_pool_region.chunk_shift], (uint8_t)cls,
			 __ATOMIC_RELAXED);
	return (ar_pool_chunk_t *)((char *)ar_pool_region.base + at);
}

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
		for (unsigned j = 0; j < AR_POOL_SHARDS; j++)
			pool_list_init(&shards[j][i].list);
		ar_lock_reinit(&k->lock);
		k->size = (uint32_t)ar_sc_size(i);
		ar_pool_geometry[i].size = k->size;
		ar_pool_geometry[i].recip = UINT64_MAX / k->size + 1;
	}
	reserve_region(ar_pool_nclasses);
}

/* Map a new chunk for class k and make its blocks the carving region.
 * Called with k->lock held. Returns 0, or -1 when the kernel refuses. */
static int grow(pool_class_t *k, unsigned cls)
{
	size_t csize = ar_chunk_size();
	ar_pool_chunk_t *c = chunk_from_region(cls, csize);
	if (!c)
		c = ar_os_map_aligned(csize, csize);
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

/* Pop one free block of list l of class k, or NULL when it is empty. */
static inline void *pop(pool_class_t *k, pool_list_t *l)
{
	void *b;
	if (AR_UNLIKELY(pool_list_pop(l, &b)))
		atomic_fetch_add_explicit(&k->pop_wraps, 1, memory_order_relaxed);
	return b;
}

static __attribute__((noinline)) unsigned take_shard(void)
{
	unsigned n = atomic_fetch_add_explicit(&shards_taken, 1, memory_order_relaxed) % AR_POOL_SHARDS;
	my_shard = (unsigned char)(n + 1);
	return n;
}

/* The calling thread's shard. */
static inline unsigned shard_index(void)
{
	unsigned s = my_shard;
	return AR_LIKELY(s != 0) ? s - 1 : take_shard();
}

/* Shards 0 .. shards_used()-1 may hold blocks. */
static inline unsigned shards_used(void)
{
	unsigned n = atomic_load_explicit(&shards_taken, memory_order_relaxed);
	return n < AR_POOL_SHARDS ? (n ? n : 1) : AR_POOL_SHARDS;
}

/* Give the n blocks linked from first (NULL-terminated) to list l: in one
 * swap when l is empty, else after walking to the tail. */
static void give_chain(pool_class_t *k, pool_list_t *l, void *first, uint32_t n)
{
	atomic_fetch_add_explicit(&k->moved, n, memory_order_relaxed);
	if (pool_list_push_if_empty(l, first, n))
		return;
	void *last = first;
	while (*(void **)last)
		last = *(void **)last;
	pool_list_push(l, first, last, n);
}

/* Which pages of k's chunk to fault in so that the blocks up to end are
 * there: from k->ready to at least end, in steps of AR_POOL_POPULATE bytes
 * (never past the chunk's carvable end); the blocks carved next will be
 * written there anyway, and one system call costs less than a trap per page
 * (os.h). Replays of D, 5 interleaved: median 14.7 -> 22.3 M calls/s with
 * 32 KiB steps; 16 KiB kept as fast within the noise for less memory (peak
 * heap 4.0 -> 4.2 MiB, 32 KiB: 4.6). At most one step per class beyond
 * what is carved. Called with k->lock held: claims [*from, returned end)
 * for the caller to populate after unlocking. */
#define AR_POOL_POPULATE ((size_t)16 << 10)
static char *claim_pages(pool_class_t *k, const char *end, char **from)
{
	*from = k->ready;
	if (end <= k->ready)
		return k->ready;
	char *stop = k->ready + AR_POOL_POPULATE;
	if (stop < end)
		stop = (char *)end;
	char *limit = (char *)ar_align_up_ptr((uintptr_t)k->bump_end, ar_page_size);
	if (stop > limit)
		stop = limit;
	stop = (char *)ar_align_up_ptr((uintptr_t)stop, ar_page_size);
	k->ready = stop;
	return stop;
}

/* Blocks carved from one chunk in one go, and the pages to fault in. */
typedef struct carve_run {
	char *first, *pages, *pages_end;
	unsigned n;
} carve_run_t;

/*
 * Carve up to n never-used blocks of class cls, linked through their first
 * word in front of *list. Returns how many. The class's lock covers only
 * moving the bump pointer (and mapping a chunk when one runs out): the
 * page faults and the writes of the links come after it, so a thread
 * preempted there holds nobody up (S1 and D on 4 threads, 2 cores: threads
 * slept on the lock while its holder faulted pages in).
 */
static unsigned carve(pool_class_t *k, unsigned cls, unsigned n, void **list)
{
	carve_run_t runs[4];
	unsigned nruns = 0, got = 0;
	int one = ar_one_thread(); /* nobody to exclude (single_thread.h) */
	if (!one)
		ar_lock(&k->lock);
	while (got < n && nruns < sizeof runs / sizeof runs[0]) {
		if (k->bump == k->bump_end && grow(k, cls) != 0)
			break;
		size_t room = (size_t)(k->bump_end - k->bump) / k->size;
		carve_run_t *r = &runs[nruns++];
		r->n = (unsigned)(room < n - got ? room : n - got);
		r->first = k->bump;
		k->bump += (size_t)r->n * k->size;
		r->pages_end = claim_pages(k, k->bump, &r->pages);
		got += r->n;
	}
	k->carved += got;
	if (!one)
		ar_unlock(&k->lock);
	for (unsigned i = 0; i < nruns; i++) {
		carve_run_t *r = &runs[i];
		if (r->pages_end > r->pages)
			ar_os_populate(r->pages, (size_t)(r->pages_end - r->pages));
		char *b = r->first;
		for (unsigned j = 0; j < r->n; j++, b += k->size) {
			*(void **)b = *list;
			*list = b;
		}
	}
	return got;
}

/* Shard s of class cls is empty: take another shard's whole list (one
 * swap), or carve a few blocks; return one block, the rest go to shard s. */
static __attribute__((noinline)) void *refill(pool_class_t *k, unsigned cls, unsigned s)
{
	pool_list_t *own = &shards[s][cls].list;
	unsigned used = shards_used();
	for (unsigned i = 1; i < used; i++) {
		pool_list_t *l = &shards[(s + i) % used][cls].list;
		void *list = NULL;
		int wrapped = 0;
		if (!pool_list_maybe_nonempty(l))
			continue;
		uint32_t got = pool_list_take_all(l, UINT32_MAX, &list, &wrapped);
		if (AR_UNLIKELY(wrapped))
			atomic_fetch_add_explicit(&k->pop_wraps, 1, memory_order_relaxed);
		if (!got)
			continue;
		if (got > 1)
			give_chain(k, own, *(void **)list, got - 1);
		return list;
	}
	void *list = NULL;
	unsigned got = carve(k, cls, ar_one_thread() ? 1 : AR_POOL_CARVE, &list);
	if (!got)
		return NULL;
	if (got > 1)
		give_chain(k, own, *(void **)list, got - 1);
	return list;
}

static __attribute__((noinline)) void *alloc_slow(unsigned cls)
{
	pool_class_t *k = &classes[cls];
	unsigned s = shard_index();
	void *b = pop(k, &shards[s][cls].list);
	if (b != NULL)
		return b;
	return refill(k, cls, s);
}

static __attribute__((noinline)) void free_slow(unsigned cls, void *block)
{
	pool_list_push(&shards[shard_index()][cls].list, block, block, 1);
}

/* The fast paths inline, the rest (a thread's first call, the locked
 * lists, an empty shard) out of line, so that a pop or push saves no
 * registers. */
void *ar_pool_alloc(unsigned cls)
{
	unsigned s = my_shard;
	if (AR_LIKELY(s != 0)) {
		void *b;
		int r = pool_list_try_pop(&shards[s - 1][cls].list, &b);
		if (AR_UNLIKELY(r > 0))
			atomic_fetch_add_explicit(&classes[cls].pop_wraps, 1, memory_order_relaxed);
		if (AR_LIKELY(r >= 0 && b != NULL))
			return b;
	}
	return alloc_slow(cls);
}

void ar_pool_free(unsigned cls, void *block)
{
	unsigned s = my_shard;
	if (AR_LIKELY(s != 0) && pool_list_try_push(&shards[s - 1][cls].list, block))
		return;
	free_slow(cls, block);
}

unsigned ar_pool_alloc_batch(unsigned cls, unsigned n, void **head)
{
	pool_class_t *k = &classes[cls];
	void *list = NULL, *b;
	unsigned s = shard_index(), used = shards_used(), got = 0;
	/* The caller's shard first (where its flushes went), then the others.
	 * A list of at most n blocks comes whole in one swap (the common case
	 * of tlscache, whose flushes push a batch and refills take one).
	 * Otherwise one pop per block: walking the shared list to cut n blocks
	 * off would follow links another thread may be overwriting. */
	for (unsigned i = 0; got < n && i < used; i++) {
		pool_list_t *l = &shards[(s + i) % used][cls].list;
		if (i && !pool_list_maybe_nonempty(l))
			continue;
		if (!got) {
			int wrapped = 0;
			got = pool_list_take_all(l, n, &list, &wrapped);
			if (AR_UNLIKELY(wrapped))
				atomic_fetch_add_explicit(&k->pop_wraps, 1, memory_order_relaxed);
		}
		while (got < n && (b = pop(k, l)) != NULL) {
			*(void **)b = list;
			list = b;
			got++;
		}
	}
	if (got < n)
		got += carve(k, cls, n - got, &list);
	*head = list;
	return got;
}

void ar_pool_free_batch(unsigned cls, void *head, void *tail, unsigned n)
{
	pool_list_push(&shards[shard_index()][cls].list, head, tail, n);
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
		uint64_t nfree = 0, pops = 0;
		for (unsigned j = 0; j < AR_POOL_SHARDS; j++) {
			pool_head_t h = pool_list_peek(&shards[j][i].list);
			nfree += pool_head_count(h);
			pops += h.pops;
		}
		uint64_t wraps = atomic_load_explicit(&k->pop_wraps, memory_order_relaxed);
		uint64_t moved = atomic_load_explicit(&k->moved, memory_order_relaxed);
		b->block_bytes = k->size;
		/* Under concurrency a block carved after the carved count was
		 * read can already be on the list: clamp, quiescent is exact. */
		b->blocks_free = nfree < carved ? nfree : carved;
		b->blocks_in_use = carved - b->blocks_free;
		b->allocs_total = carved + (wraps << 32) + pops - moved;
		b->chunks = chunks;
		out->chunks_in_use += b->chunks;
	}
}

void ar_pool_heap_fork_prepare(void)
{
	for (unsigned i = 0; i < ar_pool_nclasses; i++) {
		ar_lock(&classes[i].lock);
		for (unsigned j = 0; j < AR_POOL_SHARDS; j++)
			pool_list_fork_prepare(&shards[j][i].list);
	}
	ar_lock(&commit_lock); /* taken under a class's lock (grow) */
}

void ar_pool_heap_fork_parent(void)
{
	ar_unlock(&commit_lock);
	for (unsigned i = 0; i < ar_pool_nclasses; i++) {
		for (unsigned j = 0; j < AR_POOL_SHARDS; j++)
			pool_list_fork_parent(&shards[j][i].list);
		ar_unlock(&classes[i].lock);
	}
}

void ar_pool_heap_fork_child(void)
{
	ar_lock_reinit(&commit_lock);
	for (unsigned i = 0; i < ar_pool_nclasses; i++) {
		for (unsigned j = 0; j < AR_POOL_SHARDS; j++)
			pool_list_fork_child(&shards[j][i].list);
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

_Static_assert(AR_SC_COUNT <= AR_POOL_INTERIOR, "a class number must leave class_of's flag bit free");

/* p, inside its block, is about to be handed out: from now on free works
 * out the block's start in p's chunk (AR_POOL_INTERIOR). Outside the range
 * the header path always does. */
static void mark_interior(const char *p)
{
	uintptr_t off = (uintptr_t)p - 1 - ar_pool_region.base;
	if (off < ar_pool_region.len)
		__atomic_fetch_or((uint8_t *)&ar_pool_region.class_of[off >> ar_pool_region.chunk_shift],
				  (uint8_t)AR_POOL_INTERIOR, __ATOMIC_RELAXED);
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
			if (p != b) {
				mark_interior(p);
				add_padding(p - b);
			}
			return p;
		}
	}
	return ar_large_alloc(size, align, 0);
}
