/*
 * test_liveset.c — the trace library's live set (ar_trace.h, SPEC 4 and
 * 5.5), the one model alloctrace's statistics and the replay compiler
 * share: what each op releases and acquires, realloc results acquired at
 * seq2 and in seq2 order, a displaced block reported as released by no
 * event, exact live bytes past 2^64, and the address table under churn
 * (growth, backward-shift deletion) against a plain array.
 */
#include <stdlib.h>

#include "ar_trace.h"
#include "testing.h"

static ar_event_t ev(uint8_t op, uint64_t seq, uint64_t seq2, uint64_t ptr, uint64_t size, uint64_t result)
{
	return (ar_event_t){.op = op, .seq = seq, .seq2 = seq2, .ptr = ptr, .size = size, .result = result};
}

/* What the callbacks saw, in order. */
typedef struct seen {
	char what[64]; /* 'a' acquired, 'r' released by an event, 'd' displaced */
	uint64_t tag[64], live_bytes[64];
	int n;
	ar_liveset_t *ls;
} seen_t;

static void on_rel(void *ctx, const ar_live_t *b, const ar_event_t *by)
{
	seen_t *s = ctx;
	s->what[s->n] = by ? 'r' : 'd';
	s->live_bytes[s->n] = ar_liveset_live_bytes(s->ls);
	s->tag[s->n++] = b->tag;
}

static void on_acq(void *ctx, const ar_live_t *b)
{
	seen_t *s = ctx;
	s->what[s->n] = 'a';
	s->live_bytes[s->n] = ar_liveset_live_bytes(s->ls);
	s->tag[s->n++] = b->tag;
}

static void test_rules(void)
{
	/* SPEC 5.5 */
	ar_event_t calloc_ovf = {.op = AR_OP_CALLOC, .count = UINT64_MAX, .size = 2};
	EXPECT_U64(ar_event_request_bytes(&calloc_ovf), UINT64_MAX);
	ar_event_t ra = {.op = AR_OP_REALLOCARRAY, .count = 3, .size = 5};
	EXPECT_U64(ar_event_request_bytes(&ra), 15);
	ar_event_t fr = ev(AR_OP_FREE, 1, 0, 0x10, 0, 0);
	EXPECT_U64(ar_event_request_bytes(&fr), 0);
	EXPECT(ar_event_releases_input(&fr));
	ar_event_t r_ok = ev(AR_OP_REALLOC, 1, 2, 0x10, 8, 0x20);
	ar_event_t r_zero = ev(AR_OP_REALLOC, 1, 2, 0x10, 0, 0);
	ar_event_t r_fail = ev(AR_OP_REALLOC, 1, 2, 0x10, 8, 0);
	ar_event_t m = ev(AR_OP_MALLOC, 1, 0, 0, 8, 0x20);
	EXPECT(ar_event_releases_input(&r_ok));
	EXPECT(ar_event_releases_input(&r_zero));
	EXPECT(!ar_event_releases_input(&r_fail));
	EXPECT(!ar_event_releases_input(&m));
}

static void test_apply(void)
{
	ar_liveset_t ls;
	seen_t s = {.ls = &ls};
	ar_liveset_init(&ls, on_rel, on_acq, &s);
	ar_event_t e[] = {
		ev(AR_OP_MALLOC, 1, 0, 0, 100, 0x1000),                                /* a 1 */
		(ar_event_t){.op = AR_OP_CALLOC, .seq = 2, .count = 4, .size = 25, .result = 0x2000}, /* a 2 */
		ev(AR_OP_FREE, 3, 0, 0x1000, 0, 0),     /* r 1 */
		ev(AR_OP_MALLOC, 4, 0, 0, 10, 0),       /* failed: nothing */
		ev(AR_OP_FREE, 5, 0, 0, 0, 0),          /* free(NULL): nothing, not unknown */
		ev(AR_OP_REALLOC, 6, 8, 0x2000, 50, 0), /* failed realloc: 0x2000 stays */
		ev(AR_OP_FREE, 9, 0, 0x9999, 0, 0),     /* never returned: unknown */
		ev(AR_OP_REALLOC, 10, 11, 0x2000, 0, 0), /* realloc(p, 0) = NULL frees p: r 2 */
	};
	for (size_t i = 0; i < sizeof e / sizeof *e; i++)
		EXPECT(ar_liveset_apply(&ls, &e[i], i + 1) == 0);
	EXPECT(ar_liveset_advance(&ls, UINT64_MAX) == 0);
	s.what[s.n] = 0;
	EXPECT_STR(s.what, "aarr");
	EXPECT_U64(s.tag[0], 1);
	EXPECT_U64(s.tag[1], 2);
	EXPECT_U64(s.tag[2], 1);
	EXPECT_U64(s.tag[3], 2);
	EXPECT_U64(s.live_bytes[1], 200); /* counted before the callback */
	EXPECT_U64(s.live_bytes[2], 100); /* and no longer counted */
	EXPECT_U64(ls.peak_live_bytes, 200);
	EXPECT_U64(ls.peak_seq, 2);
	EXPECT_U64(ar_liveset_live_bytes(&ls), 0);
	EXPECT_U64(ls.len, 0);
	EXPECT_U64(ls.unknown_releases, 1);
	ar_liveset_free(&ls);
}

