/*
 * fuzz_compile.c — libFuzzer target for the replayer's compile step: any
 * bytes as a trace, compiled to a workload (ar_wl_compile: wl_compile.c,
 * with wl_decode.c's decoding thread), which is then opened and decoded
 * both ways the worker reads it (ar_wl_open, ar_wl_load, ar_wl_cursor_next:
 * wl_file.c, wl_codec.c) and checked against what the worker relies on
 * (workload.h), without running a single allocation:
 *
 *   - a failed compile says why (err.msg);
 *   - a compiled workload opens, its content digest matches its header,
 *     and every stream decodes to the same ops whole (ar_wl_load) and a
 *     segment at a time (the cursor, as a streamed replay reads it);
 *   - its counts add up: the streams' ops by kind sum to the header's,
 *     calls = events - skipped events, the SYNCs flagged AR_WL_F_DEP are
 *     cross_thread_deps + reuse_deps and the others sync_ops;
 *   - every op passes the worker's own checks (slot < nslots, a SYNC names
 *     another stream, a SAMPLE index < nsamples, the prelude is MALLOCs);
 *     a SYNC never waits for more ops than its stream has; a dependency
 *     (DEP SYNC) comes right before a heap call, and the producer's op it
 *     waits for (op size - 1 of the stream it names) works on that call's
 *     slot;
 *   - a dry run of the progress model (round after round, each stream runs
 *     until a SYNC names a stream that has not done that many ops yet, as
 *     the worker's threads would) ends: waits never form a cycle;
 *   - on the way, a slot never receives a block while it holds one, and
 *     a free or realloc of a slot finds one there;
 *   - the --access-pass point (peak_thread, peak_op) lies inside a stream.
 *
 * The input is a memfd named by its /proc/self/fd path (as fuzz_reader.c,
 * one way for all). The workload cannot be: the compiler never opens its
 * output through a symbolic link (O_NOFOLLOW, workload.h), which such a
 * path is, so every compile would fail before compiling anything. It is a
 * temporary file in $TMPDIR (or /tmp), removed after each input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static const unsigned call_flags = AR_WL_F_NOSRC | AR_WL_F_TRACE_NULL;

/* Requested bytes of a call as the compiler counts them (count x size,
 * saturated): a realloc to 0 that returned NULL freed its input. */
static uint64_t request_of(const ar_wl_op_t *op)
{
	uint64_t r;
	if (op->kind != AR_WL_CALLOC && op->kind != AR_WL_REALLOCARRAY)
		return op->size;
	return __builtin_mul_overflow(op->arg, op->size, &r) ? UINT64_MAX : r;
}

/* A SYNC op of stream t: it names another stream and waits for no more
 * ops than that stream has; a dependency (AR_WL_F_DEP) precedes a heap
 * call (next, NULL at the stream's end) whose slot the producer's op it
 * waits for works on. */
static void check_sync(const ar_workload_t *w, uint32_t t, const ar_wl_op_t *op, const ar_wl_op_t *next)
{
	const ar_wl_header_t *h = w->hdr;
	CHECK(op->slot < h->nthreads && op->slot != t && !(op->flags & ~AR_WL_F_DEP));
	CHECK(op->size <= w->threads[op->slot].nops);
	if (!(op->flags & AR_WL_F_DEP))
		return;
	CHECK(op->size >= 1 && next && next->kind < AR_WL_NCALLS && next->slot != AR_WL_NOSLOT);
	const ar_wl_op_t *prod = &ar_wl_ops(w, op->slot)[op->size - 1];
	CHECK(prod->kind < AR_WL_NCALLS && prod->slot == next->slot);
}

/* Every op of every stream on its own, and the header's sums. */
static void check_ops(const ar_workload_t *w)
{
	const ar_wl_header_t *h = w->hdr;
	uint64_t by_kind[AR_WL_NKINDS] = {0}, calls = 0, deps = 0;
	for (uint32_t t = 0; t < h->nthreads; t++) {
		const ar_wl_thread_t *th = &w->threads[t];
		const ar_wl_op_t *ops = ar_wl_ops(w, t);
		uint64_t mine[AR_WL_NKINDS] = {0}, pre = 0;
		for (uint64_t i = 0; i < th->nops; i++) {
			const ar_wl_op_t *op = &ops[i];
			CHECK(op->kind < AR_WL_NKINDS);
			if (i < th->prelude_ops) { /* the worker's check (worker_replay.c) */
				CHECK(op->kind == AR_WL_MALLOC && op->flags == 0 && op->slot < h->nslots);
				pre++;
				continue;
			}
			mine[op->kind]++;
			if (op->kind == AR_WL_SAMPLE) {
				CHECK(op->slot < h->nsamples && op->flags == 0);
			} else if (op->kind == AR_WL_SYNC) {
				check_sync(w, t, op, i + 1 < th->nops ? &ops[i + 1] : NULL);
				deps += (op->flags & AR_WL_F_DEP) != 0;
			} else {
				calls++;
				CHECK(!(op->flags & ~call_flags));
				CHECK(op->slot == AR_WL_NOSLOT || op->slot < h->nslots);
			}
		}
		CHECK(pre == th->prelude_ops);
		for (int k = 0; k < AR_WL_NKINDS; k++) {
			CHECK(mine[k] == th->ops_by_kind[k]);
			by_kind[k] += mine[k];
		}
	}
	for (int k = 0; k < AR_WL_NKINDS; k++)
		CHECK(by_kind[k] == h->ops_by_kind[k]);
	CHECK(calls == h->calls);
	CHECK(deps == h->cross_thread_deps + h->reuse_deps);
	CHECK(h->ops_by_kind[AR_WL_SYNC] == deps + h->sync_ops);
	CHECK(h->events == h->calls + h->skipped_unknown_frees + h->skipped_unknown_ops);
	if (h->peak_live_bytes)
		CHECK(h->peak_thread < h->nthreads && h->peak_op <= w->threads[h->peak_thread].nops);
}

