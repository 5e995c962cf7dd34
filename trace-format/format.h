/*
 * format.h — internal to trace-format/: the constants of SPEC.md; the
 * varint primitives every encoder and decoder shares are common/ar_varint.h
 * (the workload codec uses them too).
 *
 * Invariants: encoders never write past the `end` they are given (callers
 * size buffers with ar_enc_bound() or check); decoders never read past
 * `end` and report a short or overlong varint as failure instead.
 */
#ifndef AR_FORMAT_H
#define AR_FORMAT_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "ar_trace.h"
#include "ar_varint.h"

/* SPEC 2: frame magics. */
#define AR_ZSTD_MAGIC 0xFD2FB528u
#define AR_SKIP_MAGIC_MASK 0xFFFFFFF0u
#define AR_SKIP_MAGIC_BASE 0x184D2A50u
#define AR_HEADER_MAGIC 0x184D2A50u     /* skippable frame, nibble 0: the header */
#define AR_DESCRIPTOR_MAGIC 0x184D2A51u /* skippable frame, nibble 1: a block descriptor */
#define AR_FILE_MAGIC "ALLOCRRT"         /* first 8 payload bytes of the header frame */
#define AR_FILE_MAGIC_LEN 8

/* SPEC 3.2: block kinds. */
enum { AR_BLOCK_EVENTS = 1, AR_BLOCK_META = 2 };

/* True when header h's version is major.minor or later: every later major
 * keeps what the earlier ones had (2.0 holds all of 1.3). */
static inline int ar_hdr_since(const ar_header_t *h, unsigned major, unsigned minor)
{
	return h->version_major > major || (h->version_major == major && h->version_minor >= minor);
}

/* SPEC 3.4, since 2.0: chained events blocks. The descriptor's chain field;
 * the longest chain a reader accepts (decoding a block may need that many
 * decompressions) and the longest the writer makes. */
enum { AR_CHAIN_NONE = 0, AR_CHAIN_PREVIOUS = 1 };
#define AR_LIMIT_CHAIN 64u
#define AR_WRITER_CHAIN_MAX 16u

/* SPEC 6: record types inside a decoded block. */
enum {
	AR_REC_EVENTS = 1,
	AR_REC_THREAD_START = 2,
	AR_REC_THREAD_EXIT = 3,
	AR_REC_THREAD_NAME = 4,
	AR_REC_STACK = 5,
	AR_REC_MODULE = 6,
	AR_REC_FOOTER = 7,
	AR_REC_ALLOCATOR = 8,  /* since 1.1 */
	AR_REC_RSS_SAMPLE = 9, /* since 1.1 */
	AR_REC_PROCESS = 10,   /* since 1.1 */
	AR_REC_WINDOW = 11,    /* since 1.3 */
};

/* SPEC 5.3: the event header byte. */
#define AR_EV_OP_MASK 0x1fu
#define AR_EV_STACK 0x20u
#define AR_EV_NULL_RESULT 0x40u
#define AR_EV_ERROR 0x80u /* an error code follows in the args column */

/* SPEC 7: limits a reader enforces. */
#define AR_LIMIT_HEADER_BYTES (1u << 20)
#define AR_LIMIT_DESCRIPTOR_BYTES 256u
#define AR_LIMIT_RAW_BLOCK (4u << 20)
#define AR_LIMIT_NAME 31u
#define AR_LIMIT_PATH 511u
#define AR_LIMIT_BUILD_ID 64u
#define AR_LIMIT_SONAME 127u
#define AR_LIMIT_ALLOC_VERSION 63u
#define AR_LIMIT_HEAP_SOURCE 63u /* SPEC 6.11 */
/* RSS samples a reader keeps (24 bytes each: 48 MiB); the recorder halves
 * its sampling rate every AR_RSS_THIN_EVERY samples, so a recording would
 * need about 2^32 times 11 minutes to reach it. */
#define AR_LIMIT_RSS_SAMPLES (1u << 21)

static inline void ar_put_u32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t ar_get_u32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Field masks of the ops SPEC 5.2 defines, indexed by op code (0 = unknown). */
extern const uint8_t ar_known_op_fields[AR_OP_LIMIT];

/* SPEC 5.1, since 1.3: the sized ops, a free or realloc that carries the
 * old block's usable size (ar_event_t.old_size) in its align field. They
 * exist only on disk: the decoder turns them back into their base op. */
