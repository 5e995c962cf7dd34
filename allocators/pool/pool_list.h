/*
 * pool_list.h — a size class's list of free blocks, shared by every thread
 * without a lock: a Treiber stack whose head is one 16-byte word
 * {top, pops, pushes} changed by one double-width compare-and-swap.
 *
 * Why no lock: with a mutex every malloc and free paid a lock and an unlock
 * (two atomic read-modify-writes, 78 % of pool's cycles on one thread), and
 * with more threads than cores a thread preempted while holding a class's
 * lock stalled every thread of that class for a time slice (pool's p99 went
 * from 0.3 to 3.6 us on a 2-core machine running 4 replay threads). A pop or
 * push here is one atomic instruction, and a preempted thread holds nothing.
 *
 * Safety of the pop: it reads the first word of the top block before the
 * swap, while another thread may have popped that block and be writing to
 * it. That read is harmless because pool chunks are never unmapped (the
 * block's memory stays readable) and a stale value never lands: every pop
 * increments `pops`, so a head that changed in between — even back to the
 * same top block (ABA) — fails the swap. The tag would repeat only after
 * 2^32 pops during one pop's few instructions.
 *
 * Counters: pops (mod 2^32) and pushes (mod 2^32, a batch adds its count)
 * live in the head, so they are exact with no extra atomic: blocks on the
 * list = pushes - pops (mod 2^32, exact below 2^32 free blocks per class);
 * the caller counts the wraps of pops (pool_list_pop says when one happened)
 * to keep a 64-bit total. Readers of statistics load the head with two
 * plain loads; a torn read is only a statistic off for an instant.
 *
 * The double-width swap is x86-64's cmpxchg16b, which the first x86-64
 * CPUs lacked: it is used only when CPUID lists it (pool_list_probe, at
 * the heap's start-up; valgrind's CPUID lists it and valgrind decodes it).
 * Otherwise — another architecture, such a CPU, or a build with
 * -DAR_POOL_LIST_LOCKED to test that path — the same interface runs under
 * a mutex, the list's own. The choice is made once, before any list is
 * used, and never changes.
 *
 * One thread: while the process has a single thread (single_thread.h) no
 * other thread can read or write a head, so pop, push and take-all are plain
 * loads and stores of the same fields, with the same counters: glibc's
 * tcache needs no atomic either, and on one thread the swap was most of a
 * pool malloc's cost (A: 0.57x glibc's throughput with it).
 */
#ifndef AR_ALLOC_POOL_LIST_H
#define AR_ALLOC_POOL_LIST_H

#include <stdint.h>

#include "lock.h"
#include "single_thread.h"

typedef struct pool_head {
	void *top;
	uint32_t pops, pushes;
} __attribute__((aligned(16))) pool_head_t;

typedef struct pool_list {
	pool_head_t head;
	ar_lock_t lock; /* the locked path's only */
} pool_list_t;

#if defined(__x86_64__) && !defined(AR_POOL_LIST_LOCKED)
#define POOL_LIST_CAS 1
#include <cpuid.h>

/* 1 when the lists go without a lock (pool_list_probe). */
extern int ar_pool_list_lockfree;

/* Decide, once, before any list is used: the swap when CPUID lists
 * cmpxchg16b (leaf 1, ECX bit 13). */
static inline void pool_list_probe(void)
{
	unsigned a, b, c = 0, d;
	ar_pool_list_lockfree = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_CMPXCHG16B);
}

/* ThreadSanitizer does not see inside the asm below: tell it the swap is an
 * acquire-release operation on the head. */
#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define POOL_TSAN_RELEASE(a) __tsan_release(a)
#define POOL_TSAN_ACQUIRE(a) __tsan_acquire(a)
#else
#define POOL_TSAN_RELEASE(a) ((void)(a))
#define POOL_TSAN_ACQUIRE(a) ((void)(a))
#endif

/* One atomic 16-byte compare-and-swap: if *h equals *expect, store want and
 * return 1; otherwise load *h into *expect and return 0. */
