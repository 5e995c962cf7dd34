/*
 * bench_ptr_codes TRACE... — what the pointer column (SPEC 5.4) would weigh
 * under other meanings of a pointer reference, on real recordings, and how
 * much state a writer and a reader would keep for each (issue 19: a trace
 * within 2x of heaptrack's size).
 *
 * A reference names the k-th most recent entry of a history of the other
 * kind: a freed pointer the allocation that returned it, a returned pointer
 * the free that released its address. The codings compared differ only in
 * what the histories hold:
 *
 *   as written     SPEC 5.4: the block's pointers, every one appended
 *                  (an address freed twice is there twice);
 *   live, block    the block's addresses not yet used up: an allocation's
 *                  address leaves OUT when it is freed, a freed address
 *                  leaves IN when it is handed out again;
 *   live, thread   the same over all of the thread's blocks;
 *   live, cap N    the same, dropping the oldest entry of a history past N;
 *   all, thread    every pointer, over all of the thread's blocks.
 *
 * Each thread's events are cut into blocks of 16384 (the writer's usual
 * size; its blocks can be shorter), each block's column compressed alone at
 * zstd level 3 (the recorder's default; the writer's chaining of blocks,
 * SPEC 3.4, is left out). "state" is the largest number of entries one
 * thread's two histories held at once: what a writer and a reader would
 * keep per thread, about 24 bytes each. This measures codings the format
 * does not have; the trace library is only used to read the events.
 */
#include "ar_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define BLOCK_EVENTS 16384
#define ZSTD_LEVEL 3
#define MAX_THREADS 256

enum { C_WRITTEN, C_LIVE_BLOCK, C_LIVE_THREAD, C_CAP1, C_CAP2, C_CAP3, C_ALL_THREAD, NCODINGS };
static const char *coding_name[NCODINGS] = {"as written", "live, block", "live, thread", "live, cap 16384",
					    "live, cap 65536", "live, cap 262144", "all, thread"};
static const uint32_t coding_cap[NCODINGS] = {0, 0, 0, 16384, 65536, 262144, 0};

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p) {
		fprintf(stderr, "bench_ptr_codes: out of memory\n");
		exit(2);
	}
	return p;
}

/* ---- a history: entries in append order, some of them dropped ----------- */

/* Live entries are counted by a Fenwick tree over append positions, so the
 * rank of an entry and the entry of a rank both take log n steps. Positions
 * are never reused: when they run out the live entries are renumbered. */
typedef struct {
	uint32_t n, cap, live;
	int32_t *tree;   /* Fenwick tree of the live bits, 1-based */
	uint64_t *addr;  /* the address at each position */
	/* address -> position (-1: not in the history), open addressing */
	uint64_t *keys;
	int32_t *pos;
	uint32_t mask, used;
} hist_t;

static void tree_add(hist_t *h, uint32_t i, int d)
{
	for (i++; i <= h->cap; i += i & -i)
		h->tree[i] += d;
}

/* Live entries at positions 0..i. */
static uint32_t tree_prefix(const hist_t *h, uint32_t i)
{
	int32_t s = 0;
	for (i++; i; i -= i & -i)
		s += h->tree[i];
	return (uint32_t)s;
}

/* The position of the k-th live entry counting from position 0 (k >= 1). */
static uint32_t tree_select(const hist_t *h, uint32_t k)
{
	uint32_t at = 0, step = 1;
	while (step * 2 <= h->cap)
		step *= 2;
	for (; step; step /= 2)
		if (at + step <= h->cap && (uint32_t)h->tree[at + step] < k) {
			at += step;
			k -= (uint32_t)h->tree[at];
		}
	return at;
}

static uint32_t *slot_of(hist_t *h, uint64_t a, int create)
{
	uint32_t i = (uint32_t)(((a >> 4) * 0x9E3779B97F4A7C15ULL) >> 32) & h->mask;
	for (;; i = (i + 1) & h->mask) {
		if (h->keys[i] == a)
			return (uint32_t *)&h->pos[i];
		if (h->keys[i] == 0) {
			if (!create)
				return NULL;
			h->keys[i] = a;
			h->pos[i] = -1;
			h->used++;
			return (uint32_t *)&h->pos[i];
		}
	}
}

static void hist_init(hist_t *h, uint32_t cap)
{
	free(h->tree), free(h->addr), free(h->keys), free(h->pos);
	memset(h, 0, sizeof *h);
	h->cap = cap;
	h->tree = xcalloc(cap + 1, sizeof *h->tree);
	h->addr = xcalloc(cap, sizeof *h->addr);
	h->mask = 1023;
	h->keys = xcalloc(h->mask + 1, sizeof *h->keys);
	h->pos = xcalloc(h->mask + 1, sizeof *h->pos);
}

static void hist_free(hist_t *h)
{
	free(h->tree), free(h->addr), free(h->keys), free(h->pos);
	memset(h, 0, sizeof *h);
}

