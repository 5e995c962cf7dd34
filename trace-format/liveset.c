/*
 * liveset.c — the live set of SPEC 4 and 5.5 (see ar_trace.h): which blocks
 * a trace says are live, event by event in sequence order. alloctrace's
 * statistics (analysis/livemap.c) and the replay compiler
 * (replayer/wl_compile.c) both go through it, so the rule lives here once.
 *
 * Invariants:
 *   - tab: common/ar_hash.h's table on the address (ptr 0 = empty), Fibonacci
 *     hashing, linear probing, at most half full; an entry holds the block
 *     whole (24 bytes), so a lookup mostly touches one cache line (the
 *     compiler's old split key/value arrays touched two); deletion shifts later
 *     entries of the probe run back, so there are no tombstones and probes
 *     stay short under churn.
 *   - pending: a binary min-heap on seq2 of the realloc results not yet
 *     live; they become live in seq2 order, before the first event whose seq
 *     is above their seq2 (SPEC 4).
 *   - live_exact is the sum of the bytes of the blocks in tab;
 *     peak_live_bytes the highest it reached, saturated at 2^64-1 (kept
 *     on acquisition only: a release never raises it). In a window trace,
 *     pre-existing blocks are known only when released: every one was live
 *     from the start until then, so the heap at any point holds
 *     P_total - P_released + live_exact, whose highest value is P_total +
 *     the highest (live_exact - P_released), kept as peak_window in one pass.
 */
#include <stdlib.h>

#include "ar_hash.h"
#include "ar_trace.h"

#define FIRST_CAP 4096 /* entries of the first address table */

void ar_liveset_init(ar_liveset_t *ls, ar_live_released_fn *released, ar_live_acquired_fn *acquired, void *ctx)
{
	*ls = (ar_liveset_t){0};
	ls->released = released;
	ls->acquired = acquired;
	ls->ctx = ctx;
}

void ar_liveset_free(ar_liveset_t *ls)
{
	free(ls->tab);
	free(ls->pending);
	ar_liveset_init(ls, ls->released, ls->acquired, ls->ctx);
}

/* SPEC 5.5 */
static inline uint64_t request_bytes(const ar_event_t *e)
{
	uint64_t r;
	if (e->op == AR_OP_CALLOC || e->op == AR_OP_REALLOCARRAY) /* a real call fails on overflow; */
		return __builtin_mul_overflow(e->count, e->size, &r) ? UINT64_MAX : r; /* a trace may lie */
	if (e->op == AR_OP_FREE)
		return 0;
	return e->size;
}

uint64_t ar_event_request_bytes(const ar_event_t *e)
{
	return request_bytes(e);
}

/* SPEC 5.5: realloc releases its input when it succeeded, or when it was
 * realloc(p, 0) returning NULL (glibc frees p). */
int ar_event_releases_input(const ar_event_t *e)
{
	if (e->op == AR_OP_FREE)
		return 1;
	if (e->op != AR_OP_REALLOC && e->op != AR_OP_REALLOCARRAY)
		return 0;
	return e->result || request_bytes(e) == 0;
}

/* ---- the address table (common/ar_hash.h) ---------------------------------- */
#define LIVE_EMPTY(e) ((e)->ptr == 0)
#define LIVE_KEY(ctx, e) ((e)->ptr)
AR_HASH_DEFINE(live, ar_live_t, LIVE_EMPTY, LIVE_KEY, ar_hash_fib)

AR_HASH_DEFINE_GROW(live, ar_live_t, AR_HASH_CALLOC, AR_HASH_FREE)

/* Position of ptr (non-zero) in the table, or AR_HASH_ABSENT. */
static inline uint64_t slot_of(const ar_liveset_t *ls, uint64_t ptr)
{
	return live_find(ls->tab, ls->cap - 1, NULL, ptr);
}

