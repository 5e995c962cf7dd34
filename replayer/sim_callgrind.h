/*
 * sim_callgrind.h — allocreplay --counters sim: the valgrind command line
 * that runs a worker under callgrind's cache simulator, and the reader of
 * the profile it writes. Parent side only (runner.c).
 *
 * Determinism: the simulated caches are fixed here (I1 and D1 32 KiB 8-way,
 * LL 8 MiB 16-way, 64-byte lines), never taken from the host CPU, so the
 * same trace, allocator build and libraries give the same counts on any
 * x86-64 machine; the worker instruments only its replay window.
 */
#ifndef AR_SIM_CALLGRIND_H
#define AR_SIM_CALLGRIND_H

#include <stddef.h>
#include <stdint.h>

/* Slowdown factor applied to --timeout (and the dependency timeout) for a
 * worker under callgrind; docs/RESULTS.md gives the measured one. */
#define AR_SIM_TIMEOUT_FACTOR 100u

/* valgrind arguments before the worker's own argv (NULL-terminated list;
 * out_arg is "--callgrind-out-file=PATH", built by the caller). */
#define AR_SIM_VALGRIND_ARGS(valgrind, out_arg)                                              \
	(char *)(valgrind), "-q", "--tool=callgrind", "--cache-sim=yes", "--I1=32768,8,64",      \
		"--D1=32768,8,64", "--LL=8388608,16,64", "--instr-atstart=no", (char *)(out_arg)

/* Instructions (Ir), D1 misses (D1mr + D1mw) and LL misses (DLmr + DLmw). */
typedef struct ar_sim_cost {
	uint64_t ir, d1, ll;
} ar_sim_cost_t;

typedef struct ar_sim_result {
	ar_sim_cost_t total;     /* every function's self cost, summed */
	ar_sim_cost_t allocator; /* inclusive cost of the worker's calls into the allocator */
	ar_sim_cost_t access;    /* self cost of ar_access_walk (the access pass) */
	int has_access;          /* the profile has ar_access_walk */
} ar_sim_result_t;

/*
 * Read the callgrind profile at path. "Inside the allocator" is the
 * inclusive cost of every call from code in worker_obj (the worker
 * executable) into a function of alloc_obj (the library LD_PRELOAD put in
 * front, compared by real path) or, when glibc is set, into libc's
 * malloc-family entry points (sim_callgrind.c). Returns 0, or -1 with a
 * message in err (cannot read, not a callgrind profile with the needed
 * events).
 */
int ar_sim_read(const char *path, const char *alloc_obj, const char *worker_obj, int glibc,
		ar_sim_result_t *res, char *err, size_t errcap);

#endif
