/*
 * worker.h — state shared by the replay worker's files (worker_main.c sets
 * up and reports, worker_replay.c runs the op streams, worker_probe.c reads
 * RSS, rusage, perf counters and the allocator's statistics).
 *
 * Invariant: everything here lives in memory the worker mapped itself and
 * touched before the replay started (so it is in the RSS baseline and the
 * allocator under test never sees it); after start-up no function in the
 * worker calls malloc, directly or through stdio.
 */
#ifndef AR_WORKER_H
#define AR_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "worker_clock.h"
#include "hist.h"
#include "workload.h"

enum { AR_TOUCH_NONE, AR_TOUCH_FIRST, AR_TOUCH_PAGES, AR_TOUCH_ALL };
/* Ops between two additions to ar_worker_t.ops_done: rare enough that the
 * shared cache line costs nothing per op, often enough for a redraw every
 * 200 ms even under valgrind. */
#define AR_WK_PROGRESS_EVERY 4096u
/* --timing: which heap calls are timed (worker_clock.h, "Sampling"). */
enum { AR_TIMING_NONE, AR_TIMING_EVERY, AR_TIMING_SAMPLE };
/* A short trace is timed more often than 1 in N: at least this many
 * timed calls, so p99.9 rests on at least 10 calls above it (worker_main.c,
 * effective_period). */
#define AR_TIMING_MIN_SAMPLES 10000u
/* --counters: where cache figures come from (docs/RESULTS.md, "Counters"). */
enum { AR_CTR_NONE, AR_CTR_PERF, AR_CTR_SIM };

typedef struct ar_sample {
	uint64_t event;      /* global event index of the marker */
	uint64_t elapsed_ns; /* since the replay started */
	uint64_t anon_bytes; /* RssAnon of the whole worker */
	uint64_t live_bytes; /* exact live requested bytes at that point of the trace */
} ar_sample_t;

/* One replay thread. Counters are its own; the main thread sums them after
 * the "done" barrier. */
typedef struct ar_wthread {
	uint32_t index;
	/* Ops [chunk_first, chunk_end) of the stream are at ops[0..): all of
	 * them when the workload is resident, one segment at a time from cur
	 * when it is streamed (worker_main.c, --workload-memory). */
	const ar_wl_op_t *ops;
	uint64_t chunk_first, chunk_end;
	ar_wl_cursor_t cur;
	uint64_t nops;
	uint64_t first_op; /* ops before it are the prelude (workload.h), run untimed before the window */
	ar_hist_t *hist[AR_WL_NCALLS]; /* NULL for kinds this thread never calls */
	uint64_t calls, failed_allocs, leaked_blocks;
	uint64_t unexpected_failed_allocs; /* NULL where the traced call succeeded */
	uint64_t skipped_ops; /* frees/reallocs of a block the replay never got */
	uint64_t allocs_expected, frees_expected; /* what the allocator must count */
	uint64_t dep_waits, dep_blocked;
	uint64_t sync_waits; /* SYNC ops that found the other stream behind */
	_Atomic uint64_t progress; /* ops done; UINT64_MAX once the stream ended */
	uint64_t timed_ticks;
	uint64_t timed_calls; /* calls that went into the histograms */
	ar_sampler_t sampler; /* AR_TIMING_SAMPLE: which call is timed next */
	uint64_t sampling_ns; /* spent reading RSS at sample markers */
	uint64_t checksum;
	uint64_t apass_at; /* run the access pass before this op; UINT64_MAX: never */
	int error;
	char errmsg[200];
	pthread_t tid;
} ar_wthread_t;

typedef struct ar_worker {
	ar_workload_t wl;
	void **slot_ptr;
	int streamed; /* the workload is read a segment at a time during the replay */
	_Atomic int failed; /* a replay thread stopped with an error: its waiters stop too */
	ar_wthread_t *th;
	ar_sample_t *samples;
	int statm_fd;
	uint64_t page;
	int touch;
	int timing;            /* AR_TIMING_*: every call (default), none, 1 in N */
	uint64_t timing_every; /* the period used: 1 every call, 0 none, else N */
	int counters; /* AR_CTR_*: perf opens hardware counters; sim runs under
		       * callgrind, which this process only tells where the
		       * replay window is (client requests) */
	/* --access-pass (worker_access.c): requested bytes per slot (NULL when
	 * off) and the pass's results, written by the one thread that runs it. */
	uint64_t *slot_size;
	int apass_done;
	uint64_t apass_ns, apass_blocks, apass_bytes, apass_lines;
	/* Ops done by all replay threads, for allocreplay's progress line: in
	 * the page it shared (--progress-fd), else in a shared page of our own,
	 * so the replay does the same work whether anyone watches or not. Each
	 * thread adds what it did every AR_WK_PROGRESS_EVERY ops and at the end
	 * of its stream (relaxed: a reader only needs a recent value). */
	_Atomic uint64_t *ops_done;
	ar_clock_t clock;
	uint64_t t0_ns;
	uint64_t dep_timeout_ns;
	pthread_barrier_t start, done, leave;
	/* A window trace's preludes: every thread allocates its pre-existing
	 * blocks between these two, after the baselines, before `start`. */
	int has_prelude;
	pthread_barrier_t prelude_go, prelude_done;
} ar_worker_t;

extern ar_worker_t ar_wk;

/* Replay thread t's stream after its prelude. */
void ar_replay_stream(ar_wthread_t *t);
/* Run thread t's prelude (workload.h): allocate its pre-existing blocks,
 * untimed, touched like any block. */
void ar_replay_prelude(ar_wthread_t *t);
/* Anonymous resident bytes of this process (from /proc/self/statm), or 0. */
uint64_t ar_probe_anon_rss(void);

/* ---- worker_access.c: the locality pass ---- */
/* Walk every live block in slot order, reading and writing one byte per
 * 64-byte line; time it; with perf counters, count it. Run by one thread
 * while no other replay thread runs (single-stream workloads only). */
void ar_access_pass(void);
/* Emit the pass's S lines and, in perf mode, its C lines (after the replay). */
struct ar_wproto;
void ar_access_report(struct ar_wproto *r);

/* ---- worker_probe.c: counters and the allocator's own statistics ---- */
/* VmRSS and VmHWM (peak RSS) in bytes from /proc/self/status: 0 or -1. */
int ar_probe_rss(uint64_t *rss, uint64_t *hwm);
/* Reset VmHWM to the current RSS (/proc/self/clear_refs): 0 or -1. */
int ar_probe_reset_hwm(void);
/* perf_event_open the hardware counters (inherited by threads created
 * later), disabled; remember why each one failed. */
void ar_probe_perf_open(void);
void ar_probe_perf_enable(int on);
/* Emit one C line per counter (after the threads were joined). */
void ar_probe_perf_report(struct ar_wproto *r);
/* Current raw value of every counter into v[0..ar_probe_perf_count());
 * UINT64_MAX where a counter is closed or unreadable. No malloc. */
size_t ar_probe_perf_count(void);
void ar_probe_perf_read(uint64_t *v);
/* Emit "C <prefix><name> ..." lines for the differences end - begin. */
void ar_probe_perf_report_delta(struct ar_wproto *r, const char *prefix, const uint64_t *begin,
				const uint64_t *end);
/* Look up the allocator's statistics functions (dlsym: start-up only). */
void ar_probe_stats_init(const char *allocator);
/* Our allocators' allocs_total/frees_total now; 0 when not available. */
int ar_probe_ours_counts(uint64_t *allocs, uint64_t *frees);
/* Emit T lines with whatever statistics the allocator offers. */
void ar_probe_stats_report(struct ar_wproto *r);

#endif
