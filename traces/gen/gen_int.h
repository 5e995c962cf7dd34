/*
 * gen_int.h — what scenario files (scen_*.c) use from the generator core
 * (gen_core.c). A scenario is a per-thread state machine: its step function
 * makes at most one of the calls below per step, so the core can interleave
 * threads call by call.
 *
 * The call helpers assign sequence numbers the way the recorder would
 * (SPEC 4: free before, allocation after, realloc both), update the simulated
 * address space at exactly that point, and advance the thread's clock by a
 * plausible cost. On a write or address-space failure they set c->rc and
 * return 0; the core stops at the end of the step.
 */
#ifndef AR_GEN_INT_H
#define AR_GEN_INT_H

#include "addr_sim.h"
#include "gen.h"

typedef struct ar_gen_thread {
	ar_evbuf_t buf;
	uint8_t *mem;      /* AR_EVBUF_MAX_BYTES of storage for buf */
	uint64_t clock_ns; /* simulated time of this thread */
	int done;
	void *state;       /* the scenario's per-thread state */
} ar_gen_thread_t;

struct ar_gen_ctx {
	const ar_gen_scenario_t *sc;
	uint32_t nthreads;
	uint64_t ops, seed;
	uint64_t rng, seq, events, live;
	uint64_t step_ns; /* clock of the running thread when its step began */
	ar_addr_sim_t addr;
	ar_writer_t *w;
	ar_gen_thread_t *th;
	void *shared; /* the scenario's shared state */
	int rc;       /* first error, AR_E* */
	ar_error_t *err;
};

/* splitmix64 over the generator's one random stream. */
uint64_t ar_gen_rand(ar_gen_ctx_t *c);
/* Uniform in [lo, hi] (inclusive). */
uint64_t ar_gen_range(ar_gen_ctx_t *c, uint64_t lo, uint64_t hi);
/* True once calls made plus objects live reach the ops budget: threads
 * then free what they own and exit. */
int ar_gen_stopping(const ar_gen_ctx_t *c);

uint64_t ar_gen_malloc(ar_gen_ctx_t *c, uint32_t t, uint64_t size);
uint64_t ar_gen_calloc(ar_gen_ctx_t *c, uint32_t t, uint64_t count, uint64_t size);
/* realloc(ptr, new_size) of a block allocated with old_size: in place when
 * both sizes share a class, else moved. Returns the new pointer. */
uint64_t ar_gen_realloc(ar_gen_ctx_t *c, uint32_t t, uint64_t ptr, uint64_t old_size, uint64_t new_size);
/* free(ptr) of a block allocated with `size` bytes, by thread t (any
 * thread: the block returns to the arena that owns its address). */
void ar_gen_free(ar_gen_ctx_t *c, uint32_t t, uint64_t ptr, uint64_t size);
/* The program's own work (or waiting) between calls: advance t's clock. */
void ar_gen_work(ar_gen_ctx_t *c, uint32_t t, uint64_t ns);

/* Scenario definitions (one file per family). */
extern const ar_gen_scenario_t ar_gen_s1, ar_gen_s2, ar_gen_s4, ar_gen_a, ar_gen_m; /* scen_window.c */
extern const ar_gen_scenario_t ar_gen_s3;                               /* scen_hashmap.c */
extern const ar_gen_scenario_t ar_gen_s5, ar_gen_b;                     /* scen_batch.c */
extern const ar_gen_scenario_t ar_gen_d;                                /* scen_cache.c */
extern const ar_gen_scenario_t ar_gen_x;                                /* scen_xthread.c */

#endif
