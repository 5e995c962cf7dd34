/*
 * map_cache.c — the bounded cache of freed large mappings (map_cache.h).
 *
 * Why: a block above an allocator's largest class owns its mapping. Without
 * a cache every free is a munmap and every allocation an mmap whose pages
 * the program then faults in one by one (zeroed by the kernel): 0.10-0.16x
 * of glibc's throughput on 1-10 MB buffers (docs/BENCHMARKS.md). Keeping
 * freed mappings and handing them out again skips both the system calls
 * and the faults, since their pages are still resident.
 *
 * Why free ranges, split and merged (issue 19, second version): the first
 * version kept whole mappings and served a request from one between it and
 * twice it, unmapping the excess tail, or grew a smaller one with mremap.
 * With sizes that rarely repeat (1-10 MB uniform) most hits were a munmap
 * (a TLB shootdown) or an mremap whose new pages fault: 0.53-0.74x glibc,
 * which serves such blocks from its heap after its mmap threshold rises.
 * Now the cache is a set of free address ranges: a request takes the
 * smallest range that holds an aligned piece of its length (best fit), the
 * pieces before and after stay free, and a freed mapping merges with the
 * free ranges it touches, so the address space a freed 9 MB block leaves
 * serves a 4 MB and a 5 MB one without a system call, and comes back whole
 * when they are freed. A block that grows takes the free range after it.
 *
 * Why this bound: free ranges are resident memory the program does not
 * use, so the cache may hold at most a multiple of what is live in large
 * blocks (default 2x), never more than a fixed cap (64 MiB, what glibc's
 * default trim threshold can keep at its heap top at most), and live plus
 * cached stay within 125 % of the most ever live (a heap's footprint is
 * about its high-water mark: without this term, the free ranges kept no
 * longer being trimmed at each hit took S4's peak RSS to 1.4x glibc's;
 * with it, the same speed at glibc's RSS; 100 % made an interpreter's
 * bytes churn, whose live bytes hover at their peak, miss and fault again).
 * Beyond it the oldest range gives back its tail (munmap) first: it is the
 * least likely to match the sizes the program uses now, and trimming only
 * the excess keeps the rest usable. With nothing live nothing stays cached.
 * The bound is checked on every put, resize and fresh mapping.
 *
 * Ranges merged from separate mmaps may span several kernel mappings
 * (VMAs); a block carved from one is an ordinary block, except that its
 * realloc cannot mremap it (EFAULT) and copies instead.
 *
 * Invariants (under mc_lock): cached == sum of slot lengths; n entries in
 * slots[0..n); no two ranges overlap or touch; live counts handed-out
 * bytes; no system call is made while mc_lock is held.
 */
#include "map_cache.h"

#include <errno.h>
#include <string.h>

#include "lock.h"
#include "os.h"
#include "tunables.h"
#include "util.h"

/* A free range [p, p + len): page-aligned, page-multiple, mapped, resident
 * or not. Ranges never overlap and never touch (touching ones are merged). */
typedef struct mc_slot {
	char *p;
	size_t len;
	uint64_t stamp; /* when it was last put or merged: the smallest is trimmed first */
} mc_slot_t;

static ar_lock_t mc_lock = AR_LOCK_INIT;
static mc_slot_t slots[AR_MCACHE_SLOTS];
static unsigned n;
static uint64_t clock_, live, live_peak, cached, cached_peak;
static uint64_t hits, misses, evictions, rejected;
static size_t max_bytes, live_pct, peak_pct;

#ifdef AR_ALLOC_DEBUG
#define MC_DEFAULT_MAX ((size_t)0)
#else
#define MC_DEFAULT_MAX ((size_t)64 << 20)
#endif

/* Ranges unmapped after the lock is dropped. One call evicts at most the
 * ranges it inserts into a full table (two) plus what trimming takes (at
 * most every range held, the last one perhaps only in part). */
typedef struct mc_victims {
	mc_slot_t v[AR_MCACHE_SLOTS + 2];
	unsigned n;
} mc_victims_t;

void ar_mcache_init(void)
{
	max_bytes = ar_tunable_size("ALLOCRR_LARGE_CACHE_MAX", MC_DEFAULT_MAX, 0, (size_t)1 << 40);
	live_pct = ar_tunable_size("ALLOCRR_LARGE_CACHE_PCT", 200, 0, 1000);
	peak_pct = ar_tunable_size("ALLOCRR_LARGE_CACHE_PEAK_PCT", 125, 100, 1000);
}

