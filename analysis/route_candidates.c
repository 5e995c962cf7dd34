/*
 * route_candidates.c — what `alloctrace stats` proposes for allocreplay
 * --route (replayer/route.h): sites whose allocations a pool or an arena
 * of ours might serve better than the general allocator, each printed as
 * the ready --route rule, to be measured, not assumed (Berger et al.,
 * OOPSLA 2002: per-class pools rarely beat a good general allocator;
 * regions can, at a memory cost).
 *
 * A site is a stack id when the trace has stacks, else a requested size
 * (the rule is then size=N). One pass in sequence order over the live set
 * of trace-format/ (the one owner of which block is live), blocks tagged
 * with their site:
 *   pool  — every block of the site has one size, nearly all are freed,
 *           and the site churns: at least RC_CHURN allocations per block
 *           of its peak live count (a free list of that size would recycle
 *           them);
 *   arena — the site's blocks die together: at least RC_BURST of its frees
 *           come right after another free of the same site, with none of
 *           its allocations in between (freed in a burst, as a region is).
 * A site may be both (then both rules are printed: measure both). Without
 * stacks every size is trivially of one size; the pool test then rests on
 * the churn alone.
 * Sites with fewer than RC_MIN_ALLOCS allocations are not worth a rule.
 * Only malloc, calloc and the memalign family count (what --route routes);
 * realloc results are tagged with no site.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_hash.h"
#include "ar_trace.h"
#include "route_candidates.h"

#define RC_MIN_ALLOCS 1000
#define RC_CHURN 10
#define RC_FREED_PCT 90
#define RC_BURST_PCT 75
#define RC_SHOW 5

typedef struct rc_site {
	uint64_t key; /* stack id, or size + 1 without stacks; 0 = empty */
	uint64_t allocs, frees, size, live, peak_live;
	uint64_t burst_frees; /* frees right after a free of this site */
	int fixed;            /* every block had `size` bytes */
	int last_was_free;
} rc_site_t;

typedef struct rc {
	rc_site_t *tab;
	uint64_t cap, n;
	int by_stack;
} rc_t;

/* The sites: common/ar_hash.h's table on the key (0 = empty). */
#define SITE_EMPTY(e) ((e)->key == 0)
#define SITE_KEY(ctx, e) ((e)->key)
AR_HASH_DEFINE(site_tab, rc_site_t, SITE_EMPTY, SITE_KEY, ar_hash_fib)
AR_HASH_DEFINE_GROW(site_tab, rc_site_t, AR_HASH_CALLOC, AR_HASH_FREE)

/* The site of key (non-zero; created empty), or NULL out of memory. */
static rc_site_t *site(rc_t *c, uint64_t key)
{
	if (site_tab_reserve(&c->tab, &c->cap, c->n, 1024, NULL))
		return NULL;
	rc_site_t *s = &c->tab[site_tab_pos(c->tab, c->cap - 1, NULL, key)];
	if (!s->key) {
		*s = (rc_site_t){ .key = key, .fixed = 1 };
		c->n++;
	}
	return s;
}

/* A block left the live set: a free (or realloc) of its site. */
static void released(void *ctx, const ar_live_t *b, const ar_event_t *by)
{
	rc_t *c = ctx;
	if (!b->tag || !by)
		return;
	rc_site_t *s = site(c, b->tag);
	if (!s)
		return;
	s->frees++;
	s->live--;
	s->burst_frees += s->last_was_free;
	s->last_was_free = 1;
}

static int is_alloc(unsigned op)
{
	return op == AR_OP_MALLOC || op == AR_OP_CALLOC || op == AR_OP_POSIX_MEMALIGN ||
	       op == AR_OP_ALIGNED_ALLOC || op == AR_OP_MEMALIGN || op == AR_OP_VALLOC ||
	       op == AR_OP_PVALLOC;
}

/* One event: the site's counters, then the live set. 0 or AR_ENOMEM. */
static int add(rc_t *c, ar_liveset_t *ls, const ar_event_t *e)
{
	uint64_t tag = 0;
	if (is_alloc(e->op) && e->result) {
		uint64_t n = ar_event_request_bytes(e);
		tag = c->by_stack ? e->stack : (n < UINT64_MAX ? n + 1 : 0);
		rc_site_t *s = tag ? site(c, tag) : NULL;
		if (tag && !s)
			return AR_ENOMEM;
		if (s) {
			if (!s->allocs)
				s->size = n;
			s->fixed &= s->size == n;
			s->allocs++;
			if (++s->live > s->peak_live)
				s->peak_live = s->live;
			s->last_was_free = 0;
		}
	}
	return ar_liveset_apply(ls, e, tag);
}

