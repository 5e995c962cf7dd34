/*
 * clock.h — the replay worker's per-call timer.
 *
 * Choice (measured on the 2-core AMD EPYC VM these tools are developed on,
 * docs/RESULTS.md): a fenced `lfence; rdtsc` ... `rdtscp; lfence` pair
 * costs 20 ns minimum, clock_gettime(CLOCK_MONOTONIC) through the vDSO 36 ns
 * per read. So on x86-64 with an invariant TSC (constant_tsc + nonstop_tsc
 * in /proc/cpuinfo) the worker reads the TSC and calibrates it against
 * CLOCK_MONOTONIC; anywhere else it falls back to clock_gettime and says so
 * (runs.timer). The fences keep the heap call from being reordered across
 * the reads; the pair's own cost is measured at start-up (minimum and
 * median of back-to-back reads), the minimum is subtracted from every
 * sample and both are reported.
 */
#ifndef AR_CLOCK_H
#define AR_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

typedef struct ar_clock {
	int tsc;                 /* 1: TSC ticks; 0: ticks are CLOCK_MONOTONIC ns */
	double ticks_per_ns;     /* calibrated (1.0 for clock_gettime) */
	uint64_t overhead_ticks; /* minimum cost of an empty start/stop pair */
	uint64_t overhead_median_ticks;
} ar_clock_t;

extern int ar_clock_use_tsc;

static inline uint64_t ar_clock_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t ar_clock_start(void)
{
#if defined(__x86_64__)
	if (ar_clock_use_tsc) {
		_mm_lfence();
		return __rdtsc();
	}
#endif
	return ar_clock_mono_ns();
}

static inline uint64_t ar_clock_stop(void)
{
#if defined(__x86_64__)
	if (ar_clock_use_tsc) {
		unsigned aux;
		uint64_t t = __rdtscp(&aux);
		_mm_lfence();
		return t;
	}
#endif
	return ar_clock_mono_ns();
}

/* Pick the timer, calibrate it (busy-waits about calib_ms) and measure its
 * overhead. Never allocates. ALLOCRR_TIMER=clock_gettime forces the fallback. */
void ar_clock_init(ar_clock_t *c, unsigned calib_ms);
/* Human name of the timer in use: "rdtsc" or "clock_gettime". */
const char *ar_clock_name(const ar_clock_t *c);

#endif
