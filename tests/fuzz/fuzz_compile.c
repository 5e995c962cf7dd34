/*
 * fuzz_compile.c — libFuzzer target for the replayer's compile step: any
 * bytes as a trace, compiled to a workload (ar_wl_compile: wl_compile.c,
 * with wl_decode.c's decoding thread), which is then opened the way the
 * worker opens it (ar_wl_open: wl_file.c) and checked against what the
 * worker relies on (workload.h), without running a single allocation:
 *
 *   - a failed compile says why (err.msg);
 *   - a compiled workload opens, and its counts add up: the streams' ops
 *     by kind sum to the header's, calls = events - skipped events;
 *   - every op passes the worker's own checks (slot < nslots, a SYNC names
 *     another stream, a SAMPLE index < nsamples) and WAIT/SIGNAL sit only on
 *     ops with a slot;
 *   - a dry run of the schedule (each stream as far as its token waits and
 *     SYNCs allow, round after round, as the worker's threads would) ends:
 *     waits never form a cycle and every wanted token comes;
 *   - on the way, a slot never receives a block while it holds one, and
 *     a free or realloc of a slot finds one there;
 *   - the --access-pass point (peak_thread, peak_op) lies inside a stream.
 *
 * Input and workload are memfds named by their /proc/self/fd paths, since
 * both functions take paths (as fuzz_reader.c, one way for all).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_input.h"

#include "workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                        \
	do {                               \
		if (!(cond))               \
			__builtin_trap();  \
	} while (0)

static const unsigned known_flags = AR_WL_F_WAIT | AR_WL_F_SIGNAL | AR_WL_F_NOSRC | AR_WL_F_TRACE_NULL;

/* Requested bytes of a call as the compiler counts them (count x size,
 * saturated): a realloc to 0 that returned NULL freed its input. */
static uint64_t request_of(const ar_wl_op_t *op)
{
	uint64_t r;
	if (op->kind != AR_WL_CALLOC && op->kind != AR_WL_REALLOCARRAY)
		return op->size;
	return __builtin_mul_overflow(op->arg, op->size, &r) ? UINT64_MAX : r;
}

/* Every op of every stream on its own, and the header's sums. */
static void check_ops(const ar_workload_t *w)
{
	const ar_wl_header_t *h = w->hdr;
	uint64_t by_kind[AR_WL_NKINDS] = {0}, calls = 0;
	for (uint32_t t = 0; t < h->nthreads; t++) {
		const ar_wl_thread_t *th = &w->threads[t];
		const ar_wl_op_t *ops = ar_wl_ops(w, t);
		uint64_t mine[AR_WL_NKINDS] = {0};
		for (uint64_t i = 0; i < th->nops; i++) {
			const ar_wl_op_t *op = &ops[i];
			CHECK(op->kind < AR_WL_NKINDS && !(op->flags & ~known_flags));
			mine[op->kind]++;
			if (op->kind == AR_WL_SAMPLE) {
				CHECK(op->slot < h->nsamples && op->flags == 0);
			} else if (op->kind == AR_WL_SYNC) {
				CHECK(op->slot < h->nthreads && op->slot != t && op->flags == 0);
			} else {
				calls++;
				CHECK(op->slot == AR_WL_NOSLOT || op->slot < h->nslots);
				if (op->flags & (AR_WL_F_WAIT | AR_WL_F_SIGNAL))
					CHECK(op->slot != AR_WL_NOSLOT);
			}
		}
		for (int k = 0; k < AR_WL_NKINDS; k++) {
			CHECK(mine[k] == th->ops_by_kind[k]);
			by_kind[k] += mine[k];
		}
	}
	for (int k = 0; k < AR_WL_NKINDS; k++)
		CHECK(by_kind[k] == h->ops_by_kind[k]);
	CHECK(calls == h->calls);
	CHECK(h->events == h->calls + h->skipped_unknown_frees + h->skipped_unknown_ops);
	if (h->peak_live_bytes)
		CHECK(h->peak_thread < h->nthreads && h->peak_op <= w->threads[h->peak_thread].nops);
}

/* Op `op` of a stream runs on a slot (its waits are satisfied): apply what
 * the traced call did to the slot's occupancy. */
