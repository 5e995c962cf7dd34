/*
 * worker_clock.c — timer selection, calibration and overhead measurement
 * (see worker_clock.h for why rdtsc). Never allocates: it runs in the
 * worker, which must not allocate once started.
 */
#include <stdlib.h>
#include <string.h>

#include "ar_cpu.h"
#include "hist.h"
#include "worker_clock.h"

int ar_clock_use_tsc;

/* The timer this CPU grants (ar_cpu.h), or the one ALLOCRR_TIMER asks for
 * when the CPU grants it too. */
static int pick_timer(void)
{
	unsigned f = ar_cpu_tsc_features();
	const char *force = getenv("ALLOCRR_TIMER");
	if (!ar_cpu_tsc_is_time(f) || (force && strcmp(force, "clock_gettime") == 0))
		return AR_TIMER_CLOCK_GETTIME;
	if (!(f & AR_CPU_RDTSCP) || (force && strcmp(force, "rdtsc") == 0))
		return AR_TIMER_RDTSC;
	return AR_TIMER_RDTSCP;
}

/* The smallest increment the counter shows: the least difference between
 * a read and the first later read that differs from it, over a few
 * hundred tries (1 for a counter that moves every tick; a VM's TSC or a
 * coarse clock_gettime moves in larger steps). */
static uint64_t counter_step(void)
{
	uint64_t step = UINT64_MAX;
	for (int i = 0; i < 500; i++) {
		uint64_t a = ar_clock_start(), b;
		while ((b = ar_clock_start()) == a)
			;
		if (b > a && b - a < step)
			step = b - a;
	}
	return step == UINT64_MAX || step == 0 ? 1 : step;
}

void ar_clock_init(ar_clock_t *c, unsigned calib_ms)
{
	ar_clock_use_tsc = pick_timer();
	c->tsc = ar_clock_use_tsc;
	c->ticks_per_ns = 1.0;
	if (c->tsc) {
		/* Bracket each clock_gettime with TSC reads and use the
		 * midpoints, over a window long enough that the read jitter
		 * (tens of ns) is below 1e-5 of it. */
		uint64_t a0 = ar_clock_start(), m0 = ar_clock_mono_ns(), b0 = ar_clock_stop();
		uint64_t m1, a1, b1;
		do {
			a1 = ar_clock_start();
			m1 = ar_clock_mono_ns();
			b1 = ar_clock_stop();
		} while (m1 - m0 < (uint64_t)calib_ms * 1000000ull);
		double ticks = ((double)a1 + (double)b1) / 2.0 - ((double)a0 + (double)b0) / 2.0;
		c->ticks_per_ns = ticks / (double)(m1 - m0);
	}
	static ar_hist_t h; /* static: 20 KB is too much for some thread stacks */
	ar_hist_reset(&h);
	for (int i = 0; i < 20000; i++) {
		uint64_t a = ar_clock_start();
		uint64_t b = ar_clock_stop();
		ar_hist_add(&h, b - a);
	}
	c->overhead_ticks = h.min;
	c->overhead_median_ticks = (uint64_t)ar_hist_quantile(&h, 0.5);
	c->step_ticks = counter_step();
	uint64_t spread = c->overhead_median_ticks - c->overhead_ticks;
	c->resolution_ticks = spread > c->step_ticks ? spread : c->step_ticks;
}

const char *ar_clock_name(const ar_clock_t *c)
{
	return ar_timer_name(c->tsc);
}