/* Rebuild the address map (past half full, or when dropped keys pile up)
 * and, when positions ran out, renumber the live entries from 0. */
static void hist_compact(hist_t *h, int renumber)
{
	uint32_t live = h->live, cap = h->cap;
	uint64_t *order = xcalloc(live, sizeof *order); /* the live entries' addresses, oldest first */
	uint32_t *posn = xcalloc(live, sizeof *posn);   /* and their positions */
	for (uint32_t k = 1; k <= live; k++) {
		posn[k - 1] = tree_select(h, k);
		order[k - 1] = h->addr[posn[k - 1]];
	}
	if (renumber && live * 2 > cap)
		cap *= 2;
	uint32_t mask = h->mask;
	while ((mask + 1) / 2 < live * 2 + 1024)
		mask = mask * 2 + 1;
	if (!renumber) { /* keep positions: only the map is rebuilt */
		free(h->keys), free(h->pos);
		h->mask = mask, h->used = 0;
		h->keys = xcalloc(mask + 1, sizeof *h->keys);
		h->pos = xcalloc(mask + 1, sizeof *h->pos);
		for (uint32_t i = 0; i < live; i++)
			*slot_of(h, order[i], 1) = posn[i];
		free(posn);
		free(order);
		return;
	}
	free(posn);
	hist_init(h, cap);
	free(h->keys), free(h->pos);
	h->mask = mask;
	h->keys = xcalloc(mask + 1, sizeof *h->keys);
	h->pos = xcalloc(mask + 1, sizeof *h->pos);
	for (uint32_t i = 0; i < live; i++) {
		h->addr[i] = order[i];
		tree_add(h, i, 1);
		*slot_of(h, order[i], 1) = i;
	}
	h->n = h->live = live;
	free(order);
}

/* 1 + the number of live entries appended after a's, or 0 when a is not live. */
static uint32_t hist_rank(hist_t *h, uint64_t a)
{
	uint32_t *p = slot_of(h, a, 0);
	if (!p || (int32_t)*p < 0)
		return 0;
	return h->live - tree_prefix(h, *p) + 1;
}

static void hist_drop(hist_t *h, uint64_t a)
{
	uint32_t *p = slot_of(h, a, 0);
	if (p && (int32_t)*p >= 0) {
		tree_add(h, *p, -1);
		h->live--;
		*p = (uint32_t)-1;
	}
}

/* Append a (an address already there moves to the end when `live`). */
static void hist_append(hist_t *h, uint64_t a, int live, uint32_t cap_live)
{
	if (live)
		hist_drop(h, a);
	if (h->n == h->cap)
		hist_compact(h, 1);
	if (h->used * 2 > h->mask)
		hist_compact(h, 0);
	*slot_of(h, a, 1) = h->n;
	h->addr[h->n] = a;
	tree_add(h, h->n++, 1);
	h->live++;
	if (cap_live && h->live > cap_live)
		hist_drop(h, h->addr[tree_select(h, 1)]);
}

/* ---- one coding of one thread --------------------------------------------- */

typedef struct {
	hist_t in, out;
	uint64_t prev;
	uint32_t events, peak_state;
	uint8_t *col;
	size_t len;
} coder_t;

typedef struct {
	uint64_t raw, compressed, refs, pointers;
	uint32_t peak_state;
} totals_t;

static ZSTD_CCtx *cctx;
static uint8_t *zbuf;
static size_t zcap;

static uint8_t *put_varint(uint8_t *q, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		*q++ = (uint8_t)(v | 0x80);
	*q++ = (uint8_t)v;
	return q;
}

static unsigned varint_len(uint64_t v)
{
	unsigned n = 1;
	for (; v >= 0x80; v >>= 7)
		n++;
	return n;
}

static uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static void coder_reset(coder_t *c)
{
	hist_init(&c->in, 4096);
	hist_init(&c->out, 4096);
	c->prev = 0;
}

static void coder_flush(coder_t *c, totals_t *t)
{
	if (!c->len)
		return;
	size_t bound = ZSTD_compressBound(c->len);
	if (bound > zcap) {
		free(zbuf);
		zbuf = xcalloc(zcap = bound, 1);
	}
	size_t z = ZSTD_compressCCtx(cctx, zbuf, zcap, c->col, c->len, ZSTD_LEVEL);
	if (ZSTD_isError(z)) {
		fprintf(stderr, "bench_ptr_codes: zstd: %s\n", ZSTD_getErrorName(z));
		exit(2);
	}
	t->raw += c->len;
	t->compressed += z;
	c->len = 0;
}

