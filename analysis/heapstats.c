/*
 * heapstats.c — see heapstats.h. Object births and deaths come from the
 * live-object map (livemap.c, over the trace library's live set, which
 * applies SPEC 4's realloc rule); this file only counts. Threads and stack sites are kept in arrays indexed through
 * small lookups; sizes in an open-addressing table.
 */
#include <stdlib.h>
#include <string.h>

#include "ar_hash.h"
#include "heapstats.h"
#include "livemap.h"

static unsigned log2_bucket(uint64_t v)
{
	unsigned b = v ? 63u - (unsigned)__builtin_clzll(v) : 0;
	return b < AR_HS_LOG2 ? b : AR_HS_LOG2 - 1;
}

/* Index tables (common/ar_hash.h), value 0 = empty: thread index -> thread
 * position + 1, stack id -> site position (sites[0] stays unused); the key
 * is read back from the array. Sizes: entries in the table, count 0 = empty. */
#define IDX_EMPTY(e) (*(e) == 0)
#define THREAD_KEY(ctx, e) (((const ar_heapstats_t *)(ctx))->threads[*(e) - 1].index)
#define SITE_KEY(ctx, e) (((const ar_heapstats_t *)(ctx))->sites[*(e)].stack)
#define SIZE_EMPTY(e) ((e)->count == 0)
#define SIZE_KEY(ctx, e) ((e)->size)
AR_HASH_DEFINE(thread_idx, uint32_t, IDX_EMPTY, THREAD_KEY, ar_hash_fib)
AR_HASH_DEFINE_GROW(thread_idx, uint32_t, AR_HASH_CALLOC, AR_HASH_FREE)
AR_HASH_DEFINE(site_idx, uint32_t, IDX_EMPTY, SITE_KEY, ar_hash_fib)
AR_HASH_DEFINE_GROW(site_idx, uint32_t, AR_HASH_CALLOC, AR_HASH_FREE)
AR_HASH_DEFINE(size_tab, ar_hs_size_t, SIZE_EMPTY, SIZE_KEY, ar_hash_fib)
AR_HASH_DEFINE_GROW(size_tab, ar_hs_size_t, AR_HASH_CALLOC, AR_HASH_FREE)

/* The thread of index when it is not the last one seen: looked up, or
 * added. Out of line, so the common case below stays small. */
static __attribute__((noinline)) ar_hs_thread_t *thread_lookup(ar_heapstats_t *s, uint32_t index)
{
	uint64_t h = thread_idx_find(s->thread_hash, s->thread_hash_cap - 1, s, index);
	if (h != AR_HASH_ABSENT)
		return &s->threads[s->last_thread = s->thread_hash[h] - 1];
	if (thread_idx_reserve(&s->thread_hash, &s->thread_hash_cap, s->nthreads, 64, s))
		return NULL;
	if (s->nthreads == s->threads_cap) {
		uint32_t cap = s->threads_cap ? 2 * s->threads_cap : 16;
		ar_hs_thread_t *n = realloc(s->threads, cap * sizeof *n);
		if (!n)
			return NULL;
		s->threads = n;
		s->threads_cap = cap;
	}
	ar_hs_thread_t *t = &s->threads[s->nthreads];
	memset(t, 0, sizeof *t);
	t->index = index;
	s->last_thread = s->nthreads++;
	s->thread_hash[thread_idx_pos(s->thread_hash, s->thread_hash_cap - 1, s, index)] = s->nthreads;
	return t;
}

static inline ar_hs_thread_t *thread_of(ar_heapstats_t *s, uint32_t index)
{
	/* An event's thread is usually the last one seen. */
	uint32_t last = s->last_thread;
	if (last < s->nthreads && s->threads[last].index == index)
		return &s->threads[last];
	return thread_lookup(s, index);
}

/* The site of a stack id seen before, or NULL. */
static ar_hs_site_t *site_find(const ar_heapstats_t *s, uint32_t stack)
{
	uint64_t h = stack ? site_idx_find(s->site_hash, s->site_hash_cap - 1, s, stack) : AR_HASH_ABSENT;
	return h != AR_HASH_ABSENT ? &s->sites[s->site_hash[h]] : NULL;
}

const ar_hs_site_t *ar_heapstats_site(const ar_heapstats_t *s, uint32_t stack)
{
	return site_find(s, stack);
}

