/*
 * iter.c — decode events block by block: in file order (ar_reader_next) and
 * merged into global sequence order with a min-heap over per-thread cursors
 * (ar_reader_next_merged).
 *
 * Invariants: a block is decompressed only when its first event is next
 * (and, for a chained block whose prefix is not at hand, its chain);
 * a thread's cursor holds at most one decoded block; every decoded block is
 * checked against its descriptor (thread, count, first and last seq) so the
 * index and the content can never disagree silently.
 */
#include <stdio.h>
#include <stdlib.h>

#include "evdec_fast.h"
#include "reader_int.h"

/* ---- chained blocks (SPEC 3.4, since 2.0) ------------------------------
 * An events block may be compressed against the decoded bytes of its
 * thread's previous events block. Each thread keeps the decoded bytes of one
 * of its blocks (its `prefix`) when the block after it is chained, so
 * reading a thread's blocks in order, as both iterations do, decompresses
 * each block once and copies it once. A block whose prefix is not at hand
 * (iteration restarted, or two cursors on one thread) has its chain decoded
 * again from the nearest block the thread holds or from the chain's first
 * block: at most AR_LIMIT_CHAIN decompressions, checked when the file was
 * indexed. A thread's prefix holds exactly the decoded bytes of block
 * prefix_block (or prefix_block is -1); every block decoded here passes the
 * same zstd checks as any other, so a corrupt link is reported at its own
 * offset and the blocks before it stay readable. (Here, not in a file of
 * its own: the recorder's shim links the writer's files, not the reader's.)
 */
/* Keep [raw, raw+n), the bytes of block bi, as its thread's prefix. */
static int keep_prefix(ar_reader_t *r, thread_slot_t *t, int64_t bi, const uint8_t *raw, size_t n)
{
	t->prefix_block = -1;
	if (ar_grow((void **)&t->prefix, 1, &t->prefix_cap, n ? n : 1))
		return ar_reader_fail(r, AR_ENOMEM, r->blocks[bi].offset, "out of memory keeping a %zu-byte block", n);
	memcpy(t->prefix, raw, n);
	t->prefix_len = n;
	t->prefix_block = bi;
	return 0;
}

/* Make block `want` (an events block of thread t) the thread's prefix,
 * decoding its chain from the first link not at hand. */
static int load_prefix(ar_reader_t *r, thread_slot_t *t, int64_t want)
{
	int64_t link[AR_LIMIT_CHAIN];
	unsigned n = 0;
	/* Walk back to a block held or a block that decodes alone; the index
	 * bounded chains to AR_LIMIT_CHAIN blocks. */
	for (int64_t bi = want; bi != t->prefix_block; bi = r->blocks[bi].prev_of_thread) {
		link[n++] = bi;
		if (!r->blocks[bi].chained || n == AR_LIMIT_CHAIN)
			break;
	}
	if (n == 0) /* already held */
		return 0;
	const block_t *first = &r->blocks[link[n - 1]];
	if (first->chained && first->prev_of_thread != t->prefix_block) /* the index rules this out */
		return ar_reader_fail(r, AR_EFORMAT, first->offset, "events block at offset %llu: chain too long",
				      (unsigned long long)first->offset);
	while (n--) {
		const block_t *b = &r->blocks[link[n]];
		int rc = ar_block_decompress(r, b->data_offset, b->comp_size, b->raw_size,
					     b->chained ? t->prefix : NULL, b->chained ? t->prefix_len : 0, &r->chain_buf,
					     &r->chain_cap);
		if (rc || (rc = keep_prefix(r, t, link[n], r->chain_buf, b->raw_size)))
			return rc;
	}
	return 0;
}

/* Decompress chained block b into the thread's buffer right after its
 * prefix, where zstd decodes faster than against a prefix elsewhere (its
 * matches then reach back into one contiguous window); copy it to *buf and,
 * when the next block wants it, move it to the front as the next prefix. */
static int decompress_chained(ar_reader_t *r, thread_slot_t *t, int64_t bi, uint8_t **buf, size_t *cap)
{
	const block_t *b = &r->blocks[bi];
	size_t plen = t->prefix_len;
	if (ar_grow((void **)&t->prefix, 1, &t->prefix_cap, plen + b->raw_size) ||
	    ar_grow((void **)buf, 1, cap, b->raw_size ? b->raw_size : 1))
		return ar_reader_fail(r, AR_ENOMEM, b->offset, "out of memory for a %u-byte block", b->raw_size);
	uint8_t *dst = t->prefix + plen;
	int rc = ar_block_decompress_into(r, b->data_offset, b->comp_size, b->raw_size, t->prefix, plen, dst);
	if (rc)
		return rc;
	memcpy(*buf, dst, b->raw_size);
	if (b->next_of_thread >= 0 && r->blocks[b->next_of_thread].chained) {
		memmove(t->prefix, dst, b->raw_size);
		t->prefix_len = b->raw_size;
		t->prefix_block = bi;
	}
	return 0;
}

