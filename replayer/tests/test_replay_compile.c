/*
 * test_replay_compile.c — the workload compiler on small hand-written
 * traces: address reuse becomes slot reuse, realloc keeps its slot, a block
 * freed by another thread is preceded by a SYNC (AR_WL_F_DEP) on the stream
 * that touched it last, up to that op (workload.h), SPEC 4's realloc window
 * (release at seq, acquire at seq2) is honoured even when another thread
 * frees the returned address inside it, unknown frees are counted and
 * skipped, failures keep their meaning (SPEC 5.5), a slot is stolen
 * across threads only after AR_WL_REUSE_DISTANCE events, with a dependency,
 * and the schedule (workload.h): threads that took turns in the recording
 * (long runs, or short runs with the others idle) hand off with an exact
 * SYNC, finely interleaved threads keep running concurrently, and the
 * window SYNC does not count dependency SYNCs as steps.
 */
#include <stdlib.h>
#include <unistd.h>

#include "testing.h"
#include "wl_test.h"

static char dir[] = "/tmp/allocrr-test-compile-XXXXXX";
static ar_event_t evs[20000];
static size_t nev;

static void ev(uint32_t thread, uint64_t seq, unsigned op, uint64_t ptr, uint64_t size, uint64_t result)
{
	wlt_event(&evs[nev++], thread, seq, op, ptr, size, result);
}

static void ev_realloc(uint32_t thread, uint64_t seq, uint64_t seq2, uint64_t ptr, uint64_t size,
		       uint64_t result)
{
	ev(thread, seq, AR_OP_REALLOC, ptr, size, result);
	evs[nev - 1].seq2 = seq2;
}

static ar_wl_schedule_t schedule = AR_WL_SCHEDULE_RECORDED;

/* Write evs[] as a trace, compile it, open it and decode its streams
 * (wl_test.h). Nothing below can go on without the workload. */
static void build(ar_workload_t *w)
{
	char trace[128], out[128];
	snprintf(trace, sizeof trace, "%s/t.zst", dir);
	snprintf(out, sizeof out, "%s/t.wl", dir);
	wlt_write_trace(trace, evs, nev, 0);
	ar_wl_compile_opts_t o = { .schedule = schedule };
	if (wlt_compile_load(trace, out, "abc", &o, w) != 0)
		exit(TEST_END());
	nev = 0;
}

/* Stream of the thread whose trace index is t. */
static const ar_wl_op_t *ops_of(const ar_workload_t *w, uint32_t t, uint64_t *n)
{
	uint32_t i = wlt_stream(w, t);
	*n = i == UINT32_MAX ? 0 : w->threads[i].nops;
	return i == UINT32_MAX ? NULL : ar_wl_ops(w, i);
}

/* Op k of stream c has a dependency on op p of stream u (workload.h): the
 * op before it is a SYNC flagged AR_WL_F_DEP that names u and waits until
 * u has done p + 1 ops, and op p of u works on the same slot. */
static void expect_dep(const ar_workload_t *w, uint32_t c, uint64_t k, uint32_t u, uint64_t p)
{
	EXPECT(k > 0 && k < w->threads[c].nops && p < w->threads[u].nops);
	if (!(k > 0 && k < w->threads[c].nops && p < w->threads[u].nops))
		return;
	const ar_wl_op_t *sy = &ar_wl_ops(w, c)[k - 1];
	EXPECT_U64(sy->kind, AR_WL_SYNC);
	EXPECT_U64(sy->flags, AR_WL_F_DEP);
	EXPECT_U64(sy->slot, u);
	EXPECT_U64(sy->size, p + 1);
	EXPECT(ar_wl_ops(w, c)[k].kind < AR_WL_NCALLS);
	EXPECT_U64(ar_wl_ops(w, u)[p].slot, ar_wl_ops(w, c)[k].slot);
}

/* How many SYNC ops of stream i are dependencies (dep = 1) or the
 * schedule's (dep = 0). */
static uint64_t syncs_of_kind(const ar_workload_t *w, uint32_t i, int dep)
{
	uint64_t n = 0;
	for (uint64_t k = 0; k < w->threads[i].nops; k++) {
		const ar_wl_op_t *op = &ar_wl_ops(w, i)[k];
		n += op->kind == AR_WL_SYNC && !(op->flags & AR_WL_F_DEP) == !dep;
	}
	return n;
}