/* SPEC 4: a realloc's result is live from seq2 on, and results waiting
 * together become live in seq2 order, not in the order of their seq. */
static void test_seq2_order(void)
{
	ar_liveset_t ls;
	seen_t s = {.ls = &ls};
	ar_liveset_init(&ls, on_rel, on_acq, &s);
	ar_event_t e[] = {
		ev(AR_OP_MALLOC, 1, 0, 0, 64, 0xa000),          /* thread 1: X, tag 1 */
		ev(AR_OP_MALLOC, 2, 0, 0, 32, 0xb000),          /* thread 2: Y, tag 2 */
		ev(AR_OP_REALLOC, 3, 9, 0xb000, 128, 0xa000),   /* thread 2: realloc(Y) gets X, tag 3 ... */
		ev(AR_OP_FREE, 4, 0, 0xa000, 0, 0),             /* ... because thread 1 freed X meanwhile */
		ev(AR_OP_REALLOC, 5, 7, 0, 16, 0xc000),         /* thread 3: realloc(NULL), tag 5, seq2 7 < 9 */
	};
	for (size_t i = 0; i < sizeof e / sizeof *e; i++)
		EXPECT(ar_liveset_apply(&ls, &e[i], i + 1) == 0);
	ar_live_t b;
	EXPECT(!ar_liveset_find(&ls, 0xa000, &b)); /* not before seq2 */
	EXPECT_U64(ls.npending, 2);
	EXPECT(ar_liveset_advance(&ls, 9) == 0); /* seq2 7 only */
	EXPECT_U64(ls.npending, 1);
	EXPECT(ar_liveset_find(&ls, 0xc000, &b) && b.tag == 5 && b.bytes == 16);
	EXPECT(ar_liveset_advance(&ls, 10) == 0);
	EXPECT(ar_liveset_find(&ls, 0xa000, &b) && b.tag == 3 && b.bytes == 128);
	s.what[s.n] = 0;
	EXPECT_STR(s.what, "aarraa"); /* Y released at seq 3, X freed at 4, then 7, then 9 */
	EXPECT_U64(s.tag[2], 2);
	EXPECT_U64(s.tag[3], 1);
	EXPECT_U64(s.tag[4], 5);
	EXPECT_U64(s.tag[5], 3);
	EXPECT_U64(ls.unknown_releases, 0);
	EXPECT_U64(ls.peak_live_bytes, 144);
	EXPECT_U64(ls.peak_seq, 9);
	/* A seq2 of 2^64-1 waits for the end. */
	ar_event_t last = ev(AR_OP_REALLOC, 11, UINT64_MAX, 0xc000, 1, 0xd000);
	EXPECT(ar_liveset_apply(&ls, &last, 11) == 0);
	EXPECT(ar_liveset_advance(&ls, UINT64_MAX - 1) == 0);
	EXPECT_U64(ls.npending, 1);
	EXPECT(ar_liveset_advance(&ls, UINT64_MAX) == 0);
	EXPECT(ar_liveset_find(&ls, 0xd000, &b) && b.tag == 11);
	ar_liveset_free(&ls);
}

/* An address handed out again without a release: the older block leaves
 * the set, reported with no event. */