enum { AR_WIRE_FREE_SIZED = 11, AR_WIRE_REALLOC_SIZED = 12, AR_WIRE_REALLOCARRAY_SIZED = 13, AR_WIRE_SIZED_LAST = 13 };
/* The base op (AR_OP_FREE ...) of sized op `code`, or 0; its name and mask. */
unsigned ar_sized_base(unsigned code);
const char *ar_sized_name(unsigned code);
unsigned ar_sized_fields(unsigned code);
/* The sized op that carries base op `op` with an old_size, or 0. */
unsigned ar_sized_code(unsigned op);

/*
 * The slots of an event buffer (ar_evbuf_t.data): AR_EVENT_SLOT_BYTES (32)
 * each, no encoding. The common events (malloc, free, valloc, pvalloc
 * without a stack or an error code: what the recorder's fast path stores
 * nearly always) take one slot, every other event two, a reallocarray with
 * an old_size three. One slot is half a cache line: the recorder's thread
 * writes each line once and the writer's thread reads it once, so the
 * bytes an event occupies are what moves between the two cores
 * (docs/BENCHMARKS.md, "the recorder's slot traffic").
 *
 * Short form (one slot): head = seq | op << 56 (seq below 2^56, the long
 * form otherwise), then the time, then a = size and b = result for an
 * allocation, a = ptr and b = old_size (AR_SLOT_SIZED set) or 0 for a free.
 * Long form: slot 0 head = AR_SLOT_LONG | sized | op << 56 | error << 32 |
 * stack, time, a = seq, b = seq2; slot 1 (ar_slot_ext_t) ptr, result, size,
 * aux; a sized event's old_size in the field its op does not use (size for
 * a free, aux for a realloc) or, for a reallocarray, in slot 2's head.
 */
typedef struct ar_slot {
	uint64_t head, time_ns, a, b;
} ar_slot_t;
typedef struct ar_slot_ext {
	uint64_t ptr, result, size, aux;
} ar_slot_ext_t;
_Static_assert(sizeof(ar_slot_t) == AR_EVENT_SLOT_BYTES, "slot size is part of the evbuf contract");
_Static_assert(sizeof(ar_slot_ext_t) == AR_EVENT_SLOT_BYTES, "a long event's second slot");
_Static_assert(AR_OP_LIMIT <= 32, "op codes fit bits 56-60 of a slot's head");
#define AR_SLOT_LONG (1ull << 63)
#define AR_SLOT_SIZED (1ull << 62)
#define AR_SLOT_SEQ_MAX ((1ull << 56) - 1)

/* An event as its slots hold it. aux is the op's alignment or count (no v1
 * op has both); old_size is 0 unless the event is sized (SPEC 5.1); error
 * is 0 unless the result is NULL. */
typedef struct ar_slot_event {
	uint64_t seq, seq2, time_ns, ptr, result, size, aux, old_size;
	uint32_t stack;
	uint16_t error;
	uint8_t op;
} ar_slot_event_t;

/* 1 when v fits the short form. With a constant op, no stack and no error
 * (the recorder's fast path) this is the test of seq alone. */
static inline int ar_slot_short(const ar_slot_event_t *v)
{
	unsigned op = v->op;
	/* One OR, not ||: gcc read `stack || error` as one 6-byte load over the
	 * narrower stores that had just built *v, a load that waits for them
	 * (ar_evbuf_append; docs/BENCHMARKS.md, "sixth step"). */
	if ((v->stack | v->error) != 0 || v->seq > AR_SLOT_SEQ_MAX)
		return 0;
	if (op == AR_OP_FREE)
		return 1;
	return (op == AR_OP_MALLOC || op == AR_OP_VALLOC || op == AR_OP_PVALLOC) && !v->old_size;
}

/* Slots event v takes. */
static inline unsigned ar_slot_count(const ar_slot_event_t *v)
{
	if (ar_slot_short(v))
		return 1;
	return 2 + (v->old_size && v->op == AR_OP_REALLOCARRAY);
}

/* 1 when b has room for an event of nslots slots. */
static inline int ar_evbuf_room(const ar_evbuf_t *b, unsigned nslots)
{
	return (size_t)(b->nslots + nslots) * AR_EVENT_SLOT_BYTES <= b->cap && b->nevents < AR_EVBUF_MAX_EVENTS;
}