static void test_slot_reuse(void)
{
	ar_workload_t w;
	ev(0, 1, AR_OP_MALLOC, 0, 100, 0x1000);
	ev(0, 2, AR_OP_FREE, 0x1000, 0, 0);
	ev(0, 3, AR_OP_MALLOC, 0, 200, 0x1000); /* same address, new block */
	ev(0, 4, AR_OP_MALLOC, 0, 300, 0x2000);
	ev(0, 5, AR_OP_FREE, 0x1000, 0, 0);
	ev(0, 6, AR_OP_FREE, 0x2000, 0, 0);
	build(&w);
	uint64_t n;
	const ar_wl_op_t *o = ops_of(&w, 0, &n);
	EXPECT_U64(n, 6);
	EXPECT_U64(w.hdr->nslots, 2);
	EXPECT_U64(o[0].slot, 0);
	EXPECT_U64(o[1].slot, 0);
	EXPECT_U64(o[2].slot, 0); /* the freed slot, reused */
	EXPECT_U64(o[3].slot, 1);
	EXPECT_U64(o[4].slot, 0);
	EXPECT_U64(o[5].slot, 1);
	EXPECT_U64(o[2].size, 200);
	EXPECT_U64(o[2].kind, AR_WL_MALLOC);
	EXPECT_U64(o[4].kind, AR_WL_FREE);
	for (int i = 0; i < 6; i++)
		EXPECT_U64(o[i].flags, 0);
	EXPECT_U64(w.hdr->peak_live_bytes, 500);
	EXPECT_U64(w.hdr->peak_live_blocks, 2);
	EXPECT_U64(w.hdr->final_live_bytes, 0);
	EXPECT_U64(w.hdr->calls, 6);
	EXPECT_U64(w.hdr->trace_allocs, 3);
	EXPECT_STR(w.hdr->trace_sha256, "abc");
	wlt_close(&w);
}

static void test_realloc(void)
{
	ar_workload_t w;
	ev(0, 1, AR_OP_MALLOC, 0, 10, 0x1000);
	ev_realloc(0, 2, 3, 0x1000, 5000, 0x9000);  /* moves */
	ev_realloc(0, 4, 5, 0x9000, 1 << 30, 0);    /* fails: 0x9000 stays live */
	ev(0, 6, AR_OP_FREE, 0x9000, 0, 0);
	ev_realloc(0, 7, 8, 0, 64, 0x3000);         /* realloc(NULL, 64) */
	ev_realloc(0, 9, 10, 0x3000, 0, 0);         /* realloc(p, 0) -> NULL frees p */
	ev(0, 11, AR_OP_FREE, 0x3000, 0, 0);        /* so this is an unknown free */
	ev(0, 12, AR_OP_FREE, 0, 0, 0);             /* free(NULL): replayed as is */
	ev(0, 13, AR_OP_MALLOC, 0, 1ull << 40, 0);  /* failed malloc */
	build(&w);
	uint64_t n;
	const ar_wl_op_t *o = ops_of(&w, 0, &n);
	EXPECT_U64(n, 8); /* the unknown free is skipped */
	EXPECT_U64(o[1].kind, AR_WL_REALLOC);
	EXPECT_U64(o[1].slot, o[0].slot); /* realloc keeps its slot */
	EXPECT_U64(o[2].slot, o[0].slot);
	EXPECT(o[2].flags & AR_WL_F_TRACE_NULL);
	EXPECT_U64(o[3].slot, o[0].slot); /* free of the realloc'ed address */
	EXPECT(o[4].flags & AR_WL_F_NOSRC);
	EXPECT_U64(o[5].slot, o[4].slot);
	EXPECT_U64(o[6].kind, AR_WL_FREE);
	EXPECT_U64(o[6].slot, AR_WL_NOSLOT);
	EXPECT_U64(o[7].slot, AR_WL_NOSLOT);
	EXPECT(o[7].flags & AR_WL_F_TRACE_NULL);
	EXPECT_U64(w.hdr->skipped_unknown_frees, 1);
	EXPECT_U64(w.hdr->trace_null_results, 2);
	EXPECT_U64(w.hdr->calls, 8);
	EXPECT_U64(w.hdr->events, 9);
	EXPECT_U64(w.hdr->peak_live_bytes, 5000);
	EXPECT_U64(w.hdr->final_live_bytes, 0);
	wlt_close(&w);
}