static void test_displaced(void)
{
	ar_liveset_t ls;
	seen_t s = {.ls = &ls};
	ar_liveset_init(&ls, on_rel, on_acq, &s);
	ar_event_t a = ev(AR_OP_MALLOC, 1, 0, 0, 10, 0x40), b = ev(AR_OP_MALLOC, 2, 0, 0, 30, 0x40);
	EXPECT(ar_liveset_apply(&ls, &a, 7) == 0);
	EXPECT(ar_liveset_apply(&ls, &b, 8) == 0);
	s.what[s.n] = 0;
	EXPECT_STR(s.what, "ada");
	EXPECT_U64(s.tag[1], 7);
	EXPECT_U64(ls.len, 1);
	EXPECT_U64(ar_liveset_live_bytes(&ls), 30);
	EXPECT_U64(ls.peak_live_bytes, 30);
	EXPECT_U64(ls.unknown_releases, 0);
	ar_liveset_free(&ls);
}

/* Live bytes past 2^64: saturated, with the exact sum kept. */
static void test_huge(void)
{
	ar_liveset_t ls;
	ar_liveset_init(&ls, NULL, NULL, NULL);
	ar_event_t a = ev(AR_OP_MALLOC, 1, 0, 0, UINT64_MAX, 0x1000), b = ev(AR_OP_MALLOC, 2, 0, 0, 5, 0x2000);
	ar_event_t f = ev(AR_OP_FREE, 3, 0, 0x1000, 0, 0);
	EXPECT(ar_liveset_apply(&ls, &a, 0) == 0);
	EXPECT(ar_liveset_apply(&ls, &b, 0) == 0);
	EXPECT_U64(ar_liveset_live_bytes(&ls), UINT64_MAX);
	EXPECT(ls.live_exact == (unsigned __int128)UINT64_MAX + 5);
	EXPECT(ar_liveset_apply(&ls, &f, 0) == 0);
	EXPECT_U64(ar_liveset_live_bytes(&ls), 5);
	EXPECT_U64(ls.peak_live_bytes, UINT64_MAX);
	EXPECT_U64(ls.peak_seq, 1);
	ar_liveset_free(&ls);
}

static void count_each(void *ctx, const ar_live_t *b)
{
	uint64_t *sum = ctx;
	*sum += b->tag;
}

/* Many blocks at addresses that share low bits, freed in a scrambled
 * order, the table growing on the way: every lookup agrees with a plain
 * array of what is live. */
static void test_churn(void)
{
	enum { N = 200000 };
	ar_liveset_t ls;
	ar_liveset_init(&ls, NULL, NULL, NULL);
	uint8_t *live = calloc(N, 1);
	uint64_t seq = 0, bad = 0, nlive = 0;
	for (uint64_t round = 0; round < 3; round++) {
		for (uint64_t i = 0; i < N; i++) {
			uint64_t k = (i * 7919 + round * 104729) % N; /* a permutation of 0..N-1 */
			ar_event_t e;
			if (live[k])
				e = ev(AR_OP_FREE, ++seq, 0, 0x10000 + k * 4096, 0, 0);
			else
				e = ev(AR_OP_MALLOC, ++seq, 0, 0, k, 0x10000 + k * 4096);
			if (ar_liveset_apply(&ls, &e, k + 1) != 0)
				bad++;
			nlive += live[k] ? (uint64_t)-1 : 1;
			live[k] ^= 1;
			if (i % 97 == 0) { /* look a few up, live and dead */
				ar_live_t b;
				for (uint64_t j = i; j < i + 5 && j < N; j++) {
					int found = ar_liveset_find(&ls, 0x10000 + j * 4096, &b);
					bad += found != live[j] || (found && (b.tag != j + 1 || b.bytes != j));
				}
			}
		}
		EXPECT_U64(ls.len, nlive);
	}
	uint64_t want = 0, got = 0;
	for (uint64_t k = 0; k < N; k++)
		want += live[k] ? k + 1 : 0;
	ar_liveset_each(&ls, count_each, &got);
	EXPECT_U64(got, want);
	EXPECT_U64(bad, 0);
	EXPECT_U64(ls.unknown_releases, 0);
	free(live);
	ar_liveset_free(&ls);
}

int main(void)
{
	RUN(test_rules);
	RUN(test_apply);
	RUN(test_seq2_order);
	RUN(test_displaced);
	RUN(test_huge);
	RUN(test_churn);
	return TEST_END();
}
