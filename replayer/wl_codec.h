/*
 * wl_codec.h — the compact encoding of a workload segment one op at a time
 * (the format is described in wl_codec.c), for the compiler, which encodes
 * each op as it emits it instead of keeping the 24-byte decoded form, and
 * for ar_wl_encode (workload.h), which encodes a whole array of them.
 */
#ifndef AR_WL_CODEC_H
#define AR_WL_CODEC_H

#include <stdint.h>

#include "ar_varint.h"
#include "workload.h"

enum { AR_WL_HAS_SLOT = 1u << 4, AR_WL_HAS_SIZE = 1u << 5, AR_WL_HAS_ARG = 1u << 6,
       AR_WL_HAS_FLAGS = 1u << 7 };

/* What encoding an op depends on besides the op: reset (zeroed) at the
 * start of each segment, which decodes on its own. */
typedef struct ar_wl_enc {
	uint32_t prev;      /* the previous heap call's slot */
	uint64_t prev_sync; /* the previous SYNC's size */
} ar_wl_enc_t;

/* Encode one op at p (room for AR_WL_OP_MAX_BYTES); returns the end. */
static inline uint8_t *ar_wl_encode_op(ar_wl_enc_t *st, unsigned kind, unsigned flags, uint32_t slot,
				       uint64_t size, uint64_t arg, uint8_t *p)
{
	uint8_t *head = p++;
	unsigned b = kind & 0x0fu;
	if (flags) {
		b |= AR_WL_HAS_FLAGS;
		*p++ = (uint8_t)flags;
	}
	if (slot != AR_WL_NOSLOT) {
		b |= AR_WL_HAS_SLOT;
		if (kind < AR_WL_NCALLS) {
			/* the difference as a 32-bit signed value: its zigzag fits 32 bits */
			p = ar_put_varint(p, ar_zigzag((int32_t)(slot - st->prev)));
			st->prev = slot;
		} else {
			p = ar_put_varint(p, slot);
		}
	}
	if (size) {
		b |= AR_WL_HAS_SIZE;
		if (kind == AR_WL_SYNC) {
			p = ar_put_varint(p, ar_zigzag((int64_t)(size - st->prev_sync)));
			st->prev_sync = size;
		} else {
			p = ar_put_varint(p, size);
		}
	}
	if (arg) {
		b |= AR_WL_HAS_ARG;
		p = ar_put_varint(p, arg);
	}
	*head = (uint8_t)b;
	return p;
}

#endif
