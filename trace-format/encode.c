/*
 * encode.c — turn a buffer of event slots into one columnar EVENTS record
 * (SPEC 5). Runs on the writer's thread, never on the traced program's.
 * The slots' layout is format.h's (ar_slot_get reads an event back).
 *
 * Each field goes to its own column so zstd sees runs of like values; times
 * and sequence numbers are per-thread deltas; a pointer is either a
 * reference into the block's history of the other kind (a free names the
 * allocation that returned its pointer, an allocation names the free that
 * released its address) or a delta to the previous pointer, whichever is
 * shorter. Invariant: the pointer map is valid only for entries stamped with
 * the current generation, so starting a block costs nothing.
 */
#include "format.h"

/* Worst-case bytes per event of each column (SPEC 5.2). */
static const size_t col_max[AR_NCOLS] = {1, 20, 10, 22, 23, 5};
/* put_varint may store one byte past a column's last varint. */
#define COL_SLACK 16

/* 32768 entries: a block has at most 2 x 16384 pointers, but distinct
 * addresses are far fewer in practice; past 3/4 load new addresses are
 * simply not remembered (they are coded as deltas), which bounds probing. */
#define MAP_BITS 15
#define MAP_FULL ((1u << MAP_BITS) / 4 * 3)

int ar_enc_init(ar_enc_t *enc, const ar_mem_t *mem)
{
	memset(enc, 0, sizeof *enc);
	for (int c = 0; c < AR_NCOLS; c++)
		if (!(enc->col[c] = mem->alloc(mem->opaque, col_max[c] * AR_EVBUF_MAX_EVENTS + COL_SLACK)))
			return AR_ENOMEM;
	size_t n = (size_t)1 << MAP_BITS;
	if (!(enc->map = mem->alloc(mem->opaque, n * sizeof *enc->map)))
		return AR_ENOMEM;
	memset(enc->map, 0, n * sizeof *enc->map);
	enc->map_mask = (uint32_t)n - 1;
	enc->time_shift = AR_TIME_UNIT_SHIFT;
	return 0;
}

void ar_enc_free(ar_enc_t *enc, const ar_mem_t *mem)
{
	for (int c = 0; c < AR_NCOLS; c++)
		mem->free(mem->opaque, enc->col[c]);
	mem->free(mem->opaque, enc->map);
	memset(enc, 0, sizeof *enc);
}

size_t ar_enc_bound(uint32_t n)
{
	size_t b = 64; /* type, length, thread, os tid, count, column lengths */
	for (int c = 0; c < AR_NCOLS; c++)
		b += col_max[c] * n;
	return b;
}

/* Bytes of v as a varint: 7 bits a byte, without a loop. */
static inline unsigned varint_len(uint64_t v)
{
	unsigned bits = 64 - (unsigned)__builtin_clzll(v | 1);
	return (bits * 37 + 219) >> 8; /* ceil(bits / 7) for bits 1..64 */
}

/* ar_put_varint with values below 2^14 (nearly all) inline and without a
 * branch on their length: both bytes are stored, the second is kept only
 * when needed (COL_SLACK bytes past each column absorb the last one). */
static inline __attribute__((always_inline)) uint8_t *put_varint(uint8_t *q, uint64_t v)
{
	if (__builtin_expect(v < 0x4000, 1)) {
		unsigned two = v >= 0x80;
		q[0] = (uint8_t)(v | two << 7);
		q[1] = (uint8_t)(v >> 7);
		return q + 1 + two;
	}
	return ar_put_varint(q, v);
}

static inline uint32_t map_slot(uint64_t addr)
{
	return (uint32_t)(((addr >> 4) * 0x9E3779B97F4A7C15ULL) >> (64 - MAP_BITS));
}

/* The map entry for addr in this block's generation, created if absent;
 * a scratch entry (never found again) once the map is 3/4 full. */
static inline __attribute__((always_inline)) ar_ptr_entry_t *map_entry(ar_enc_t *enc, uint64_t addr, ar_ptr_entry_t *scratch)
{
	for (uint32_t i = map_slot(addr);; i = (i + 1) & enc->map_mask) {
		ar_ptr_entry_t *m = &enc->map[i];
		if (m->gen != enc->gen) {
			if (enc->map_used >= MAP_FULL) {
				*scratch = (ar_ptr_entry_t){addr, 0, 0, 0};
				return scratch;
			}
			enc->map_used++;
			*m = (ar_ptr_entry_t){addr, enc->gen, 0, 0};
			return m;
		}
		if (m->addr == addr)
			return m;
	}
}

