/*
 * test_replay_codec.c — the compact encoding of a workload segment
 * (wl_codec.c, workload.h): a few ops pinned byte for byte to the format
 * the file comment of wl_codec.c describes; random ops of every kind round
 * trip exactly (no slot, any flags, sizes and args up to 2^64-1, slots
 * jumping both ways, SYNC sizes going down and up); hostile bytes — a
 * valid encoding cut at every position or with bytes left over, overlong
 * varints, a 10th varint byte above 1, unknown kinds, a slot above
 * 2^32-1 — are refused (-1); random bytes and valid segments with bits
 * flipped are refused or decoded, never read past their end. Every input
 * is decoded from a heap buffer of exactly its size, so ASan sees an
 * overread. (A flipped bit often still decodes: the digest catches those,
 * test_replay_wlfile.c.)
 */
#include <stdlib.h>
#include <string.h>

#include "testing.h"
#include "workload.h"

/* xorshift64*: the same ops on every run. */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1Dull;
}

/* Decode in[0..bytes) from a heap copy of exactly that size. */
static int decode_exact(const uint8_t *in, size_t bytes, ar_wl_op_t *ops, uint32_t n)
{
	uint8_t *copy = malloc(bytes ? bytes : 1);
	if (bytes)
		memcpy(copy, in, bytes);
	int rc = ar_wl_decode(copy, bytes, ops, n);
	free(copy);
	return rc;
}

static int same_ops(const ar_wl_op_t *a, const ar_wl_op_t *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (a[i].kind != b[i].kind || a[i].flags != b[i].flags || a[i].slot != b[i].slot ||
		    a[i].size != b[i].size || a[i].arg != b[i].arg || b[i].reserved != 0) {
			fprintf(stderr, "op %u: kind %u/%u flags %u/%u slot %u/%u size %llu/%llu arg %llu/%llu\n",
				i, a[i].kind, b[i].kind, a[i].flags, b[i].flags, a[i].slot, b[i].slot,
				(unsigned long long)a[i].size, (unsigned long long)b[i].size,
				(unsigned long long)a[i].arg, (unsigned long long)b[i].arg);
			return 0;
		}
	return 1;
}

/* The format by example (wl_codec.c): head byte = kind | 0x10 slot | 0x20
 * size | 0x40 arg | 0x80 flags; a heap call's slot is the zigzag varint of
 * its difference from the segment's previous heap call's slot, a SYNC's
 * slot plain and its size the zigzag varint of its difference from the
 * previous SYNC's size. */
static void test_golden(void)
{
	const ar_wl_op_t ops[] = {
		{ .kind = AR_WL_MALLOC, .slot = 5, .size = 64 },             /* 30 0a 40 */
		{ .kind = AR_WL_FREE, .slot = 5 },                            /* 14 00 */
		{ .kind = AR_WL_SYNC, .flags = AR_WL_F_DEP, .slot = 2, .size = 300 }, /* bb 01 02 d8 04 */
		{ .kind = AR_WL_SYNC, .flags = AR_WL_F_DEP, .slot = 2, .size = 299 }, /* bb 01 02 01 */
		{ .kind = AR_WL_CALLOC, .slot = 4, .size = 8, .arg = 3 },     /* 71 01 08 03 */
		{ .kind = AR_WL_REALLOC, .flags = AR_WL_F_NOSRC | AR_WL_F_TRACE_NULL,
		  .slot = AR_WL_NOSLOT, .size = 1 },                          /* a2 0c 01 */
		{ .kind = AR_WL_SAMPLE, .slot = 7, .size = 128, .arg = 1 },   /* 7a 07 80 01 01 */
		{ .kind = AR_WL_FREE, .slot = AR_WL_NOSLOT },                 /* 04: free(NULL) */
	};
	static const uint8_t want[] = { 0x30, 0x0a, 0x40, 0x14, 0x00, 0xbb, 0x01, 0x02, 0xd8, 0x04,
					0xbb, 0x01, 0x02, 0x01, 0x71, 0x01, 0x08, 0x03, 0xa2, 0x0c,
					0x01, 0x7a, 0x07, 0x80, 0x01, 0x01, 0x04 };
	uint32_t n = sizeof ops / sizeof *ops;
	uint8_t out[sizeof ops / sizeof *ops * AR_WL_OP_MAX_BYTES];
	size_t bytes = ar_wl_encode(ops, n, out);
	EXPECT_U64(bytes, sizeof want);
	EXPECT(bytes == sizeof want && memcmp(out, want, bytes) == 0);
	ar_wl_op_t back[sizeof ops / sizeof *ops];
	EXPECT(decode_exact(want, sizeof want, back, n) == 0);
	EXPECT(same_ops(ops, back, n));
	/* what the comment of wl_codec.c promises: a malloc of 16-127 bytes
	 * into a nearby slot takes 3 bytes, a free 2 */
	ar_wl_op_t pair[2] = { { .kind = AR_WL_MALLOC, .slot = 9, .size = 100 },
			       { .kind = AR_WL_FREE, .slot = 8 } };
	EXPECT_U64(ar_wl_encode(pair, 1, out), 3);
	EXPECT_U64(ar_wl_encode(pair, 2, out), 5);
	/* n = 0: nothing written, and only nothing decodes to no ops */
	EXPECT_U64(ar_wl_encode(ops, 0, out), 0);
	EXPECT(ar_wl_decode(out, 0, back, 0) == 0);
	EXPECT(decode_exact(want, 1, back, 0) == -1);
}

