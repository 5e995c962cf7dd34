/*
 * rec_clock.c — the event clock. clock_gettime(CLOCK_MONOTONIC) costs about
 * 34 ns per call on the virtual machines we measured, the single largest
 * cost of recording a malloc (docs/BENCHMARKS.md); the TSC costs 13 ns. Where
 * the CPU says its TSC is constant and does not stop (constant_tsc and
 * nonstop_tsc, the same test the kernel uses for its tsc clocksource), event
 * times come from the TSC, converted to CLOCK_MONOTONIC nanoseconds with a
 * linear fit; elsewhere, or with ALLOCRR_CLOCK=monotonic, from clock_gettime.
 * Only rdtsc is used (never rdtscp, which some CPUs and valgrind refuse).
 *
 * The fit: at start, two (tsc, monotonic) pairs 1 ms apart give the rate;
 * the writer thread refits every scan (rec_clock_refit) against the start
 * pair, so the rate's error shrinks as the baseline grows, and re-anchors at
 * the newest pair (never earlier than the old fit's reading, so the clock
 * never runs backwards). Times carry the fit's error: tens of microseconds
 * in the first second, less after; event order comes from sequence numbers,
 * never from times (SPEC 4).
 *
 * Invariants: the hot path reads the fit under a sequence counter (seqlock),
 * never blocks, never calls into libc; the fit is written only by
 * rec_clock_init (single-threaded: start or fork child) and by the writer.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "ar_cpu.h"
#include "rec_internal.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

int rec_clock_tsc;           /* 1: events are timed with the TSC */
static _Atomic uint32_t fit_seq; /* odd while the fit is being written */
static uint64_t fit_tsc0, fit_ns0, fit_mult; /* ns = ns0 + (tsc - tsc0) * mult >> 32 */
static uint64_t base_tsc, base_ns;           /* the start pair, for refits */

/* Events are timed with the TSC only where rdtsc runs and ticks are time
 * (ar_cpu.h: the kernel's flags and CPUID agree; never allocates). */
static int cpu_has_stable_tsc(void)
{
	return ar_cpu_tsc_is_time(ar_cpu_tsc_features());
}

#if HAVE_TSC
/* One (tsc, ns since start) pair, the TSC read bracketed by two clock reads
 * and paired with their midpoint. */
static void sample(uint64_t *tsc, uint64_t *ns)
{
	uint64_t a = rec_mono_ns();
	*tsc = __rdtsc();
	uint64_t b = rec_mono_ns();
	*ns = a + (b - a) / 2 - rec_start_mono_ns;
}

static void publish(uint64_t tsc0, uint64_t ns0, uint64_t mult)
{
	atomic_fetch_add_explicit(&fit_seq, 1, memory_order_acq_rel);
	fit_tsc0 = tsc0;
	fit_ns0 = ns0;
	fit_mult = mult;
	atomic_fetch_add_explicit(&fit_seq, 1, memory_order_release);
}

static uint64_t rate(uint64_t tsc, uint64_t ns)
{
	return tsc > base_tsc ? (uint64_t)(((unsigned __int128)(ns - base_ns) << 32) / (tsc - base_tsc)) : 0;
}
#endif

void rec_clock_init(void)
{
	rec_clock_tsc = 0;
#if HAVE_TSC
	const char *want = getenv("ALLOCRR_CLOCK");
	if ((want && strcmp(want, "tsc") != 0) || !cpu_has_stable_tsc())
		return;
	uint64_t t1, n1;
	sample(&base_tsc, &base_ns);
	do /* 1 ms baseline: a rate error of a few 1e-5 at start */
		sample(&t1, &n1);
	while (n1 - base_ns < 1000000);
	uint64_t mult = rate(t1, n1);
	if (mult == 0)
		return;
	publish(t1, n1, mult);
	rec_clock_tsc = 1;
#endif
}

void rec_clock_rebase(uint64_t old_start_mono_ns)
{
#if HAVE_TSC
	if (!rec_clock_tsc)
		return;
	/* Same TSC, same rate; only the zero of "ns since start" moved (a
	 * fork child starts its own trace). No new 1 ms calibration. The
	 * parent's writer may have been inside publish() at the fork: the
	 * child would inherit fit_seq odd, and every event time would spin on
	 * it for ever, with a half-written fit. So the fit is made again from
	 * the start pair (written once, at start-up) and a fresh sample. */
	uint64_t shift = rec_start_mono_ns - old_start_mono_ns;
	base_ns -= shift;
	uint32_t s = atomic_load(&fit_seq);
	if (s & 1) /* no other thread is left to finish that write */
		atomic_store(&fit_seq, s + 1);
	uint64_t t, n;
	sample(&t, &n);
	uint64_t mult = rate(t, n);
	publish(t, n, mult ? mult : fit_mult);
#else
	(void)old_start_mono_ns;
#endif
}

void rec_clock_refit(void)
{
#if HAVE_TSC
	if (!rec_clock_tsc)
		return;
	uint64_t t, n;
	sample(&t, &n);
	uint64_t mult = rate(t, n);
	/* Re-anchor no earlier than the old fit says it is now: the event
	 * clock never runs backwards, it only corrects its pace. */
	uint64_t old = fit_ns0 + (uint64_t)(((unsigned __int128)(t > fit_tsc0 ? t - fit_tsc0 : 0) * fit_mult) >> 32);
	if (mult)
		publish(t, n > old ? n : old, mult);
#endif
}

uint64_t rec_clock_tsc_ns(void)
{
#if HAVE_TSC
	for (;;) {
		uint32_t s = atomic_load_explicit(&fit_seq, memory_order_acquire);
		uint64_t tsc0 = fit_tsc0, ns0 = fit_ns0, mult = fit_mult;
		uint64_t t = __rdtsc();
		atomic_thread_fence(memory_order_acquire);
		if (!(s & 1) && s == atomic_load_explicit(&fit_seq, memory_order_relaxed)) {
			/* A TSC read a hair before the anchor (another CPU) counts as the anchor. */
			uint64_t d = t > tsc0 ? t - tsc0 : 0;
			return ns0 + (uint64_t)(((unsigned __int128)d * mult) >> 32);
		}
	}
#else
	return rec_time_ns();
#endif
}
