/*
 * decode.c — decode the events of one EVENTS record (SPEC 5.3), checking
 * every field: the op must be in the header's op table, reserved bits clear,
 * sequence numbers strictly increasing within the thread, no varint may run
 * past the record.
 */
#include <stdio.h>

#include "format.h"

#define BAD(...)                                       \
	do {                                           \
		snprintf(why, why_len, __VA_ARGS__);   \
		return AR_EFORMAT;                     \
	} while (0)

#define GET(var, what)                                                                              \
	do {                                                                                        \
		if (ar_get_varint(&p, d->end, &(var)) != 0)                                         \
			BAD("event at record byte %zu: %s runs past the record or is not a varint", \
			    (size_t)(start - d->start), what);                                      \
	} while (0)

#define GETPTR(var, prev, what)                                                                     \
	do {                                                                                        \
		if (ar_get_ptr(&p, d->end, prev, &(var)) != 0)                                      \
			BAD("event at record byte %zu: %s runs past the record or is malformed",    \
			    (size_t)(start - d->start), what);                                      \
	} while (0)

int ar_evdec_next(ar_evdec_t *d, ar_event_t *e, char *why, size_t why_len)
{
	const uint8_t *p = d->p, *start = d->p;
	if (p >= d->end)
		return 0;
	uint8_t h = *p++;
	unsigned op = h & AR_EV_OP_MASK;
	if (h & AR_EV_RESERVED)
		BAD("event at record byte %zu: reserved bit 7 set in header byte 0x%02x", (size_t)(start - d->start), h);
	if (op == 0 || d->hdr->ops[op].name[0] == 0)
		BAD("event at record byte %zu: op code %u is not in the header's op table", (size_t)(start - d->start), op);
	unsigned f = d->hdr->ops[op].fields;
	if ((h & AR_EV_NULL_RESULT) && !(f & AR_F_RESULT))
		BAD("event at record byte %zu: null-result flag on %s, which returns nothing",
		    (size_t)(start - d->start), d->hdr->ops[op].name);

	memset(e, 0, sizeof *e);
	e->op = (uint8_t)op;
	e->thread = d->thread;
	uint64_t v;
	GET(v, "seq");
	if (v >= UINT64_MAX - d->prev_seq)
		BAD("event at record byte %zu: seq overflows", (size_t)(start - d->start));
	e->seq = d->prev_seq + v + 1;
	uint64_t last = e->seq;
	if (f & AR_F_SEQ2) {
		GET(v, "seq2");
		if (v >= UINT64_MAX - e->seq)
			BAD("event at record byte %zu: seq2 overflows", (size_t)(start - d->start));
		e->seq2 = e->seq + v + 1;
		last = e->seq2;
	}
	GET(v, "time");
	uint64_t t = d->prev_time + (uint64_t)ar_unzigzag(v);
	e->time_ns = t * d->hdr->time_unit_ns;
	uint64_t prev_ptr = d->prev_ptr;
	if (f & AR_F_PTR) {
		GETPTR(e->ptr, prev_ptr, "pointer");
		prev_ptr = e->ptr;
	}
	if (f & AR_F_ALIGN)
		GET(e->align, "alignment");
	if (f & AR_F_COUNT)
		GET(e->count, "count");
	if (f & AR_F_SIZE)
		GET(e->size, "size");
	if ((f & AR_F_RESULT) && !(h & AR_EV_NULL_RESULT)) {
		GETPTR(e->result, prev_ptr, "result");
		prev_ptr = e->result;
		if (e->result == 0) /* SPEC 5.3: a NULL result is said by the flag only */
			BAD("event at record byte %zu: result 0 without the null-result flag", (size_t)(start - d->start));
	}
	if (h & AR_EV_STACK) {
		GET(v, "stack id");
		if (v == 0 || v > UINT32_MAX)
			BAD("event at record byte %zu: stack id %llu out of range", (size_t)(start - d->start),
			    (unsigned long long)v);
		e->stack = (uint32_t)v;
	}
	d->p = p;
	d->prev_seq = last;
	d->prev_time = t;
	d->prev_ptr = prev_ptr;
	return 1;
}