int ar_events_decompress(ar_reader_t *r, int64_t bi, uint8_t **buf, size_t *cap)
{
	const block_t *b = &r->blocks[bi];
	thread_slot_t *t = NULL;
	if (b->chained) {
		t = ar_thread_slot(r, b->thread, 0);
		int rc = t->prefix_block == b->prev_of_thread ? 0 : load_prefix(r, t, b->prev_of_thread);
		return rc ? rc : decompress_chained(r, t, bi, buf, cap);
	}
	int rc = ar_block_decompress(r, b->data_offset, b->comp_size, b->raw_size, NULL, 0, buf, cap);
	/* The next block of the thread will want these bytes. */
	if (rc == 0 && b->next_of_thread >= 0 && r->blocks[b->next_of_thread].chained) {
		if (!t)
			t = ar_thread_slot(r, b->thread, 0);
		rc = keep_prefix(r, t, bi, *buf, b->raw_size);
	}
	return rc;
}

/* ---- iteration ---------------------------------------------------------- */

/* Decompress c's current block and position its decoder on the first event. */
static int cursor_open_block(ar_reader_t *r, cursor_t *c)
{
	const block_t *b = &r->blocks[c->block];
	int rc = ar_events_decompress(r, c->block, &c->buf, &c->buf_cap);
	if (rc)
		return rc;
	const uint8_t *p = c->buf, *end = c->buf + b->raw_size;
	uint64_t type = 0, len = 0;
	if (ar_get_varint(&p, end, &type) || ar_get_varint(&p, end, &len) || type != AR_REC_EVENTS ||
	    len != (uint64_t)(end - p))
		return ar_reader_fail(r, AR_EFORMAT, b->offset,
				      "events block at offset %llu: must hold exactly one EVENTS record",
				      (unsigned long long)b->offset);
	char why[200];
	if (ar_evdec_open(&c->dec, p, end, &r->hdr, why, sizeof why))
		return ar_reader_fail(r, AR_EFORMAT, b->offset, "events block at offset %llu: %s",
				      (unsigned long long)b->offset, why);
	if (c->dec.thread != b->thread || c->dec.os_tid != b->os_tid || c->dec.count != b->count)
		return ar_reader_fail(r, AR_EFORMAT, b->offset,
				      "events block at offset %llu: thread %u/%llu with %u events disagrees with its descriptor (%u/%llu, %llu)",
				      (unsigned long long)b->offset, c->dec.thread, (unsigned long long)c->dec.os_tid,
				      c->dec.count, b->thread, (unsigned long long)b->os_tid,
				      (unsigned long long)b->count);
	if (ar_grow((void **)&c->hist, sizeof *c->hist, &c->hist_cap, 2 * (size_t)c->dec.count))
		return ar_reader_fail(r, AR_ENOMEM, b->offset, "out of memory for a block's pointer history");
	c->dec.ins = c->hist;
	c->dec.outs = c->hist + c->dec.count;
	c->decoded = 1;
	return 0;
}

/* Put the next event of c's current block into c->ev, or finish the block
 * (checking it against its descriptor) and move to `next`. Returns 0 with
 * has_ev set or cleared, or a negative code. */
static int cursor_step(ar_reader_t *r, cursor_t *c, int64_t next)
{
	if (__builtin_expect(c->dec.seen != 0, 1) && ar_evdec_fast(&c->dec, &c->ev)) {
		c->has_ev = 1;
		return 0;
	}
	const block_t *b = &r->blocks[c->block];
	char why[200];
	int got = ar_evdec_next(&c->dec, &c->ev, why, sizeof why);
	if (got < 0)
		return ar_reader_fail(r, AR_EFORMAT, b->offset, "events block at offset %llu: %s",
				      (unsigned long long)b->offset, why);
	if (got == 1) {
		if (c->dec.seen == 1 && c->ev.seq != b->first_seq)
			return ar_reader_fail(r, AR_EFORMAT, b->offset,
					      "events block at offset %llu: first seq %llu, descriptor says %llu",
					      (unsigned long long)b->offset, (unsigned long long)c->ev.seq,
					      (unsigned long long)b->first_seq);
		c->has_ev = 1;
		return 0;
	}
	if (c->dec.prev_seq != b->last_seq)
		return ar_reader_fail(r, AR_EFORMAT, b->offset,
				      "events block at offset %llu: last seq %llu, descriptor says %llu",
				      (unsigned long long)b->offset, (unsigned long long)c->dec.prev_seq,
				      (unsigned long long)b->last_seq);
	c->decoded = 0;
	c->has_ev = 0;
	c->block = next;
	return 0;
}

