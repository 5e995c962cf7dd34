/*
 * map_cache.c — the bounded cache of freed large mappings (map_cache.h).
 *
 * Why: a block above an allocator's largest class owns its mapping. Without
 * a cache every free is a munmap and every allocation an mmap whose pages
 * the program then faults in one by one (zeroed by the kernel): 0.10-0.16x
 * of glibc's throughput on 1-10 MB buffers (docs/BENCHMARKS.md). Keeping a
 * few freed mappings and handing them out again skips both the system calls
 * and the faults, since their pages are still resident.
 *
 * Why this bound: cached pages are resident memory the program does not
 * use, so the cache may hold at most a multiple of what is live in large
 * blocks (default 2x: a program with 10 MB of live buffers may keep 20 MB
 * more, one with none keeps nothing) and never more than a fixed cap
 * (64 MiB, what glibc's default trim threshold can keep at its heap top at
 * most). Measured on the 1-10 MB buffers of S4 (docs/BENCHMARKS.md): 0.5x
 * of live left most frees unmapped and gained little, 2x gets most of the
 * speed with a peak RSS still below glibc's, 4x matches glibc's RSS. The
 * oldest entry goes first: it is the least likely to match the sizes the
 * program uses now.
 *
 * Why no splitting: a larger cached mapping serving a smaller request is
 * trimmed (its tail unmapped), not split into two entries, and only when it
 * is at most twice the request (a 2 MiB mapping is kept for the next 2 MiB
 * block rather than cut down for a 64 KiB one); a smaller one is grown with
 * mremap only when it covers at least half the request, so at most half of
 * the pages are faulted fresh. Entries therefore never fragment into pieces
 * nobody asks for.
 *
 * Invariants (under mc_lock): cached == sum of slot lengths; n entries in
 * slots[0..n); live counts handed-out bytes; no system call is made while
 * mc_lock is held.
 */
#include "map_cache.h"

#include <errno.h>
#include <string.h>

#include "lock.h"
#include "os.h"
#include "tunables.h"
#include "util.h"

typedef struct mc_slot {
	char *p;
	size_t len;
	uint64_t stamp; /* when it was put: the smallest is evicted first */
} mc_slot_t;

static ar_lock_t mc_lock = AR_LOCK_INIT;
static mc_slot_t slots[AR_MCACHE_SLOTS];
static unsigned n;
static uint64_t clock_, live, cached, cached_peak;
static uint64_t hits, misses, evictions, rejected;
static size_t max_bytes, live_pct;

#ifdef AR_ALLOC_DEBUG
#define MC_DEFAULT_MAX ((size_t)0)
#else
#define MC_DEFAULT_MAX ((size_t)64 << 20)
#endif

void ar_mcache_init(void)
{
	max_bytes = ar_tunable_size("ALLOCRR_LARGE_CACHE_MAX", MC_DEFAULT_MAX, 0, (size_t)1 << 40);
	live_pct = ar_tunable_size("ALLOCRR_LARGE_CACHE_PCT", 200, 0, 1000);
}

/* The most the cache may hold now. Under mc_lock. */
static uint64_t bound(void)
{
	uint64_t b = live / 100 * live_pct + live % 100 * live_pct / 100;
	return b < max_bytes ? b : max_bytes;
}

static void take(unsigned i)
{
	cached -= slots[i].len;
	slots[i] = slots[--n];
}

/* Take the oldest cached mapping out of the cache and return it (the
 * caller unmaps it after dropping the lock). Lock held, n > 0. */
static mc_slot_t evict_oldest(void)
{
	unsigned o = 0;
	for (unsigned i = 1; i < n; i++)
		if (slots[i].stamp < slots[o].stamp)
			o = i;
	mc_slot_t v = slots[o];
	take(o);
	evictions++;
	return v;
}