static void test_cross_thread(void)
{
	ar_workload_t w;
	ev(0, 1, AR_OP_MALLOC, 0, 32, 0x1000);
	ev(1, 2, AR_OP_FREE, 0x1000, 0, 0);          /* B frees what A allocated */
	ev(0, 3, AR_OP_MALLOC, 0, 32, 0x2000);
	ev_realloc(1, 4, 5, 0x2000, 64, 0x2000);    /* B reallocs A's block */
	ev(0, 6, AR_OP_FREE, 0x2000, 0, 0);          /* and A frees it again */
	build(&w);
	uint64_t na, nb;
	const ar_wl_op_t *a = ops_of(&w, 0, &na), *b = ops_of(&w, 1, &nb);
	uint32_t sa = wlt_stream(&w, 0), sb = wlt_stream(&w, 1);
	/* A: malloc, malloc, SYNC, free; B: SYNC, free, SYNC, realloc */
	EXPECT_U64(na, 4);
	EXPECT_U64(nb, 4);
	EXPECT_U64(a[0].kind, AR_WL_MALLOC);
	EXPECT_U64(b[1].kind, AR_WL_FREE);
	expect_dep(&w, sb, 1, sa, 0); /* B's free waits for A's malloc */
	EXPECT_U64(b[1].slot, a[0].slot);
	EXPECT_U64(a[1].kind, AR_WL_MALLOC); /* slot 0 is not reused by A: too recent */
	EXPECT(a[1].slot != a[0].slot);
	EXPECT_U64(b[3].kind, AR_WL_REALLOC);
	expect_dep(&w, sb, 3, sa, 1); /* B's realloc waits for A's second malloc */
	EXPECT_U64(a[3].kind, AR_WL_FREE);
	expect_dep(&w, sa, 3, sb, 3); /* and A's free for B's realloc */
	EXPECT_U64(a[3].slot, a[1].slot);
	/* B's second SYNC waits for more of A than its first: the encoding of
	 * SYNC sizes as differences keeps that (wl_codec.c). */
	EXPECT(b[2].size > b[0].size);
	EXPECT_U64(w.hdr->cross_thread_deps, 3);
	EXPECT_U64(w.hdr->reuse_deps, 0);
	EXPECT_U64(syncs_of_kind(&w, sa, 1) + syncs_of_kind(&w, sb, 1), 3);
	EXPECT_U64(syncs_of_kind(&w, sa, 0) + syncs_of_kind(&w, sb, 0), 0);
	/* A DEP SYNC is no heap call: calls as before, SYNCs counted by kind. */
	EXPECT_U64(w.hdr->calls, 5);
	EXPECT_U64(w.hdr->ops_by_kind[AR_WL_SYNC], 3);
	wlt_close(&w);
}

/* SPEC 4: realloc releases at seq, acquires at seq2; another thread may free
 * the address the realloc will return in between. */
static void test_realloc_window(void)
{
	ar_workload_t w;
	ev(1, 1, AR_OP_MALLOC, 0, 16, 0x5000);       /* B owns 0x5000 */
	ev(0, 2, AR_OP_MALLOC, 0, 16, 0x1000);
	ev_realloc(0, 3, 6, 0x1000, 32, 0x5000);    /* A: release 0x1000 at 3 ... */
	ev(1, 4, AR_OP_FREE, 0x5000, 0, 0);          /* B frees 0x5000 at 4 */
	ev(0, 7, AR_OP_FREE, 0x5000, 0, 0);          /* ... A got 0x5000 at 6, frees it */
	build(&w);
	uint64_t na, nb;
	const ar_wl_op_t *a = ops_of(&w, 0, &na), *b = ops_of(&w, 1, &nb);
	EXPECT_U64(nb, 2);
	EXPECT_U64(na, 3);
	EXPECT_U64(b[1].slot, b[0].slot); /* B's free hit B's block */
	EXPECT_U64(a[2].slot, a[1].slot); /* A's free hit A's realloc'ed block */
	EXPECT(a[2].slot != b[0].slot);
	EXPECT_U64(w.hdr->cross_thread_deps, 0);
	EXPECT_U64(w.hdr->skipped_unknown_frees, 0);
	wlt_close(&w);
}

/* A thread with no free slot of its own takes another thread's only when it
 * was released long enough ago, and then waits for that release. */
