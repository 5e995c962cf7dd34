/*
 * rec_stamp.h — when a recorded call reads the event clock. Reading it is
 * the largest fixed cost of a recorded call (rdtsc: 11 ns on the machines
 * we measured, against 25-35 ns for a glibc malloc from its thread cache),
 * so while one thread calls alone and densely the clock is read once per
 * `every` events and the events in between take that reading as their
 * time. Dense: the thread's calls since its previous reading were less
 * than REC_DENSE_NS apart on average. Alone: no other thread made a call
 * within the thread's last REC_QUIET_EVENTS events, nor since its previous
 * event (a seq gap ends a skip at once). So wherever threads interleave,
 * and for a while after, every event reads the clock, and the times that
 * tell which threads ran at once (the replay's schedule) are what they
 * would be without sampling. An event's time is never later than its call;
 * what sampling moves is where, within at most every - 1 of a lone
 * thread's consecutive events, a pause of that thread is seen.
 *
 * Pure functions of the thread's state, the seqs and the reading, so that
 * bench/rec/stamp_sim.c applies exactly the recorder's rule to the times of
 * a trace recorded with every = 1 (the fidelity check of the sampling,
 * docs/RECORDER.md).
 */
#ifndef AR_REC_STAMP_H
#define AR_REC_STAMP_H

#include <stdint.h>

#define REC_DENSE_NS 1000u
#define REC_QUIET_EVENTS 1024u

typedef struct rec_stamp {
	uint64_t ns;    /* the last clock reading */
	uint64_t seq;   /* the last seq the thread took for an event */
	uint32_t skip;  /* events left that take ns as their time */
	uint32_t since; /* events since the clock was read */
	uint32_t quiet; /* events to go before sampling may start again */
} rec_stamp_t;

/* 1, with the time in *ns, when event `seq` (its first seq) reuses the
 * last reading; 0 when the clock must be read and given to rec_stamp_read. */
static inline int rec_stamp_reuse(rec_stamp_t *s, uint64_t seq, uint64_t *ns)
{
	if (__builtin_expect(s->skip != 0, 1) && __builtin_expect(seq == s->seq + 1, 1)) {
		s->skip--;
		s->since++;
		*ns = s->ns;
		return 1;
	}
	return 0;
}

/* Event `seq` read the clock: `now`. Returns its time. */
static inline uint64_t rec_stamp_read(rec_stamp_t *s, uint64_t seq, uint64_t now, unsigned every)
{
	int alone = seq == s->seq + 1;
	uint64_t n = (uint64_t)s->since + 1, gap = now - s->ns;
	if (!alone)
		s->quiet = REC_QUIET_EVENTS;
	else if (s->quiet)
		s->quiet--;
	s->skip = !s->quiet && gap < n * REC_DENSE_NS && every > 1 ? every - 1 : 0;
	s->ns = now;
	s->since = 0;
	return now;
}

/* The event is recorded; last_seq is its seq2 if it has one, else its seq. */
static inline void rec_stamp_done(rec_stamp_t *s, uint64_t last_seq)
{
	s->seq = last_seq;
}

#endif