/* One random op; prev_slot and prev_sync steer slots and SYNC sizes near
 * the previous ones (small deltas both ways) or far (any value). */
static ar_wl_op_t random_op(uint32_t *prev_slot, uint64_t *prev_sync)
{
	static const uint64_t edges[] = { 0, 1, 127, 128, 16383, 16384, UINT32_MAX, (uint64_t)UINT32_MAX + 1,
					  1ull << 63, (1ull << 63) - 1, UINT64_MAX - 1, UINT64_MAX };
	ar_wl_op_t op = { .kind = (uint8_t)(rnd() % AR_WL_NKINDS) };
	uint64_t r = rnd();
	op.flags = r % 3 == 0 ? 0 : r % 3 == 1 ? (uint8_t)(1u << (rnd() % 8)) : (uint8_t)rnd();
	switch (rnd() % 6) {
	case 0: op.slot = AR_WL_NOSLOT; break;
	case 1: op.slot = (uint32_t)rnd(); break;
	case 2: op.slot = (uint32_t)edges[rnd() % 7]; break;
	default: op.slot = *prev_slot + (uint32_t)(rnd() % 129) - 64; break; /* wraps both ways */
	}
	if (op.slot == AR_WL_NOSLOT && rnd() % 2)
		op.slot = AR_WL_NOSLOT - 1;
	if (op.kind < AR_WL_NCALLS && op.slot != AR_WL_NOSLOT)
		*prev_slot = op.slot;
	switch (rnd() % 5) {
	case 0: op.size = 0; break;
	case 1: op.size = rnd() % 128; break;
	case 2: op.size = edges[rnd() % (sizeof edges / sizeof *edges)]; break;
	case 3: op.size = rnd(); break;
	default: op.size = *prev_sync + rnd() % 33 - 16; break; /* SYNC sizes down and up */
	}
	op.arg = rnd() % 3 == 0 ? 0 : rnd() % 2 ? edges[rnd() % (sizeof edges / sizeof *edges)] : rnd() % 4096;
	if (op.kind == AR_WL_SYNC && op.size)
		*prev_sync = op.size;
	return op;
}

/* Random segments of every kind round trip; each op takes at most
 * AR_WL_OP_MAX_BYTES; a segment decodes on its own (state starts afresh). */
