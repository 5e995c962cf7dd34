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
 *
 * Resolution: after that subtraction an empty call still reads anywhere
 * from 0 up to the pair's spread (median - minimum: half of the empty
 * pairs read at least that much above the minimum), and the counter itself
 * moves in steps (a VM's TSC may advance 20 ticks at a time). A latency at
 * or below the larger of the two cannot be told from no time at all, so
 * it is "< resolution", never 0 (runs.timer_resolution_ns).
 *
 * Sampling (--timing sample:N): only 1 call in N on average is timed; the
 * others run with no clock read, so wall time and ops/s stay those of an
 * untimed replay. The gap to the next timed call is drawn uniformly from
 * 1..2N-1 (mean N) by a per-thread xorshift generator, so a trace whose
 * calls repeat with some period is not sampled at one phase of it (a fixed
 * stride would time the same op of a period-N loop every time). The seed
 * depends only on the thread's index: every run of a workload, under every
 * allocator, times the same calls, and a run under --counters sim repeats
 * exactly.
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
	uint64_t step_ticks;       /* smallest increment the counter shows */
	uint64_t resolution_ticks; /* max(step, median - minimum overhead), >= 1 */
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

/* ---- sampled timing ---- */

/* Per-thread state of the sampler: the generator and the calls left
 * until the next timed one. */
typedef struct ar_sampler {
	uint64_t rng;
	uint64_t left;
} ar_sampler_t;

/* The calls until the next timed one: uniform in 1..2*period-1 (mean
 * period; always 1 for period 1). xorshift64, scaled into the range by a
 * multiply and a shift rather than a division: it runs on every timed call,
 * outside the timed window but inside the wall time. */
static inline uint64_t ar_sampler_gap(ar_sampler_t *s, uint64_t period)
{
	uint64_t x = s->rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	s->rng = x;
	return 1 + (uint64_t)(((unsigned __int128)x * (2 * period - 1)) >> 64);
}

/* Seed the sampler of replay thread `index` (fixed: see the top) and draw
 * its first gap. */
static inline void ar_sampler_init(ar_sampler_t *s, uint32_t index, uint64_t period)
{
	/* splitmix64 of the index: distinct, never-zero states per thread */
	uint64_t z = 0x9E3779B97F4A7C15ull * ((uint64_t)index + 1);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	s->rng = (z ^ (z >> 31)) | 1;
	s->left = ar_sampler_gap(s, period ? period : 1);
}

/* Pick the timer, calibrate it (busy-waits about calib_ms) and measure its
 * overhead. Never allocates. ALLOCRR_TIMER=clock_gettime forces the
 * fallback, ALLOCRR_TIMER=rdtsc the pair without rdtscp. */
void ar_clock_init(ar_clock_t *c, unsigned calib_ms);
/* Human name of the timer in use: "rdtsc", "rdtsc-lfence" or "clock_gettime". */
const char *ar_clock_name(const ar_clock_t *c);

#endif