/* The shorter of a reference and SPEC 5.4's deltas to the previous pointer. */
static void put_pointer(coder_t *c, totals_t *t, uint64_t p, uint32_t rank)
{
	uint64_t d = p - c->prev;
	uint8_t *q = c->col + c->len;
	unsigned dl = (d & 15) == 0 ? varint_len(zigzag((int64_t)d >> 4) << 2 | 1) : 1 + varint_len(zigzag((int64_t)d));
	if (rank && varint_len((uint64_t)(rank - 1) << 1) <= dl) {
		q = put_varint(q, (uint64_t)(rank - 1) << 1);
		t->refs++;
	} else if ((d & 15) == 0) {
		q = put_varint(q, zigzag((int64_t)d >> 4) << 2 | 1);
	} else {
		*q++ = 3;
		q = put_varint(q, zigzag((int64_t)d));
	}
	c->len = (size_t)(q - c->col);
	c->prev = p;
	t->pointers++;
}

static void code_event(coder_t *c, totals_t *t, int coding, const ar_event_t *e)
{
	int live = coding != C_WRITTEN && coding != C_ALL_THREAD;
	uint32_t cap = coding_cap[coding];
	if (c->events == BLOCK_EVENTS) {
		coder_flush(c, t);
		c->events = 0;
		if (coding == C_WRITTEN || coding == C_LIVE_BLOCK)
			coder_reset(c);
	}
	c->events++;
	unsigned f = ar_op_fields(e->op);
	if ((f & AR_F_PTR) && e->ptr) {
		put_pointer(c, t, e->ptr, hist_rank(&c->out, e->ptr));
		if (live)
			hist_drop(&c->out, e->ptr);
		hist_append(&c->in, e->ptr, live, cap);
	}
	if ((f & AR_F_RESULT) && e->result) {
		put_pointer(c, t, e->result, hist_rank(&c->in, e->result));
		if (live)
			hist_drop(&c->in, e->result);
		hist_append(&c->out, e->result, live, cap);
	}
	uint32_t state = c->in.live + c->out.live;
	if (state > c->peak_state)
		c->peak_state = state;
}

/* ---- main ------------------------------------------------------------------ */

static int study(const char *path)
{
	ar_reader_t *r;
	ar_error_t err;
	if (ar_reader_open(&r, path, &err)) {
		fprintf(stderr, "bench_ptr_codes: %s\n", err.msg);
		return 1;
	}
	static coder_t coders[MAX_THREADS][NCODINGS];
	static int started[MAX_THREADS];
	totals_t tot[NCODINGS];
	memset(tot, 0, sizeof tot);
	ar_event_t e;
	int rc;
	uint64_t events = 0, other_threads = 0;
	while ((rc = ar_reader_next(r, &e)) == 1) {
		events++;
		if (e.thread >= MAX_THREADS) {
			other_threads++;
			continue;
		}
		for (int k = 0; k < NCODINGS; k++) {
			coder_t *c = &coders[e.thread][k];
			if (!started[e.thread]) {
				c->col = xcalloc(BLOCK_EVENTS, 2 * 20);
				coder_reset(c);
			}
			code_event(c, &tot[k], k, &e);
		}
		started[e.thread] = 1;
	}
	if (rc < 0) {
		fprintf(stderr, "bench_ptr_codes: %s\n", ar_reader_error(r)->msg);
		ar_reader_close(r);
		return 1;
	}
	for (int th = 0; th < MAX_THREADS; th++) {
		for (int k = 0; started[th] && k < NCODINGS; k++) {
			coder_t *c = &coders[th][k];
			coder_flush(c, &tot[k]);
			if (c->peak_state > tot[k].peak_state)
				tot[k].peak_state = c->peak_state;
			hist_free(&c->in);
			hist_free(&c->out);
			free(c->col);
			memset(c, 0, sizeof *c);
		}
		started[th] = 0;
	}
	printf("%s: %llu events, %u threads%s\n", path, (unsigned long long)events, ar_reader_thread_count(r),
	       other_threads ? " (events of threads past 256 left out)" : "");
	/* A cut or damaged trace is studied up to where it stops, and says so. */
	if (ar_reader_status(r) != AR_STATUS_COMPLETE)
		printf("  %s at offset %llu: the events before it only (%s)\n",
		       ar_reader_status(r) == AR_STATUS_TRUNCATED ? "truncated" : "corrupt",
		       (unsigned long long)ar_reader_error(r)->offset, ar_reader_error(r)->msg);
	printf("  %-18s %12s %12s %8s %14s\n", "coding", "raw B/event", "zstd B/event", "refs", "state, entries");
	for (int k = 0; k < NCODINGS; k++)
		printf("  %-18s %12.3f %12.3f %7.1f%% %14u\n", coding_name[k], (double)tot[k].raw / (double)(events ? events : 1),
		       (double)tot[k].compressed / (double)(events ? events : 1),
		       100.0 * (double)tot[k].refs / (double)(tot[k].pointers ? tot[k].pointers : 1), tot[k].peak_state);
	ar_reader_close(r);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_ptr_codes TRACE...\n");
		return 2;
	}
	cctx = ZSTD_createCCtx();
	int bad = 0;
	for (int i = 1; i < argc; i++)
		bad |= study(argv[i]);
	ZSTD_freeCCtx(cctx);
	free(zbuf);
	return bad;
}
