/*
 * wl_codec.c — the compact encoding of a workload segment (workload.h).
 *
 * Why this encoding: most fields of a 24-byte op are zero or small. A free
 * has no size and no arg; a malloc's size is usually below 16 KiB; a slot
 * tends to be near the stream's previous one (freed slots are reused first
 * in, first out, by the thread that freed them). So each op is one byte
 * that says which fields follow, then those fields as LEB128 varints:
 *
 *   byte 0: bits 0-3 kind; bit 4 a slot follows (slot != AR_WL_NOSLOT);
 *           bit 5 a size follows (size != 0); bit 6 an arg follows
 *           (arg != 0); bit 7 a flags byte follows (flags != 0)
 *   [flags byte] [slot] [size] [arg]
 *
 * A heap call's slot is the zigzag varint of its difference from the
 * previous heap call's slot in the segment (0 before the first); a SAMPLE's
 * or SYNC's slot (a sample index, a stream) is a plain varint and leaves
 * that state alone. A SYNC's size (ops of the other stream to wait for) is
 * the zigzag varint of its difference from the previous SYNC's in the
 * segment: a consumer's dependencies on one producer (every free of a
 * message it was handed) then take a byte or two each, not four. Segments
 * decode on their own: the state starts afresh in each. A malloc of 16-127 bytes into a nearby slot takes 3 bytes, a
 * free 2-3 (docs/BENCHMARKS.md, "Traces larger than RAM", has the measured
 * bytes per event).
 *
 * One op is encoded by ar_wl_encode_op (wl_codec.h), which the compiler
 * calls as it emits each op and ar_wl_encode below calls over an array.
 *
 * The decoder trusts nothing: a cut, an overlong varint, a kind out of
 * range, a slot that does not fit 32 bits, bytes left over or missing all
 * fail the segment.
 */
#include <string.h>

#include "ar_varint.h"
#include "wl_codec.h"
#include "workload.h"

size_t ar_wl_encode(const ar_wl_op_t *ops, uint32_t n, uint8_t *out)
{
	uint8_t *p = out;
	ar_wl_enc_t st = { 0, 0 };
	for (uint32_t i = 0; i < n; i++)
		p = ar_wl_encode_op(&st, ops[i].kind, ops[i].flags, ops[i].slot, ops[i].size, ops[i].arg, p);
	return (size_t)(p - out);
}

/* The decoder's state across a segment's ops. */
typedef struct dstate {
	uint32_t prev;      /* the previous heap call's slot */
	uint64_t prev_sync; /* the previous SYNC's size */
} dstate_t;

/* One op at *pp, checking every byte against end. 0, or -1. */
static int decode_checked(const uint8_t **pp, const uint8_t *end, ar_wl_op_t *op, dstate_t *st)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	if (p == end)
		return -1;
	unsigned b = *p++;
	op->kind = (uint8_t)(b & 0x0fu);
	op->reserved = 0;
	if (op->kind >= AR_WL_NKINDS)
		return -1;
	op->flags = 0;
	if (b & AR_WL_HAS_FLAGS) {
		if (p == end)
			return -1;
		op->flags = *p++;
	}
	op->slot = AR_WL_NOSLOT;
	if (b & AR_WL_HAS_SLOT) {
		if (ar_get_varint(&p, end, &v) != 0 || v > UINT32_MAX)
			return -1;
		if (op->kind < AR_WL_NCALLS) {
			op->slot = st->prev + (uint32_t)ar_unzigzag(v);
			st->prev = op->slot;
		} else {
			op->slot = (uint32_t)v;
		}
	}
	op->size = 0;
	if (b & AR_WL_HAS_SIZE) {
		if (ar_get_varint(&p, end, &op->size) != 0)
			return -1;
		if (op->kind == AR_WL_SYNC)
			st->prev_sync = op->size = st->prev_sync + (uint64_t)ar_unzigzag(op->size);
	}
	op->arg = 0;
	if ((b & AR_WL_HAS_ARG) && ar_get_varint(&p, end, &op->arg) != 0)
		return -1;
	*pp = p;
	return 0;
}

int ar_wl_decode(const uint8_t *in, size_t bytes, ar_wl_op_t *ops, uint32_t n)
{
	const uint8_t *p = in, *end = in + bytes;
	dstate_t st = { 0, 0 };
	for (uint32_t i = 0; i < n; i++)
		if (decode_checked(&p, end, &ops[i], &st) != 0)
			return -1;
	return p == end ? 0 : -1;
}