static int by_allocs(const void *a, const void *b)
{
	const rc_site_t *x = *(rc_site_t *const *)a, *y = *(rc_site_t *const *)b;
	return x->allocs < y->allocs ? 1 : x->allocs > y->allocs ? -1 : (x->key > y->key) - (x->key < y->key);
}

static int is_pool(const rc_site_t *s)
{
	return s->allocs >= RC_MIN_ALLOCS && s->fixed && 100 * s->frees >= RC_FREED_PCT * s->allocs &&
	       s->allocs >= RC_CHURN * (s->peak_live ? s->peak_live : 1);
}

static int is_arena(const rc_site_t *s)
{
	return s->allocs >= RC_MIN_ALLOCS && s->frees && 100 * s->burst_frees >= RC_BURST_PCT * s->frees;
}

/* "stack=17" or "size=64" for site s. */
static void selector(const rc_t *c, const rc_site_t *s, char *buf, size_t n)
{
	if (c->by_stack)
		snprintf(buf, n, "stack=%" PRIu64, s->key);
	else
		snprintf(buf, n, "size=%" PRIu64, s->key - 1);
}

static void print(const rc_t *c, rc_site_t **v, uint64_t nv)
{
	printf("\nroute candidates (measure them: allocreplay TRACE -a glibc --route RULE; docs/RESULTS.md, "
	       "\"Routing\")\n");
	int shown = 0;
	for (int pass = 0; pass < 2; pass++) {
		int k = 0;
		for (uint64_t i = 0; i < nv && k < RC_SHOW; i++) {
			const rc_site_t *s = v[i];
			char sel[48], rule[64];
			if (pass == 0 ? !is_pool(s) : !is_arena(s))
				continue;
			selector(c, s, sel, sizeof sel);
			snprintf(rule, sizeof rule, "%s:%s", pass == 0 ? "pool" : "arena", sel);
			if (pass == 0)
				printf("  --route %-28s %" PRIu64 " allocations of %" PRIu64 " B, %.1f%% freed, %.0f per "
				       "block of its peak live count\n", rule, s->allocs, s->size,
				       100.0 * (double)s->frees / (double)s->allocs,
				       (double)s->allocs / (double)(s->peak_live ? s->peak_live : 1));
			else
				printf("  --route %-28s %" PRIu64 " allocations, %.1f%% of its frees in bursts "
				       "(right after another of its frees)\n", rule, s->allocs,
				       100.0 * (double)s->burst_frees / (double)s->frees);
			k++;
			shown++;
		}
	}
	if (!shown)
		printf("  none: no site with >= %d allocations of one size that churns, nor one freed in bursts\n",
		       RC_MIN_ALLOCS);
	if (!c->by_stack)
		printf("  (no stacks in the trace: sites are sizes; allocrec --stacks gives rules by stack)\n");
}

int ar_route_candidates(ar_reader_t *r)
{
	rc_t c = { .by_stack = (ar_reader_header(r)->flags & AR_HDR_STACKS) != 0 };
	ar_liveset_t ls;
	ar_liveset_init(&ls, released, NULL, &c);
	ls.window = (ar_reader_header(r)->flags & AR_HDR_WINDOW) != 0;
	ar_reader_rewind(r);
	ar_event_t e;
	int rc;
	while ((rc = ar_reader_next_merged(r, &e)) == 1)
		if (add(&c, &ls, &e) != 0) {
			rc = AR_ENOMEM;
			break;
		}
	/* A corrupt or truncated tail: the candidates are of the events before it
	 * (the statistics above say so). */
	ar_liveset_free(&ls);
	rc_site_t **v = c.n ? malloc(c.n * sizeof *v) : NULL;
	uint64_t nv = 0;
	for (uint64_t i = 0; v && i < c.cap; i++)
		if (c.tab[i].key)
			v[nv++] = &c.tab[i];
	if (rc != AR_ENOMEM && (v || !c.n)) {
		if (nv) /* qsort's base may not be NULL, even for 0 elements */
			qsort(v, nv, sizeof *v, by_allocs);
		print(&c, v, nv);
	}
	free(v);
	free(c.tab);
	return rc == AR_ENOMEM || (c.n && !v) ? AR_ENOMEM : 0;
}
