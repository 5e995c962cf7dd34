/*
 * livemap.c — open addressing with linear probing and tombstones, rehashed
 * at 50 % load (tombstones counted) so probes stay short under churn; a
 * binary min-heap on seq2 for realloc results not yet acquired.
 */
#include <stdlib.h>

#include "livemap.h"

#define EMPTY 0
#define DELETED 1 /* no heap object lives at address 1 */

void ar_livemap_init(ar_livemap_t *m, ar_live_released_fn released, ar_live_acquired_fn acquired, void *ctx)
{
	*m = (ar_livemap_t){0};
	m->released = released;
	m->acquired = acquired;
	m->ctx = ctx;
}

void ar_livemap_free(ar_livemap_t *m)
{
	free(m->slots);
	free(m->pending);
	*m = (ar_livemap_t){0};
}

static uint64_t hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	return k ^ (k >> 33);
}

static int rehash(ar_livemap_t *m, uint64_t ncap)
{
	ar_live_obj_t *n = calloc(ncap, sizeof *n);
	if (!n)
		return AR_ENOMEM;
	for (uint64_t i = 0; i < m->cap; i++) {
		if (m->slots[i].ptr <= DELETED)
			continue;
		uint64_t j = hash(m->slots[i].ptr) & (ncap - 1);
		while (n[j].ptr)
			j = (j + 1) & (ncap - 1);
		n[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = n;
	m->cap = ncap;
	m->tomb = 0;
	return 0;
}

static ar_live_obj_t *find(const ar_livemap_t *m, uint64_t ptr)
{
	if (!m->cap)
		return NULL;
	for (uint64_t j = hash(ptr) & (m->cap - 1); m->slots[j].ptr != EMPTY; j = (j + 1) & (m->cap - 1))
		if (m->slots[j].ptr == ptr)
			return &m->slots[j];
	return NULL;
}

/* Release o (reported to the caller) and leave a tombstone. */
static void set_live(ar_livemap_t *m, unsigned __int128 v)
{
	m->live_exact = v;
	m->live_bytes = v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

static void release(ar_livemap_t *m, ar_live_obj_t *o, const ar_event_t *by)
{
	set_live(m, m->live_exact - o->bytes);
	if (m->released)
		m->released(m->ctx, o, by);
	o->ptr = DELETED;
	m->len--;
	m->tomb++;
}

static int acquire(ar_livemap_t *m, const ar_live_obj_t *o)
{
	ar_live_obj_t *old = find(m, o->ptr);
	if (old) /* the trace hands out a live address again: the older object is gone */
		release(m, old, NULL);
	if ((m->len + m->tomb + 1) * 2 > m->cap &&
	    rehash(m, m->cap ? (m->len * 4 > m->cap ? m->cap * 2 : m->cap) : 1024))
		return AR_ENOMEM;
	uint64_t j = hash(o->ptr) & (m->cap - 1);
	while (m->slots[j].ptr > DELETED)
		j = (j + 1) & (m->cap - 1);
	if (m->slots[j].ptr == DELETED)
		m->tomb--;
	m->slots[j] = *o;
	m->len++;
	set_live(m, m->live_exact + o->bytes);
	if (m->live_bytes > m->peak_live_bytes) {
		m->peak_live_bytes = m->live_bytes;
		m->peak_seq = o->born_seq;
	}
	if (m->acquired)
		m->acquired(m->ctx, &m->slots[j]);
	return 0;
}

static int pending_push(ar_livemap_t *m, const ar_live_obj_t *o)
{
	if (m->npending == m->pending_cap) {
		uint64_t cap = m->pending_cap ? 2 * m->pending_cap : 64;
		ar_live_obj_t *n = realloc(m->pending, cap * sizeof *n);
		if (!n)
			return AR_ENOMEM;
		m->pending = n;
		m->pending_cap = cap;
	}
	uint64_t i = m->npending++;
	while (i > 0 && m->pending[(i - 1) / 2].born_seq > o->born_seq) {
		m->pending[i] = m->pending[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	m->pending[i] = *o;
	return 0;
}

/* Acquire the pending results whose seq2 is below `before`. */
static int pending_flush(ar_livemap_t *m, uint64_t before)
{
	/* before == UINT64_MAX is the end: a seq2 of 2^64-1 is flushed too. */
	while (m->npending && (m->pending[0].born_seq < before || before == UINT64_MAX)) {
		ar_live_obj_t top = m->pending[0], last = m->pending[--m->npending];
		uint64_t i = 0;
		for (;;) { /* sift `last` down from the root */
			uint64_t c = 2 * i + 1;
			if (c >= m->npending)
				break;
			if (c + 1 < m->npending && m->pending[c + 1].born_seq < m->pending[c].born_seq)
				c++;
			if (m->pending[c].born_seq >= last.born_seq)
				break;
			m->pending[i] = m->pending[c];
			i = c;
		}
		if (m->npending)
			m->pending[i] = last;
		if (acquire(m, &top))
			return AR_ENOMEM;
	}
	return 0;
}

int ar_livemap_finish(ar_livemap_t *m)
{
	return pending_flush(m, UINT64_MAX);
}

int ar_livemap_advance(ar_livemap_t *m, uint64_t seq)
{
	return pending_flush(m, seq);
}

uint64_t ar_event_request_bytes(const ar_event_t *e)
{
	uint64_t r;
	if (e->op == AR_OP_CALLOC || e->op == AR_OP_REALLOCARRAY) /* a real call fails on overflow; */
		return __builtin_mul_overflow(e->count, e->size, &r) ? UINT64_MAX : r; /* a trace may lie */
	if (e->op == AR_OP_FREE)
		return 0;
	return e->size;
}

int ar_livemap_apply(ar_livemap_t *m, const ar_event_t *e, uint64_t aux)
{
	if (pending_flush(m, e->seq))
		return AR_ENOMEM;
	uint64_t ordinal = m->events++;
	int is_realloc = e->op == AR_OP_REALLOC || e->op == AR_OP_REALLOCARRAY;
	/* SPEC 5.5: realloc releases its input when it succeeded, or when it was
	 * realloc(p, 0) returning NULL (glibc frees p). */
	int releases = e->op == AR_OP_FREE || (is_realloc && (e->result || ar_event_request_bytes(e) == 0));
	if (releases && e->ptr) {
		ar_live_obj_t *o = find(m, e->ptr);
		if (o)
			release(m, o, e);
		else
			m->unknown_frees++;
	}
	if (e->op == AR_OP_FREE || !e->result)
		return 0;
	ar_live_obj_t o = {e->result, ar_event_request_bytes(e), e->seq2 ? e->seq2 : e->seq, e->time_ns, ordinal,
			   aux, e->thread, e->stack};
	if (e->seq2) /* SPEC 4: the result is the caller's from seq2 on */
		return pending_push(m, &o);
	return acquire(m, &o);
}

const ar_live_obj_t *ar_livemap_find(const ar_livemap_t *m, uint64_t ptr)
{
	return ptr > DELETED ? find(m, ptr) : NULL;
}

void ar_livemap_each(const ar_livemap_t *m, void (*fn)(void *ctx, const ar_live_obj_t *obj), void *ctx)
{
	for (uint64_t i = 0; i < m->cap; i++)
		if (m->slots[i].ptr > DELETED)
			fn(ctx, &m->slots[i]);
}