static void test_steal(void)
{
	ar_workload_t w;
	uint64_t seq = 1;
	ev(0, seq++, AR_OP_MALLOC, 0, 8, 0x1000);
	ev(0, seq++, AR_OP_FREE, 0x1000, 0, 0);
	ev(1, seq++, AR_OP_MALLOC, 0, 8, 0x2000); /* too early to steal: new slot */
	while (seq < AR_WL_REUSE_DISTANCE + 10) {
		ev(1, seq++, AR_OP_FREE, 0x2000, 0, 0);
		ev(1, seq++, AR_OP_MALLOC, 0, 8, 0x2000); /* B's own slot */
	}
	ev(1, seq++, AR_OP_MALLOC, 0, 8, 0x3000); /* B has none free: steals A's */
	build(&w);
	uint64_t na, nb;
	const ar_wl_op_t *a = ops_of(&w, 0, &na), *b = ops_of(&w, 1, &nb);
	EXPECT_U64(w.hdr->nslots, 2);
	EXPECT_U64(b[0].slot, 1);
	EXPECT_U64(b[nb - 1].slot, a[0].slot);
	/* B's malloc into the stolen slot waits until A has done its free */
	EXPECT_U64(a[1].kind, AR_WL_FREE);
	expect_dep(&w, wlt_stream(&w, 1), nb - 1, wlt_stream(&w, 0), 1);
	EXPECT_U64(syncs_of_kind(&w, wlt_stream(&w, 1), 1), 1);
	EXPECT_U64(syncs_of_kind(&w, wlt_stream(&w, 0), 1), 0);
	EXPECT_U64(w.hdr->reuse_deps, 1);
	EXPECT_U64(w.hdr->cross_thread_deps, 0);
	wlt_close(&w);
}

/* The schedule's tests: thread k's events, alternating malloc and free of
 * its own address, in runs; seq and time given by the caller. */
static uint64_t sched_seq;
static void sched_ev(uint32_t thread, uint64_t time_ns)
{
	uint64_t addr = 0x10000 * (thread + 1);
	int live = 0;
	for (size_t i = nev; i-- > 0;)
		if (evs[i].thread == thread) {
			live = evs[i].op == AR_OP_MALLOC;
			break;
		}
	++sched_seq;
	if (live)
		ev(thread, sched_seq, AR_OP_FREE, addr, 0, 0);
	else
		ev(thread, sched_seq, AR_OP_MALLOC, 0, 64, addr);
	evs[nev - 1].time_ns = time_ns;
}

/* How many SYNC ops of the schedule stream i holds (the threads below
 * never touch each other's blocks: no dependency either). */
static uint64_t syncs_of(const ar_workload_t *w, uint32_t i)
{
	EXPECT_U64(syncs_of_kind(w, i, 1), 0);
	return syncs_of_kind(w, i, 0);
}

/* Ops of stream i before its op that replays event number `ordinal` of
 * that thread (0-based), SYNCs and samples included. */
static uint64_t op_index_of_call(const ar_workload_t *w, uint32_t i, uint64_t ordinal)
{
	for (uint64_t k = 0; k < w->threads[i].nops; k++) {
		unsigned kind = ar_wl_ops(w, i)[k].kind;
		if (kind < AR_WL_NCALLS && ordinal-- == 0)
			return k;
	}
	return UINT64_MAX;
}

/* Two threads in alternating bursts of 300 events, disjoint in time (as
 * under a lock): every switch is a hand-off, and each resumed run waits
 * for exactly every op the other stream had at the switch. */
