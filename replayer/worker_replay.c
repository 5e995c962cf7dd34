/*
 * worker_replay.c — the hot loop: one replay thread executing its op stream.
 *
 * Per op: wait for the producer if the op depends on another thread
 * (a SYNC op: acquire on that stream's progress), fold the op into the
 * checksum (and, for a free, empty its slot), time the heap call alone
 * between two fenced TSC reads, then — outside the timed window — record
 * the latency, store the result in the slot, touch the new block per the
 * touch policy; the next op's progress store publishes it all to a waiting
 * consumer (release). A NULL result is counted, never dereferenced; a later free
 * or realloc of that missing block is skipped and counted. RSS sample
 * markers read /proc/self/statm through an fd opened at start-up (not
 * under --counters sim: what a read costs depends on the number read, and
 * simulated counts must repeat exactly). With
 * --access-pass, the thread whose op reached the live-bytes peak runs the
 * locality pass (worker_access.c) right after that op. Every
 * AR_WK_PROGRESS_EVERY ops the thread adds what it did to the shared
 * ops_done counter (worker.h), read by allocreplay's progress line; the
 * test for it is the access pass's, so it adds nothing per op. With
 * --timing none (worker_main.c) the same loop runs
 * without clock reads or histograms: what the harness alone costs per op
 * (bench/replay/). With --timing sample:N only the call at the end of each
 * gap of the thread's sampler (worker_clock.h) is timed and recorded; the
 * others cost one decrement and a predictable branch more than untimed.
 *
 * Waiting: a short pause-spin, then sleeps of at most 100 us, until the
 * other stream has done enough ops; past the dependency timeout the thread
 * stops with an error, because the compiler promised the producer runs
 * earlier in trace order (workload.h) — a wait that never ends is a bug,
 * not a result.
 *
 * A streamed workload (worker_main.c) is read a segment at a time: when a
 * thread reaches the end of its chunk, it decodes the next segment into
 * its buffer (pread, never a page fault, and the kernel is asked to read
 * the one after ahead). That happens between two calls, outside any timed
 * window, at the same rare-event compare as the progress counter.
 *
 * No malloc here except the calls under test; the compiler is kept from
 * turning memsets or pairs of calls into something else by -fno-builtin.
 *
 * allocreplay --route (worker_route.h) runs the same loop instantiated
 * with `routed` set: each heap call goes to the allocator that owns it
 * (ar_route_owner), the base one through the same direct call as a plain
 * replay, a routed one through its prefixed API. A plain replay's loop is
 * compiled without any of it.
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "worker.h"
#include "worker_route.h"

static inline void cpu_relax(void)
{
#if defined(__x86_64__)
	_mm_pause();
#endif
}

/* SYNC (workload.h): block until stream u has done `need` ops. After a
 * short spin the waiter sleeps in pauses growing to at most 100 us: a
 * hand-off (the recorded schedule) waits for a whole burst of the other
 * stream, and a longer pause would add its oversleep to the replay's wall
 * time, while a spin would take the CPU from the stream it waits for. The
 * timeout counts from u's last progress, not from the start of the wait: a
 * thread may rightly wait for all of a long single-threaded phase. 0, or
 * -1 after the timeout. */
static int wait_progress(ar_wthread_t *t, const ar_wthread_t *u, uint64_t need, int dep)
{
	uint64_t seen = atomic_load_explicit(&u->progress, memory_order_acquire);
	t->dep_waits += dep;
	if (seen >= need)
		return 0;
	if (dep)
		t->dep_blocked++;
	else
		t->sync_waits++;
	for (int i = 0; i < 2000; i++) {
		cpu_relax();
		if (atomic_load_explicit(&u->progress, memory_order_acquire) >= need)
			return 0;
	}
	if (atomic_load_explicit(&ar_wk.failed, memory_order_acquire))
		return -2;
	uint64_t deadline = ar_clock_mono_ns() + ar_wk.dep_timeout_ns;
	long pause_ns = 10000;
	for (;;) {
		uint64_t now_done = atomic_load_explicit(&u->progress, memory_order_acquire);
		if (now_done >= need)
			return 0;
		uint64_t now = ar_clock_mono_ns();
		if (atomic_load_explicit(&ar_wk.failed, memory_order_acquire))
			return -2;
		if (now_done != seen) {
			seen = now_done;
			deadline = now + ar_wk.dep_timeout_ns;
		} else if (now > deadline) {
			return -1;
		}
		struct timespec ts = { 0, pause_ns };
		nanosleep(&ts, NULL);
		if (pause_ns < 100000)
			pause_ns *= 2;
	}
}

