/*
 * scen_cache.c — D, mixed lifetimes: a long-lived cache of 2048 entries of
 * 64 B-4 KiB (skewed small) filled first, then a stream of short-lived
 * temporaries of 16-512 B (a FIFO of at most 16: each step frees the oldest
 * or allocates a new one) with, one step in ten, a cache update: an entry
 * evicted and replaced (free, then malloc) or, one update in four, resized
 * by realloc. Invariant: at the end, temporaries are freed first, then the
 * cache in slot order.
 */
#include <stdlib.h>

#include "gen_int.h"

#define CACHE 2048u
#define TEMPS 16u
#define NO_SLOT UINT32_MAX

typedef struct cache {
	uint64_t ptr[CACHE], size[CACHE];
	uint64_t tptr[TEMPS], tsize[TEMPS];
	uint32_t filled, pending, thead, tn, tear;
	int stopping;
} cache_t;

static uint64_t cache_size(ar_gen_ctx_t *c)
{
	uint64_t u = ar_gen_rand(c) % 1000;
	return 64 + u * u * 4032 / 999999; /* 64..4096, mostly small */
}

static int d_init(ar_gen_ctx_t *c)
{
	for (uint32_t t = 0; t < c->nthreads; t++) {
		cache_t *s = calloc(1, sizeof *s);
		c->th[t].state = s;
		if (!s)
			return AR_ENOMEM;
		s->pending = NO_SLOT;
	}
	return 0;
}

static void d_fini(ar_gen_ctx_t *c)
{
	for (uint32_t t = 0; t < c->nthreads; t++)
		free(c->th[t].state);
}

static void cache_put(ar_gen_ctx_t *c, uint32_t t, cache_t *s, uint32_t k)
{
	s->size[k] = cache_size(c);
	s->ptr[k] = ar_gen_malloc(c, t, s->size[k]);
	ar_gen_work(c, t, ar_gen_range(c, 50, 200)); /* fill the entry */
}

static int teardown(ar_gen_ctx_t *c, uint32_t t, cache_t *s)
{
	if (s->tn) {
		ar_gen_free(c, t, s->tptr[s->thead], s->tsize[s->thead]);
		s->thead = (s->thead + 1) % TEMPS;
		s->tn--;
		return 1;
	}
	while (s->tear < s->filled && !s->ptr[s->tear])
		s->tear++;
	if (s->tear == s->filled)
		return 0;
	ar_gen_free(c, t, s->ptr[s->tear], s->size[s->tear]);
	s->ptr[s->tear++] = 0;
	return 1;
}

static int d_step(ar_gen_ctx_t *c, uint32_t t)
{
	cache_t *s = c->th[t].state;
	if (!s->stopping && s->pending == NO_SLOT && ar_gen_stopping(c))
		s->stopping = 1;
	if (s->stopping)
		return teardown(c, t, s);
	if (s->filled < CACHE) {
		cache_put(c, t, s, s->filled++);
		return 1;
	}
	if (s->pending != NO_SLOT) { /* second half of an eviction */
		cache_put(c, t, s, s->pending);
		s->pending = NO_SLOT;
		return 1;
	}
	uint64_t r = ar_gen_rand(c);
	if (r % 10 == 0) {
		uint32_t k = (uint32_t)((r >> 8) % CACHE);
		if ((r >> 40) % 4 == 0) {
			uint64_t size = cache_size(c);
			s->ptr[k] = ar_gen_realloc(c, t, s->ptr[k], s->size[k], size);
			s->size[k] = size;
		} else {
			ar_gen_free(c, t, s->ptr[k], s->size[k]);
			s->ptr[k] = 0;
			s->pending = k;
		}
		return 1;
	}
	if (s->tn && (s->tn == TEMPS || (r >> 20) % 2)) {
		ar_gen_free(c, t, s->tptr[s->thead], s->tsize[s->thead]);
		s->thead = (s->thead + 1) % TEMPS;
		s->tn--;
	} else {
		uint32_t k = (s->thead + s->tn++) % TEMPS;
		s->tsize[k] = 8 * ar_gen_range(c, 2, 64);
		s->tptr[k] = ar_gen_malloc(c, t, s->tsize[k]);
	}
	ar_gen_work(c, t, ar_gen_range(c, 20, 150)); /* use the temporary */
	return 1;
}

const ar_gen_scenario_t ar_gen_d = {
	.name = "D",
	.summary = "mixed lifetimes: long-lived cache of 2048 64 B-4 KiB entries (evicted or realloc'ed 1 step in 10) "
		   "plus 16-512 B temporaries living a few steps, 1 thread",
	.default_threads = 1,
	.min_threads = 1,
	.default_ops = 1000000,
	.init = d_init,
	.fini = d_fini,
	.step = d_step,
};