/* Room for one more block: the table at most half full. 0 or AR_ENOMEM. */
static inline int reserve(ar_liveset_t *ls)
{
	return live_reserve(&ls->tab, &ls->cap, ls->len, FIRST_CAP, NULL) ? AR_ENOMEM : 0;
}

static inline uint64_t saturated(unsigned __int128 v)
{
	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

uint64_t ar_liveset_live_bytes(const ar_liveset_t *ls)
{
	return saturated(ls->live_exact);
}

/* The trace hands out the address of the live block at tab[i] again: the
 * older block is gone (displaced: reported, then overwritten in place).
 * Rare (a lost free), so out of make_live's way. */
static __attribute__((noinline, cold)) void displace(ar_liveset_t *ls, uint64_t i)
{
	ar_live_t old = ls->tab[i];
	ls->live_exact -= old.bytes;
	ls->len--;
	ls->displaced++;
	ls->displaced_exact += old.bytes;
	if (ls->released)
		ls->released(ls->ctx, &old, NULL);
}

/* make_live's peak once a window's pre-existing block was released (see
 * the invariants above); out of the common path. */
static __attribute__((noinline)) void window_peak(ar_liveset_t *ls, uint64_t seq)
{
	__int128 w = (__int128)ls->live_exact - (__int128)ls->preexisting_exact;
	if (w > ls->peak_window) {
		ls->peak_window = w;
		ls->peak_seq = seq;
	}
	ls->peak_live_bytes = saturated((unsigned __int128)((__int128)ls->preexisting_exact + ls->peak_window));
}

/* The block b is live from seq on. One probe: a block still live at its
 * address is displaced. The common path (no displacement, no pre-existing
 * block released yet) is kept short: it runs once per allocation. */
static inline __attribute__((always_inline)) int make_live(ar_liveset_t *ls, const ar_live_t *b, uint64_t seq)
{
	if (reserve(ls))
		return AR_ENOMEM;
	ar_live_t *tab = ls->tab;
	uint64_t i = live_pos(tab, ls->cap - 1, NULL, b->ptr);
	if (__builtin_expect(tab[i].ptr != 0, 0))
		displace(ls, i);
	tab[i] = *b;
	ls->len++;
	ls->live_exact += b->bytes;
	if (__builtin_expect(!ls->preexisting_blocks, 1)) { /* the common case: the heap is live_exact */
		uint64_t live = saturated(ls->live_exact);
		if (live > ls->peak_live_bytes) {
			ls->peak_live_bytes = live;
			ls->peak_seq = seq;
		}
	} else {
		window_peak(ls, seq);
	}
	if (ls->acquired)
		ls->acquired(ls->ctx, b);
	return 0;
}

/* ---- realloc results waiting for their seq2 ----------------------------------- */
static int pending_push(ar_liveset_t *ls, const ar_live_pending_t *p)
{
	if (ls->npending == ls->pending_cap) {
		uint64_t cap = ls->pending_cap ? 2 * ls->pending_cap : 64;
		ar_live_pending_t *n = realloc(ls->pending, cap * sizeof *n);
		if (!n)
			return AR_ENOMEM;
		ls->pending = n;
		ls->pending_cap = cap;
	}
	uint64_t i = ls->npending++;
	while (i > 0 && ls->pending[(i - 1) / 2].seq2 > p->seq2) {
		ls->pending[i] = ls->pending[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	ls->pending[i] = *p;
	return 0;
}

/* SPEC 4 */
int ar_liveset_advance(ar_liveset_t *ls, uint64_t seq)
{
	/* seq == UINT64_MAX is the end: a seq2 of 2^64-1 is acquired too. */
	while (ls->npending && (ls->pending[0].seq2 < seq || seq == UINT64_MAX)) {
		ar_live_pending_t top = ls->pending[0], last = ls->pending[--ls->npending];
		uint64_t i = 0;
		for (;;) { /* sift `last` down from the root */
			uint64_t c = 2 * i + 1;
			if (c >= ls->npending)
				break;
			if (c + 1 < ls->npending && ls->pending[c + 1].seq2 < ls->pending[c].seq2)
				c++;
			if (ls->pending[c].seq2 >= last.seq2)
				break;
			ls->pending[i] = ls->pending[c];
			i = c;
		}
		if (ls->npending)
			ls->pending[i] = last;
		ar_live_t b = {top.ptr, top.bytes, top.tag};
		if (make_live(ls, &b, top.seq2))
			return AR_ENOMEM;
	}
	return 0;
}

/* ---- the operations ----------------------------------------------------------- */
/* SPEC 6.11: `by` releases a block the window never saw allocated, of
 * by->old_size bytes, live since the window's start. Until the first one,
 * peak_window is the plain peak (P_released was 0); after each, the peak
 * becomes P_total + peak_window, which a later peak may raise. */
static void release_preexisting(ar_liveset_t *ls, uint64_t ptr, const ar_event_t *by)
{
	if (!ls->preexisting_blocks)
		ls->peak_window = (__int128)ls->peak_live_bytes; /* saturated only past 2^64 bytes */
	ls->preexisting_blocks++;
	ls->preexisting_exact += by->old_size;
	ls->peak_live_bytes = saturated((unsigned __int128)((__int128)ls->preexisting_exact + ls->peak_window));
	if (ls->preexisting) {
		ar_live_t b = {ptr, by->old_size, 0};
		ls->preexisting(ls->ctx, &b, by);
	}
}

/* ar_liveset_release of an address not live: a window's pre-existing
 * block, else an unknown release. Returns 0. */
static __attribute__((noinline)) int release_absent(ar_liveset_t *ls, uint64_t ptr, const ar_event_t *by)
{
	if (ls->window && by && by->old_size)
		release_preexisting(ls, ptr, by);
	else
		ls->unknown_releases++;
	return 0;
}

int ar_liveset_release(ar_liveset_t *ls, uint64_t ptr, const ar_event_t *by, ar_live_t *out)
{
	if (!ptr)
		return 0;
	uint64_t i = slot_of(ls, ptr);
	if (__builtin_expect(i >= ls->cap, 0))
		return release_absent(ls, ptr, by);
	ar_live_t b = ls->tab[i];
	live_remove_at(ls->tab, ls->cap - 1, NULL, i);
	ls->len--;
	ls->live_exact -= b.bytes;
	if (out)
		*out = b;
	if (ls->released)
		ls->released(ls->ctx, &b, by);
	return 1;
}

int ar_liveset_acquire(ar_liveset_t *ls, const ar_event_t *e, uint64_t tag)
{
	ar_live_t b = {e->result, request_bytes(e), tag};
	if (e->seq2) /* SPEC 4: the result is the caller's from seq2 on */
		return pending_push(ls, &(ar_live_pending_t){e->seq2, b.ptr, b.bytes, tag});
	return make_live(ls, &b, e->seq);
}

int ar_liveset_apply(ar_liveset_t *ls, const ar_event_t *e, uint64_t tag)
{
	if (ar_liveset_advance(ls, e->seq))
		return AR_ENOMEM;
	if (ar_event_releases_input(e))
		ar_liveset_release(ls, e->ptr, e, NULL);
	if (e->op == AR_OP_FREE || !e->result)
		return 0;
	return ar_liveset_acquire(ls, e, tag);
}

int ar_liveset_find(const ar_liveset_t *ls, uint64_t ptr, ar_live_t *out)
{
	uint64_t i = ptr ? slot_of(ls, ptr) : ls->cap;
	if (i >= ls->cap)
		return 0;
	*out = ls->tab[i];
	return 1;
}

void ar_liveset_each(const ar_liveset_t *ls, void (*fn)(void *ctx, const ar_live_t *b), void *ctx)
{
	for (uint64_t i = 0; i < ls->cap; i++)
		if (ls->tab[i].ptr)
			fn(ctx, &ls->tab[i]);
}
