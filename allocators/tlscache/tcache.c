/*
 * tcache.c — creating, refilling, flushing and retiring thread caches.
 *
 * Lifetime: a thread's cache is made at its first small malloc/free (its
 * memory comes from os.c's metadata allocator, never from malloc) and is
 * registered with a pthread key whose destructor flushes it back to the
 * central heap when the thread exits; the emptied cache is kept on a free
 * list for the next thread, so counters are never lost.
 *
 * Locks: tc_lock protects the registry lists only; cache contents belong to
 * their thread. Lock order: tc_lock, then the pool heap's class locks and
 * its commit lock, then os.c's metadata lock; the fork handlers take them
 * in that order.
 */
#include "tcache.h"

#include <pthread.h>

#include "lock.h"
#include "os.h"
#include "pool_heap.h"
#include "util.h"

__thread ar_tcache_t *ar_tc_self __attribute__((tls_model("initial-exec")));
uint32_t ar_tc_batch[AR_SC_COUNT];
size_t ar_tc_cap;

static ar_lock_t tc_lock = AR_LOCK_INIT;
static ar_tcache_t *tc_all, *tc_free;
static pthread_key_t tc_key;
static int tc_key_ok;

static void tc_exit(void *arg);

void ar_tc_init(size_t batch, size_t cap_bytes)
{
	/* Move at most 64 KiB per transfer, so a refill of a big class does
	 * not pull megabytes into one thread. */
	for (unsigned c = 0; c < AR_SC_COUNT; c++) {
		size_t by_bytes = ((size_t)64 << 10) / ar_sc_size(c);
		size_t b = batch < by_bytes ? batch : by_bytes;
		ar_tc_batch[c] = (uint32_t)(b ? b : 1);
	}
	ar_tc_cap = cap_bytes;
	tc_key_ok = pthread_key_create(&tc_key, tc_exit) == 0;
}

ar_tcache_t *ar_tc_create(void)
{
	ar_tcache_t *tc;
	ar_lock(&tc_lock);
	tc = tc_free;
	if (tc) {
		tc_free = tc->next_free;
	} else {
		tc = ar_os_meta_alloc(sizeof *tc);
		if (tc) {
			tc->next = tc_all;
			tc_all = tc;
		}
	}
	if (tc)
		tc->live = 1;
	ar_unlock(&tc_lock);
	if (!tc)
		return NULL;
	for (unsigned c = 0; c < AR_SC_COUNT; c++) {
		tc->bins[c].block_bytes = (uint32_t)ar_sc_size(c);
		tc->bins[c].limit = 2 * ar_tc_batch[c];
	}
	/* Publish before pthread_setspecific, which may call calloc (for keys
	 * beyond the first 32) and so re-enter us: the re-entry finds the cache. */
	ar_tc_self = tc;
	if (tc_key_ok)
		pthread_setspecific(tc_key, tc);
	return tc;
}

void *ar_tc_refill(ar_tcache_t *tc, unsigned cls)
{
	void *head;
	unsigned n = ar_pool_alloc_batch(cls, ar_tc_batch[cls], &head);
	if (n == 0)
		return NULL;
	tc_bin_t *b = &tc->bins[cls];
	/* The bin was empty: the batch minus the returned block becomes it. */
	b->head = *(void **)head;
	tc_set_count(b, n - 1);
	tc->cached_bytes += (size_t)(n - 1) * b->block_bytes;
	tc_bump(&tc->misses);
	tc_add(&tc->moved_in[cls], n);
	return head;
}

/* Give the first n blocks of bin cls back to the central heap. */
static void flush(ar_tcache_t *tc, unsigned cls, uint32_t n)
{
	tc_bin_t *b = &tc->bins[cls];
	if (n == 0)
		return;
	void *head = b->head, *tail = head;
	for (uint32_t i = 1; i < n; i++)
		tail = *(void **)tail;
	b->head = *(void **)tail;
	tc_set_count(b, tc_get_count(b) - n);
	tc->cached_bytes -= (size_t)n * b->block_bytes;
	ar_pool_free_batch(cls, head, tail, n);
	tc_add(&tc->moved_out[cls], n);
	tc_bump(&tc->flushes);
}