static void test_handoff_bursts(void)
{
	ar_workload_t w;
	uint64_t t = 1000 * 16;
	sched_seq = 0;
	for (int burst = 0; burst < 6; burst++) {
		for (int k = 0; k < 300; k++, t += 32)
			sched_ev(burst % 2, t);
		t += 1600; /* the hand-off: a few microseconds */
	}
	build(&w);
	EXPECT_U64(w.hdr->schedule, AR_WL_SCHEDULE_RECORDED);
	EXPECT_U64(w.hdr->switches, 5);
	EXPECT_U64(w.hdr->handoffs, 5);
	EXPECT_U64(w.hdr->handoffs_dropped, 0);
	EXPECT_U64(w.hdr->switches_interleaved, 0);
	uint32_t s0 = w.threads[0].trace_index == 0 ? 0 : 1, s1 = 1 - s0;
	/* Thread 1's first call (its burst 0, event 0) waits for all 300 of
	 * stream 0's ops; its second burst (event 300) for all 600. */
	for (int b = 0; b < 3; b++) {
		uint64_t k1 = op_index_of_call(&w, s1, (uint64_t)b * 300);
		EXPECT(k1 > 0 && k1 != UINT64_MAX);
		const ar_wl_op_t *sy = &ar_wl_ops(&w, s1)[k1 - 1];
		EXPECT_U64(sy->kind, AR_WL_SYNC);
		EXPECT_U64(sy->flags, 0); /* the schedule's, not a dependency */
		EXPECT_U64(sy->slot, s0);
		EXPECT_U64(sy->size, op_index_of_call(&w, s0, (uint64_t)(b + 1) * 300 - 1) + 1);
	}
	for (int b = 1; b < 3; b++) {
		uint64_t k0 = op_index_of_call(&w, s0, (uint64_t)b * 300);
		const ar_wl_op_t *sy = &ar_wl_ops(&w, s0)[k0 - 1];
		EXPECT_U64(sy->kind, AR_WL_SYNC);
		EXPECT_U64(sy->slot, s1);
		EXPECT_U64(sy->size, op_index_of_call(&w, s1, (uint64_t)b * 300 - 1) + 1);
	}
	wlt_close(&w);
	/* The free schedule makes none of them. */
	schedule = AR_WL_SCHEDULE_FREE;
	t = 1000 * 16;
	sched_seq = 0;
	for (int burst = 0; burst < 6; burst++) {
		for (int k = 0; k < 300; k++, t += 32)
			sched_ev(burst % 2, t);
		t += 1600;
	}
	build(&w);
	schedule = AR_WL_SCHEDULE_RECORDED;
	EXPECT_U64(w.hdr->schedule, AR_WL_SCHEDULE_FREE);
	EXPECT_U64(w.hdr->switches, 5);
	EXPECT_U64(w.hdr->handoffs, 0);
	EXPECT_U64(w.hdr->switches_interleaved, 5);
	EXPECT_U64(syncs_of(&w, 0) + syncs_of(&w, 1), 0);
	wlt_close(&w);
}

/* Short runs (20 events) with the other thread idle in between — a lock
 * handed back and forth often, as around Python's I/O — are hand-offs by
 * the times alone; the same runs without times are not. */
static void test_handoff_short_runs(void)
{
	for (int timed = 1; timed >= 0; timed--) {
		ar_workload_t w;
		uint64_t t = 16;
		sched_seq = 0;
		for (int run = 0; run < 40; run++) {
			for (int k = 0; k < 20; k++, t += 496) /* ~0.5 us apart */
				sched_ev(run % 2, timed ? t : 0);
			t += 20000; /* the other waited ~20 us for the lock */
		}
		build(&w);
		EXPECT_U64(w.hdr->switches, 39);
		EXPECT_U64(w.hdr->handoffs, timed ? 38 : 0); /* thread 1's first resume has no spacing yet */
		EXPECT_U64(w.hdr->switches_interleaved, timed ? 1 : 39);
		EXPECT_U64(syncs_of(&w, 0) + syncs_of(&w, 1), timed ? 38 : 0);
		wlt_close(&w);
	}
}

/* Threads allocating at the same time interleave finely: runs of 1-3
 * events, each thread's calls steady. No switch is a hand-off and no SYNC
 * is emitted: the streams run concurrently. The same with all times 0. */
static void test_interleaved_concurrent(void)
{
	for (int timed = 1; timed >= 0; timed--) {
		ar_workload_t w;
		uint64_t next[2] = { 16, 256 }; /* each calls every ~0.5 us */
		uint32_t x = 12345;
		sched_seq = 0;
		for (int k = 0; k < 6000; k++) {
			x = x * 1103515245u + 12345u;
			/* the earlier of the two next calls, a little jitter */
			uint32_t th = next[0] <= next[1] ? 0 : 1;
			sched_ev(th, timed ? next[th] : 0);
			next[th] += 400 + 16 * ((x >> 16) % 12);
		}
		build(&w);
		EXPECT(w.hdr->switches > 1000);
		EXPECT_U64(w.hdr->handoffs, 0);
		EXPECT_U64(w.hdr->handoffs_dropped, 0);
		EXPECT_U64(w.hdr->switches_interleaved, w.hdr->switches);
		EXPECT_U64(syncs_of(&w, 0) + syncs_of(&w, 1), 0);
		wlt_close(&w);
	}
}

/* One thread allocates often, the other rarely, both at the same time: the
 * rare one is held to its recorded place in the busy one's stream (runs of
 * 200 events of the busy one end in hand-offs to it), the busy one is never
 * held back by the rare one (its one-event runs are no evidence). */
