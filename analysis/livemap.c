/*
 * livemap.c — statistics' records of the live objects, on top of the trace
 * library's live set (ar_liveset_t: SPEC 4's realloc rule, SPEC 5.5's
 * releases). Each block of the set is tagged with the index of its record
 * in objs; records of dead objects are reused through a free list, so
 * memory follows the live population. The counters the callers read
 * (live_bytes, peak, len, unknown_frees) are copied from the set before
 * each callback and after each call.
 */
#include <stdlib.h>

#include "livemap.h"

static void sync_counters(ar_livemap_t *m)
{
	m->len = m->set.len;
	m->live_bytes = ar_liveset_live_bytes(&m->set);
	m->peak_live_bytes = m->set.peak_live_bytes;
	m->peak_seq = m->set.peak_seq;
	m->unknown_frees = m->set.unknown_releases;
	m->preexisting_blocks = m->set.preexisting_blocks;
	m->preexisting_bytes = m->set.preexisting_exact > UINT64_MAX ? UINT64_MAX : (uint64_t)m->set.preexisting_exact;
}

void ar_livemap_set_window(ar_livemap_t *m, int window) { m->set.window = window; }

static void on_released(void *ctx, const ar_live_t *b, const ar_event_t *by)
{
	ar_livemap_t *m = ctx;
	sync_counters(m);
	if (m->released)
		m->released(m->ctx, &m->objs[b->tag], by);
	m->free_objs[m->nfree++] = b->tag;
}

static void on_acquired(void *ctx, const ar_live_t *b)
{
	ar_livemap_t *m = ctx;
	sync_counters(m);
	if (m->acquired)
		m->acquired(m->ctx, &m->objs[b->tag]);
}

void ar_livemap_init(ar_livemap_t *m, ar_livemap_released_fn released, ar_livemap_acquired_fn acquired, void *ctx)
{
	*m = (ar_livemap_t){0};
	ar_liveset_init(&m->set, on_released, on_acquired, m);
	m->released = released;
	m->acquired = acquired;
	m->ctx = ctx;
}

void ar_livemap_free(ar_livemap_t *m)
{
	ar_liveset_free(&m->set);
	free(m->objs);
	free(m->free_objs);
	*m = (ar_livemap_t){0};
}

/* A record for a new object: its index, or -1 when memory is short. */
static int64_t obj_new(ar_livemap_t *m)
{
	if (m->nfree)
		return (int64_t)m->free_objs[--m->nfree];
	if (m->nobjs == m->objs_cap) {
		uint64_t cap = m->objs_cap ? 2 * m->objs_cap : 1024;
		ar_live_obj_t *o = realloc(m->objs, cap * sizeof *o);
		if (o)
			m->objs = o;
		uint64_t *f = o ? realloc(m->free_objs, cap * sizeof *f) : NULL;
		if (!f)
			return -1;
		m->free_objs = f;
		m->objs_cap = cap;
	}
	return (int64_t)m->nobjs++;
}

int ar_livemap_finish(ar_livemap_t *m)
{
	int rc = ar_liveset_advance(&m->set, UINT64_MAX);
	sync_counters(m);
	return rc;
}

int ar_livemap_advance(ar_livemap_t *m, uint64_t seq)
{
	int rc = ar_liveset_advance(&m->set, seq);
	sync_counters(m);
	return rc;
}

int ar_livemap_apply(ar_livemap_t *m, const ar_event_t *e, uint64_t aux)
{
	if (ar_livemap_advance(m, e->seq))
		return AR_ENOMEM;
	uint64_t ordinal = m->events++;
	int64_t tag = 0;
	if (e->op != AR_OP_FREE && e->result) { /* what ar_liveset_apply acquires */
		if ((tag = obj_new(m)) < 0)
			return AR_ENOMEM;
		m->objs[tag] = (ar_live_obj_t){e->result, ar_event_request_bytes(e), e->seq2 ? e->seq2 : e->seq,
					       e->time_ns, ordinal, aux, e->thread, e->stack};
	}
	int rc = ar_liveset_apply(&m->set, e, (uint64_t)tag);
	sync_counters(m);
	return rc;
}

const ar_live_obj_t *ar_livemap_find(const ar_livemap_t *m, uint64_t ptr)
{
	ar_live_t b;
	return ar_liveset_find(&m->set, ptr, &b) ? &m->objs[b.tag] : NULL;
}

struct each_ctx {
	const ar_livemap_t *m;
	void (*fn)(void *ctx, const ar_live_obj_t *obj);
	void *ctx;
};

static void each_one(void *ctx, const ar_live_t *b)
{
	struct each_ctx *c = ctx;
	c->fn(c->ctx, &c->m->objs[b->tag]);
}

void ar_livemap_each(const ar_livemap_t *m, void (*fn)(void *ctx, const ar_live_obj_t *obj), void *ctx)
{
	struct each_ctx c = {m, fn, ctx};
	ar_liveset_each(&m->set, each_one, &c);
}
