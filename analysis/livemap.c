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

int ar_livemap_apply(ar_livemap_t *m, const ar_event_t *e)
{
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
		if (put(m, e->result, n))
			return AR_ENOMEM;
		m->live_bytes += n;
		if (m->live_bytes > m->peak_live_bytes) {
			m->peak_live_bytes = m->live_bytes;
			m->peak_seq = e->seq;
		}
	}
	return 0;
}
