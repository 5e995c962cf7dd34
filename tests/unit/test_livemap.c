/*
 * test_livemap.c — live-object accounting in sequence order, including the
 * SPEC 4 rule that a realloc acquires its result only at seq2: another
 * thread may free that very address between the realloc's seq and seq2
 * (the rule itself is the trace library's live set, tests/unit/
 * test_liveset.c); and the records kept per object: what each callback
 * sees, a displaced object, records reused after a death.
 */
#include "livemap.h"
#include "testing.h"

static ar_event_t ev(uint8_t op, uint64_t seq, uint64_t seq2, uint64_t ptr, uint64_t size, uint64_t result)
{
	return (ar_event_t){.op = op, .seq = seq, .seq2 = seq2, .ptr = ptr, .size = size, .result = result};
}

static void test_basic(void)
{
	ar_livemap_t m;
	ar_livemap_init(&m, NULL, NULL, NULL);
	ar_event_t e[] = {
		ev(AR_OP_MALLOC, 1, 0, 0, 100, 0x1000),
		(ar_event_t){.op = AR_OP_CALLOC, .seq = 2, .count = 4, .size = 25, .result = 0x2000},
		ev(AR_OP_FREE, 3, 0, 0x1000, 0, 0),
		ev(AR_OP_MALLOC, 4, 0, 0, 10, 0), /* failed */
		ev(AR_OP_FREE, 5, 0, 0, 0, 0),    /* free(NULL) */
		ev(AR_OP_REALLOC, 6, 7, 0x2000, 0, 0), /* realloc(p, 0) = NULL frees p */
		ev(AR_OP_FREE, 8, 0, 0x9999, 0, 0),    /* never returned */
	};
	for (size_t i = 0; i < sizeof e / sizeof *e; i++)
		EXPECT(ar_livemap_apply(&m, &e[i], 0) == 0);
	EXPECT(ar_livemap_finish(&m) == 0);
	EXPECT_U64(m.peak_live_bytes, 200);
	EXPECT_U64(m.peak_seq, 2);
	EXPECT_U64(m.live_bytes, 0);
	EXPECT_U64(m.unknown_frees, 1);
	ar_livemap_free(&m);
}

static void test_realloc_acquires_at_seq2(void)
{
	ar_livemap_t m;
	ar_livemap_init(&m, NULL, NULL, NULL);
	ar_event_t e[] = {
		ev(AR_OP_MALLOC, 1, 0, 0, 64, 0xa000),  /* thread 1: X */
		ev(AR_OP_MALLOC, 2, 0, 0, 32, 0xb000),  /* thread 2: Y */
		ev(AR_OP_REALLOC, 3, 6, 0xb000, 128, 0xa000), /* thread 2: realloc(Y) gets X ... */
		ev(AR_OP_FREE, 4, 0, 0xa000, 0, 0),     /* ... because thread 1 freed X meanwhile */
		ev(AR_OP_MALLOC, 5, 0, 0, 8, 0xc000),
		ev(AR_OP_FREE, 7, 0, 0xa000, 0, 0),     /* the realloc'ed block */
		ev(AR_OP_FREE, 8, 0, 0xc000, 0, 0),
	};
	for (size_t i = 0; i < sizeof e / sizeof *e; i++)
		EXPECT(ar_livemap_apply(&m, &e[i], 0) == 0);
	EXPECT(ar_livemap_finish(&m) == 0);
	EXPECT_U64(m.unknown_frees, 0);
	EXPECT_U64(m.live_bytes, 0);
	EXPECT_U64(m.peak_live_bytes, 136); /* 128 + 8 after seq 6 */
	EXPECT_U64(m.peak_seq, 6);
	ar_livemap_free(&m);
}

typedef struct log {
	uint64_t released_aux[8], released_event[8], acquired_aux[8];
	int nrel, nacq, displaced;
} log_t;

static void on_rel(void *ctx, const ar_live_obj_t *o, const ar_event_t *by)
{
	log_t *l = ctx;
	l->displaced += by == NULL;
	l->released_event[l->nrel] = o->born_event;
	l->released_aux[l->nrel++] = o->aux;
}

static void on_acq(void *ctx, const ar_live_obj_t *o)
{
	log_t *l = ctx;
	l->acquired_aux[l->nacq++] = o->aux;
}

static void test_records(void)
{
	ar_livemap_t m;
	log_t l = {0};
	ar_livemap_init(&m, on_rel, on_acq, &l);
	ar_event_t e[] = {
		ev(AR_OP_MALLOC, 1, 0, 0, 10, 0x100),        /* aux 10, event 0 */
		ev(AR_OP_MALLOC, 2, 0, 0, 20, 0x200),        /* aux 11, event 1 */
		ev(AR_OP_FREE, 3, 0, 0x100, 0, 0),           /* its record is reused ... */
		ev(AR_OP_MALLOC, 4, 0, 0, 30, 0x300),        /* ... here: aux 13, event 3 */
		ev(AR_OP_MALLOC, 5, 0, 0, 40, 0x200),        /* 0x200 again: aux 11 displaced */
		ev(AR_OP_REALLOC, 6, 7, 0x300, 50, 0x400),   /* aux 15, live at 7 */
	};
	for (size_t i = 0; i < sizeof e / sizeof *e; i++)
		EXPECT(ar_livemap_apply(&m, &e[i], 10 + i) == 0);
	EXPECT(ar_livemap_finish(&m) == 0);
	EXPECT_U64(l.nacq, 5);
	EXPECT_U64(l.acquired_aux[2], 13);
	EXPECT_U64(l.acquired_aux[4], 15);
	EXPECT_U64(l.nrel, 3);
	EXPECT_U64(l.displaced, 1);
	EXPECT_U64(l.released_aux[0], 10);
	EXPECT_U64(l.released_event[0], 0);
	EXPECT_U64(l.released_aux[1], 11);
	EXPECT_U64(l.released_aux[2], 13);
	EXPECT_U64(l.released_event[2], 3);
	const ar_live_obj_t *o = ar_livemap_find(&m, 0x400);
	EXPECT(o && o->aux == 15 && o->bytes == 50 && o->born_seq == 7 && o->born_event == 5);
	o = ar_livemap_find(&m, 0x200);
	EXPECT(o && o->aux == 14 && o->bytes == 40);
	EXPECT(ar_livemap_find(&m, 0x300) == NULL);
	EXPECT_U64(m.len, 2);
	EXPECT_U64(m.live_bytes, 90);
	EXPECT_U64(m.peak_live_bytes, 90);
	EXPECT_U64(m.unknown_frees, 0);
	ar_livemap_free(&m);
}

int main(void)
{
	RUN(test_basic);
	RUN(test_realloc_acquires_at_seq2);
	RUN(test_records);
	return TEST_END();
}