static inline int pool_head_cas(pool_head_t *h, pool_head_t *expect, pool_head_t want)
{
	uint64_t lo = (uint64_t)(uintptr_t)expect->top;
	uint64_t hi = (uint64_t)expect->pops | (uint64_t)expect->pushes << 32;
	uint64_t wlo = (uint64_t)(uintptr_t)want.top;
	uint64_t whi = (uint64_t)want.pops | (uint64_t)want.pushes << 32;
	unsigned char ok;
	POOL_TSAN_RELEASE(h);
	__asm__ __volatile__("lock cmpxchg16b %1\n\tsete %0"
			     : "=q"(ok), "+m"(*h), "+a"(lo), "+d"(hi)
			     : "b"(wlo), "c"(whi)
			     : "memory", "cc");
	POOL_TSAN_ACQUIRE(h);
	if (!ok) {
		expect->top = (void *)(uintptr_t)lo;
		expect->pops = (uint32_t)hi;
		expect->pushes = (uint32_t)(hi >> 32);
	}
	return ok;
}

/* A snapshot of the head; may be torn (then the next swap fails and
 * reloads it). */
static inline pool_head_t pool_head_load(const pool_head_t *h)
{
	pool_head_t v;
	v.top = __atomic_load_n(&h->top, __ATOMIC_ACQUIRE);
	v.pops = __atomic_load_n(&h->pops, __ATOMIC_RELAXED);
	v.pushes = __atomic_load_n(&h->pushes, __ATOMIC_RELAXED);
	return v;
}

/* Pop one block into *out (NULL when the list is empty). Returns 1 when this
 * pop wrapped the 32-bit pops counter, else 0. */
static inline int list_pop_cas(pool_list_t *l, void **out)
{
	pool_head_t old = pool_head_load(&l->head), want;
	for (;;) {
		if (!old.top) {
			*out = NULL;
			return 0;
		}
		want.top = __atomic_load_n((void **)old.top, __ATOMIC_RELAXED);
		want.pops = old.pops + 1;
		want.pushes = old.pushes;
		if (pool_head_cas(&l->head, &old, want)) {
			*out = old.top;
			return want.pops == 0;
		}
	}
}

/* Push the n blocks linked from first to last (last's link is overwritten). */
static inline void list_push_cas(pool_list_t *l, void *first, void *last, uint32_t n)
{
	pool_head_t old = pool_head_load(&l->head), want;
	do {
		__atomic_store_n((void **)last, old.top, __ATOMIC_RELAXED);
		want.top = first;
		want.pops = old.pops;
		want.pushes = old.pushes + n;
	} while (!pool_head_cas(&l->head, &old, want));
}

/*
 * Take the whole list in one swap when it holds at most max blocks: *out gets
 * its top (the blocks stay linked, the last one's link NULL) and the count
 * is returned; 0 (and the list untouched) when it is empty or longer. Sets
 * *wrapped when the pops counter wrapped.
 */
static inline uint32_t list_take_all_cas(pool_list_t *l, uint32_t max, void **out, int *wrapped)
{
	pool_head_t old = pool_head_load(&l->head), want;
	for (;;) {
		uint32_t n = old.pushes - old.pops;
		if (!old.top || n > max)
			return 0;
		want.top = NULL;
		want.pops = old.pops + n;
		want.pushes = old.pushes;
		if (pool_head_cas(&l->head, &old, want)) {
			*out = old.top;
			*wrapped = want.pops < old.pops;
			return n;
		}
	}
}

/* Install the n blocks linked from first (NULL-terminated) as the whole
 * list if the list is empty; 0, changing nothing, when it is not. */
static inline int list_push_if_empty_cas(pool_list_t *l, void *first, uint32_t n)
{
	pool_head_t old = pool_head_load(&l->head), want;
	while (!old.top) {
		want.top = first;
		want.pops = old.pops;
		want.pushes = old.pushes + n;
		if (pool_head_cas(&l->head, &old, want))
			return 1;
	}
	return 0;
}

#else
#define POOL_LIST_CAS 0
static inline void pool_list_probe(void)
{
}
#endif

/* ---- the locked path (and what both paths share) ---- */

/* 1 when the lists go without a lock. */
static inline int pool_list_lockfree(void)
{
#if POOL_LIST_CAS
	return __builtin_expect(ar_pool_list_lockfree, 1);
#else
	return 0;
#endif
}

static inline void pool_list_init(pool_list_t *l)
{
	l->head = (pool_head_t){ 0 };
	ar_lock_reinit(&l->lock);
}

/* Pop while the process has one thread: plain loads and stores
 * (single_thread.h). */
static inline int list_pop_alone(pool_list_t *l, void **out)
{
	void *b = l->head.top;
	int wrapped = 0;
	if (b) {
		l->head.top = *(void **)b;
		wrapped = ++l->head.pops == 0;
	}
	*out = b;
	return wrapped;
}

