/*
 * test_rec_stamp.c — the recorder's clock sampling (recorder/rec_stamp.h):
 * which events read the clock and what time the others take, driven with
 * made-up seqs and clock readings (the rule is pure: no clock, no thread).
 */
#include "rec_stamp.h"
#include "testing.h"

/* One event of the thread `s` at seq, the clock reading `now` if it is
 * read: its time; *read says whether it read the clock. */
static uint64_t event(rec_stamp_t *s, uint64_t seq, uint64_t now, unsigned every, int *read)
{
	uint64_t ns;
	*read = !rec_stamp_reuse(s, seq, &ns);
	if (*read)
		ns = rec_stamp_read(s, seq, now, every);
	rec_stamp_done(s, seq);
	return ns;
}

/* A lone thread calling every `spacing` ns from seq `seq`: n events;
 * returns how many read the clock; checks every time against the truth. */
static unsigned run(rec_stamp_t *s, uint64_t *seq, uint64_t *now, unsigned n, uint64_t spacing, unsigned every,
		    uint64_t *worst_early)
{
	unsigned reads = 0;
	for (unsigned i = 0; i < n; i++) {
		int read;
		uint64_t prev = s->ns;
		uint64_t t = event(s, ++*seq, *now, every, &read);
		reads += (unsigned)read;
		EXPECT(t <= *now);     /* never later than the call */
		EXPECT(t >= prev);      /* never backwards */
		if (*now - t > *worst_early)
			*worst_early = *now - t;
		*now += spacing;
	}
	return reads;
}

int main(void)
{
	uint64_t worst = 0;
	/* Dense and alone: the first REC_QUIET_EVENTS events (the thread's
	 * start is a seq gap) read the clock, then one in 8. */
	{
		rec_stamp_t s = {0};
		uint64_t seq = 100, now = 5000000;
		EXPECT_U64(run(&s, &seq, &now, REC_QUIET_EVENTS, 50, 8, &worst), REC_QUIET_EVENTS);
		EXPECT_U64(run(&s, &seq, &now, 8000, 50, 8, &worst), 1000);
		/* every event's time is the reading of at most 7 events before */
		EXPECT(worst <= 7 * 50);
	}
	/* every = 1: every event reads the clock. */
	{
		rec_stamp_t s = {0};
		uint64_t seq = 1, now = 1000;
		worst = 0;
		EXPECT_U64(run(&s, &seq, &now, 5000, 50, 1, &worst), 5000);
		EXPECT_U64(worst, 0);
	}
	/* Sparse calls (REC_DENSE_NS or more apart): no sampling. */
	{
		rec_stamp_t s = {0};
		uint64_t seq = 1, now = 1000;
		worst = 0;
		EXPECT_U64(run(&s, &seq, &now, 5000, REC_DENSE_NS, 8, &worst), 5000);
		EXPECT_U64(worst, 0);
	}
	/* Another thread's call (a seq gap) ends a skip at once: the event
	 * after the gap reads the clock, and so do the next
	 * REC_QUIET_EVENTS - 1 events before sampling starts again. */
	{
		rec_stamp_t s = {0};
		uint64_t seq = 1, now = 1000;
		run(&s, &seq, &now, REC_QUIET_EVENTS + 3, 50, 8, &worst);
		EXPECT(s.skip > 0);
		int read;
		seq += 5; /* five seqs of another thread */
		now += 1000000;
		EXPECT_U64(event(&s, ++seq, now, 8, &read), now);
		EXPECT(read);
		worst = 0;
		EXPECT_U64(run(&s, &seq, &now, REC_QUIET_EVENTS - 1, 50, 8, &worst), REC_QUIET_EVENTS - 1);
		EXPECT_U64(worst, 0);
		EXPECT_U64(run(&s, &seq, &now, 80, 50, 8, &worst), 10);
	}
	/* A pause inside a skip: the events before the next reading take the
	 * earlier reading (early by at most the pause), the reading after
	 * shows the whole pause, and that dense check fails, so sampling
	 * stops until the calls are dense again. */
	{
		rec_stamp_t s = {0};
		uint64_t seq = 1, now = 1000;
		run(&s, &seq, &now, REC_QUIET_EVENTS + 1, 50, 8, &worst);
		EXPECT_U64(s.skip, 7);
		uint64_t before = s.ns;
		int read;
		now += 3000000; /* the thread pauses 3 ms */
		EXPECT_U64(event(&s, ++seq, now, 8, &read), before);
		EXPECT(!read);
		for (int i = 0; i < 6; i++)
			event(&s, ++seq, now += 50, 8, &read);
		EXPECT_U64(event(&s, ++seq, now += 50, 8, &read), now);
		EXPECT(read);
		EXPECT_U64(s.skip, 0);
	}
	/* A realloc takes two seqs: the next event of the thread is still
	 * alone when its seq follows the realloc's seq2. */
	{
		rec_stamp_t s = {0};
		uint64_t seq = 1, now = 1000;
		run(&s, &seq, &now, REC_QUIET_EVENTS + 1, 50, 8, &worst);
		uint64_t ns;
		EXPECT(rec_stamp_reuse(&s, seq + 1, &ns));
		rec_stamp_done(&s, seq + 2); /* seq and seq2 */
		seq += 2;
		EXPECT(rec_stamp_reuse(&s, seq + 1, &ns));
	}
	return TEST_END();
}