/* Op `op` of a stream runs on a slot (its SYNCs are satisfied): apply what
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

/* Run the workload without allocating, in the progress model the worker
 * keeps (worker_replay.c): a stream's progress is how many of its ops it
 * has done, and a SYNC naming stream u with size k waits until u's
 * progress reaches k. First every prelude, as the worker runs them before
 * the window; then round after round each stream runs until a SYNC must
 * wait. A round in which nobody moves, before all are done, is a deadlock
 * the worker would time out on. */
static void dry_run(const ar_workload_t *w)
{
	const ar_wl_header_t *h = w->hdr;
	uint32_t n = h->nthreads;
	uint64_t *pc = calloc(n, sizeof *pc);
	uint8_t *live = calloc(h->nslots ? h->nslots : 1, 1);
	CHECK(pc && live);
	for (uint32_t t = 0; t < n; t++)
		for (; pc[t] < w->threads[t].prelude_ops; pc[t]++)
			occupy(&ar_wl_ops(w, t)[pc[t]], live);
	for (;;) {
		int moved = 0, left = 0;
		for (uint32_t t = 0; t < n; t++) {
			const ar_wl_op_t *ops = ar_wl_ops(w, t);
			uint64_t nops = w->threads[t].nops;
			while (pc[t] < nops) {
				const ar_wl_op_t *op = &ops[pc[t]];
				if (op->kind == AR_WL_SYNC && pc[op->slot] < op->size)
					break; /* (check_ops: size <= the stream's ops) */
				if (op->kind < AR_WL_NCALLS)
					occupy(op, live);
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
	free(live);
}

/* Decode every stream (ar_wl_load), check the content digest, and check
 * that a cursor reads each stream as the same ops, a segment at a time,
 * its segments as the index lists them. The caller frees w->decoded. */
static void load(ar_workload_t *w)
{
	const ar_wl_header_t *h = w->hdr;
	char msg[512];
	uint8_t digest[32];
	CHECK(ar_wl_digest(w, digest) == 0 && memcmp(digest, h->content_sha256, 32) == 0);
	uint64_t bytes = ar_wl_decoded_bytes(w);
	void *mem = malloc(bytes ? bytes : 1), *raw = malloc(h->max_seg_bytes);
	ar_wl_op_t *seg = malloc((size_t)h->seg_ops * sizeof *seg);
	CHECK(mem && raw && seg);
	CHECK(ar_wl_load(w, mem, raw, msg, sizeof msg) == 0);
	for (uint32_t t = 0; t < h->nthreads; t++) {
		ar_wl_cursor_t c = { .w = w, .thread = t, .ops = seg, .raw = raw };
		uint64_t at = 0;
		int r;
		while ((r = ar_wl_cursor_next(&c, 0, msg, sizeof msg)) == 1) {
			CHECK(c.first == at && c.n >= 1 && c.n <= h->seg_ops);
			CHECK(c.n <= w->threads[t].nops - at);
			CHECK(memcmp(seg, ar_wl_ops(w, t) + at, c.n * sizeof *seg) == 0);
			at += c.n;
		}
		CHECK(r == 0 && at == w->threads[t].nops);
	}
	free(raw);
	free(seg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *tmp = getenv("TMPDIR");
	char trace_path[64], wl_path[4096];
	snprintf(wl_path, sizeof wl_path, "%s/allocrr-fuzz-wl.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int in = fuzz_input_fd("fuzz-trace", data, size), out = mkstemp(wl_path);
	if (in < 0 || out < 0) {
		if (in >= 0)
			close(in);
		if (out >= 0) {
			close(out);
			unlink(wl_path);
		}
		return 0;
	}
	close(out); /* the compiler replaces it (O_TRUNC) */
	snprintf(trace_path, sizeof trace_path, "/proc/self/fd/%d", in);
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
		load(&w);
		check_ops(&w);
		dry_run(&w);
		free(w.decoded);
		ar_wl_close(&w);
	}
	close(in);
	unlink(wl_path);
	return 0;
}