static void occupy(const ar_wl_op_t *op, uint8_t *live)
{
	uint32_t s = op->slot;
	int failed = op->flags & AR_WL_F_TRACE_NULL;
	switch (op->kind) {
	case AR_WL_FREE:
		if (s != AR_WL_NOSLOT) {
			CHECK(live[s]);
			live[s] = 0;
		}
		return;
	case AR_WL_REALLOC:
	case AR_WL_REALLOCARRAY:
		if (op->flags & AR_WL_F_NOSRC) { /* from NULL: like an allocation */
			if (failed) {
				CHECK(s == AR_WL_NOSLOT);
				return;
			}
			CHECK(s != AR_WL_NOSLOT && !live[s]);
			live[s] = 1;
			return;
		}
		CHECK(s != AR_WL_NOSLOT && live[s]);
		if (failed && request_of(op) == 0)
			live[s] = 0; /* realloc(p, 0) returned NULL: p was freed */
		return;
	default:
		if (failed) {
			CHECK(s == AR_WL_NOSLOT);
			return;
		}
		CHECK(s != AR_WL_NOSLOT && !live[s]);
		live[s] = 1;
	}
}

/* Run the schedule without allocating: round after round, each stream runs
 * until an op must wait. A round in which nobody moves, before all are
 * done, is a deadlock the worker would time out on. */
static void dry_run(const ar_workload_t *w)
{
	const ar_wl_header_t *h = w->hdr;
	uint32_t n = h->nthreads;
	uint64_t *pc = calloc(n, sizeof *pc);
	uint16_t *tok = calloc(h->nslots ? h->nslots : 1, sizeof *tok);
	uint8_t *live = calloc(h->nslots ? h->nslots : 1, 1);
	CHECK(pc && tok && live);
	for (;;) {
		int moved = 0, left = 0;
		for (uint32_t t = 0; t < n; t++) {
			const ar_wl_op_t *ops = ar_wl_ops(w, t);
			uint64_t nops = w->threads[t].nops;
			while (pc[t] < nops) {
				const ar_wl_op_t *op = &ops[pc[t]];
				if (op->kind == AR_WL_SYNC) {
					uint32_t u = op->slot;
					if (pc[u] < w->threads[u].nops && pc[u] < op->size)
						break;
				} else if (op->kind < AR_WL_NCALLS) {
					if ((op->flags & AR_WL_F_WAIT) && tok[op->slot] != op->wait_token)
						break;
					occupy(op, live);
					if (op->flags & AR_WL_F_SIGNAL)
						tok[op->slot]++;
				}
				pc[t]++;
				moved = 1;
			}
			left |= pc[t] < nops;
		}
		if (!left)
			break;
		CHECK(moved); /* a deadlock: some wait can never be satisfied */
	}
	free(pc);
	free(tok);
	free(live);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int in = fuzz_input_fd("fuzz-trace", data, size), out = fuzz_input_fd("fuzz-workload", NULL, 0);
	if (in < 0 || out < 0) {
		if (in >= 0)
			close(in);
		if (out >= 0)
			close(out);
		return 0;
	}
	char trace_path[64], wl_path[64];
	snprintf(trace_path, sizeof trace_path, "/proc/self/fd/%d", in);
	snprintf(wl_path, sizeof wl_path, "/proc/self/fd/%d", out);
	ar_error_t err;
	int rc = ar_wl_compile(trace_path, wl_path, "", &err);
	if (rc != 0) {
		CHECK(rc < 0 && err.msg[0]); /* a failure says why */
	} else {
		ar_workload_t w;
		char msg[512];
		CHECK(ar_wl_open(&w, wl_path, msg, sizeof msg) == 0);
		CHECK(w.hdr->trace_status <= AR_STATUS_CORRUPT);
		/* every thread switch became exactly one of the schedule's outcomes */
		CHECK(w.hdr->switches == w.hdr->handoffs + w.hdr->handoffs_dropped + w.hdr->switches_interleaved);
		check_ops(&w);
		dry_run(&w);
		ar_wl_close(&w);
	}
	close(in);
	close(out);
	return 0;
}
