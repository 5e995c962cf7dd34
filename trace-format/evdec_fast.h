/*
 * evdec_fast.h — internal to trace-format/: the fast path of ar_evdec_next
 * (decode.c), inline so the reader's iteration (iter.c) decodes an event
 * without a call.
 *
 * It takes an event of a v1 op without an error code, with every column it
 * reads at least FAST_MARGIN bytes from its end, so its varints need no
 * bounds checks; it changes the decoder's state only once the whole event
 * passed every check SPEC 5 makes. Anything else (a sized op, an error
 * code, a column's last bytes, an overlong varint, any rule broken, the end
 * of the record) it leaves to ar_evdec_next's checked path, which decodes
 * the event again from the same state and says what is wrong.
 */
#ifndef AR_EVDEC_FAST_H
#define AR_EVDEC_FAST_H

#include "format.h"

/* More than one event reads from one column: at most 4 varints of at most
 * 10 bytes (the pointer column: two pointer codes, each with its delta). */
#define FAST_MARGIN 48
/* In ar_evdec_t.fast_fields: the fast path may decode this op. */
#define FAST_OK 0x80u

/* A varint read by the fast path: where it ends (NULL: refused) and its value. */
typedef struct {
	const uint8_t *end;
	uint64_t val;
} fvar_t;

/* A varint of 3 to 10 bytes at p, which has 10 readable bytes; end NULL
 * when it does not fit 64 bits (decode.c). */
fvar_t ar_evdec_long(const uint8_t *p);

/* Read a varint from p (10 readable bytes) into v, or leave the fast path. */
#define FGET(p, v)                                                              \
	do {                                                                    \
		unsigned b0_ = (p)[0], b1_ = (p)[1], c_ = b0_ >> 7;             \
		if (__builtin_expect((c_ & (b1_ >> 7)) == 0, 1)) {              \
			(v) = (b0_ & 0x7f) | ((uint64_t)(b1_ << 7) & -(uint64_t)c_); \
			(p) += 1 + c_;                                          \
		} else {                                                        \
			fvar_t r_ = ar_evdec_long(p);                           \
			if (!r_.end)                                            \
				goto slow;                                      \
			(p) = r_.end;                                           \
			(v) = r_.val;                                           \
		}                                                               \
	} while (0)

/* Decode one pointer code (SPEC 5.4) into out against history hist[n]. */
#define FPTR(out, hist, n)                                                      \
	do {                                                                    \
		uint64_t v_;                                                    \
		FGET(pp, v_);                                                   \
		if ((v_ & 1) == AR_PTR_REF) {                                   \
			if (__builtin_expect((v_ >> 1) >= (n), 0))              \
				goto slow;                                      \
			(out) = (hist)[(n) - 1 - (v_ >> 1)];                    \
		} else if ((v_ & 3) == AR_PTR_DELTA16) {                        \
			(out) = prev_ptr + ((uint64_t)ar_unzigzag(v_ >> 2) << 4); \
		} else if (v_ == AR_PTR_DELTA) {                                \
			FGET(pp, v_);                                           \
			(out) = prev_ptr + (uint64_t)ar_unzigzag(v_);           \
		} else {                                                        \
			goto slow;                                              \
		}                                                               \
		prev_ptr = (out);                                               \
	} while (0)

/* Decode the next event straight into *e and return 1, or return 0 for the
 * checked path to decode it: d is then unchanged (the entry past the end of
 * its input history may have been written) and *e unspecified. The
 * decoder's own state stays in locals until the event is accepted
 * (restrict: e is never part of d). */
static inline __attribute__((always_inline)) int ar_evdec_fast(ar_evdec_t *restrict d, ar_event_t *restrict e)
{
	if (__builtin_expect(d->seen >= d->count, 0))
		return 0;
	const uint8_t *ps = d->col[AR_COL_SEQ], *pt = d->col[AR_COL_TIME], *pp = d->col[AR_COL_PTR],
		      *pa = d->col[AR_COL_ARGS];
	unsigned h = *d->col[AR_COL_OPS]; /* ar_evdec_open: one op byte per event */
	unsigned f = d->fast_fields[h];
	if (__builtin_expect(!(f & FAST_OK), 0) ||
	    __builtin_expect(((uintptr_t)ps > d->fast_end[AR_COL_SEQ]) | ((uintptr_t)pt > d->fast_end[AR_COL_TIME]) |
				     ((uintptr_t)pp > d->fast_end[AR_COL_PTR]) |
				     ((uintptr_t)pa > d->fast_end[AR_COL_ARGS]),
			     0))
		goto slow;
	uint64_t prev_seq = d->prev_seq, prev_time = d->prev_time, prev_ptr = d->prev_ptr, v;
	uint32_t nin = d->nin, nout = d->nout;
	e->op = (uint8_t)(h & AR_EV_OP_MASK);
	e->thread = d->thread;
	e->seq2 = e->ptr = e->align = e->count = e->size = e->result = 0;
	e->stack = 0;
	e->error = 0;
	e->old_size = 0;
	FGET(ps, v);
	if (__builtin_expect(v >= UINT64_MAX - prev_seq, 0))
		goto slow;
	e->seq = prev_seq = prev_seq + v + 1;
	if (f & AR_F_SEQ2) {
		FGET(ps, v);
		if (__builtin_expect(v >= UINT64_MAX - prev_seq, 0))
			goto slow;
		e->seq2 = prev_seq = prev_seq + v + 1;
	}
	FGET(pt, v);
	/* SPEC 5.3: the running time stays in 0 .. (2^64-1) / unit: a step
	 * back must not wrap below 0, one forward neither wrap nor pass it. */
	uint64_t t = prev_time + (uint64_t)ar_unzigzag(v);
	if (__builtin_expect((v & 1) ? t > prev_time : (t < prev_time || t > d->time_max), 0))
		goto slow;
	prev_time = t;
	e->time_ns = prev_time * d->hdr->time_unit_ns;
	if (f & AR_F_PTR) {
		FPTR(e->ptr, d->outs, nout);
		d->ins[nin++] = e->ptr; /* a realloc's result may name it; rewritten if refused */
	}
	if (f & AR_F_ALIGN)
		FGET(pa, e->align);
	if (f & AR_F_COUNT)
		FGET(pa, e->count);
	if (f & AR_F_SIZE)
		FGET(pa, e->size);
	if ((f & AR_F_RESULT) && !(h & AR_EV_NULL_RESULT)) {
		FPTR(e->result, d->ins, nin);
		if (__builtin_expect(e->result == 0, 0)) /* SPEC 5.3: NULL is said by the flag only */
			goto slow;
		d->outs[nout++] = e->result;
	}
	if (h & AR_EV_STACK) {
		const uint8_t *pk = d->col[AR_COL_STACK];
		if ((uintptr_t)pk > d->fast_end[AR_COL_STACK])
			goto slow;
		FGET(pk, v);
		if (__builtin_expect(v == 0 || v > UINT32_MAX, 0))
			goto slow;
		e->stack = (uint32_t)v;
		d->col[AR_COL_STACK] = pk;
	}

	/* Accepted: the decoder moves on. */
	d->col[AR_COL_OPS]++;
	d->col[AR_COL_SEQ] = ps;
	d->col[AR_COL_TIME] = pt;
	d->col[AR_COL_PTR] = pp;
	d->col[AR_COL_ARGS] = pa;
	d->prev_seq = prev_seq;
	d->prev_time = prev_time;
	d->prev_ptr = prev_ptr;
	d->nin = nin;
	d->nout = nout;
	d->seen++;
	return 1;
slow:
	return 0;
}

#endif
