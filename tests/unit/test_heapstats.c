/*
 * test_heapstats.c — alloctrace stats' counting, on a hand-made event
 * sequence whose every figure is known: sizes, lifetimes, cross-thread
 * frees, realloc growth, never-freed objects, small/arena shares, sites and
 * their bytes live at the peak (second pass).
 */
#include "heapstats.h"
#include "testing.h"

#define T0 1
#define T1 2

static ar_event_t evs[64];
static int nev;
static uint64_t seq;

static void add(uint8_t op, uint32_t thread, uint64_t ptr, uint64_t size, uint64_t result, uint32_t stack)
{
	ar_event_t e = {.op = op, .thread = thread, .ptr = ptr, .size = size, .result = result, .stack = stack};
	e.seq = ++seq;
	if (op == AR_OP_REALLOC)
		e.seq2 = ++seq;
	e.time_ns = e.seq * 100;
	evs[nev++] = e;
}

static void build(void)
{
	/* T0: four 64 B objects (site 1), one 4 KiB (site 2). */
	for (int i = 0; i < 4; i++)
		add(AR_OP_MALLOC, T0, 0, 64, 0x1000 + 0x100 * (uint64_t)i, 1);
	add(AR_OP_MALLOC, T0, 0, 4096, 0x9000, 2);
	/* T0 frees two of its own at once (lifetimes 5 and 5 events) ... */
	add(AR_OP_FREE, T0, 0x1000, 0, 0, 0);
	add(AR_OP_FREE, T0, 0x1100, 0, 0, 0);
	/* ... T1 frees one of T0's (cross-thread) */
	add(AR_OP_FREE, T1, 0x1200, 0, 0, 0);
	/* realloc growth x2 in place, then x3 moving */
	add(AR_OP_REALLOC, T0, 0x9000, 8192, 0x9000, 3);
	add(AR_OP_REALLOC, T0, 0x9000, 24576, 0x20000, 3);
	add(AR_OP_FREE, T1, 0, 0, 0, 0);           /* free(NULL) */
	add(AR_OP_MALLOC, T1, 0, 100, 0, 0);       /* failed */
	add(AR_OP_FREE, T0, 0x20000, 0, 0, 0);
	/* 0x1300 (64 B) is never freed */
}

static void test_counts(void)
{
	ar_heapstats_t s;
	ar_heapstats_init(&s, (uint64_t)nev);
	for (int i = 0; i < nev; i++)
		EXPECT(ar_heapstats_add(&s, &evs[i]) == 0);
	EXPECT(ar_heapstats_finish(&s) == 0);
	EXPECT_U64(s.events, 13);
	EXPECT_U64(s.allocs, 7); /* 5 mallocs + 2 reallocs */
	EXPECT_U64(s.failed, 1);
	EXPECT_U64(s.frees, 5);
	EXPECT_U64(s.free_null, 1);
	EXPECT_U64(s.unknown_frees, 0);
	EXPECT_U64(s.requested_bytes, 4 * 64 + 4096 + 8192 + 24576);
	EXPECT_U64(s.cross_thread_frees, 1);
	EXPECT_U64(s.never_freed, 1);
	EXPECT_U64(s.never_freed_bytes, 64);
	EXPECT_U64(s.small_allocs, 4);
	/* freed: 0x1000, 0x1100 (own thread, soon), 0x1200 (T1), 0x9000 twice by
	 * realloc (own), 0x20000 (own) */
	EXPECT_U64(s.freed, 6);
	EXPECT_U64(s.arena_friendly, 5);
	EXPECT_U64(s.realloc_grow, 2);
	EXPECT_U64(s.realloc_in_place, 1);
	EXPECT_U64(s.realloc_factor[2], 1); /* x2 */
	EXPECT_U64(s.realloc_factor[3], 1); /* x3 */
	EXPECT_U64(s.size_log2[6], 4);      /* 64 B */
	/* lifetime of 0x1000: allocated at event 0, freed at event 5 -> bucket 2 (4..7) */
	EXPECT(s.life_ops_log2[2] >= 2);
	/* peak: 0x1300 (64 B) + 24576 after the second realloc */
	EXPECT_U64(s.peak_live_bytes, 64 + 24576);
	uint64_t n;
	const ar_hs_size_t *top = ar_heapstats_top_sizes(&s, &n);
	EXPECT_U64(n, 4);
	EXPECT(top[0].size == 64 && top[0].count == 4);
	/* second pass: site 3 holds the 24 KiB block at the peak, site 1 one 64 B
	 * object, site 2 nothing */
	ar_heapstats_rewind(&s);
	for (int i = 0; i < nev; i++)
		EXPECT(ar_heapstats_add(&s, &evs[i]) == 0);
	EXPECT(ar_heapstats_finish(&s) == 0);
	EXPECT_U64(ar_heapstats_site(&s, 3)->live_at_peak, 24576);
	EXPECT_U64(ar_heapstats_site(&s, 1)->live_at_peak, 64);
	EXPECT_U64(ar_heapstats_site(&s, 2)->live_at_peak, 0);
	EXPECT_U64(ar_heapstats_site(&s, 1)->calls, 4);
	EXPECT(ar_heapstats_site(&s, 4) == NULL);
	EXPECT_U64(s.events, 13); /* the second pass counted nothing twice */
	ar_heapstats_free(&s);
}

int main(void)
{
	build();
	RUN(test_counts);
	return TEST_END();
}