/* Store v, an event valid by SPEC 4's rules (old_size only on free,
 * realloc and reallocarray) for which ar_evbuf_room(b, ar_slot_count(v))
 * holds, as b's next event; last_seq is its seq2 if it has one, else its
 * seq. The second half of ar_evbuf_append, after its checks, and the
 * recorder's fast path (recorder/rec_fast.h), whose events are valid by
 * construction. Field by field: a struct copy would be built on the stack
 * first. */
static inline __attribute__((always_inline)) void ar_evbuf_put(ar_evbuf_t *b, const ar_slot_event_t *v,
							       uint64_t last_seq)
{
	ar_slot_t *s = (ar_slot_t *)(void *)(b->data + (size_t)b->nslots * AR_EVENT_SLOT_BYTES);
	uint64_t sized = v->old_size ? AR_SLOT_SIZED : 0;
	if (ar_slot_short(v)) {
		s->head = v->seq | sized | (uint64_t)v->op << 56;
		s->time_ns = v->time_ns;
		if (v->op == AR_OP_FREE) {
			s->a = v->ptr;
			s->b = v->old_size;
		} else {
			s->a = v->size;
			s->b = v->result;
		}
		b->nslots += 1;
	} else {
		s->head = AR_SLOT_LONG | sized | (uint64_t)v->op << 56 | (uint64_t)v->error << 32 | v->stack;
		s->time_ns = v->time_ns;
		s->a = v->seq;
		s->b = v->seq2;
		ar_slot_ext_t *x = (ar_slot_ext_t *)(void *)(s + 1);
		x->ptr = v->ptr;
		x->result = v->result;
		x->size = v->size;
		x->aux = v->aux;
		if (v->old_size && v->op == AR_OP_FREE)
			x->size = v->old_size;
		else if (v->old_size && v->op == AR_OP_REALLOC)
			x->aux = v->old_size;
		else if (v->old_size && v->op == AR_OP_REALLOCARRAY)
			s[2].head = v->old_size;
		b->nslots += 2 + (v->old_size && v->op == AR_OP_REALLOCARRAY);
	}
	if (b->nevents++ == 0)
		b->first_seq = v->seq;
	b->last_seq = last_seq;
	b->events_by_op[v->op]++;
}

/* Read back the event at s into *v; returns the slots it takes. */
static inline __attribute__((always_inline)) unsigned ar_slot_get(const ar_slot_t *s, ar_slot_event_t *v)
{
	uint64_t h = s->head;
	unsigned op = (unsigned)(h >> 56) & (AR_OP_LIMIT - 1);
	int sized = (h & AR_SLOT_SIZED) != 0;
	v->op = (uint8_t)op;
	v->time_ns = s->time_ns;
	if (!(h & AR_SLOT_LONG)) {
		v->seq = h & AR_SLOT_SEQ_MAX;
		v->seq2 = 0;
		v->stack = 0;
		v->error = 0;
		v->aux = 0;
		if (op == AR_OP_FREE) {
			v->ptr = s->a;
			v->old_size = sized ? s->b : 0;
			v->size = 0;
			v->result = 0;
		} else {
			v->ptr = 0;
			v->old_size = 0;
			v->size = s->a;
			v->result = s->b;
		}
		return 1;
	}
	const ar_slot_ext_t *x = (const ar_slot_ext_t *)(const void *)(s + 1);
	v->seq = s->a;
	v->seq2 = s->b;
	v->stack = (uint32_t)h;
	v->error = (uint16_t)(h >> 32);
	v->ptr = x->ptr;
	v->result = x->result;
	v->size = x->size;
	v->aux = x->aux;
	v->old_size = 0;
	if (sized && op == AR_OP_FREE)
		v->old_size = x->size, v->size = 0;
	else if (sized && op == AR_OP_REALLOC)
		v->old_size = x->aux, v->aux = 0;
	else if (sized && op == AR_OP_REALLOCARRAY)
		return v->old_size = s[2].head, 3;
	return 2;
}

/* SPEC 5.2: the columns of an EVENTS record, in order. */
enum { AR_COL_OPS, AR_COL_SEQ, AR_COL_TIME, AR_COL_PTR, AR_COL_ARGS, AR_COL_STACK, AR_NCOLS };