void *ar_mcache_get(size_t len, size_t align, int *fresh)
{
	mc_slot_t e = { 0 };
	ar_lock(&mc_lock);
	int best = -1, grow = -1;
	for (unsigned i = 0; i < n; i++) {
		size_t l = slots[i].len;
		if ((uintptr_t)slots[i].p & (align - 1))
			continue;
		if (l >= len) {
			if (l / 2 <= len && (best < 0 || l < slots[best].len))
				best = (int)i;
		} else if (l >= len / 2 && (grow < 0 || l > slots[grow].len)) {
			grow = (int)i;
		}
	}
	int pick = best >= 0 ? best : grow;
	if (pick >= 0) {
		e = slots[pick];
		take((unsigned)pick);
		hits++;
	} else {
		misses++;
	}
	ar_unlock(&mc_lock);

	char *p = NULL;
	*fresh = 0;
	if (e.p && e.len >= len) {
		if (e.len > len)
			ar_os_unmap(e.p + len, e.len - len);
		p = e.p;
	} else if (e.p) {
		p = ar_mcache_resize(e.p, e.len, len, align);
		if (p) /* resize counted the growth; the rest becomes live below */
			len = e.len;
		else
			ar_os_unmap(e.p, e.len);
	}
	if (!p) {
		p = ar_os_map_aligned(len, align);
		if (!p)
			return NULL;
		*fresh = 1;
	}
	ar_mcache_adopt(len);
	return p;
}

void ar_mcache_adopt(size_t len)
{
	ar_lock(&mc_lock);
	live += len;
	ar_unlock(&mc_lock);
}

void ar_mcache_put(void *p, size_t len)
{
	mc_slot_t victims[AR_MCACHE_SLOTS + 1];
	unsigned nv = 0;
	ar_lock(&mc_lock);
	live -= len;
	uint64_t b = bound();
	if (len <= b) {
		if (n == AR_MCACHE_SLOTS) /* full: the oldest makes room */
			victims[nv++] = evict_oldest();
		slots[n++] = (mc_slot_t){ (char *)p, len, ++clock_ };
		cached += len;
	} else {
		victims[nv++] = (mc_slot_t){ (char *)p, len, 0 };
		rejected++;
	}
	/* live shrank, so the bound may have too: evict oldest first. */
	while (cached > b)
		victims[nv++] = evict_oldest();
	if (cached > cached_peak)
		cached_peak = cached;
	ar_unlock(&mc_lock);
	for (unsigned i = 0; i < nv; i++)
		ar_os_unmap(victims[i].p, victims[i].len); /* keeps errno */
}

void *ar_mcache_resize(void *p, size_t old_len, size_t new_len, size_t align)
{
	if (ar_os_resize(p, old_len, new_len) != 0) {
		p = ar_os_move(p, old_len, new_len, align);
		if (!p)
			return NULL;
	}
	ar_lock(&mc_lock);
	live += new_len;
	live -= old_len;
	ar_unlock(&mc_lock);
	return p;
}

void ar_mcache_info(ar_mcache_info_t *out)
{
	ar_lock(&mc_lock);
	*out = (ar_mcache_info_t){
		.max_bytes = max_bytes,
		.live_pct = live_pct,
		.live_bytes = live,
		.cached_bytes = cached,
		.cached_peak = cached_peak,
		.entries = n,
		.hits = hits,
		.misses = misses,
		.evictions = evictions,
		.rejected = rejected,
	};
	ar_unlock(&mc_lock);
}

void ar_mcache_stats(ar_alloc_stats_t *out)
{
	ar_lock(&mc_lock);
	out->bytes_cached += cached;
	ar_unlock(&mc_lock);
}

void ar_mcache_fork_prepare(void)
{
	ar_lock(&mc_lock);
}

void ar_mcache_fork_parent(void)
{
	ar_unlock(&mc_lock);
}

void ar_mcache_fork_child(void)
{
	ar_lock_reinit(&mc_lock);
}
