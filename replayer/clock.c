/*
 * clock.c — timer selection, calibration and overhead measurement (see
 * clock.h for why rdtsc). Reads /proc/cpuinfo with open/read, never stdio,
 * so it is safe in the worker (which must not allocate once started).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "hist.h"

int ar_clock_use_tsc;

/* 1 when the first CPU's flags say the TSC ticks at a constant rate even in
 * deep C-states (constant_tsc + nonstop_tsc): ticks are then time. */
static int invariant_tsc(void)
{
#if defined(__x86_64__)
	static char buf[16384];
	int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *flags = strstr(buf, "\nflags");
	if (!flags)
		return 0;
	char *end = strchr(flags + 1, '\n');
	if (end)
		*end = '\0';
	return strstr(flags, " constant_tsc") && strstr(flags, " nonstop_tsc");
#else
	return 0;
#endif
}

void ar_clock_init(ar_clock_t *c, unsigned calib_ms)
{
	const char *force = getenv("ALLOCRR_TIMER");
	ar_clock_use_tsc = invariant_tsc() && !(force && strcmp(force, "clock_gettime") == 0);
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
}

const char *ar_clock_name(const ar_clock_t *c)
{
	return c->tsc ? "rdtsc" : "clock_gettime";
}