/* SPEC 5.4: pointer codes, told apart by their low bits. */
#define AR_PTR_REF 0u       /* xx0: reference k-1 into the other history */
#define AR_PTR_DELTA16 1u   /* x01: zigzag(delta / 16) */
#define AR_PTR_DELTA 3u     /* 011 exactly, then a varint zigzag(delta) */

/* The writer's columnar encoder (encode.c). Its scratch memory and the
 * pointer map come from the writer's ar_mem_t, once. */
/* 16 bytes, so the map of a full block fits in half a megabyte of cache. */
typedef struct ar_ptr_entry {
	uint64_t addr;
	uint32_t gen;               /* block generation that filled this entry */
	uint16_t last_in, last_out; /* 1 + index in the input/result history, 0 = none */
} ar_ptr_entry_t;
_Static_assert(AR_EVBUF_MAX_EVENTS < 65535, "history indices are 16 bits");

typedef struct ar_enc {
	uint8_t *col[AR_NCOLS];
	ar_ptr_entry_t *map;
	uint32_t map_mask, gen, map_used;
	unsigned time_shift; /* times are written in units of 2^time_shift ns */
} ar_enc_t;

int ar_enc_init(ar_enc_t *enc, const ar_mem_t *mem);
void ar_enc_free(ar_enc_t *enc, const ar_mem_t *mem);
/* Worst-case bytes of the EVENTS record for n events. */
size_t ar_enc_bound(uint32_t n);
/* Encode b as one EVENTS record (type, length, body) into out, which has
 * ar_enc_bound(b->nevents) bytes; return its length. */
size_t ar_enc_events(ar_enc_t *enc, const ar_evbuf_t *b, uint8_t *out);

/* Fill err (if not NULL) with a formatted message; returns code. */
int ar_set_error(ar_error_t *err, int code, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Copy the n bytes of a trace string into out[cap] NUL-terminated, each NUL
 * byte in it shown as the four characters \x00. Returns -1 when that does
 * not fit. */
int ar_copy_string(char *out, size_t cap, const uint8_t *p, size_t n);
/* Encode the header payload (SPEC 3.1) into buf; returns its length or
 * AR_EFULL when cap is too small. */
int ar_header_encode(const ar_header_t *h, uint8_t *buf, size_t cap);
/* Decode a header payload of len bytes found at file offset `off`. */
int ar_header_decode(ar_header_t *h, const uint8_t *buf, size_t len, uint64_t off, ar_error_t *err);

/* Decoder state for the events of one EVENTS record (SPEC 5). */
typedef struct ar_evdec {
	const uint8_t *col[AR_NCOLS], *col_end[AR_NCOLS];
	const uint8_t *body; /* for positions in messages */
	uint32_t thread, count, seen;
	uint64_t os_tid;
	uint64_t prev_seq, prev_time, prev_ptr; /* prev_time in time units */
	uint64_t *ins, *outs; /* pointer histories, room for `count` each */
	uint32_t nin, nout;
	const ar_header_t *hdr; /* op table and time unit */
	/* the fast path's (evdec_fast.h), set by ar_evdec_open: per column the last
	 * position from which one event's varints cannot run past its end
	 * (0: the column is too short, always the checked path); the largest
	 * running time (SPEC 5.3); per op byte its op's field mask with bit 7
	 * set when the fast path may decode it (a v1 op the header names, no
	 * error code, a null-result flag only on an op with a result). */
	uintptr_t fast_end[AR_NCOLS];
	uint64_t time_max;
	uint8_t fast_fields[256];
} ar_evdec_t;

/* Parse the head of an EVENTS record body [p, end): thread, OS tid, count
 * and the column table. The caller then points ins/outs at room for
 * d->count pointers each. 0 or AR_EFORMAT with why filled. */
int ar_evdec_open(ar_evdec_t *d, const uint8_t *p, const uint8_t *end, const ar_header_t *hdr, char *why,
		  size_t why_len);
/* Decode the next event; 1 = got one, 0 = all `count` done and every column
 * used up exactly, AR_EFORMAT with why filled otherwise. */
int ar_evdec_next(ar_evdec_t *d, ar_event_t *e, char *why, size_t why_len);

#endif