void ar_reader_rewind(ar_reader_t *r)
{
	r->file_cur.block = r->nblocks ? 0 : -1;
	r->file_cur.decoded = r->file_cur.has_ev = 0;
	for (uint32_t i = 0; r->curs && i < r->nthreads; i++) {
		free(r->curs[i].buf);
		free(r->curs[i].hist);
	}
	free(r->curs);
	free(r->heap);
	r->curs = NULL;
	r->heap = NULL;
	r->heap_len = 0;
	r->merged_started = 0;
	r->last_merged_seq = 0;
	r->iter_error = 0;
}

/* ar_reader_next past its fast path: the first event of a block, the end of
 * one, anything the checked decoder must look at, and errors. */
static __attribute__((noinline)) int reader_next_slow(ar_reader_t *r, ar_event_t *e)
{
	if (r->iter_error)
		return r->iter_error;
	cursor_t *c = &r->file_cur;
	/* File order needs no look-ahead: decode straight into the caller's
	 * event (the merged path keeps one event per cursor to order them). */
	while (c->block >= 0) {
		int rc;
		if (!c->decoded && (rc = cursor_open_block(r, c)))
			return r->iter_error = rc;
		const block_t *b = &r->blocks[c->block];
		char why[200];
		int got = ar_evdec_next(&c->dec, e, why, sizeof why);
		if (got == 1) {
			if (c->dec.seen == 1 && e->seq != b->first_seq)
				return r->iter_error = ar_reader_fail(
					       r, AR_EFORMAT, b->offset,
					       "events block at offset %llu: first seq %llu, descriptor says %llu",
					       (unsigned long long)b->offset, (unsigned long long)e->seq,
					       (unsigned long long)b->first_seq);
			return 1;
		}
		if (got < 0)
			return r->iter_error = ar_reader_fail(r, AR_EFORMAT, b->offset, "events block at offset %llu: %s",
							      (unsigned long long)b->offset, why);
		if (c->dec.prev_seq != b->last_seq)
			return r->iter_error = ar_reader_fail(
				       r, AR_EFORMAT, b->offset,
				       "events block at offset %llu: last seq %llu, descriptor says %llu",
				       (unsigned long long)b->offset, (unsigned long long)c->dec.prev_seq,
				       (unsigned long long)b->last_seq);
		c->decoded = 0;
		c->block = (size_t)c->block + 1 < r->nblocks ? c->block + 1 : -1;
	}
	return 0;
}

int ar_reader_next(ar_reader_t *r, ar_event_t *e)
{
	/* The common event: inside a decoded block, past its first event (the
	 * one checked against the descriptor), decoded inline. */
	cursor_t *c = &r->file_cur;
	if (__builtin_expect(c->decoded && c->dec.seen && !r->iter_error, 1) && ar_evdec_fast(&c->dec, e))
		return 1;
	return reader_next_slow(r, e);
}

/* ---- merged order ---------------------------------------------------------- */

/* A finished thread gives back its block memory at once. */
static void cursor_release(cursor_t *c)
{
	free(c->buf);
	free(c->hist);
	c->buf = NULL;
	c->hist = NULL;
	c->buf_cap = c->hist_cap = 0;
}

/* The seq that orders cursor i: its next event, or its next block's first. */
static uint64_t cursor_key(const ar_reader_t *r, uint32_t i)
{
	const cursor_t *c = &r->curs[i];
	return c->has_ev ? c->ev.seq : r->blocks[c->block].first_seq;
}

static void heap_down(ar_reader_t *r, uint32_t pos)
{
	struct ar_heap_ent *h = r->heap;
	uint32_t n = r->heap_len;
	for (;;) {
		uint32_t l = 2 * pos + 1, m = pos;
		if (l < n && h[l].key < h[m].key)
			m = l;
		if (l + 1 < n && h[l + 1].key < h[m].key)
			m = l + 1;
		if (m == pos)
			return;
		struct ar_heap_ent t = h[pos];
		h[pos] = h[m];
		h[m] = t;
		pos = m;
	}
}

/* Up to this many cursors the "heap" is only a set whose least key is at
 * its front: after the head changes, a scan of every key finds the least
 * one without a branch on the keys, where sifting down takes one that the
 * CPU mispredicts about half the time when threads interleave closely. A
 * heap (or a set that shrank from one) keeps the least key at its front as
 * well, so the two agree. */
