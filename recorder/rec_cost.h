/*
 * rec_cost.h — what recording costs the program's own threads, measured in
 * place on a sample of their calls (rec_cost.c keeps the sums).
 *
 * Why: the recorded process's CPU time (SPEC 6.10) anchors allocreplay's
 * predicted program time (results/predict.c), and it includes the
 * recorder: its writer thread (timed exactly, rec_writer.c) and the hooks'
 * work on the program's threads, 15-40 % of the program's CPU on
 * allocation-heavy programs (docs/RECORDER.md, "What recording costs").
 * Left in, it makes every predicted time too long and every predicted ratio
 * too close to 1. Timing every call would cost more than the hook itself;
 * one recorded call in REC_COST_EVERY per thread is timed: from the start
 * of its recording work to its end, less the real allocator function's own
 * time inside it, less the timer's own cost (calibrated once). The first
 * call of a thread (its buffer being set up) is never a sample, the full
 * paths (a buffer handed to the writer) are, at their own rate. A sample
 * longer than REC_COST_MAX_NS is a preemption, not work, and is dropped:
 * on a loaded 2-vCPU machine 0.5 % of cc1's samples took 50-80 us, where
 * pinned alone the longest of 6000 took 17 us and 99.9 % under 2 us; kept,
 * they made the mean 8x what it is.
 *
 * The hooks (rec_hooks.c) write their recording once as an inline function
 * of a constant `timed` and call it timed only when rec_cost_due says so:
 *
 *	if (rec_cost_due(t)) return malloc_timed(t, n);   (malloc_rec(t, n, 1))
 *	return malloc_rec(t, n, 0);
 *
 *	malloc_rec:  uint64_t c0 = rec_cost_mark(timed), r0 = rec_cost_mark(timed);
 *	             void *r = rec_real.malloc(n);
 *	             uint64_t r1 = rec_cost_mark(timed);
 *	             ...record the event...
 *	             rec_cost_end(timed, c0, r0, r1);    before each return
 */
#ifndef AR_REC_COST_H
#define AR_REC_COST_H

#include "rec_internal.h"

#define REC_COST_EVERY 256u
#define REC_COST_MAX_NS 10000u

/* Is this call of t's one to time? */
static inline __attribute__((always_inline)) int rec_cost_due(rec_thread_t *t)
{
	if (REC_LIKELY(t->cost_left > 1)) {
		t->cost_left--;
		return 0;
	}
	int fresh = t->cost_left == 0;
	t->cost_left = REC_COST_EVERY;
	return !fresh; /* a new thread's first call is not a typical one */
}

/* The time now in a timed call, 0 (no reading) in an untimed one. */
static inline __attribute__((always_inline)) uint64_t rec_cost_mark(const int timed)
{
	return timed ? rec_event_time_ns() : 0;
}

/* Adds a sample: the time from c0 to now less the real call's [r0, r1].
 * Leaves errno alone (a clock reading and atomic adds): the hooks call it
 * after the program's errno is back in place. */
void rec_cost_sample(uint64_t c0, uint64_t r0, uint64_t r1);
static inline __attribute__((always_inline)) void rec_cost_end(const int timed, uint64_t c0, uint64_t r0, uint64_t r1)
{
	if (timed)
		rec_cost_sample(c0, r0, r1);
}

/* Once, before the first call is recorded (rec_init): the timer's own cost
 * inside a sample, the minimum over repeated empty samples. */
void rec_cost_calibrate(void);
/* The estimated CPU time the recording took on the program's threads so
 * far in this trace: the mean sample times the calls counted
 * (REC_COST_EVERY per sample due, kept or dropped); 0 when no sample was
 * kept. */
uint64_t rec_cost_calls_ns(void);
/* A new trace starts (the process's first, a fork child's, a window's, a
 * rotation's segment): its estimate counts its own calls only. */
void rec_cost_restart(void);

#endif
