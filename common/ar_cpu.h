/*
 * ar_cpu.h — which time-stamp-counter instructions this process may
 * execute, for the recorder's event clock and the replay worker's timer.
 *
 * Why two sources must agree: a hypervisor may hide a feature from CPUID
 * and /proc/cpuinfo while the instruction still runs natively, and valgrind
 * answers CPUID with a model of its own (it claims RDTSCP) yet refuses to
 * decode RDTSCP when the host's flags lack it: the program dies of SIGILL.
 * So a feature counts only when the kernel's flags (/proc/cpuinfo, the
 * host's truth, also under valgrind) and CPUID (what the emulator, if any,
 * will decode) both list it, and the TSC only while the process has not
 * been told to fault on it (prctl PR_SET_TSC).
 *
 * Never allocates and uses no stdio: safe inside the first malloc of a
 * recorded program. Not thread-safe (one static buffer): call at start-up.
 */
#ifndef AR_CPU_H
#define AR_CPU_H

enum {
	AR_CPU_TSC = 1u << 0,           /* rdtsc executes ("tsc") */
	AR_CPU_INVARIANT_TSC = 1u << 1, /* ticks are time: constant_tsc + nonstop_tsc */
	AR_CPU_RDTSCP = 1u << 2,        /* rdtscp executes ("rdtscp") */
};

/* The AR_CPU_* features this process may use: 0 off x86-64, without a
 * readable /proc/cpuinfo, or when rdtsc would fault. */
unsigned ar_cpu_tsc_features(void);

/* 1 when features (from ar_cpu_tsc_features) let TSC ticks stand for time:
 * rdtsc executes and the TSC is invariant. The one test the recorder's
 * event clock and the replay worker's timer both apply. */
static inline int ar_cpu_tsc_is_time(unsigned features)
{
	return (features & (AR_CPU_TSC | AR_CPU_INVARIANT_TSC)) == (AR_CPU_TSC | AR_CPU_INVARIANT_TSC);
}

/* The pure part, for tests: the features that both the "flags" line of
 * cpuinfo_text (the first CPU's) and the CPUID-derived bits in cpuid
 * (AR_CPU_* as CPUID reports them) grant. */
unsigned ar_cpu_tsc_features_from(const char *cpuinfo_text, unsigned cpuid);

#endif