#define MERGE_SCAN_MAX 8

/* The head's key changed, or the head was replaced: the least key to the
 * front again. */
static void head_sift(ar_reader_t *r)
{
	uint32_t n = r->heap_len;
	if (n > MERGE_SCAN_MAX) {
		heap_down(r, 0);
		return;
	}
	struct ar_heap_ent *h = r->heap;
	uint32_t m = 0;
	for (uint32_t i = 1; i < n; i++)
		m = h[i].key < h[m].key ? i : m;
	struct ar_heap_ent t = h[0];
	h[0] = h[m];
	h[m] = t;
}

/* The head cursor changed (its next event or block, or it was replaced by
 * the last entry): its key again, then its place. */
static void head_changed(ar_reader_t *r)
{
	if (r->heap_len)
		r->heap[0].key = cursor_key(r, r->heap[0].cur);
	head_sift(r);
}

static int merged_start(ar_reader_t *r)
{
	r->curs = calloc(r->nthreads ? r->nthreads : 1, sizeof *r->curs);
	r->heap = calloc(r->nthreads ? r->nthreads : 1, sizeof *r->heap);
	if (!r->curs || !r->heap)
		return ar_reader_fail(r, AR_ENOMEM, 0, "out of memory for %u thread cursors", r->nthreads);
	for (uint32_t i = 0; i < r->nthreads; i++) {
		r->curs[i].block = r->threads[i].first_block;
		if (r->curs[i].block >= 0)
			r->heap[r->heap_len++] = (struct ar_heap_ent){cursor_key(r, i), i};
	}
	if (r->heap_len > MERGE_SCAN_MAX)
		for (uint32_t i = r->heap_len / 2; i-- > 0;)
			heap_down(r, i);
	else
		head_sift(r);
	r->merged_started = 1;
	return 0;
}

/* ar_reader_next_merged past its fast path: starting, opening and finishing
 * blocks, the checked decoder, errors. */
static __attribute__((noinline)) int merged_next_slow(ar_reader_t *r, ar_event_t *e)
{
	if (r->iter_error)
		return r->iter_error;
	int rc = 0;
	if (!r->merged_started && (rc = merged_start(r)))
		return r->iter_error = rc;
	while (r->heap_len) {
		cursor_t *c = &r->curs[r->heap[0].cur];
		if (!c->has_ev) {
			/* The head has an undecoded block: open it and take its
			 * first event, whose seq equals the key it was ordered by. */
			if (!c->decoded && (rc = cursor_open_block(r, c)))
				return r->iter_error = rc;
			if ((rc = cursor_step(r, c, r->blocks[c->block].next_of_thread)))
				return r->iter_error = rc;
			if (!c->has_ev) {
				if (c->block < 0) {
					cursor_release(c);
					r->heap[0] = r->heap[--r->heap_len];
				}
				head_changed(r);
				continue;
			}
		}
		if (c->ev.seq <= r->last_merged_seq) /* SPEC 4: seq numbers are unique */
			return r->iter_error = ar_reader_fail(
				       r, AR_EFORMAT, r->blocks[c->block].offset,
				       "thread %u: seq %llu comes after seq %llu in merged order (duplicate or out of order)",
				       c->ev.thread, (unsigned long long)c->ev.seq,
				       (unsigned long long)r->last_merged_seq);
		*e = c->ev;
		r->last_merged_seq = e->seq;
		c->has_ev = 0;
		/* Peek the next event so the heap orders this cursor by it. */
		if ((rc = cursor_step(r, c, r->blocks[c->block].next_of_thread)))
			return r->iter_error = rc;
		if (!c->has_ev && c->block < 0) {
			cursor_release(c);
			r->heap[0] = r->heap[--r->heap_len];
		}
		head_changed(r);
		return 1;
	}
	return 0;
}

int ar_reader_next_merged(ar_reader_t *r, ar_event_t *e)
{
	/* The common event: the head cursor holds its next event, in order,
	 * and the one after it decodes inline from the same block. */
	if (__builtin_expect(r->merged_started && r->heap_len && !r->iter_error, 1)) {
		cursor_t *c = &r->curs[r->heap[0].cur];
		if (__builtin_expect(c->has_ev && c->ev.seq > r->last_merged_seq && c->dec.seen, 1)) {
			*e = c->ev;
			if (__builtin_expect(ar_evdec_fast(&c->dec, &c->ev), 1)) {
				r->last_merged_seq = e->seq;
				r->heap[0].key = c->ev.seq;
				if (r->heap_len > 1)
					head_sift(r);
				return 1;
			}
			c->ev = *e; /* the fast path left it unspecified */
		}
	}
	return merged_next_slow(r, e);
}
