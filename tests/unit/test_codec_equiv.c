/*
 * test_codec_equiv.c — the columnar event codec (encode.c, decode.c and its
 * fast path evdec_fast.h) against plain references written from SPEC 5: a
 * large random stream of every op (sized ops, stacks, NULL results with and
 * without error codes, huge and tiny values, pointers that repeat and that
 * do not) must encode to exactly the bytes the reference encoder writes,
 * block after block through one encoder (so its pointer map's generations
 * and its full-map fallback are exercised), and decode back through the
 * reader, in file and in merged order, to the events that went in.
 *
 * `test_codec_equiv FILE` keeps the decoded-back trace in FILE (a trace of
 * every kind of event, for differential checks of other readers).
 *
 * The reference encoder is the straightforward loop the optimised one
 * replaced (one varint call per field, a loop per varint length): the two
 * must never disagree by a byte, since traces written before and after must
 * be identical.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "format.h"
#include "testing.h"

/* ---- reference encoder (SPEC 5.2-5.4) ------------------------------------ */

#define REF_MAP_BITS 15
#define REF_MAP_FULL ((1u << REF_MAP_BITS) / 4 * 3)

typedef struct {
	ar_ptr_entry_t map[1u << REF_MAP_BITS];
	uint32_t gen, used;
} ref_enc_t;