/* Code pointer p (SPEC 5.4). `ref` is 1 + its index in the other history
 * (0 = not there), `nother` that history's length. */
static inline __attribute__((always_inline)) uint8_t *put_pointer(uint8_t *q, uint64_t p, uint64_t prev, uint32_t ref,
								  uint32_t nother)
{
	uint64_t d = p - prev;
	uint64_t rv = (uint64_t)(nother - ref) << 1; /* k - 1, k = nother - (ref - 1) */
	if (__builtin_expect((d & 15) == 0, 1)) {
		/* The common case, the shorter of reference and 16-byte delta
		 * chosen without a branch (which one wins is random). */
		uint64_t dv = ar_zigzag((int64_t)d >> 4) << 2 | AR_PTR_DELTA16;
		int use_ref = (ref != 0) & (varint_len(rv) <= varint_len(dv));
		return put_varint(q, use_ref ? rv : dv);
	}
	if (ref && varint_len(rv) <= 1 + varint_len(ar_zigzag((int64_t)d)))
		return put_varint(q, rv);
	*q++ = AR_PTR_DELTA;
	return ar_put_varint(q, ar_zigzag((int64_t)d));
}

/* The encoder's running state over one block: the column cursors and what
 * SPEC 5 codes as deltas. A local of ar_enc_events, never escaping, so the
 * compiler keeps it in registers. */
typedef struct enc_state {
	uint8_t *qo, *qs, *qt, *qp, *qa, *qk;
	uint64_t prev_seq, prev_time, prev_ptr;
	uint32_t nin, nout;
	ar_ptr_entry_t scratch;
} enc_state_t;

/* Code event v, whose op has field mask f, into the columns. Inlined
 * with a constant v and f for the short slots (format.h), so a malloc or a
 * free runs only its own fields' code. */
static inline __attribute__((always_inline)) void enc_event(ar_enc_t *enc, enc_state_t *st,
							    const ar_slot_event_t *v, unsigned f)
{
	unsigned op = v->op, sized = v->old_size != 0;
	unsigned h = op;
	/* SPEC 5.1: an event with an old_size is written as its sized op. */
	if (__builtin_expect(sized, 0))
		h = ar_sized_code(op);
	if (v->stack)
		h |= AR_EV_STACK;
	if ((f & AR_F_RESULT) && v->result == 0)
		h |= AR_EV_NULL_RESULT | (v->error ? AR_EV_ERROR : 0);
	*st->qo++ = (uint8_t)h;
	st->qs = put_varint(st->qs, v->seq - st->prev_seq - 1);
	st->prev_seq = v->seq;
	if (f & AR_F_SEQ2) {
		st->qs = put_varint(st->qs, v->seq2 - v->seq - 1);
		st->prev_seq = v->seq2;
	}
	uint64_t t = v->time_ns >> enc->time_shift;
	st->qt = put_varint(st->qt, ar_zigzag((int64_t)(t - st->prev_time)));
	st->prev_time = t;
	if (f & AR_F_PTR) {
		ar_ptr_entry_t *m = map_entry(enc, v->ptr, &st->scratch);
		st->qp = put_pointer(st->qp, v->ptr, st->prev_ptr, m->last_out, st->nout);
		m->last_in = (uint16_t)++st->nin;
		st->prev_ptr = v->ptr;
	}
	if (__builtin_expect(sized, 0)) {
		/* old_size in the align field: before count and size */
		st->qa = put_varint(st->qa, v->old_size);
		if ((f & (AR_F_ALIGN | AR_F_COUNT)) && op != AR_OP_REALLOC)
			st->qa = put_varint(st->qa, v->aux);
		if ((f & AR_F_SIZE) && op != AR_OP_FREE)
			st->qa = put_varint(st->qa, v->size);
	} else {
		if (f & (AR_F_ALIGN | AR_F_COUNT))
			st->qa = put_varint(st->qa, v->aux);
		if (f & AR_F_SIZE)
			st->qa = put_varint(st->qa, v->size);
	}
	if (h & AR_EV_ERROR)
		st->qa = put_varint(st->qa, v->error);
	if ((f & AR_F_RESULT) && v->result) {
		ar_ptr_entry_t *m = map_entry(enc, v->result, &st->scratch);
		st->qp = put_pointer(st->qp, v->result, st->prev_ptr, m->last_in, st->nin);
		m->last_out = (uint16_t)++st->nout;
		st->prev_ptr = v->result;
	}
	if (v->stack)
		st->qk = put_varint(st->qk, v->stack);
}

