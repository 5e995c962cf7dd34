/*
 * decode.c — decode the events of one columnar EVENTS record (SPEC 5),
 * checking every field: the op must be in the header's op table, reserved
 * bits clear, sequence numbers strictly increasing within the thread,
 * pointer references inside the history, no varint past its column, and at
 * the end every column used up exactly.
 *
 * Two paths decode the same bytes to the same events: the fast one of
 * evdec_fast.h for the common events, and the checked one below for the
 * rest and for every error message.
 */
#include <stdio.h>

#include "evdec_fast.h"

#define BAD(...)                                     \
	do {                                         \
		snprintf(why, why_len, __VA_ARGS__); \
		return AR_EFORMAT;                   \
	} while (0)

static const char *const col_names[AR_NCOLS] = {"op", "sequence", "time", "pointer", "argument", "stack"};

int ar_evdec_open(ar_evdec_t *d, const uint8_t *p, const uint8_t *end, const ar_header_t *hdr, char *why,
		  size_t why_len)
{
	memset(d, 0, sizeof *d);
	d->body = p;
	d->hdr = hdr;
	uint64_t thread, os_tid, count;
	if (ar_get_varint(&p, end, &thread) || ar_get_varint(&p, end, &os_tid) || ar_get_varint(&p, end, &count))
		BAD("EVENTS record head is cut short");
	if (thread > UINT32_MAX || count == 0 || count > AR_EVBUF_MAX_EVENTS)
		BAD("EVENTS record: thread %llu or count %llu out of range (count limit %u)",
		    (unsigned long long)thread, (unsigned long long)count, AR_EVBUF_MAX_EVENTS);
	for (int c = 0; c < AR_NCOLS; c++) {
		uint64_t n;
		if (ar_get_varint(&p, end, &n) || n > (uint64_t)(end - p))
			BAD("EVENTS record: %s column length runs past the record", col_names[c]);
		d->col[c] = p;
		d->col_end[c] = p + n;
		p += n;
	}
	if (p != end)
		BAD("EVENTS record: %zu bytes after the last column", (size_t)(end - p));
	if ((uint64_t)(d->col_end[AR_COL_OPS] - d->col[AR_COL_OPS]) != count)
		BAD("EVENTS record: op column has %zu bytes for %llu events",
		    (size_t)(d->col_end[AR_COL_OPS] - d->col[AR_COL_OPS]), (unsigned long long)count);
	d->thread = (uint32_t)thread;
	d->os_tid = os_tid;
	d->count = (uint32_t)count;
	for (int c = 0; c < AR_NCOLS; c++)
		d->fast_end[c] = d->col_end[c] - d->col[c] >= FAST_MARGIN ? (uintptr_t)(d->col_end[c] - FAST_MARGIN) : 0;
	d->time_max = UINT64_MAX / hdr->time_unit_ns;
	for (unsigned h = 0; h < 256; h++) {
		unsigned op = h & AR_EV_OP_MASK, f = hdr->ops[op].fields & AR_F_ALL;
		if (op && op <= AR_OP_MAX_KNOWN && hdr->ops[op].name[0] && !(h & AR_EV_ERROR) &&
		    (!(h & AR_EV_NULL_RESULT) || (f & AR_F_RESULT)))
			d->fast_fields[h] = (uint8_t)(FAST_OK | f);
	}
	return 0;
}

#define GET(c, var, what)                                                                         \
	do {                                                                                      \
		if (ar_get_varint(&d->col[c], d->col_end[c], &(var)) != 0)                        \
			BAD("event %u: %s runs past the %s column", d->seen, what, col_names[c]); \
	} while (0)

/* Decode one pointer code (SPEC 5.4); `hist`/`n` is the other history. */
static inline __attribute__((always_inline)) int get_pointer(ar_evdec_t *d, uint64_t *out, const uint64_t *hist, uint32_t n,
							   char *why, size_t why_len)
{
	uint64_t v;
	GET(AR_COL_PTR, v, "pointer");
	if ((v & 1) == AR_PTR_REF) {
		if ((v >> 1) >= n)
			BAD("event %u: pointer reference %llu back, but the history holds %u", d->seen,
			    (unsigned long long)(v >> 1) + 1, n);
		*out = hist[n - 1 - (v >> 1)];
	} else if ((v & 3) == AR_PTR_DELTA16) {
		*out = d->prev_ptr + ((uint64_t)ar_unzigzag(v >> 2) << 4);
	} else if (v == AR_PTR_DELTA) {
		GET(AR_COL_PTR, v, "pointer delta");
		*out = d->prev_ptr + (uint64_t)ar_unzigzag(v);
	} else {
		BAD("event %u: pointer code 0x%llx is not defined", d->seen, (unsigned long long)v);
	}
	d->prev_ptr = *out;
	return 0;
}