static void test_round_trip(void)
{
	enum { MAXN = 2000 };
	static ar_wl_op_t ops[MAXN], back[MAXN];
	static uint8_t out[MAXN * AR_WL_OP_MAX_BYTES];
	uint64_t total_ops = 0, total_bytes = 0, kinds_seen = 0;
	for (int round = 0; round < 400; round++) {
		uint32_t n = 1 + (uint32_t)(rnd() % MAXN), prev_slot = 0;
		uint64_t prev_sync = 0;
		for (uint32_t i = 0; i < n; i++) {
			ops[i] = random_op(&prev_slot, &prev_sync);
			kinds_seen |= 1ull << ops[i].kind;
		}
		size_t bytes = ar_wl_encode(ops, n, out);
		EXPECT(bytes <= (size_t)n * AR_WL_OP_MAX_BYTES);
		memset(back, 0xa5, sizeof back);
		int rc = decode_exact(out, bytes, back, n);
		EXPECT(rc == 0);
		if (rc != 0 || !same_ops(ops, back, n)) {
			EXPECT(!"random ops round trip");
			return;
		}
		/* the second half alone is a segment of its own */
		uint32_t h = n / 2;
		size_t b2 = ar_wl_encode(ops + h, n - h, out);
		EXPECT(decode_exact(out, b2, back, n - h) == 0 && same_ops(ops + h, back, n - h));
		total_ops += n;
		total_bytes += bytes;
	}
	EXPECT_U64(kinds_seen, (1ull << AR_WL_NKINDS) - 1);
	/* the largest op there is */
	ar_wl_op_t big = { .kind = AR_WL_POSIX_MEMALIGN, .flags = 0xff, .slot = 0x80000000u,
			   .size = UINT64_MAX, .arg = UINT64_MAX };
	size_t bytes = ar_wl_encode(&big, 1, out);
	EXPECT(bytes <= AR_WL_OP_MAX_BYTES);
	EXPECT(decode_exact(out, bytes, back, 1) == 0 && same_ops(&big, back, 1));
	ar_wl_op_t sy[3] = { { .kind = AR_WL_SYNC, .slot = UINT32_MAX - 1, .size = UINT64_MAX },
			     { .kind = AR_WL_SYNC, .slot = 0, .size = 1 },
			     { .kind = AR_WL_SYNC, .slot = 3, .size = UINT64_MAX } };
	bytes = ar_wl_encode(sy, 3, out);
	EXPECT(decode_exact(out, bytes, back, 3) == 0 && same_ops(sy, back, 3));
	fprintf(stderr, "round trip: %llu random ops in %llu bytes\n", (unsigned long long)total_ops,
		(unsigned long long)total_bytes);
}

/* A valid encoding cut anywhere, or with a byte more, is refused. */
static void test_cut_and_trailing(void)
{
	enum { N = 300 };
	static ar_wl_op_t ops[N], back[N];
	static uint8_t out[N * AR_WL_OP_MAX_BYTES + 1];
	uint32_t prev_slot = 0;
	uint64_t prev_sync = 0;
	for (uint32_t i = 0; i < N; i++)
		ops[i] = random_op(&prev_slot, &prev_sync);
	size_t bytes = ar_wl_encode(ops, N, out);
	EXPECT(decode_exact(out, bytes, back, N) == 0);
	size_t refused = 0;
	for (size_t cut = 0; cut < bytes; cut++)
		refused += decode_exact(out, cut, back, N) == -1;
	EXPECT_U64(refused, bytes);
	out[bytes] = 0x00; /* a whole malloc op more: left over */
	EXPECT(decode_exact(out, bytes + 1, back, N) == -1);
	EXPECT(decode_exact(out, bytes, back, N - 1) == -1); /* one op left over */
	EXPECT(decode_exact(out, bytes, back, N + 1) == -1); /* one op missing */
}

