/*
 * rec_cost.c — the sums behind rec_cost.h: what recording costs the
 * program's threads, from a sample of their calls.
 */
#include "rec_cost.h"

/* Written by every recording thread once per REC_COST_EVERY of its calls:
 * on a line of their own, apart from the sequence counter's. */
static struct {
	_Alignas(REC_CACHELINE) _Atomic uint64_t ns; /* kept samples' recording time */
	_Atomic uint64_t kept;                       /* samples kept */
	_Atomic uint64_t due;                        /* samples due: kept or dropped */
} sums;
static uint64_t timer_ns; /* the timer's own cost inside a sample */

void rec_cost_sample(uint64_t c0, uint64_t r0, uint64_t r1)
{
	uint64_t end = rec_event_time_ns();
	atomic_fetch_add_explicit(&sums.due, 1, memory_order_relaxed);
	uint64_t all = end > c0 ? end - c0 : 0, real = r1 > r0 ? r1 - r0 : 0;
	if (all > REC_COST_MAX_NS || real > all)
		return; /* preempted inside the sample (or a clock step): not work */
	uint64_t ours = all - real;
	ours = ours > timer_ns ? ours - timer_ns : 0;
	atomic_fetch_add_explicit(&sums.ns, ours, memory_order_relaxed);
	atomic_fetch_add_explicit(&sums.kept, 1, memory_order_relaxed);
}

void rec_cost_calibrate(void)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 64; i++) {
		/* the same four readings as a sample, with nothing between them */
		volatile uint64_t c0 = rec_event_time_ns(), r0 = rec_event_time_ns(), r1 = rec_event_time_ns();
		uint64_t end = rec_event_time_ns();
		uint64_t all = end > c0 ? end - c0 : 0, real = r1 > r0 ? r1 - r0 : 0;
		uint64_t o = all > real ? all - real : 0;
		if (o < best)
			best = o;
	}
	timer_ns = best == UINT64_MAX ? 0 : best;
}

uint64_t rec_cost_calls_ns(void)
{
	uint64_t kept = atomic_load_explicit(&sums.kept, memory_order_relaxed);
	uint64_t due = atomic_load_explicit(&sums.due, memory_order_relaxed);
	if (!kept)
		return 0;
	double mean = (double)atomic_load_explicit(&sums.ns, memory_order_relaxed) / (double)kept;
	return (uint64_t)(mean * (double)due * REC_COST_EVERY);
}

void rec_cost_restart(void)
{
	atomic_store(&sums.ns, 0);
	atomic_store(&sums.kept, 0);
	atomic_store(&sums.due, 0);
}