/* The site of a stack id, created on first use; NULL for stack 0 or when
 * memory is short. */
static ar_hs_site_t *site_of(ar_heapstats_t *s, uint32_t stack)
{
	if (stack == 0)
		return NULL;
	ar_hs_site_t *site = site_find(s, stack);
	if (site)
		return site;
	uint32_t n = s->nsites ? s->nsites : 1; /* sites[0] stays unused */
	if (n == UINT32_MAX || site_idx_reserve(&s->site_hash, &s->site_hash_cap, n, 64, s))
		return NULL;
	if (n + 1 > s->sites_cap) {
		uint32_t cap = s->sites_cap ? 2 * s->sites_cap : 64;
		ar_hs_site_t *m = cap > s->sites_cap ? realloc(s->sites, (size_t)cap * sizeof *m) : NULL;
		if (!m)
			return NULL;
		memset(m + s->sites_cap, 0, (size_t)(cap - s->sites_cap) * sizeof *m);
		s->sites = m;
		s->sites_cap = cap;
	}
	s->sites[n].stack = stack;
	s->nsites = n + 1;
	s->site_hash[site_idx_pos(s->site_hash, s->site_hash_cap - 1, s, stack)] = n;
	return &s->sites[n];
}

static int count_size(ar_heapstats_t *s, uint64_t size)
{
	if (size_tab_reserve(&s->sizes, &s->sizes_cap, s->nsizes, 1024, NULL))
		return AR_ENOMEM;
	uint64_t j = size_tab_pos(s->sizes, s->sizes_cap - 1, NULL, size);
	if (!s->sizes[j].count)
		s->nsizes++;
	s->sizes[j].size = size;
	s->sizes[j].count++;
	return 0;
}

static void mark_peak(ar_heapstats_t *s)
{
	for (uint32_t i = 0; i < s->nsites; i++)
		s->sites[i].live_at_peak = s->sites[i].live_bytes;
	s->peak_marked = 1;
}

/* An object is live: its site's live bytes; in the second pass, the peak. */
static void on_acquire(void *ctx, const ar_live_obj_t *o)
{
	ar_heapstats_t *s = ctx;
	ar_livemap_t *m = s->objects;
	ar_hs_site_t *site = site_find(s, o->stack);
	if (site)
		site->live_bytes += o->bytes;
	s->live_objects++;
	/* The heap now: the window's blocks and the pre-existing ones not yet
	 * released (all of them, known from the first pass, less those so far). */
	if (s->pass2 && !s->peak_marked &&
	    ar_sat_add(m->live_bytes, s->preexisting_bytes - m->preexisting_bytes) == s->peak_live_bytes)
		mark_peak(s);
}

/* An object died: its lifetime, who freed it, what an arena would say. */
static void on_release(void *ctx, const ar_live_obj_t *o, const ar_event_t *by)
{
	ar_heapstats_t *s = ctx;
	ar_hs_site_t *site = site_find(s, o->stack);
	if (site)
		site->live_bytes -= o->bytes;
	s->live_objects--;
	if (!by || s->pass2) /* replaced by a newer object at the same address */
		return;
	s->freed++;
	s->life_ops_log2[log2_bucket(s->events - o->born_event)]++;
	s->life_ns_log2[log2_bucket(by->time_ns > o->born_ns ? by->time_ns - o->born_ns : 0)]++;
	ar_hs_thread_t *t = thread_of(s, by->thread);
	if (by->thread != o->thread) {
		s->cross_thread_frees++;
		if (t)
			t->cross_frees++;
	} else if (t && t->calls - o->aux <= AR_HS_ARENA_OPS) {
		s->arena_friendly++;
	}
}

void ar_heapstats_init(ar_heapstats_t *s, uint64_t expected_events)
{
	memset(s, 0, sizeof *s);
	s->sample_every = expected_events / AR_HS_TIMELINE + 1;
	ar_livemap_t *m = calloc(1, sizeof *m);
	if (m)
		ar_livemap_init(m, on_release, on_acquire, s);
	s->objects = m;
}

void ar_heapstats_free(ar_heapstats_t *s)
{
	if (s->objects)
		ar_livemap_free(s->objects);
	free(s->objects);
	free(s->threads);
	free(s->thread_hash);
	free(s->sizes);
	free(s->sites);
	free(s->site_hash);
	memset(s, 0, sizeof *s);
}

