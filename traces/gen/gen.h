/*
 * gen.h — scenario trace generators: each writes, through the trace-format
 * library, the heap-call sequence of one reference scenario of the allocator
 * write-ups (docs/SCENARIOS.md, with their published figures), as if a program
 * running it had been recorded.
 *
 * Invariants of every generated trace:
 *   - deterministic: the bytes depend only on (scenario, threads, ops, seed)
 *     and the format library's version, never on the clock or the host; the
 *     header has no wall-clock time, pid 0 and the canonical command line;
 *   - legal (SPEC 4, 5.5): one global seq counter from 1, a free takes its seq
 *     before the simulated call and an allocation after, realloc seq < seq2;
 *     seqs of a thread strictly increase; no address is handed out while
 *     live (addr_sim.h); every object is freed by the end of the trace;
 *   - plausible: threads are interleaved by a discrete-event schedule (the
 *     thread whose simulated clock is earliest runs next, each call and the
 *     program's work between calls costing a few seeded-random ns), so event
 *     times never decrease in seq order.
 */
#ifndef AR_GEN_H
#define AR_GEN_H

#include <stdint.h>

#include "ar_trace.h"

/* Bumped whenever a scenario's event sequence changes for a given seed;
 * written into the header's recorder_version ("alloctrace-gen N"). */
#define AR_GEN_VERSION 1
#define AR_GEN_MAX_THREADS 64

typedef struct ar_gen_ctx ar_gen_ctx_t;

typedef struct ar_gen_scenario {
	const char *name;    /* "S1", "X", ... */
	const char *summary; /* one line for `alloctrace gen --list` */
	uint32_t default_threads, min_threads;
	uint32_t threads_even; /* thread count must be even (producer/consumer pairs) */
	uint64_t default_ops;
	/* Allocate per-thread and shared state (c->th[t].state, c->shared);
	 * 0 or AR_ENOMEM. */
	int (*init)(ar_gen_ctx_t *c);
	void (*fini)(ar_gen_ctx_t *c);
	/* Run thread t for one scheduling step: at most one heap call (none
	 * while it waits). Returns 1 while the thread has more to do, 0 when it
	 * has exited (after freeing everything it still owned). */
	int (*step)(ar_gen_ctx_t *c, uint32_t t);
	/* Optional: the name of thread t (default "NAME-T"), at most 31 bytes. */
	void (*thread_name)(uint32_t t, uint32_t nthreads, char out[32]);
} ar_gen_scenario_t;

/* What a generation produced. */
typedef struct ar_gen_result {
	uint64_t events, last_seq, end_time_ns;
} ar_gen_result_t;

/* Number of scenarios and the i-th, in the order `--list` prints them. */
unsigned ar_gen_count(void);
const ar_gen_scenario_t *ar_gen_at(unsigned i);
/* The scenario named `name` (case-insensitive), or NULL. */
const ar_gen_scenario_t *ar_gen_find(const char *name);

/*
 * Write the trace of scenario sc to fd (an empty file or a pipe): `threads`
 * threads (0 = the scenario's default), about `ops` heap calls in total
 * (0 = default; the trace ends when calls made plus objects still live reach
 * it, then every thread frees what it holds), randomness from `seed`.
 * The header's command line is the canonical `alloctrace gen ...` command.
 * Returns 0, or a negative AR_E* code with err filled (AR_EINVAL: bad thread
 * count, with the reason in err->msg).
 */
int ar_gen_write(int fd, const ar_gen_scenario_t *sc, uint32_t threads, uint64_t ops, uint64_t seed,
		 ar_gen_result_t *res, ar_error_t *err);

#endif