/* Count len more bytes handed out. Under mc_lock. */
static void live_add(size_t len)
{
	live += len;
	if (live > live_peak)
		live_peak = live;
}

/* pct % of x, without overflow for any x. */
static uint64_t pct_of(uint64_t x, uint64_t pct)
{
	return x / 100 * pct + x % 100 * pct / 100;
}

/* The most the cache may hold now (map_cache.h, "Policy"). Under mc_lock. */
static uint64_t bound(void)
{
	uint64_t b = pct_of(live, live_pct);
	uint64_t room = pct_of(live_peak, peak_pct);
	room = room > live ? room - live : 0;
	if (b > room)
		b = room;
	return b < max_bytes ? b : max_bytes;
}

static void take(unsigned i)
{
	cached -= slots[i].len;
	slots[i] = slots[--n];
}

static unsigned oldest(void)
{
	unsigned o = 0;
	for (unsigned i = 1; i < n; i++)
		if (slots[i].stamp < slots[o].stamp)
			o = i;
	return o;
}

/*
 * Add the free range [p, p + len) with the given age, merging it with the
 * ranges that end where it starts and start where it ends (there is at most
 * one of each). When the table is full the oldest range goes to *vic. Under
 * mc_lock; len > 0.
 */
static void insert(char *p, size_t len, uint64_t stamp, mc_victims_t *vic)
{
	for (unsigned i = 0; i < n;) {
		if (slots[i].p + slots[i].len == p) {
			p = slots[i].p;
			len += slots[i].len;
			take(i);
		} else if (p + len == slots[i].p) {
			len += slots[i].len;
			take(i);
		} else {
			i++;
		}
	}
	if (n == AR_MCACHE_SLOTS) {
		unsigned o = oldest();
		vic->v[vic->n++] = slots[o];
		take(o);
		evictions++;
	}
	slots[n++] = (mc_slot_t){ p, len, stamp };
	cached += len;
}

/* Give back to the kernel, oldest range first, whatever the cache holds
 * beyond its bound: the oldest range's tail, or all of it. Under mc_lock. */
static void trim_to_bound(mc_victims_t *vic)
{
	uint64_t b = bound();
	while (cached > b) {
		unsigned o = oldest();
		size_t excess = ar_align_up((size_t)(cached - b), ar_page_size);
		evictions++;
		if (excess >= slots[o].len) {
			vic->v[vic->n++] = slots[o];
			take(o);
		} else {
			slots[o].len -= excess;
			cached -= excess;
			vic->v[vic->n++] = (mc_slot_t){ slots[o].p + slots[o].len, excess, 0 };
		}
	}
	if (cached > cached_peak)
		cached_peak = cached;
}

static void unmap_victims(const mc_victims_t *vic)
{
	for (unsigned i = 0; i < vic->n; i++)
		ar_os_unmap(vic->v[i].p, vic->v[i].len); /* keeps errno */
}

/*
 * Serve len bytes at a multiple of align from the free range e (taken out
 * of the table, shorter than len) plus fresh pages mapped right below or
 * right above it, where nothing is mapped yet. Returns the block, with what
 * is left of e back in the cache; or NULL with e back in the cache.
 */
static char *extend(mc_slot_t e, size_t len, size_t align)
{
	mc_victims_t vic = { .n = 0 };
	char *end = e.p + e.len, *s = NULL, *lo = e.p, *hi = end;
	uintptr_t down = ((uintptr_t)end - len) & ~(uintptr_t)(align - 1);
	if ((uintptr_t)end >= len && down < (uintptr_t)e.p &&
	    ar_os_map_at((char *)down, (size_t)(e.p - (char *)down))) {
		s = (char *)down; /* [s, e.p) is new */
		lo = s;
	} else {
		char *up = (char *)ar_align_up_ptr((uintptr_t)e.p, align);
		if (up + len > end && ar_os_map_at(end, (size_t)(up + len - end))) {
			s = up; /* [end, s + len) is new */
			hi = s + len;
		}
	}
	ar_lock(&mc_lock);
	if (!s) {
		insert(e.p, e.len, e.stamp, &vic);
	} else {
		hits++;
		live_add(len);
		if (s > lo)
			insert(lo, (size_t)(s - lo), e.stamp, &vic);
		if (s + len < hi)
			insert(s + len, (size_t)(hi - (s + len)), e.stamp, &vic);
	}
	trim_to_bound(&vic);
	ar_unlock(&mc_lock);
	unmap_victims(&vic);
	return s;
}