static void sample(ar_heapstats_t *s, uint64_t seq, uint64_t t)
{
	if (s->ntimeline < AR_HS_TIMELINE)
		s->timeline[s->ntimeline++] = (ar_hs_sample_t){seq, t, s->live_bytes, s->live_objects};
}

int ar_heapstats_add(ar_heapstats_t *s, const ar_event_t *e)
{
	ar_livemap_t *m = s->objects;
	if (!m)
		return AR_ENOMEM;
	ar_livemap_set_window(m, s->window);
	if (s->pass2)
		return ar_livemap_apply(m, e, 0);
	ar_hs_thread_t *t = thread_of(s, e->thread);
	if (!t)
		return AR_ENOMEM;
	s->events++;
	s->calls_by_op[e->op]++;
	s->last_time_ns = e->time_ns;
	if (t->calls++ == 0)
		t->first_ns = e->time_ns;
	t->last_ns = e->time_ns;

	uint64_t req = ar_event_request_bytes(e);
	unsigned f = ar_op_fields(e->op);
	int allocates = (f & AR_F_RESULT) != 0;
	if (e->op == AR_OP_FREE) {
		t->frees++;
		s->frees++;
		s->free_null += e->ptr == 0;
	}
	if (e->op == AR_OP_REALLOC || e->op == AR_OP_REALLOCARRAY) {
		if (ar_livemap_advance(m, e->seq))
			return AR_ENOMEM;
		const ar_live_obj_t *old = e->ptr ? ar_livemap_find(m, e->ptr) : NULL;
		if (!e->ptr) {
			s->realloc_from_null++;
		} else if (req == 0) {
			s->realloc_to_zero++;
		} else if (old && e->result) {
			s->realloc_in_place += e->result == e->ptr;
			if (req > old->bytes) {
				s->realloc_grow++;
				double r = old->bytes ? (double)req / (double)old->bytes : 1e9;
				s->realloc_factor[r <= 1.25 ? 0 : r <= 1.5 ? 1 : r <= 2 ? 2 : r <= 4 ? 3 : 4]++;
			} else if (req < old->bytes) {
				s->realloc_shrink++;
			} else {
				s->realloc_same++;
			}
		}
	}
	if (allocates && e->result) {
		s->allocs++;
		t->allocs++;
		t->bytes = ar_sat_add(t->bytes, req);
		s->requested_bytes = ar_sat_add(s->requested_bytes, req);
		s->size_log2[log2_bucket(req)]++;
		s->small_allocs += req <= AR_HS_SMALL;
		if (count_size(s, req))
			return AR_ENOMEM;
		ar_hs_site_t *site = site_of(s, e->stack);
		if (e->stack && !site)
			return AR_ENOMEM;
		if (site) {
			site->calls++;
			site->bytes = ar_sat_add(site->bytes, req);
		}
	} else if (allocates && req) {
		s->failed++;
	}
	uint64_t before_unknown = m->unknown_frees;
	if (ar_livemap_apply(m, e, t->calls))
		return AR_ENOMEM;
	s->unknown_frees += m->unknown_frees - before_unknown;
	s->preexisting_blocks = m->preexisting_blocks;
	s->preexisting_bytes = m->preexisting_bytes;
	s->live_bytes = m->live_bytes;
	if (m->peak_live_bytes > s->peak_live_bytes) {
		/* A pre-existing block raises the peak without moving it in time. */
		if (m->peak_seq != s->peak_seq || !s->peak_live_bytes)
			s->peak_time_ns = m->peak_seq ? e->time_ns : 0;
		s->peak_live_bytes = m->peak_live_bytes;
		s->peak_seq = m->peak_seq;
	}
	if (s->events % s->sample_every == 0)
		sample(s, e->seq, e->time_ns);
	return 0;
}

static void count_never_freed(void *ctx, const ar_live_obj_t *o)
{
	ar_heapstats_t *s = ctx;
	s->never_freed++;
	s->never_freed_bytes += o->bytes;
}

