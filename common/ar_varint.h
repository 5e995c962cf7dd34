/*
 * ar_varint.h — LEB128 varints and zigzag, the one implementation the trace
 * format (SPEC 5.4) and the replayer's workload codec share.
 *
 * Invariants: ar_put_varint writes at most 10 bytes; ar_get_varint never
 * reads at or past `end` and refuses a cut or overlong varint (more than 10
 * bytes, or a 10th byte above 1: a value beyond 64 bits).
 */
#ifndef AR_VARINT_H
#define AR_VARINT_H

#include <stdint.h>

static inline uint64_t ar_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t ar_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* Write v as an LEB128 varint at p (at most 10 bytes); return the end. */
static inline uint8_t *ar_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Read a varint from [*pp, end). Returns 0 and advances *pp, or -1 when the
 * bytes end first or the value does not fit 64 bits (SPEC 5.4). */
static inline int ar_get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	if (p < end && *p < 0x80) { /* the common one-byte case */
		*out = *p;
		*pp = p + 1;
		return 0;
	}
	if (end - p >= 2 && p[1] < 0x80) { /* and the two-byte one */
		*out = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		*pp = p + 2;
		return 0;
	}
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (p >= end)
			return -1;
		uint8_t b = *p++;
		if (shift == 63 && b > 1)
			return -1;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80) {
			*out = v;
			*pp = p;
			return 0;
		}
	}
	return -1;
}

#endif
