/*
 * worker_clock.h — the replay worker's per-call timer.
 *
 * Choice (measured on the 2-core AMD EPYC VM these tools are developed on,
 * docs/RESULTS.md): a fenced `lfence; rdtsc` ... `rdtscp; lfence` pair
 * costs 20 ns minimum, clock_gettime(CLOCK_MONOTONIC) through the vDSO 36 ns
 * per read. So on x86-64 with an invariant TSC (constant_tsc + nonstop_tsc)
 * the worker reads the TSC and calibrates it against CLOCK_MONOTONIC;
 * anywhere else it falls back to clock_gettime and says so (runs.timer).
 * RDTSCP is optional: where the CPU (or valgrind, which refuses it when the
 * host lacks it) does not grant it, the stop read is `lfence; rdtsc;
 * lfence`, which orders the same way (ar_cpu.h says how "grant" is decided).
 * The fences keep the heap call from being reordered across the reads; the
 * pair's own cost is measured at start-up (minimum and median of
 * back-to-back reads), the minimum is subtracted from every sample and both
 * are reported.
 */
#ifndef AR_WORKER_CLOCK_H
#define AR_WORKER_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/* What a start/stop pair reads; the worker reports it as timer_tsc. */
enum ar_timer {
	AR_TIMER_CLOCK_GETTIME = 0, /* ticks are CLOCK_MONOTONIC ns */
	AR_TIMER_RDTSCP = 1,        /* lfence;rdtsc ... rdtscp;lfence */
	AR_TIMER_RDTSC = 2,         /* lfence;rdtsc ... lfence;rdtsc;lfence (no rdtscp) */
};

typedef struct ar_clock {
	int tsc;                 /* enum ar_timer; nonzero: TSC ticks */
	double ticks_per_ns;     /* calibrated (1.0 for clock_gettime) */
	uint64_t overhead_ticks; /* minimum cost of an empty start/stop pair */
	uint64_t overhead_median_ticks;
} ar_clock_t;

extern int ar_clock_use_tsc; /* enum ar_timer, read on every call */

/* runs.timer for a timer_tsc the worker reported (docs/RESULTS.md). */
static inline const char *ar_timer_name(uint64_t timer)
{
	return timer == AR_TIMER_RDTSCP ? "rdtsc" : timer == AR_TIMER_RDTSC ? "rdtsc-lfence" : "clock_gettime";
}

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
	if (ar_clock_use_tsc == AR_TIMER_RDTSCP) {
		unsigned aux;
		uint64_t t = __rdtscp(&aux);
		_mm_lfence();
		return t;
	}
	if (ar_clock_use_tsc == AR_TIMER_RDTSC) {
		_mm_lfence();
		uint64_t t = __rdtsc();
		_mm_lfence();
		return t;
	}
#endif
	return ar_clock_mono_ns();
}

/* Pick the timer, calibrate it (busy-waits about calib_ms) and measure its
 * overhead. Never allocates. ALLOCRR_TIMER=clock_gettime forces the
 * fallback, ALLOCRR_TIMER=rdtsc the pair without rdtscp. */
void ar_clock_init(ar_clock_t *c, unsigned calib_ms);
/* Human name of the timer in use: "rdtsc", "rdtsc-lfence" or "clock_gettime". */
const char *ar_clock_name(const ar_clock_t *c);

#endif