static inline void pool_list_push(pool_list_t *l, void *first, void *last, uint32_t n)
{
	if (ar_one_thread()) {
		*(void **)last = l->head.top;
		l->head.top = first;
		l->head.pushes += n;
		return;
	}
#if POOL_LIST_CAS
	if (pool_list_lockfree()) {
		list_push_cas(l, first, last, n);
		return;
	}
#endif
	ar_lock(&l->lock);
	*(void **)last = l->head.top;
	l->head.top = first;
	l->head.pushes += n;
	ar_unlock(&l->lock);
}

static inline uint32_t pool_list_take_all(pool_list_t *l, uint32_t max, void **out, int *wrapped)
{
	int one = ar_one_thread();
#if POOL_LIST_CAS
	if (!one && pool_list_lockfree())
		return list_take_all_cas(l, max, out, wrapped);
#endif
	uint32_t n = 0;
	if (!one)
		ar_lock(&l->lock);
	if (l->head.top && l->head.pushes - l->head.pops <= max) {
		n = l->head.pushes - l->head.pops;
		*out = l->head.top;
		l->head.top = NULL;
		uint32_t before = l->head.pops;
		l->head.pops += n;
		*wrapped = l->head.pops < before;
	}
	if (!one)
		ar_unlock(&l->lock);
	return n;
}

/*
 * The fast paths alone, for a caller that keeps the locked path out of
 * line (its call would make every pop save registers): pop as
 * pool_list_pop, or push one block, and return -1 (try_pop) or 0
 * (try_push), doing nothing, when only the locked path can do it.
 */
static inline int pool_list_try_pop(pool_list_t *l, void **out)
{
	if (ar_one_thread())
		return list_pop_alone(l, out);
#if POOL_LIST_CAS
	if (pool_list_lockfree())
		return list_pop_cas(l, out);
#endif
	return -1;
}

static inline int pool_list_pop(pool_list_t *l, void **out)
{
	int wrapped = pool_list_try_pop(l, out);
	if (wrapped >= 0)
		return wrapped;
	ar_lock(&l->lock);
	wrapped = list_pop_alone(l, out);
	ar_unlock(&l->lock);
	return wrapped;
}

static inline int pool_list_try_push(pool_list_t *l, void *block)
{
	if (ar_one_thread()) {
		*(void **)block = l->head.top;
		l->head.top = block;
		l->head.pushes++;
		return 1;
	}
#if POOL_LIST_CAS
	if (pool_list_lockfree()) {
		list_push_cas(l, block, block, 1);
		return 1;
	}
#endif
	return 0;
}

/* The n blocks linked from first (NULL-terminated) become the list when it
 * is empty: one swap for a chain whose tail is unknown (a list taken whole
 * from another list). Returns 0, changing nothing, when the list is not
 * empty (then push with the tail). */
static inline int pool_list_push_if_empty(pool_list_t *l, void *first, uint32_t n)
{
	int one = ar_one_thread();
#if POOL_LIST_CAS
	if (!one && pool_list_lockfree())
		return list_push_if_empty_cas(l, first, n);
#endif
	int done = 0;
	if (!one)
		ar_lock(&l->lock);
	if (!l->head.top) {
		l->head.top = first;
		l->head.pushes += n;
		done = 1;
	}
	if (!one)
		ar_unlock(&l->lock);
	return done;
}

/* 1 when the list looked non-empty a moment ago (a hint: one plain load). */
static inline int pool_list_maybe_nonempty(pool_list_t *l)
{
	return __atomic_load_n(&l->head.top, __ATOMIC_RELAXED) != NULL;
}

static inline pool_head_t pool_list_peek(pool_list_t *l)
{
#if POOL_LIST_CAS
	if (pool_list_lockfree())
		return pool_head_load(&l->head);
#endif
	ar_lock(&l->lock);
	pool_head_t v = l->head;
	ar_unlock(&l->lock);
	return v;
}

/* Fork: without a lock the head is one word, always consistent. */
static inline void pool_list_fork_prepare(pool_list_t *l)
{
	if (!pool_list_lockfree())
		ar_lock(&l->lock);
}

static inline void pool_list_fork_parent(pool_list_t *l)
{
	if (!pool_list_lockfree())
		ar_unlock(&l->lock);
}

static inline void pool_list_fork_child(pool_list_t *l)
{
	ar_lock_reinit(&l->lock);
}

/* Blocks on the list (exact when quiescent). */
static inline uint32_t pool_head_count(pool_head_t h)
{
	return h.pushes - h.pops;
}

#endif