/* Hand-made hostile ops. */
static void test_hostile(void)
{
	ar_wl_op_t op[2];
	/* size varints: 10 bytes with the 10th 1 is 2^63 (or 2^64-1), fine */
	static const uint8_t ok63[] = { 0x20, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 };
	EXPECT(decode_exact(ok63, sizeof ok63, op, 1) == 0 && op[0].size == 1ull << 63);
	static const uint8_t okmax[] = { 0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	EXPECT(decode_exact(okmax, sizeof okmax, op, 1) == 0 && op[0].size == UINT64_MAX);
	/* the 10th byte above 1: more than 64 bits */
	for (unsigned tenth = 2; tenth < 0x80; tenth++) {
		uint8_t b[11] = { 0x20, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, (uint8_t)tenth };
		EXPECT(decode_exact(b, sizeof b, op, 1) == -1);
	}
	/* 11 bytes: overlong even when the value would fit */
	static const uint8_t over[] = { 0x20, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 };
	EXPECT(decode_exact(over, sizeof over, op, 1) == -1);
	static const uint8_t over1[] = { 0x20, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81, 0x00 };
	EXPECT(decode_exact(over1, sizeof over1, op, 1) == -1);
	/* the same in an arg and in a slot */
	static const uint8_t over_arg[] = { 0x40, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 };
	EXPECT(decode_exact(over_arg, sizeof over_arg, op, 1) == -1);
	static const uint8_t over_slot[] = { 0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 };
	EXPECT(decode_exact(over_slot, sizeof over_slot, op, 1) == -1);
	/* kinds AR_WL_NKINDS..15 */
	for (unsigned k = AR_WL_NKINDS; k < 16; k++) {
		uint8_t b[1] = { (uint8_t)k };
		EXPECT(decode_exact(b, 1, op, 1) == -1);
		uint8_t b2[3] = { 0x00, (uint8_t)(k | 0x20), 0x05 }; /* after a valid op */
		EXPECT(decode_exact(b2, 3, op, 2) == -1);
	}
	/* slots: 2^32-1 fits (a SYNC's plain slot; a heap call's zigzag of -2^31),
	 * 2^32 does not, for both kinds of slot */
	static const uint8_t slot_max_sync[] = { 0x1b, 0xff, 0xff, 0xff, 0xff, 0x0f };
	EXPECT(decode_exact(slot_max_sync, sizeof slot_max_sync, op, 1) == 0 && op[0].slot == UINT32_MAX);
	static const uint8_t slot_max_call[] = { 0x10, 0xff, 0xff, 0xff, 0xff, 0x0f };
	EXPECT(decode_exact(slot_max_call, sizeof slot_max_call, op, 1) == 0 && op[0].slot == 0x80000000u);
	static const uint8_t slot_big_sync[] = { 0x1b, 0x80, 0x80, 0x80, 0x80, 0x10 };
	EXPECT(decode_exact(slot_big_sync, sizeof slot_big_sync, op, 1) == -1);
	static const uint8_t slot_big_call[] = { 0x10, 0x80, 0x80, 0x80, 0x80, 0x10 };
	EXPECT(decode_exact(slot_big_call, sizeof slot_big_call, op, 1) == -1);
	static const uint8_t slot_huge[] = { 0x14, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	EXPECT(decode_exact(slot_huge, sizeof slot_huge, op, 1) == -1);
	/* a flags bit with no flags byte, a varint that never ends */
	static const uint8_t no_flags[] = { 0x80 };
	EXPECT(decode_exact(no_flags, sizeof no_flags, op, 1) == -1);
	static const uint8_t endless[] = { 0x20, 0xff, 0xff, 0xff };
	EXPECT(decode_exact(endless, sizeof endless, op, 1) == -1);
	/* no input for one op, or none at all */
	EXPECT(decode_exact(NULL, 0, op, 1) == -1);
}

/* Random bytes: refused or decoded, never a crash nor a read past the end
 * (ASan), and whatever decodes has a kind in range. */
static void test_garbage(void)
{
	static ar_wl_op_t ops[64];
	uint8_t buf[256];
	uint64_t decoded = 0;
	for (int i = 0; i < 200000; i++) {
		size_t len = rnd() % sizeof buf;
		/* any bytes; bytes without continuation bits; mostly continuation
		 * bits (long varints); small head bytes (fields, no flags) */
		uint64_t style = rnd() % 4;
		for (size_t k = 0; k < len; k++) {
			uint64_t x = rnd();
			buf[k] = (uint8_t)(style == 0   ? x
					   : style == 1 ? x & 0x7f
					   : style == 2 ? (x % 3 ? 0x80 | (x >> 8 & 0x7f) : x >> 8 & 0x7f)
							: x & 0x7f & ~0x40);
		}
		uint32_t n = (uint32_t)(rnd() % 64);
		if (decode_exact(buf, len, ops, n) == 0) {
			decoded++;
			for (uint32_t k = 0; k < n; k++)
				EXPECT(ops[k].kind < AR_WL_NKINDS);
		}
	}
	fprintf(stderr, "garbage: %llu of 200000 random buffers decoded\n", (unsigned long long)decoded);
	/* valid segments with a few bytes changed: mostly still well formed */
	static uint8_t enc[64 * AR_WL_OP_MAX_BYTES];
	decoded = 0;
	for (int i = 0; i < 20000; i++) {
		uint32_t n = 1 + (uint32_t)(rnd() % 64), ps = 0;
		uint64_t py = 0;
		for (uint32_t k = 0; k < n; k++)
			ops[k] = random_op(&ps, &py);
		size_t len = ar_wl_encode(ops, n, enc);
		for (int f = 1 + (int)(rnd() % 3); f > 0; f--)
			enc[rnd() % len] ^= (uint8_t)(1u << (rnd() % 8));
		if (decode_exact(enc, len, ops, n) == 0) {
			decoded++;
			for (uint32_t k = 0; k < n; k++)
				EXPECT(ops[k].kind < AR_WL_NKINDS);
		}
	}
	fprintf(stderr, "damaged: %llu of 20000 segments with 1-3 bits flipped still decoded\n",
		(unsigned long long)decoded);
}

int main(void)
{
	RUN(test_golden);
	RUN(test_round_trip);
	RUN(test_cut_and_trailing);
	RUN(test_hostile);
	RUN(test_garbage);
	return TEST_END();
}