/* The checked path: decode one event from d's state, or say why not. */
static __attribute__((noinline, cold)) int evdec_checked(ar_evdec_t *d, ar_event_t *e, char *why, size_t why_len)
{
	if (d->seen == d->count) {
		for (int c = 0; c < AR_NCOLS; c++)
			if (d->col[c] != d->col_end[c])
				BAD("EVENTS record: %zu bytes left in the %s column after %u events",
				    (size_t)(d->col_end[c] - d->col[c]), col_names[c], d->count);
		return 0;
	}
	uint8_t h = *d->col[AR_COL_OPS]++;
	unsigned op = h & AR_EV_OP_MASK;
	if ((h & AR_EV_ERROR) && !(h & AR_EV_NULL_RESULT))
		BAD("event %u: error flag without the null-result flag in op byte 0x%02x", d->seen, h);
	if (op == 0 || d->hdr->ops[op].name[0] == 0)
		BAD("event %u: op code %u is not in the header's op table", d->seen, op);
	unsigned f = d->hdr->ops[op].fields;
	if ((h & AR_EV_NULL_RESULT) && !(f & AR_F_RESULT))
		BAD("event %u: null-result flag on %s, which returns nothing", d->seen, d->hdr->ops[op].name);

	/* Every field is assigned below (no memset: this is the decode loop). */
	e->op = (uint8_t)op;
	e->thread = d->thread;
	e->seq2 = e->ptr = e->align = e->count = e->size = e->result = 0;
	e->stack = 0;
	e->error = 0;
	e->old_size = 0;
	uint64_t v;
	GET(AR_COL_SEQ, v, "seq");
	if (v >= UINT64_MAX - d->prev_seq)
		BAD("event %u: seq overflows", d->seen);
	e->seq = d->prev_seq + v + 1;
	d->prev_seq = e->seq;
	if (f & AR_F_SEQ2) {
		GET(AR_COL_SEQ, v, "seq2");
		if (v >= UINT64_MAX - e->seq)
			BAD("event %u: seq2 overflows", d->seen);
		e->seq2 = e->seq + v + 1;
		d->prev_seq = e->seq2;
	}
	GET(AR_COL_TIME, v, "time");
	int64_t dt = ar_unzigzag(v);
	/* SPEC 5.3: the running time stays in 0 .. (2^64-1) / unit. */
	if ((dt < 0 && (uint64_t)-(dt + 1) >= d->prev_time) ||
	    (dt > 0 && (uint64_t)dt > UINT64_MAX / d->hdr->time_unit_ns - d->prev_time))
		BAD("event %u: time delta %lld leaves the range of the clock", d->seen, (long long)dt);
	d->prev_time += (uint64_t)dt;
	e->time_ns = d->prev_time * d->hdr->time_unit_ns;
	if (f & AR_F_PTR) {
		if (get_pointer(d, &e->ptr, d->outs, d->nout, why, why_len))
			return AR_EFORMAT;
		d->ins[d->nin++] = e->ptr;
	}
	if (f & AR_F_ALIGN)
		GET(AR_COL_ARGS, e->align, "alignment");
	if (f & AR_F_COUNT)
		GET(AR_COL_ARGS, e->count, "count");
	if (f & AR_F_SIZE)
		GET(AR_COL_ARGS, e->size, "size");
	if (h & AR_EV_ERROR) {
		GET(AR_COL_ARGS, v, "error code");
		if (v == 0 || v > 0xffff)
			BAD("event %u: error code %llu out of range", d->seen, (unsigned long long)v);
		e->error = (uint32_t)v;
	}
	if ((f & AR_F_RESULT) && !(h & AR_EV_NULL_RESULT)) {
		if (get_pointer(d, &e->result, d->ins, d->nin, why, why_len))
			return AR_EFORMAT;
		if (e->result == 0) /* SPEC 5.3: a NULL result is said by the flag only */
			BAD("event %u: result 0 without the null-result flag", d->seen);
		d->outs[d->nout++] = e->result;
	}
	/* SPEC 5.1, since 1.3: a sized op is its base op with the old block's
	 * size in the align field (the header checked its name and mask). */
	if (__builtin_expect(op > AR_OP_MAX_KNOWN, 0) && ar_hdr_since(d->hdr, 1, 3) && ar_sized_base(op)) {
		e->op = (uint8_t)ar_sized_base(op);
		e->old_size = e->align;
		e->align = 0;
	}
	if (h & AR_EV_STACK) {
		GET(AR_COL_STACK, v, "stack id");
		if (v == 0 || v > UINT32_MAX)
			BAD("event %u: stack id %llu out of range", d->seen, (unsigned long long)v);
		e->stack = (uint32_t)v;
	}
	d->seen++;
	return 1;
}


/* The fast path's long varints (evdec_fast.h); the checked path says why
 * one is refused. */
fvar_t ar_evdec_long(const uint8_t *p)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		uint8_t b = *p++;
		if (shift == 63 && b > 1)
			break;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80)
			return (fvar_t){p, v};
	}
	return (fvar_t){NULL, 0};
}

int ar_evdec_next(ar_evdec_t *d, ar_event_t *e, char *why, size_t why_len)
{
	if (ar_evdec_fast(d, e))
		return 1;
	return evdec_checked(d, e, why, why_len);
}