/* Write to the new block so its pages are really resident (DESIGN: page
 * faults are part of an allocator's cost); volatile so no store is elided. */
static inline void touch(void *p, uint64_t n)
{
	volatile char *c = p;
	if (!n || ar_wk.touch == AR_TOUCH_NONE)
		return;
	if (ar_wk.touch == AR_TOUCH_ALL) {
		memset(p, 0xa5, n);
		return;
	}
	c[0] = 1;
	if (ar_wk.touch == AR_TOUCH_FIRST)
		return;
	uintptr_t a = ((uintptr_t)p | (ar_wk.page - 1)) + 1, end = (uintptr_t)p + n;
	for (; a < end; a += ar_wk.page)
		*(volatile char *)a = 1;
}

uint64_t ar_probe_anon_rss(void)
{
	char buf[128];
	ssize_t n = pread(ar_wk.statm_fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "size resident shared text lib data dt", in pages; anon = resident - shared */
	uint64_t f[3] = { 0, 0, 0 };
	const char *s = buf;
	for (int i = 0; i < 3; i++) {
		while (*s == ' ')
			s++;
		while (*s >= '0' && *s <= '9')
			f[i] = f[i] * 10 + (uint64_t)(*s++ - '0');
	}
	return f[1] > f[2] ? (f[1] - f[2]) * ar_wk.page : 0;
}

static void sample(ar_wthread_t *t, const ar_wl_op_t *op)
{
	if (op->slot >= ar_wk.wl.hdr->nsamples)
		return;
	ar_sample_t *s = &ar_wk.samples[op->slot];
	uint64_t t0 = ar_clock_mono_ns();
	s->event = op->size;
	s->live_bytes = op->arg;
	s->anon_bytes = ar_probe_anon_rss();
	uint64_t t1 = ar_clock_mono_ns();
	s->elapsed_ns = t1 - ar_wk.t0_ns;
	t->sampling_ns += t1 - t0;
}

static uint64_t request_of(const ar_wl_op_t *op)
{
	uint64_t r;
	/* Saturate as the compiler does: an overflowing reallocarray that
	 * failed left its block live; 0 would read as "realloc to 0 freed it". */
	if (op->kind == AR_WL_CALLOC || op->kind == AR_WL_REALLOCARRAY)
		return __builtin_mul_overflow(op->arg, op->size, &r) ? UINT64_MAX : r;
	return op->size;
}

static void fail(ar_wthread_t *t, uint64_t i, const ar_wl_op_t *op, const char *what)
{
	/* Format by hand: this runs after start-up, stdio could allocate. */
	char *m = t->errmsg;
	size_t cap = sizeof t->errmsg, n = 0;
	const char *parts[] = { what, " (thread ", NULL, ", op ", NULL, ", slot ", NULL, ")" };
	char num[3][24];
	uint64_t vals[3] = { t->index, i, op->slot };
	for (int k = 0; k < 3; k++) {
		char d[24];
		int len = 0;
		uint64_t v = vals[k];
		do {
			d[len++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		for (int j = 0; j < len; j++)
			num[k][j] = d[len - 1 - j];
		num[k][len] = '\0';
	}
	parts[2] = num[0];
	parts[4] = num[1];
	parts[6] = num[2];
	for (size_t k = 0; k < sizeof parts / sizeof *parts; k++)
		for (const char *s = parts[k]; *s && n + 1 < cap; s++)
			m[n++] = *s;
	m[n] = '\0';
	t->error = 1;
}

/* A streamed workload: decode the segment that holds op i into the
 * thread's buffer (worker_main.c). 0, or -1 with the thread's error set. */
static __attribute__((noinline)) int next_chunk(ar_wthread_t *t, uint64_t i)
{
	char err[sizeof t->errmsg];
	while (i >= t->chunk_end) {
		if (!t->cur.w || ar_wl_cursor_next(&t->cur, 1, err, sizeof err) != 1) {
			if (!t->cur.w)
				snprintf(err, sizeof err, "op %llu of thread %u is beyond its ops",
					 (unsigned long long)i, t->index);
			else if (t->cur.n == 0 && t->cur.seg >= ar_wk.wl.threads[t->index].nsegs)
				snprintf(err, sizeof err, "thread %u's segments end before its op %llu",
					 t->index, (unsigned long long)i);
			memcpy(t->errmsg, err, sizeof err);
			t->error = 1;
			return -1;
		}
		t->ops = t->cur.ops;
		t->chunk_first = t->cur.first;
		t->chunk_end = t->cur.first + t->cur.n;
	}
	return 0;
}

/* The heap call alone between the two clock reads, when this call is
 * timed: every call, none, or the one the sampler's countdown reaches. */
#define TIMED(call)                                                               \
	do {                                                                      \
		timed = mode == AR_TIMING_EVERY ||                               \
			(mode == AR_TIMING_SAMPLE && __builtin_expect(--cd == 0, 0)); \
		if (timed)                                                        \
			a = ar_clock_start();                                     \
		call;                                                             \
		if (timed)                                                        \
			b = ar_clock_stop();                                      \
	} while (0)

/* The rare events of a stream share one compare per op: the end of the
 * stream, the end of a streamed chunk, the access pass at op apass_at, and
 * every AR_WK_PROGRESS_EVERY ops the addition of the ops done to
 * ar_wk.ops_done. next is the op index of the first of them still to come. */
typedef struct rare {
	uint64_t next, next_count, counted;
} rare_t;

static void rare_schedule(const ar_wthread_t *t, rare_t *r, uint64_t i)
{
	r->next = t->apass_at >= i && t->apass_at < r->next_count ? t->apass_at : r->next_count;
	if (t->chunk_end < r->next)
		r->next = t->chunk_end;
	if (t->nops < r->next)
		r->next = t->nops;
}

/* At op i == r->next: do what is due, find the next one. 0, 1 at the end
 * of the stream, or -1 when the next segment cannot be read (t->error says
 * why). Out of line, so the loop keeps its registers for the ops. */
static __attribute__((noinline)) int rare_event(ar_wthread_t *t, rare_t *r, uint64_t i)
{
	if (i >= t->nops)
		return 1;
	if (i == t->chunk_end && next_chunk(t, i) != 0)
		return -1;
	if (i == t->apass_at)
		ar_access_pass(); /* the trace's live-bytes peak */
	if (i == r->next_count) { /* for the progress line, untimed */
		atomic_fetch_add_explicit(ar_wk.ops_done, i - r->counted, memory_order_relaxed);
		r->counted = i;
		r->next_count += AR_WK_PROGRESS_EVERY;
	}
	rare_schedule(t, r, i + 1);
	return 0;
}

/* A SAMPLE or SYNC op (workload.h), the ops that are not heap calls: 0, or
 * -1 with the thread's error set. */
static __attribute__((noinline)) int control_op(ar_wthread_t *t, uint64_t i, const ar_wl_op_t *op)
{
	if (op->kind == AR_WL_SAMPLE) {
		if (ar_wk.counters != AR_CTR_SIM) /* statm reads vary run to run */
			sample(t, op);
		return 0;
	}
	if (op->kind != AR_WL_SYNC)
		return 0;
	if (op->slot >= ar_wk.wl.hdr->nthreads) {
		fail(t, i, op, "sync names a stream beyond the workload's threads");
		return -1;
	}
	int w = wait_progress(t, &ar_wk.th[op->slot], op->size, op->flags & AR_WL_F_DEP);
	if (w == 0)
		return 0;
	fail(t, i, op, w == -2 ? "stopped: the stream it waits for failed"
		: op->flags & AR_WL_F_DEP
		? "dependency wait timed out: the producer never released the "
		  "slot (a workload compiler bug)"
		: "sync wait timed out: another stream stopped making progress");
	return -1;
}

/* What a replay thread counts, kept in locals during the loop (a heap call
 * could change any memory, so counters in *t would be loaded and stored
 * again around every call) and added to *t at its end. Heap calls made are
 * not counted per op: they are the ops done less the SAMPLE and SYNC ops
 * (ctl) and the skipped ones. */
typedef struct tally {
	uint64_t allocs, frees, failed, unexpected, leaked, skipped, ctl;
} tally_t;

/* The op checksum (the S line op_checksum): folds kind, flags, slot and
 * size of every heap call op in stream order, skipped ones included. */
static inline uint64_t fold(uint64_t sum, const ar_wl_op_t *op)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* kind, flags, reserved and slot are the op's first 8 bytes: one load */
	_Static_assert(offsetof(ar_wl_op_t, flags) == 1 && offsetof(ar_wl_op_t, slot) == 4,
		       "ar_wl_op_t's head");
	uint64_t head;
	memcpy(&head, op, sizeof head);
	head &= 0xffffffff0000ffffull;
#else
	uint64_t head = (uint64_t)op->kind | (uint64_t)op->flags << 8 | (uint64_t)op->slot << 32;
#endif
	return (sum ^ head) * 0x100000001b3ull + op->size;
}

/* One stream in timing mode `mode` (AR_TIMING_*), a constant at each of the
 * three call sites below, so the compiler emits a loop without any clock
 * read, countdown or histogram update for --timing none, and without the
 * countdown for every-call timing.
 *
 * What the loop does per op is the harness cost (docs/BENCHMARKS.md,
 * "Replayer"), so it does no more than an op needs: the progress store, one
 * compare for the rare events (the end of the stream included), the op's
 * kind and slot, the checksum, the call, the slot. Anything else is out of
 * line (SAMPLE and SYNC ops, rare events) or off the path of malloc and
 * free, which are tested first. Values a heap call could change (any
 * memory) are read again after it rather than kept: a register kept across
 * a call is one of six, and the checksum's chain (xor, multiply, add per
 * op) must stay in one, not pass through the stack at every op. */
static inline __attribute__((always_inline)) void replay(ar_wthread_t *t, const int mode, const int routed)
{
	/* --route: this stream's owner bytes, its allocation ops so far, its
	 * tally; api = the routed allocator of the op, NULL for the base. */
	const uint8_t *owners = routed ? ar_route.owners[t->index] : NULL;
	ar_route_count_t *rcount = routed ? &ar_route.count[t->index] : NULL;
	uint64_t nalloc = 0;
	int owner = 0;
	const ar_route_api_t *api = NULL;
#define HEAP(fn, ...) (routed && api ? api->fn(__VA_ARGS__) : fn(__VA_ARGS__))
	void **const slots = ar_wk.slot_ptr;
	uint64_t *const slot_size = ar_wk.slot_size;
	const uint32_t nslots = ar_wk.wl.hdr->nslots;
	/* a new block needs more than its slot: its size kept, or touching */
	const int extra = slot_size || ar_wk.touch != AR_TOUCH_NONE;
	_Atomic uint64_t *const progress = &t->progress;
	const uint64_t over = ar_wk.clock.overhead_ticks;
	const uint64_t period = ar_wk.timing_every;
	uint64_t cd = t->sampler.left; /* calls until the next timed one */
	uint64_t sum = 0x9E3779B97F4A7C15ull;
	tally_t n = { 0 };
	uint64_t i = t->first_op;
	rare_t r = { .counted = i, .next_count = i + AR_WK_PROGRESS_EVERY };
	rare_schedule(t, &r, i);
	uint64_t next = r.next;
	const ar_wl_op_t *op = t->ops + (i - t->chunk_first);
	for (;; i++, op++) {
		atomic_store_explicit(progress, i, memory_order_release);
		if (__builtin_expect(i == next, 0)) {
			if (rare_event(t, &r, i) != 0)
				break; /* the end, or a damaged segment: t->error says which */
			next = r.next;
			op = t->ops + (i - t->chunk_first);
		}
		const unsigned kind = op->kind;
		if (__builtin_expect(kind >= AR_WL_NCALLS, 0)) {
			if (control_op(t, i, op) != 0)
				break;
			n.ctl++;
			continue;
		}
		const uint32_t s = op->slot;
		/* s < nslots, or AR_WL_NOSLOT (which s + 1 wraps to 0) */
		if (__builtin_expect(s + 1u > nslots, 0)) {
			fail(t, i, op, "slot index beyond the workload's slot count");
			break;
		}
		sum = fold(sum, op);
		/* The block a free or realloc takes: none for free(NULL) or
		 * realloc(NULL, n). If this replay does not have it — its
		 * allocation returned NULL here although the trace's succeeded
		 * (or realloc(p, 0) already freed it) — calling free(NULL) or
		 * realloc(NULL, n) would time and count a call the program never
		 * made, so the op is skipped, and counted (skipped_ops); its
		 * checksum still happens, so other streams proceed. */
		const int src = s != AR_WL_NOSLOT && !(op->flags & AR_WL_F_NOSRC);
		void *in = NULL, *p = NULL;
		uint64_t a = 0, b = 0;
		int timed = 0;
		if (routed) {
			owner = ar_route_owner(op, owners, &nalloc);
			api = owner ? &ar_route.api[owner] : NULL;
		}
		/* ---- after the call, outside the timed window ---- */
#define AFTER_CALL(k)                                                             \
	do {                                                                      \
		if (timed) {                                                      \
			uint64_t dt = b - a > over ? b - a - over : 0;            \
			ar_hist_add(t->hist[k], dt);                              \
			t->timed_ticks += dt;                                     \
			t->timed_calls++;                                         \
			if (mode == AR_TIMING_SAMPLE)                             \
				cd = ar_sampler_gap(&t->sampler, period);         \
		}                                                                 \
		if (routed) {                                                     \
			rcount->calls[owner]++;                                   \
			rcount->allocs[owner] += ar_route_map_counts(k);          \
		}                                                                 \
	} while (0)
#define TAKE_BLOCK()                                                              \
	if (src) {                                                                \
		if (__builtin_expect(!(in = slots[s]), 0)) {                      \
			n.skipped++;                                              \
			continue;                                                 \
		}                                                                 \
	}
		if (kind == AR_WL_MALLOC) {
			TIMED(p = HEAP(malloc, op->size));
			AFTER_CALL(AR_WL_MALLOC);
			if (__builtin_expect(!p, 0)) {
				n.failed++;
				if (!(op->flags & AR_WL_F_TRACE_NULL))
					n.unexpected++;
				continue;
			}
			n.allocs++;
			const uint32_t ps = op->slot; /* read again: fewer registers kept across the call */
			if (__builtin_expect(ps != AR_WL_NOSLOT, 1))
				slots[ps] = p;
			else
				n.leaked++; /* the traced call failed: nobody frees it */
			if (__builtin_expect(extra, 0)) {
				if (slot_size && ps != AR_WL_NOSLOT)
					slot_size[ps] = op->size;
				touch(p, op->size);
			}
			continue;
		}
		if (kind == AR_WL_FREE) {
			TAKE_BLOCK();
			if (in) { /* the slot is empty once the block is freed */
				n.frees++;
				slots[s] = NULL;
			}
			TIMED(HEAP(free, in));
			AFTER_CALL(AR_WL_FREE);
			continue;
		}
		switch (kind) {
		case AR_WL_CALLOC:
			TIMED(p = HEAP(calloc, op->arg, op->size));
			break;
		case AR_WL_REALLOC:
			TAKE_BLOCK();
			TIMED(p = HEAP(realloc, in, op->size));
			break;
		case AR_WL_REALLOCARRAY:
			TAKE_BLOCK();
			TIMED(p = HEAP(reallocarray, in, op->arg, op->size));
			break;
		case AR_WL_POSIX_MEMALIGN: {
			void *q = NULL;
			int rc;
			TIMED(rc = HEAP(posix_memalign, &q, op->arg, op->size));
			p = rc ? NULL : q;
			break;
		}
		case AR_WL_ALIGNED_ALLOC:
			TIMED(p = HEAP(aligned_alloc, op->arg, op->size));
			break;
		case AR_WL_MEMALIGN:
			TIMED(p = HEAP(memalign, op->arg, op->size));
			break;
		case AR_WL_VALLOC:
			TIMED(p = HEAP(valloc, op->size));
			break;
		default: /* AR_WL_PVALLOC */
			TIMED(p = HEAP(pvalloc, op->size));
			break;
		}
#undef TAKE_BLOCK
		AFTER_CALL(kind);
#undef AFTER_CALL
		if (kind == AR_WL_REALLOC || kind == AR_WL_REALLOCARRAY) {
			const uint64_t req = request_of(op);
			if (p) {
				if (p != in) { /* moved (or from NULL): one alloc, one free */
					n.allocs++;
					if (in)
						n.frees++;
				}
				if (s != AR_WL_NOSLOT) {
					slots[s] = p;
					if (slot_size)
						slot_size[s] = req;
				} else {
					n.leaked++;
				}
				touch(p, req);
			} else if (in && req == 0) {
				n.frees++; /* realloc(p, 0) freed p (SPEC 5.5) */
				slots[s] = NULL;
			} else if (req != 0 || !in) {
				n.failed++;
				if (!(op->flags & AR_WL_F_TRACE_NULL))
					n.unexpected++;
			}
		} else if (p) {
			n.allocs++;
			if (s != AR_WL_NOSLOT) {
				slots[s] = p;
				if (slot_size)
					slot_size[s] = request_of(op);
			} else {
				n.leaked++; /* the traced call failed: nobody frees it */
			}
			touch(p, kind == AR_WL_PVALLOC
					 ? (op->size + ar_wk.page - 1) / ar_wk.page * ar_wk.page
					 : request_of(op));
		} else {
			n.failed++;
			if (!(op->flags & AR_WL_F_TRACE_NULL))
				n.unexpected++;
		}
	}
	t->calls += i - t->first_op - n.ctl - n.skipped;
	t->allocs_expected += n.allocs;
	t->frees_expected += n.frees;
	t->failed_allocs += n.failed;
	t->unexpected_failed_allocs += n.unexpected;
	t->leaked_blocks += n.leaked;
	t->skipped_ops += n.skipped;
	if (t->apass_at == t->nops && !t->error)
		ar_access_pass(); /* the peak came with the stream's last op */
	/* The rest of the stream (up to the failed op, if one failed). */
	atomic_fetch_add_explicit(ar_wk.ops_done, i - r.counted, memory_order_relaxed);
	t->checksum = sum;
	t->sampler.left = cd;
	/* Done: nobody may wait for this stream any longer. Failed: its ops
	 * after the failure never ran, so a stream that waits for one of them
	 * must not go on (it would free a block never allocated here, or one
	 * freed already): it stops too, at its wait (wait_progress). */
	if (t->error)
		atomic_store_explicit(&ar_wk.failed, 1, memory_order_release);
	else
		atomic_store_explicit(&t->progress, UINT64_MAX, memory_order_release);
#undef HEAP
}

void ar_replay_prelude(ar_wthread_t *t)
{
	void **slots = ar_wk.slot_ptr;
	for (uint64_t i = 0; i < t->first_op && i < t->nops; i++) {
		if (i == t->chunk_end && next_chunk(t, i) != 0)
			return;
		const ar_wl_op_t *op = &t->ops[i - t->chunk_first];
		uint32_t s = op->slot;
		if (op->kind != AR_WL_MALLOC || s >= ar_wk.wl.hdr->nslots) {
			fail(t, i, op, "a prelude op is not a malloc of a slot of the workload");
			return;
		}
		void *p = malloc(op->size);
		if (!p) { /* counted; the block's free is skipped (skipped_ops) */
			t->failed_allocs++;
			t->unexpected_failed_allocs++;
			continue;
		}
		t->allocs_expected++;
		slots[s] = p;
		if (ar_wk.slot_size)
			ar_wk.slot_size[s] = op->size;
		touch(p, op->size);
	}
	atomic_fetch_add_explicit(ar_wk.ops_done, t->first_op, memory_order_relaxed);
}

/* --route's copies of the loop, in a function of their own so that the
 * plain loops below are compiled as if routing did not exist (measured:
 * inlined beside them, they cost the plain loop an instruction per op). */
static __attribute__((noinline)) void replay_routed(ar_wthread_t *t)
{
	if (ar_wk.timing == AR_TIMING_SAMPLE)
		replay(t, AR_TIMING_SAMPLE, 1);
	else if (ar_wk.timing == AR_TIMING_EVERY)
		replay(t, AR_TIMING_EVERY, 1);
	else
		replay(t, AR_TIMING_NONE, 1);
}

void ar_replay_stream(ar_wthread_t *t)
{
	if (__builtin_expect(ar_route.n != 0, 0))
		replay_routed(t);
	else if (ar_wk.timing == AR_TIMING_SAMPLE)
		replay(t, AR_TIMING_SAMPLE, 0);
	else if (ar_wk.timing == AR_TIMING_EVERY)
		replay(t, AR_TIMING_EVERY, 0);
	else
		replay(t, AR_TIMING_NONE, 0);
}