size_t ar_enc_events(ar_enc_t *enc, const ar_evbuf_t *b, uint8_t *out)
{
	uint8_t *q[AR_NCOLS];
	if (++enc->gen == 0) { /* generation wrapped: stale stamps could match */
		memset(enc->map, 0, ((size_t)enc->map_mask + 1) * sizeof *enc->map);
		enc->gen = 1;
	}
	enc->map_used = 0;
	enc_state_t st = {
		.qo = enc->col[AR_COL_OPS],
		.qs = enc->col[AR_COL_SEQ],
		.qt = enc->col[AR_COL_TIME],
		.qp = enc->col[AR_COL_PTR],
		.qa = enc->col[AR_COL_ARGS],
		.qk = enc->col[AR_COL_STACK],
	};
	const ar_slot_t *s = (const ar_slot_t *)(const void *)b->data, *end = s + b->nslots;
	while (s < end) {
		/* The map is bigger than L2: fetch the entries a few events
		 * ahead. Slots differ in size, so this looks 6 slots ahead and
		 * takes both words that are pointers in a short slot and in a
		 * long event's second slot (a wasted prefetch otherwise). */
		if (s + 6 < end) {
			__builtin_prefetch(&enc->map[map_slot(s[6].a)]);
			__builtin_prefetch(&enc->map[map_slot(s[6].b)]);
		}
		uint64_t head = s->head;
		if (__builtin_expect(!(head & (AR_SLOT_LONG | AR_SLOT_SIZED)), 1)) {
			/* a short slot without an old_size: the fields are known */
			unsigned op = (unsigned)(head >> 56) & (AR_OP_LIMIT - 1);
			ar_slot_event_t v = {.seq = head & AR_SLOT_SEQ_MAX, .time_ns = s->time_ns, .op = (uint8_t)op};
			if (op == AR_OP_FREE) {
				v.ptr = s->a;
				enc_event(enc, &st, &v, AR_F_PTR);
			} else { /* malloc, valloc, pvalloc */
				v.size = s->a;
				v.result = s->b;
				enc_event(enc, &st, &v, AR_F_SIZE | AR_F_RESULT);
			}
			s++;
			continue;
		}
		ar_slot_event_t v;
		s += ar_slot_get(s, &v);
		enc_event(enc, &st, &v, ar_known_op_fields[v.op]);
	}
	q[AR_COL_OPS] = st.qo;
	q[AR_COL_SEQ] = st.qs;
	q[AR_COL_TIME] = st.qt;
	q[AR_COL_PTR] = st.qp;
	q[AR_COL_ARGS] = st.qa;
	q[AR_COL_STACK] = st.qk;

	/* Body: thread, os tid, count, then each column as length + bytes. */
	uint8_t head[64], *p = head;
	p = ar_put_varint(p, b->thread);
	p = ar_put_varint(p, b->os_tid);
	p = ar_put_varint(p, b->nevents);
	size_t body = (size_t)(p - head);
	for (int c = 0; c < AR_NCOLS; c++) {
		size_t n = (size_t)(q[c] - enc->col[c]);
		body += varint_len(n) + n;
	}
	uint8_t *o = ar_put_varint(out, AR_REC_EVENTS);
	o = ar_put_varint(o, body);
	memcpy(o, head, (size_t)(p - head));
	o += p - head;
	for (int c = 0; c < AR_NCOLS; c++) {
		size_t n = (size_t)(q[c] - enc->col[c]);
		o = ar_put_varint(o, n);
		memcpy(o, enc->col[c], n);
		o += n;
	}
	return (size_t)(o - out);
}