int ar_heapstats_finish(ar_heapstats_t *s)
{
	ar_livemap_t *m = s->objects;
	if (!m || ar_livemap_finish(m))
		return AR_ENOMEM;
	if (s->pass2)
		return 0;
	s->live_bytes = m->live_bytes;
	if (m->peak_live_bytes > s->peak_live_bytes) {
		s->peak_live_bytes = m->peak_live_bytes;
		s->peak_seq = m->peak_seq;
	}
	if (!s->peak_seq)
		s->peak_time_ns = 0;
	ar_livemap_each(m, count_never_freed, s);
	if (s->ntimeline == 0 || s->timeline[s->ntimeline - 1].time_ns != s->last_time_ns) {
		if (s->ntimeline == AR_HS_TIMELINE)
			s->ntimeline--;
		sample(s, 0, s->last_time_ns);
	}
	return 0;
}

void ar_heapstats_rewind(ar_heapstats_t *s)
{
	ar_livemap_t *m = s->objects;
	ar_livemap_free(m);
	ar_livemap_init(m, on_release, on_acquire, s);
	for (uint32_t i = 0; i < s->nsites; i++)
		s->sites[i].live_bytes = 0;
	s->live_objects = 0;
	s->pass2 = 1;
	s->peak_marked = 0;
}

static int by_count_desc(const void *a, const void *b)
{
	const ar_hs_size_t *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->size < y->size ? -1 : x->size > y->size;
}

const ar_hs_size_t *ar_heapstats_top_sizes(ar_heapstats_t *s, uint64_t *n)
{
	*n = 0;
	if (!s->sizes) /* no allocation was counted: no table to compact */
		return s->sizes;
	/* Compact the table (it is not used for lookups after the pass). */
	uint64_t k = 0;
	for (uint64_t i = 0; i < s->sizes_cap; i++)
		if (s->sizes[i].count)
			s->sizes[k++] = s->sizes[i];
	memset(s->sizes + k, 0, (s->sizes_cap - k) * sizeof *s->sizes);
	qsort(s->sizes, k, sizeof *s->sizes, by_count_desc);
	*n = k;
	return s->sizes;
}

static int by_size(const void *a, const void *b)
{
	const ar_hs_size_t *x = a, *y = b;
	return x->size < y->size ? -1 : x->size > y->size;
}

uint64_t ar_heapstats_size_percentile(ar_heapstats_t *s, double p)
{
	uint64_t n;
	ar_heapstats_top_sizes(s, &n);
	if (n == 0)
		return 0;
	ar_hs_size_t *copy = malloc(n * sizeof *copy);
	if (!copy)
		return 0;
	memcpy(copy, s->sizes, n * sizeof *copy);
	qsort(copy, n, sizeof *copy, by_size);
	uint64_t total = 0, acc = 0, r = copy[n - 1].size;
	for (uint64_t i = 0; i < n; i++)
		total += copy[i].count;
	for (uint64_t i = 0; i < n; i++) {
		acc += copy[i].count;
		if ((double)acc >= p * (double)total) {
			r = copy[i].size;
			break;
		}
	}
	free(copy);
	return r;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int ar_heapstats_rss(const ar_reader_t *r, ar_hs_rss_t *out)
{
	memset(out, 0, sizeof *out);
	uint32_t n = ar_reader_rss_count(r);
	if (n == 0)
		return 0;
	uint64_t *v = malloc((size_t)n * sizeof *v);
	if (!v)
		return AR_ENOMEM;
	out->n = n;
	out->min_bytes = UINT64_MAX;
	for (uint32_t i = 0; i < n; i++) {
		const ar_rss_sample_t *x = ar_reader_rss_at(r, i);
		v[i] = x->rss_bytes;
		if (x->rss_bytes < out->min_bytes)
			out->min_bytes = x->rss_bytes;
		if (i == 0 || x->rss_bytes > out->peak_bytes) {
			out->peak_bytes = x->rss_bytes;
			out->peak_time_ns = x->time_ns;
			out->peak_seq = x->seq;
		}
	}
	qsort(v, n, sizeof *v, cmp_u64);
	out->median_bytes = v[(n - 1) / 2];
	free(v);
	out->first_time_ns = ar_reader_rss_at(r, 0)->time_ns;
	out->last_time_ns = ar_reader_rss_at(r, n - 1)->time_ns;
	out->npoints = n < AR_HS_RSS_POINTS ? n : AR_HS_RSS_POINTS;
	for (uint32_t k = 0; k < out->npoints; k++) {
		uint32_t i = out->npoints > 1 ? (uint32_t)((uint64_t)k * (n - 1) / (out->npoints - 1)) : 0;
		out->points[k] = *ar_reader_rss_at(r, i);
	}
	return 0;
}