static void test_rare_thread(void)
{
	ar_workload_t w;
	uint64_t t = 16;
	sched_seq = 0;
	for (int k = 0; k < 4000; k++, t += 512) {
		if (k % 200 == 100)
			sched_ev(1, t - 256); /* every ~100 us */
		sched_ev(0, t);
	}
	build(&w);
	uint32_t s0 = w.threads[0].trace_index == 0 ? 0 : 1, s1 = 1 - s0;
	EXPECT_U64(w.hdr->switches, 40);
	EXPECT_U64(w.hdr->handoffs, 19); /* the first run of the busy one is 100 events */
	EXPECT_U64(w.hdr->switches_interleaved, 21);
	EXPECT_U64(syncs_of(&w, s0), 0);
	EXPECT_U64(syncs_of(&w, s1), 19);
	wlt_close(&w);
}

/* A block's dependency is no step of the schedule (workload.h): the window
 * SYNC of a resuming thread goes by the other threads' ops without their
 * DEP SYNCs. Thread 0 allocates n blocks, thread 1 frees them all (a DEP
 * SYNC before each free: 2n ops), thread 0 resumes. With n = 700 the
 * others moved 700 ops of the schedule, under AR_WL_SYNC_WINDOW: no SYNC;
 * with n = 1100 one SYNC, until thread 1 is within the window of its
 * stream's end (its DEP SYNCs are ops of its stream, so counted there).
 * The free schedule, so no hand-off stands in for the window. */
static void test_deps_outside_window(void)
{
	for (uint64_t n = 700; n <= 1100; n += 400) {
		ar_workload_t w;
		uint64_t seq = 1;
		for (uint64_t i = 0; i < n; i++)
			ev(0, seq++, AR_OP_MALLOC, 0, 32, 0x100000 + i * 64);
		for (uint64_t i = 0; i < n; i++)
			ev(1, seq++, AR_OP_FREE, 0x100000 + i * 64, 0, 0);
		ev(0, seq++, AR_OP_MALLOC, 0, 32, 0x900000);
		schedule = AR_WL_SCHEDULE_FREE;
		build(&w);
		schedule = AR_WL_SCHEDULE_RECORDED;
		uint32_t sa = wlt_stream(&w, 0), sb = wlt_stream(&w, 1);
		uint64_t nb = w.threads[sb].nops; /* and an RSS sample at event 2048 */
		EXPECT_U64(nb, 2 * n + w.threads[sb].ops_by_kind[AR_WL_SAMPLE]);
		EXPECT_U64(syncs_of_kind(&w, sb, 1), n);
		EXPECT_U64(w.hdr->cross_thread_deps, n);
		EXPECT_U64(syncs_of_kind(&w, sa, 1), 0);
		EXPECT_U64(syncs_of_kind(&w, sa, 0), n >= AR_WL_SYNC_WINDOW ? 1 : 0);
		EXPECT_U64(w.hdr->sync_ops, n >= AR_WL_SYNC_WINDOW ? 1 : 0);
		if (n >= AR_WL_SYNC_WINDOW) {
			const ar_wl_op_t *sy = &ar_wl_ops(&w, sa)[n];
			EXPECT_U64(sy->kind, AR_WL_SYNC);
			EXPECT_U64(sy->flags, 0);
			EXPECT_U64(sy->slot, sb);
			EXPECT_U64(sy->size, nb - AR_WL_SYNC_WINDOW);
		}
		wlt_close(&w);
	}
}

static void test_bad_input(void)
{
	ar_error_t err;
	char path[128];
	snprintf(path, sizeof path, "%s/missing.zst", dir);
	EXPECT(ar_wl_compile(path, "/dev/null", "", &err) < 0);
	snprintf(path, sizeof path, "%s/garbage.zst", dir);
	FILE *f = fopen(path, "w");
	fputs("this is not a trace at all, not even close", f);
	fclose(f);
	char out[160];
	snprintf(out, sizeof out, "%s/garbage.wl", dir);
	EXPECT(ar_wl_compile(path, out, "", &err) < 0);
	EXPECT(access(out, F_OK) != 0); /* nothing left behind */
	ar_workload_t w;
	char why[256];
	EXPECT(ar_wl_open(&w, path, why, sizeof why) != 0);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_slot_reuse);
	RUN(test_realloc);
	RUN(test_cross_thread);
	RUN(test_realloc_window);
	RUN(test_steal);
	RUN(test_handoff_bursts);
	RUN(test_handoff_short_runs);
	RUN(test_interleaved_concurrent);
	RUN(test_rare_thread);
	RUN(test_deps_outside_window);
	RUN(test_bad_input);
	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return TEST_END();
}