void *ar_mcache_get(size_t len, size_t align, int *fresh)
{
	mc_victims_t vic = { .n = 0 };
	mc_slot_t ext = { 0 };
	char *p = NULL;
	ar_lock(&mc_lock);
	int best = -1;
	for (unsigned i = 0; i < n; i++) {
		char *s = (char *)ar_align_up_ptr((uintptr_t)slots[i].p, align);
		if (s >= slots[i].p + slots[i].len || (size_t)(slots[i].p + slots[i].len - s) < len)
			continue;
		if (best < 0 || slots[i].len < slots[best].len)
			best = (int)i;
	}
	if (best >= 0) {
		mc_slot_t e = slots[best];
		take((unsigned)best);
		p = (char *)ar_align_up_ptr((uintptr_t)e.p, align);
		/* The pieces before and after stay free, with the range's age. */
		if (p > e.p)
			insert(e.p, (size_t)(p - e.p), e.stamp, &vic);
		if (p + len < e.p + e.len)
			insert(p + len, (size_t)(e.p + e.len - (p + len)), e.stamp, &vic);
		live_add(len);
		hits++;
	} else if (n) {
		/* No range is long enough: extend the longest one (below, then
		 * above) into unmapped address space, so only the missing part
		 * faults in fresh — what a heap does when it grows its top. */
		unsigned l = 0;
		for (unsigned i = 1; i < n; i++)
			if (slots[i].len > slots[l].len)
				l = i;
		ext = slots[l];
		take(l);
	}
	ar_unlock(&mc_lock);
	unmap_victims(&vic);

	*fresh = 0;
	if (p)
		return p;
	if (ext.p && (p = extend(ext, len, align)) != NULL)
		return p;
	ar_lock(&mc_lock);
	misses++;
	ar_unlock(&mc_lock);
	vic.n = 0;
	p = ar_os_map_aligned(len, align);
	if (!p)
		return NULL;
	*fresh = 1;
	/* More live, less room under the peak-based bound: trim if needed. */
	ar_lock(&mc_lock);
	live_add(len);
	trim_to_bound(&vic);
	ar_unlock(&mc_lock);
	unmap_victims(&vic);
	return p;
}

void ar_mcache_adopt(size_t len)
{
	ar_lock(&mc_lock);
	live_add(len);
	ar_unlock(&mc_lock);
}

void ar_mcache_put(void *p, size_t len)
{
	mc_victims_t vic = { .n = 0 };
	ar_lock(&mc_lock);
	live -= len;
	if (len <= bound()) {
		insert(p, len, ++clock_, &vic);
	} else {
		vic.v[vic.n++] = (mc_slot_t){ (char *)p, len, 0 };
		rejected++;
	}
	/* live shrank, so the bound may have too. */
	trim_to_bound(&vic);
	ar_unlock(&mc_lock);
	unmap_victims(&vic);
}

void *ar_mcache_resize(void *p, size_t old_len, size_t new_len, size_t align)
{
	char *c = p;
	if (new_len == old_len)
		return p;
	mc_victims_t vic = { .n = 0 };
	if (new_len < old_len) {
		/* The tail becomes a free range like any freed mapping. */
		ar_lock(&mc_lock);
		live -= old_len - new_len;
		insert(c + new_len, old_len - new_len, ++clock_, &vic);
		trim_to_bound(&vic);
		ar_unlock(&mc_lock);
		unmap_victims(&vic);
		return p;
	}
	/* Grow into the free range that starts where the block ends: its pages
	 * are ours already, no system call. */
	size_t need = new_len - old_len;
	ar_lock(&mc_lock);
	for (unsigned i = 0; i < n; i++) {
		if (slots[i].p != c + old_len || slots[i].len < need)
			continue;
		slots[i].p += need;
		slots[i].len -= need;
		cached -= need;
		if (!slots[i].len)
			slots[i] = slots[--n];
		live_add(need);
		hits++;
		ar_unlock(&mc_lock);
		return p;
	}
	ar_unlock(&mc_lock);
	if (ar_os_resize(p, old_len, new_len) != 0) {
		p = ar_os_move(p, old_len, new_len, align);
		if (!p)
			return NULL;
	}
	ar_lock(&mc_lock);
	live_add(need);
	ar_unlock(&mc_lock);
	return p;
}

void ar_mcache_info(ar_mcache_info_t *out)
{
	ar_lock(&mc_lock);
	*out = (ar_mcache_info_t){
		.max_bytes = max_bytes,
		.live_pct = live_pct,
		.peak_pct = peak_pct,
		.live_bytes = live,
		.live_peak = live_peak,
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