static unsigned ref_varint_len(uint64_t v)
{
	unsigned n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static uint32_t ref_slot(uint64_t addr)
{
	return (uint32_t)(((addr >> 4) * 0x9E3779B97F4A7C15ULL) >> (64 - REF_MAP_BITS));
}

static ar_ptr_entry_t *ref_entry(ref_enc_t *r, uint64_t addr, ar_ptr_entry_t *scratch)
{
	for (uint32_t i = ref_slot(addr);; i = (i + 1) & ((1u << REF_MAP_BITS) - 1)) {
		ar_ptr_entry_t *m = &r->map[i];
		if (m->gen != r->gen) {
			if (r->used >= REF_MAP_FULL) {
				*scratch = (ar_ptr_entry_t){addr, 0, 0, 0};
				return scratch;
			}
			r->used++;
			*m = (ar_ptr_entry_t){addr, r->gen, 0, 0};
			return m;
		}
		if (m->addr == addr)
			return m;
	}
}

static uint8_t *ref_pointer(uint8_t *q, uint64_t p, uint64_t prev, uint32_t ref, uint32_t nother)
{
	uint64_t d = p - prev;
	int aligned = (d & 15) == 0;
	uint64_t dv = aligned ? ar_zigzag((int64_t)d >> 4) << 2 | AR_PTR_DELTA16 : 0;
	unsigned dlen = aligned ? ref_varint_len(dv) : 1 + ref_varint_len(ar_zigzag((int64_t)d));
	if (ref) {
		uint64_t rv = (uint64_t)(nother - ref) << 1;
		if (ref_varint_len(rv) <= dlen)
			return ar_put_varint(q, rv);
	}
	if (aligned)
		return ar_put_varint(q, dv);
	*q++ = AR_PTR_DELTA;
	return ar_put_varint(q, ar_zigzag((int64_t)d));
}

static const size_t ref_col_max[AR_NCOLS] = {1, 20, 10, 22, 23, 5};

/* The EVENTS record of b, as SPEC 5 spells it; returns its length. */
static size_t ref_encode(ref_enc_t *r, const ar_evbuf_t *b, uint8_t *col[AR_NCOLS], uint8_t *out)
{
	uint8_t *q[AR_NCOLS];
	for (int c = 0; c < AR_NCOLS; c++)
		q[c] = col[c];
	if (++r->gen == 0) {
		memset(r->map, 0, sizeof r->map);
		r->gen = 1;
	}
	r->used = 0;
	ar_ptr_entry_t scratch;
	uint64_t prev_seq = 0, prev_time = 0, prev_ptr = 0;
	uint32_t nin = 0, nout = 0;
	const ar_slot_t *slots = (const ar_slot_t *)(const void *)b->data;
	for (uint32_t i = 0; i < b->nslots;) {
		ar_slot_event_t ev, *s = &ev; /* the slots' layout is format.h's */
		i += ar_slot_get(slots + i, &ev);
		unsigned f = ar_known_op_fields[s->op];
		uint8_t h = s->op;
		uint64_t old_size = s->old_size;
		int sized = old_size != 0;
		if (sized)
			h = (uint8_t)ar_sized_code(s->op);
		if (s->stack)
			h |= AR_EV_STACK;
		if ((f & AR_F_RESULT) && s->result == 0)
			h |= AR_EV_NULL_RESULT | (s->error ? AR_EV_ERROR : 0);
		*q[AR_COL_OPS]++ = h;
		q[AR_COL_SEQ] = ar_put_varint(q[AR_COL_SEQ], s->seq - prev_seq - 1);
		prev_seq = s->seq;
		if (f & AR_F_SEQ2) {
			q[AR_COL_SEQ] = ar_put_varint(q[AR_COL_SEQ], s->seq2 - s->seq - 1);
			prev_seq = s->seq2;
		}
		uint64_t t = s->time_ns >> AR_TIME_UNIT_SHIFT;
		q[AR_COL_TIME] = ar_put_varint(q[AR_COL_TIME], ar_zigzag((int64_t)(t - prev_time)));
		prev_time = t;
		if (f & AR_F_PTR) {
			ar_ptr_entry_t *m = ref_entry(r, s->ptr, &scratch);
			q[AR_COL_PTR] = ref_pointer(q[AR_COL_PTR], s->ptr, prev_ptr, m->last_out, nout);
			m->last_in = (uint16_t)++nin;
			prev_ptr = s->ptr;
		}
		if (sized)
			q[AR_COL_ARGS] = ar_put_varint(q[AR_COL_ARGS], old_size);
		if ((f & (AR_F_ALIGN | AR_F_COUNT)) && !(sized && s->op == AR_OP_REALLOC))
			q[AR_COL_ARGS] = ar_put_varint(q[AR_COL_ARGS], s->aux);
		if ((f & AR_F_SIZE) && !(sized && s->op == AR_OP_FREE))
			q[AR_COL_ARGS] = ar_put_varint(q[AR_COL_ARGS], s->size);
		if (h & AR_EV_ERROR)
			q[AR_COL_ARGS] = ar_put_varint(q[AR_COL_ARGS], s->error);
		if ((f & AR_F_RESULT) && s->result) {
			ar_ptr_entry_t *m = ref_entry(r, s->result, &scratch);
			q[AR_COL_PTR] = ref_pointer(q[AR_COL_PTR], s->result, prev_ptr, m->last_in, nin);
			m->last_out = (uint16_t)++nout;
			prev_ptr = s->result;
		}
		if (s->stack)
			q[AR_COL_STACK] = ar_put_varint(q[AR_COL_STACK], s->stack);
	}
	uint8_t head[64], *p = head;
	p = ar_put_varint(p, b->thread);
	p = ar_put_varint(p, b->os_tid);
	p = ar_put_varint(p, b->nevents);
	size_t body = (size_t)(p - head);
	for (int c = 0; c < AR_NCOLS; c++) {
		size_t n = (size_t)(q[c] - col[c]);
		body += ref_varint_len(n) + n;
	}
	uint8_t *o = ar_put_varint(out, AR_REC_EVENTS);
	o = ar_put_varint(o, body);
	memcpy(o, head, (size_t)(p - head));
	o += p - head;
	for (int c = 0; c < AR_NCOLS; c++) {
		size_t n = (size_t)(q[c] - col[c]);
		o = ar_put_varint(o, n);
		memcpy(o, col[c], n);
		o += n;
	}
	return (size_t)(o - out);
}

/* ---- random events --------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A value of a random length in bits (0..64): every varint length occurs. */
static uint64_t rnd_bits(void)
{
	unsigned bits = (unsigned)(rnd() % 65);
	return bits == 64 ? rnd() : rnd() & ((1ULL << bits) - 1);
}

/* Pointers: mostly from a pool (so frees and reallocs name earlier results,
 * and references are coded), some aligned fresh ones, some odd ones. */
#define POOL 4096
static uint64_t pool[POOL];

static uint64_t rnd_ptr(void)
{
	uint64_t r = rnd();
	switch (r % 8) {
	case 0:
		return rnd_bits() | 1; /* any value, never NULL */
	case 1:
	case 2:
		return (0x7f0000000000ULL + (rnd() % (1u << 24)) * 16);
	default:
		return pool[(r >> 8) % POOL];
	}
}

/* The next random event of thread `thread`, with seqs after *seq and a
 * time after *time (both advanced); `big_gaps`: now and then far ahead. */
static void rnd_event(ar_event_t *e, uint32_t thread, uint64_t *seq, uint64_t *time, int big_gaps)
{
	memset(e, 0, sizeof *e);
	e->thread = thread;
	e->op = (uint8_t)(1 + rnd() % AR_OP_MAX_KNOWN);
	unsigned f = ar_op_fields(e->op);
	uint64_t gap = big_gaps && rnd() % 16 == 0 ? rnd_bits() % (1ULL << 40) : rnd() % 4;
	e->seq = *seq += 1 + gap;
	if (f & AR_F_SEQ2)
		e->seq2 = *seq += 1 + rnd() % 3;
	/* times may go back a little (SPEC 5.3 allows it), sometimes far ahead */
	uint64_t dt = big_gaps && rnd() % 32 == 0 ? rnd_bits() % (1ULL << 44) : rnd() % 4000;
	*time = *time + dt >= 4096 && rnd() % 8 == 0 ? *time + dt - 4096 : *time + dt;
	e->time_ns = *time;
	if (f & AR_F_PTR)
		e->ptr = rnd_ptr();
	if (f & AR_F_ALIGN)
		e->align = rnd() % 4 ? 16ULL << (rnd() % 8) : rnd_bits();
	if (f & AR_F_COUNT)
		e->count = rnd() % 4 ? 1 + rnd() % 100 : rnd_bits();
	if (f & AR_F_SIZE)
		e->size = rnd() % 4 ? rnd() % 5000 : rnd_bits();
	if (f & AR_F_RESULT) {
		if (rnd() % 20 == 0) {
			e->result = 0;
			e->error = rnd() % 2 ? 0 : 1 + (uint32_t)(rnd() % 0xffff);
		} else {
			e->result = rnd() % 3 == 0 ? rnd_ptr() : (0x7f0000000000ULL + (rnd() % (1u << 20)) * 16);
			pool[rnd() % POOL] = e->result;
		}
	}
	if (rnd() % 5 == 0)
		e->stack = 1 + (uint32_t)(rnd() % 3 ? rnd() % 200 : rnd() % UINT32_MAX);
	if ((e->op == AR_OP_FREE || e->op == AR_OP_REALLOC || e->op == AR_OP_REALLOCARRAY) && rnd() % 6 == 0)
		e->old_size = 1 + rnd_bits() % UINT64_MAX;
}

static int same_event(const ar_event_t *a, const ar_event_t *b)
{
	return a->seq == b->seq && a->seq2 == b->seq2 && a->time_ns == b->time_ns && a->ptr == b->ptr &&
	       a->align == b->align && a->count == b->count && a->size == b->size && a->result == b->result &&
	       a->thread == b->thread && a->stack == b->stack && a->op == b->op && a->error == b->error &&
	       a->old_size == b->old_size;
}

/* ---- the tests ----------------------------------------------------------- */

static void *t_alloc(void *opaque, size_t n)
{
	(void)opaque;
	return malloc(n);
}

static void t_free(void *opaque, void *p)
{
	(void)opaque;
	free(p);
}

static void init_pool(uint64_t seed)
{
	rng_state = seed;
	for (unsigned i = 0; i < POOL; i++)
		pool[i] = 0x7f0000000000ULL + (rnd() % (1u << 20)) * 16;
}

/* Many full and partial blocks through one encoder, each compared with the
 * reference byte for byte; a block of all-distinct pointers fills the
 * pointer map past 3/4 (its fallback), and thousands of blocks wrap nothing
 * but do reuse stale generations. */
static void test_encoder_bytes(void)
{
	init_pool(19);
	ar_mem_t mem = {t_alloc, t_free, NULL};
	ar_enc_t enc;
	EXPECT(ar_enc_init(&enc, &mem) == 0);
	static ref_enc_t ref;
	uint8_t *rcol[AR_NCOLS];
	for (int c = 0; c < AR_NCOLS; c++)
		rcol[c] = malloc(ref_col_max[c] * AR_EVBUF_MAX_EVENTS);
	size_t bound = ar_enc_bound(AR_EVBUF_MAX_EVENTS);
	uint8_t *out = malloc(bound), *rout = malloc(bound), *data = malloc(AR_EVBUF_MAX_BYTES);
	uint64_t seq = 0, time = 0, events = 0;
	ar_evbuf_t b;
	for (unsigned blk = 0; blk < 400; blk++) {
		/* full blocks, partial ones, one-event ones */
		size_t cap = blk % 5 == 0 ? AR_EVENT_SLOT_BYTES * (1 + rnd() % 40) : AR_EVBUF_MAX_BYTES;
		ar_evbuf_reset(&b, data, cap, blk % 7, 4000 + blk % 7);
		int distinct = blk % 50 == 3; /* every pointer new: the map fills */
		for (;;) {
			ar_event_t e;
			rnd_event(&e, blk % 7, &seq, &time, blk % 3 == 0);
			if (distinct && e.result)
				e.result = 0x100000000000ULL + (seq << 4);
			if (distinct && e.ptr)
				e.ptr = 0x200000000000ULL + (seq << 4);
			int rc = ar_evbuf_append(&b, &e);
			if (rc == AR_EFULL)
				break;
			EXPECT(rc == 0);
			events++;
		}
		size_t n = ar_enc_events(&enc, &b, out);
		size_t rn = ref_encode(&ref, &b, rcol, rout);
		EXPECT_U64(n, rn);
		if (n == rn && memcmp(out, rout, n) != 0) {
			size_t i = 0;
			while (out[i] == rout[i])
				i++;
			fprintf(stderr, "block %u: first differing byte at %zu of %zu\n", blk, i, n);
			test_failures++;
		}
		EXPECT(n <= bound);
	}
	EXPECT(events > 1000000);
	ar_enc_free(&enc, &mem);
	for (int c = 0; c < AR_NCOLS; c++)
		free(rcol[c]);
	free(out);
	free(rout);
	free(data);
}

/* The same kind of stream through the writer and back through the reader
 * (the decoder's fast path for most events, its checked path for sized
 * ops, error codes and each column's last bytes), in file and merged order. */
static const char *keep_path;

static void test_decode_back(void)
{
	init_pool(23);
	char path[4096] = "/tmp/allocrr-codec-XXXXXX";
	int fd = keep_path ? open(keep_path, O_RDWR | O_CREAT | O_TRUNC, 0644) : mkstemp(path);
	if (keep_path)
		snprintf(path, sizeof path, "%s", keep_path);
	EXPECT(fd >= 0);
	ar_header_t h;
	ar_header_init(&h);
	h.flags = AR_HDR_SYNTHETIC | AR_HDR_STACKS;
	ar_writer_t *w;
	ar_error_t err;
	EXPECT(ar_writer_open(&w, fd, &h, 1, NULL, &err) == 0);
	enum { NT = 3, N = 300000 };
	ar_evbuf_t b[NT];
	uint8_t *mem = malloc((size_t)NT * AR_EVBUF_MAX_BYTES);
	uint64_t time[NT] = {0}, seq = 0;
	for (uint32_t t = 0; t < NT; t++)
		ar_evbuf_reset(&b[t], mem + (size_t)t * AR_EVBUF_MAX_BYTES, t == 2 ? 64 * 100 : AR_EVBUF_MAX_BYTES, t,
			       100 + t);
	ar_event_t *evs = malloc(N * sizeof *evs);
	for (size_t i = 0; i < N; i++) {
		uint32_t t = (uint32_t)(rnd() % NT);
		uint64_t s = seq;
		rnd_event(&evs[i], t, &s, &time[t], i % 3 == 0);
		seq = s;
		int rc = ar_evbuf_append(&b[t], &evs[i]);
		if (rc == AR_EFULL) {
			EXPECT(ar_writer_write_events(w, &b[t], &err) == 0);
			ar_evbuf_reset(&b[t], b[t].data, t == 2 ? 64 * 100 : AR_EVBUF_MAX_BYTES, t, 100 + t);
			rc = ar_evbuf_append(&b[t], &evs[i]);
		}
		EXPECT(rc == 0);
		evs[i].time_ns &= ~(uint64_t)(AR_TIME_UNIT_NS - 1); /* what the trace keeps */
	}
	for (uint32_t t = 0; t < NT; t++)
		EXPECT(ar_writer_write_events(w, &b[t], &err) == 0);
	EXPECT(ar_writer_close(w, time[0], 1, &err) == 0);
	close(fd);

	ar_reader_t *r;
	EXPECT(ar_reader_open(&r, path, &err) == 0);
	/* file order: each thread's events in order */
	size_t next[NT] = {0}, got = 0;
	ar_event_t e;
	int rc;
	while ((rc = ar_reader_next(r, &e)) == 1) {
		uint32_t t = e.thread;
		while (next[t] < N && evs[next[t]].thread != t)
			next[t]++;
		if (next[t] >= N || !same_event(&e, &evs[next[t]])) {
			fprintf(stderr, "file order: event %zu (seq %llu) differs\n", got, (unsigned long long)e.seq);
			test_failures++;
			break;
		}
		next[t]++;
		got++;
	}
	EXPECT(rc == 0);
	EXPECT_U64(got, N);
	/* merged order: the seqs were drawn in stream order */
	ar_reader_rewind(r);
	got = 0;
	while ((rc = ar_reader_next_merged(r, &e)) == 1) {
		if (got >= N || !same_event(&e, &evs[got])) {
			fprintf(stderr, "merged order: event %zu (seq %llu) differs\n", got, (unsigned long long)e.seq);
			test_failures++;
			break;
		}
		got++;
	}
	EXPECT(rc == 0);
	EXPECT_U64(got, N);
	EXPECT(ar_reader_status(r) == AR_STATUS_COMPLETE);
	ar_reader_close(r);
	if (!keep_path)
		unlink(path);
	free(evs);
	free(mem);
}

int main(int argc, char **argv)
{
	keep_path = argc > 1 ? argv[1] : NULL;
	RUN(test_encoder_bytes);
	RUN(test_decode_back);
	return test_failures != 0;
}