void ar_tc_overflow(ar_tcache_t *tc, unsigned cls)
{
	tc_bin_t *b = &tc->bins[cls];
	if (tc_get_count(b) > b->limit)
		flush(tc, cls, ar_tc_batch[cls]);
	if (tc->cached_bytes <= ar_tc_cap)
		return;
	/* Mallocs took blocks without taking them off cached_bytes: count. */
	size_t exact = 0;
	for (unsigned c = 0; c < ar_pool_nclasses; c++)
		exact += (size_t)tc_get_count(&tc->bins[c]) * tc->bins[c].block_bytes;
	tc->cached_bytes = exact;
	/* Within an eighth of the cap counts as over, so that a cache
	 * hovering just below it is not recounted on every free. */
	if (exact > ar_tc_cap - ar_tc_cap / 8) {
		/* Over the per-thread cap: halve every bin, so memory parked in
		 * classes this thread stopped using goes back too. */
		for (unsigned c = 0; c < ar_pool_nclasses && tc->cached_bytes > ar_tc_cap / 2; c++) {
			uint32_t k = tc_get_count(&tc->bins[c]);
			flush(tc, c, (k + 1) / 2);
		}
	}
}

/* pthread key destructor: the thread is exiting. */
static void tc_exit(void *arg)
{
	ar_tcache_t *tc = arg;
	for (unsigned c = 0; c < ar_pool_nclasses; c++)
		flush(tc, c, tc_get_count(&tc->bins[c]));
	ar_tc_self = TC_DEAD;
	ar_lock(&tc_lock);
	tc->live = 0;
	tc->next_free = tc_free;
	tc_free = tc;
	ar_unlock(&tc_lock);
}

void ar_tc_stats(ar_alloc_stats_t *out, uint64_t cached[AR_SC_COUNT], uint64_t allocs[AR_SC_COUNT],
		 int64_t *padding)
{
	ar_lock(&tc_lock);
	for (ar_tcache_t *tc = tc_all; tc; tc = tc->next) {
		for (unsigned c = 0; c < AR_SC_COUNT; c++) {
			uint32_t count = __atomic_load_n(&tc->bins[c].count, __ATOMIC_RELAXED);
			uint64_t frees = __atomic_load_n(&tc->bins[c].frees, __ATOMIC_RELAXED);
			uint64_t in = atomic_load_explicit(&tc->moved_in[c], memory_order_relaxed);
			uint64_t out_ = atomic_load_explicit(&tc->moved_out[c], memory_order_relaxed);
			cached[c] += count;
			/* read while the owner runs, the four may be from different
			 * instants: clamp, the quiescent figure is exact */
			allocs[c] += frees + in > out_ + count ? frees + in - out_ - count : 0;
			out->frees_total += frees;
		}
		out->cache_misses += atomic_load_explicit(&tc->misses, memory_order_relaxed);
		out->cache_flushes += atomic_load_explicit(&tc->flushes, memory_order_relaxed);
		*padding += atomic_load_explicit(&tc->padding, memory_order_relaxed);
		out->threads += (uint64_t)tc->live;
	}
	ar_unlock(&tc_lock);
}

void ar_tc_fork_prepare(void)
{
	ar_lock(&tc_lock);
}

void ar_tc_fork_parent(void)
{
	ar_unlock(&tc_lock);
}

void ar_tc_fork_child(void)
{
	ar_lock_reinit(&tc_lock);
	/* Only the forking thread exists in the child. The other threads'
	 * caches may have been mid-update when the address space was copied,
	 * so their blocks are not trusted back into the heap: they stay parked
	 * (and counted in bytes_cached), bounded by the per-thread cap. */
	ar_tcache_t *self = ar_tc_self;
	for (ar_tcache_t *tc = tc_all; tc; tc = tc->next)
		if (tc != self)
			tc->live = 0;
}
