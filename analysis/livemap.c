/*
 * livemap.c — open addressing with linear probing and tombstones; rehash at
 * 50 % load (counting tombstones) so probes stay short under churn.
 */
#include <stdlib.h>

#include "livemap.h"

#define TOMB UINT64_MAX

void ar_livemap_init(ar_livemap_t *m) { *m = (ar_livemap_t){0}; }

void ar_livemap_free(ar_livemap_t *m)
{
	free(m->keys);
	free(m->vals);
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
	uint64_t *k = calloc(ncap, sizeof *k), *v = calloc(ncap, sizeof *v);
	if (!k || !v) {
		free(k);
		free(v);
		return AR_ENOMEM;
	}
	for (uint64_t i = 0; i < m->cap; i++) {
		if (m->keys[i] == 0 || m->keys[i] == TOMB)
			continue;
		uint64_t j = hash(m->keys[i]) & (ncap - 1);
		while (k[j])
			j = (j + 1) & (ncap - 1);
		k[j] = m->keys[i];
		v[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = k;
	m->vals = v;
	m->cap = ncap;
	m->tomb = 0;
	return 0;
}

static int put(ar_livemap_t *m, uint64_t key, uint64_t val)
{
	if ((m->len + m->tomb + 1) * 2 > m->cap && rehash(m, m->cap ? (m->len * 4 > m->cap ? m->cap * 2 : m->cap) : 1024))
		return AR_ENOMEM;
	uint64_t j = hash(key) & (m->cap - 1), slot = UINT64_MAX;
	for (; m->keys[j]; j = (j + 1) & (m->cap - 1)) {
		if (m->keys[j] == key) { /* the trace reuses a live address: keep the newer */
			m->live_bytes -= m->vals[j];
			m->vals[j] = val;
			return 0;
		}
		if (m->keys[j] == TOMB && slot == UINT64_MAX)
			slot = j;
	}
	if (slot == UINT64_MAX)
		slot = j;
	else
		m->tomb--;
	m->keys[slot] = key;
	m->vals[slot] = val;
	m->len++;
	return 0;
}

/* Remove key; returns its value via *val, or 0 when it was not live. */
static int take(ar_livemap_t *m, uint64_t key, uint64_t *val)
{
	if (!m->cap)
		return 0;
	for (uint64_t j = hash(key) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1)) {
		if (m->keys[j] == key) {
			*val = m->vals[j];
			m->keys[j] = TOMB;
			m->len--;
			m->tomb++;
			return 1;
		}
	}
	return 0;
}

uint64_t ar_event_request_bytes(const ar_event_t *e)
{
	if (e->op == AR_OP_CALLOC || e->op == AR_OP_REALLOCARRAY)
		return e->count * e->size; /* the recorded call succeeded only without overflow */
	if (e->op == AR_OP_FREE)
		return 0;
	return e->size;
}

static int acquire(ar_livemap_t *m, uint64_t ptr, uint64_t n, uint64_t seq)
{
	if (put(m, ptr, n))
		return AR_ENOMEM;
	m->live_bytes += n;
	if (m->live_bytes > m->peak_live_bytes) {
		m->peak_live_bytes = m->live_bytes;
		m->peak_seq = seq;
	}
	return 0;
}

static int pending_push(ar_livemap_t *m, ar_pending_t p)
{
	if (m->npending == m->pending_cap) {
		uint64_t cap = m->pending_cap ? 2 * m->pending_cap : 64;
		ar_pending_t *n = realloc(m->pending, cap * sizeof *n);
		if (!n)
			return AR_ENOMEM;
		m->pending = n;
		m->pending_cap = cap;
	}
	uint64_t i = m->npending++;
	while (i > 0 && m->pending[(i - 1) / 2].seq2 > p.seq2) {
		m->pending[i] = m->pending[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	m->pending[i] = p;
	return 0;
}

/* Apply the pending acquisitions with seq2 < before. */
static int pending_flush(ar_livemap_t *m, uint64_t before)
{
	while (m->npending && m->pending[0].seq2 < before) {
		ar_pending_t top = m->pending[0], last = m->pending[--m->npending];
		uint64_t i = 0;
		for (;;) { /* sift `last` down from the root */
			uint64_t c = 2 * i + 1;
			if (c >= m->npending)
				break;
			if (c + 1 < m->npending && m->pending[c + 1].seq2 < m->pending[c].seq2)
				c++;
			if (m->pending[c].seq2 >= last.seq2)
				break;
			m->pending[i] = m->pending[c];
			i = c;
		}
		if (m->npending)
			m->pending[i] = last;
		if (acquire(m, top.ptr, top.bytes, top.seq2))
			return AR_ENOMEM;
	}
	return 0;
}

int ar_livemap_finish(ar_livemap_t *m)
{
	return pending_flush(m, UINT64_MAX);
}

int ar_livemap_apply(ar_livemap_t *m, const ar_event_t *e)
{
	if (pending_flush(m, e->seq))
		return AR_ENOMEM;
	uint64_t old = 0;
	int releases = e->op == AR_OP_FREE ||
		       /* SPEC 5.5: realloc releases its input when it succeeded, or
			* when it was realloc(p, 0) returning NULL (glibc frees p). */
		       ((e->op == AR_OP_REALLOC || e->op == AR_OP_REALLOCARRAY) && e->ptr &&
			(e->result || ar_event_request_bytes(e) == 0));
	if (releases && e->ptr) {
		if (take(m, e->ptr, &old))
			m->live_bytes -= old;
		else
			m->unknown_frees++;
	}
	if (e->op != AR_OP_FREE && e->result) {
		uint64_t n = ar_event_request_bytes(e);
		if (e->seq2) /* SPEC 4: the result is the caller's from seq2 on */
			return pending_push(m, (ar_pending_t){e->seq2, e->result, n});
		return acquire(m, e->result, n, e->seq);
	}
	return 0;
}
