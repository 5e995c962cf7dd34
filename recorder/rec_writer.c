/*
 * rec_writer.c — the writer thread and its queue: takes the buffers threads
 * hand over, steals buffers from idle threads so that old events reach the
 * disk, wakes every 10 ms for the process's RSS sample (rec_process.c), and
 * runs the final close; the file itself (naming, opening, the bytes, the
 * footer) is rec_tracefile.c's.
 *
 * One background thread ("allocrr-writer") does the work so that the traced
 * threads never compress or write. It keeps rec_tls.in_shim set for its whole
 * life (its own allocations, if any, are not the program's) and blocks every
 * asynchronous signal, so process-directed signals go to program threads.
 *
 * Invariants:
 *   - rec_trace_* (and so ar_writer_*) is called only by the holder of wlock
 *     (normally the writer thread; a thread that must finish the trace
 *     itself when no writer thread exists, e.g. in a fork child that never
 *     started one).
 *   - Submitted buffers are written in submission order per thread, metadata
 *     before events, and then given back to their owner.
 *   - Time bound: a buffer is submitted by its owner once its first event is
 *     older than rec_cfg.flush_ns, or stolen by the writer (scan every
 *     flush_ns/2) when its owner went idle; so an event is written at most
 *     ~1.5 * flush_ns after it happened unless its thread is stuck inside
 *     the real allocator at that moment. That is what a SIGKILL can lose.
 *   - A footer is written only when every thread was reached by the final
 *     close's handshake (collect_all): a trace never claims to be complete
 *     with events missing. Writes made on a program thread are guarded
 *     against SIGXFSZ (rec_xfsz_block).
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rec_cost.h"
#include "rec_internal.h"

_Atomic int rec_writer_running;

static _Atomic int wlock;                 /* who may call ar_writer_* */
static _Atomic(rec_buf_t *) queue;        /* submitted buffers, newest first */
static _Atomic(rec_thread_t *) new_threads; /* not yet in the writer's list */
static rec_thread_t *threads;             /* writer's list (wlock holder only) */
static rec_thread_t *gone;                /* exited threads dropped from it (wlock holder only) */
static const rec_thread_t *closer_busy;   /* the closing thread, stopped inside a call */
static _Atomic uint32_t wake_word;
static _Atomic int writer_waiting;
static _Atomic int close_req;
static _Atomic int closed;
static _Atomic int writer_starting;

_Atomic int rec_limit_stop;
rec_stripe_t rec_after_stop[REC_AFTER_STRIPES];
/* rec_dropped_global when a limit stop began: calls counted there later
 * were made after the stop (signal handlers' nested calls), so they join
 * rec_after_stop rather than the footer's dropped events. */
static uint64_t limit_dropped_base;
static _Atomic int limit_reported;
/* --duration counts from here (CLOCK_MONOTONIC): the image's start, or a
 * window's; a rotation's segments share their window's. */
static uint64_t limit_origin_ns;
/* Why the close under way stops a trace the program outlives
 * (AR_STOP_COMMAND, AR_STOP_DETACH, AR_STOP_ROTATE), 0 for an ordinary
 * close; the footer carries it (rec_tracefile.c). */
static _Atomic int stop_reason;
/* --rotate: the open file passed its size (wlock holder). */
static int rotate_due;

/* ---- helpers ------------------------------------------------------------------ */
/* Sleeps the whole time even when signals arrive: the bounded waits below
 * count their sleeps, and a program with a 10 kHz timer would otherwise cut
 * the 10 s exit wait to a few ms and leave the trace without its footer. */
static void sleep_ns(long ns)
{
	int saved = errno;
	struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	errno = saved;
}

/* A program thread that holds wlock holds the fatal signals off as well
 * (rec_signals_hold): our handler, run on it, would wait for the lock it
 * holds itself, 2 s, and the process would then die mid-write (a fork
 * child sent SIGTERM while its atfork handler wrote its trace's header:
 * no file, or one without a footer). The writer threads block every
 * signal already. */
static sigset_t wlock_mask;  /* the holder's mask before it took wlock (holder only) */
static int wlock_holds_mask; /* wlock_mask is to be restored by unlock() */

static int try_lock(void)
{
	int z = 0;
	if (rec_tls.is_writer)
		return atomic_compare_exchange_strong(&wlock, &z, 1);
	sigset_t old;
	rec_signals_hold(&old);
	if (!atomic_compare_exchange_strong(&wlock, &z, 1)) {
		rec_signals_release(&old);
		return 0;
	}
	wlock_mask = old;
	wlock_holds_mask = 1;
	return 1;
}

static void unlock(void)
{
	int restore = wlock_holds_mask;
	sigset_t old = wlock_mask;
	wlock_holds_mask = 0;
	atomic_store_explicit(&wlock, 0, memory_order_release);
	if (restore)
		rec_signals_release(&old);
}

int rec_writer_lock(int timeout_ms)
{
	for (int i = 0; i < timeout_ms * 10; i++) {
		if (try_lock())
			return 1;
		sleep_ns(100000);
	}
	return 0;
}

void rec_writer_unlock(void)
{
	unlock();
}

/* ---- writing (wlock held) ------------------------------------------------------------ */
/* --max-size reached (wlock holder): the close began at that block. */
static int size_reached;
static int limit_begin(int why);

void rec_writer_set_stop_reason(int why)
{
	atomic_store(&stop_reason, why);
}

int rec_writer_stop_reason(void)
{
	return atomic_load(&stop_reason);
}

/* Nanoseconds the --duration clock has run. */
static uint64_t limit_elapsed_ns(void)
{
	return rec_mono_ns() - limit_origin_ns;
}

/* Write one buffer (wlock held). The block that brings the file to
 * --max-size starts the close there and then (REC_CLOSING: no thread
 * appends from that moment), so what the file gains afterwards is what
 * the threads held at that instant. */
static void write_buf(rec_buf_t *b)
{
	rec_process_observe(); /* the recorder's memory steps here: a peak before is not charged with it */
	rec_trace_write(b);
	rec_process_observe();
	rec_buf_give_back(b);
	if (rec_cfg.max_size && !size_reached && rec_tls.is_writer && rec_trace_bytes() >= rec_cfg.max_size)
		size_reached = limit_begin(REC_LIMIT_SIZE);
	if (rec_cfg.rotate && rec_tls.is_writer && rec_trace_bytes() >= rec_cfg.rotate)
		rotate_due = 1;
}

/* Write everything submitted so far, oldest first (wlock held). */
static void drain_queue(void)
{
	rec_buf_t *list = atomic_exchange_explicit(&queue, NULL, memory_order_acquire);
	rec_buf_t *rev = NULL;
	while (list) {
		rec_buf_t *n = list->next;
		list->next = rev;
		rev = list;
		list = n;
	}
	while (rev) {
		rec_buf_t *n = rev->next;
		write_buf(rev);
		rev = n;
	}
}

static void merge_new_threads(void)
{
	rec_thread_t *t = atomic_exchange_explicit(&new_threads, NULL, memory_order_acquire);
	while (t) {
		rec_thread_t *n = t->all_next;
		t->all_next = threads;
		threads = t;
		t = n;
	}
}

/* Steal and write the buffers of idle threads whose first event is older
 * than min_age_ns. Exited threads whose buffers are all back are moved from
 * the list to `gone` (the final close still makes its handshake with them:
 * glibc makes heap calls on an exiting thread after its last TLS
 * destructor). */
static void steal_all(uint64_t min_age_ns)
{
	merge_new_threads();
	uint64_t now = rec_time_ns() + 1;
	rec_thread_t **pp = &threads;
	while (*pp && !size_reached) {
		rec_thread_t *t = *pp;
		uint64_t first = atomic_load_explicit(&t->first_ns, memory_order_relaxed);
		rec_buf_t *b;
		if (first != 0 && now - first >= min_age_ns && rec_thread_steal(t, &b, 0) && b) {
			/* The owner may have submitted older buffers since the last
			 * drain (it was idle at the steal, so they are queued by
			 * now): they go first, or its blocks would be out of
			 * order in the file (SPEC 7.3: corrupt). */
			drain_queue();
			write_buf(b);
		}
		if (t->exited && !atomic_load(&t->cur) && !atomic_load(&t->in_call)) {
			rec_thread_writer_done(t);
			*pp = t->all_next;
			t->all_next = gone;
			gone = t;
			continue;
		}
		pp = &t->all_next;
	}
}

/* How long the final close waits for threads found inside a call. They are
 * only ever there for a few hundred ns of work, but a preempted one (64
 * threads on 2 cores) may wait a scheduler round of tens of ms to run. */
#define QUIESCE_WAIT_MS 1000

/* The final collection, rec_state already REC_CLOSING (wlock held): the
 * handshake with every thread that ever recorded, so that none appends or
 * submits anything afterwards, writing what they held. Returns how many
 * threads could not be reached (their last events are lost). */
static int collect_all(void)
{
	int busy = 0;
	for (int ms = 0;; ms++) {
		merge_new_threads();
		rec_buf_t *taken = NULL;
		busy = rec_threads_quiesce(threads, closer_busy, &taken) +
		       rec_threads_quiesce(gone, closer_busy, &taken);
		drain_queue(); /* older buffers of the same threads first */
		while (taken) {
			rec_buf_t *n = taken->next;
			write_buf(taken);
			taken = n;
		}
		if (!busy || ms >= QUIESCE_WAIT_MS)
			break;
		sleep_ns(1000000);
	}
	drain_queue();
	return busy + (closer_busy != NULL);
}

static int meta_name(ar_metabuf_t *m, const void *arg)
{
	const rec_thread_t *t = arg;
	return ar_meta_thread_name(m, t->index, t->name);
}
/* Final flush and footer (wlock held), the state already REC_CLOSING:
 * every thread's events, the footer, the file closed. */
static void close_trace(void)
{
	drain_queue();
	int busy = collect_all();
	if (atomic_load(&rec_state) == REC_STOPPED && !rec_trace_is_open())
		return; /* failed before anything was written */
	/* The names threads have now (names set after start, e.g. by
	 * pthread_setname_np or prctl, are only visible in /proc). */
	static uint8_t mdata[REC_METABUF_CAP];
	ar_metabuf_t m;
	ar_metabuf_reset(&m, mdata, sizeof mdata);
	uint64_t dropped = atomic_load(&rec_limit_stop) ? limit_dropped_base : atomic_load(&rec_dropped_global);
	for (rec_thread_t *t = gone; t; t = t->all_next)
		dropped += t->dropped; /* exited threads drop too (a stream's slow reader) */
	for (rec_thread_t *t = threads; t; t = t->all_next) {
		dropped += t->dropped;
		if (!t->exited) {
			rec_thread_read_name(t->tid, t->name);
			if (t->name[0])
				meta_name(&m, t);
		}
	}
	rec_trace_close(&m, dropped, busy);
}

/* Final flush and footer (wlock held); afterwards recording is over for
 * good, or, in an image that records in windows, paused until the next. */
static void do_close(void)
{
	close_trace();
	if (rec_windowed()) {
		atomic_store(&rec_limit_stop, REC_LIMIT_NONE); /* a window's limit ends that window only */
		rec_window_trace = 0;
		atomic_store(&rec_state, REC_PAUSED);
	} else {
		atomic_store(&rec_state, REC_STOPPED);
	}
	atomic_store(&stop_reason, 0);
	atomic_store(&closed, 1);
}

/* ---- rotation (--rotate) ------------------------------------------------------------------ */
/* The writer thread (wlock held) closes the current file with a footer
 * (AR_STOP_ROTATE) and opens the next segment, a window trace
 * (AR_WINDOW_ROTATE). The hooks wait meanwhile (rec_switching, begin_slow
 * in rec_hooks.c) and take their seq only inside rec_thread_enter, so the
 * cut is exact: every seq before it is in the old file, none after. An
 * exit during the switch waits for it (rec_writer_finish). */
static void rotate(void)
{
	rotate_due = 0;
	atomic_store(&rec_switching, 1);
	int expect = REC_ON;
	if (!atomic_compare_exchange_strong(&rec_state, &expect, REC_CLOSING)) {
		atomic_store(&rec_switching, 0);
		return; /* an ordinary close is under way */
	}
	/* A --stop that came meanwhile keeps its reason for its own close. */
	int pending = atomic_exchange(&stop_reason, AR_STOP_ROTATE);
	close_trace();
	atomic_store(&stop_reason, pending);
	if (atomic_load(&rec_state) == REC_STOPPED) {
		atomic_store(&rec_switching, 0); /* a write failed: no next segment */
		return;
	}
	rec_window_prepare(AR_WINDOW_ROTATE); /* heap figure: every thread waits or is outside */
	if (rec_writer_new_trace(1) == 0)
		atomic_store(&rec_state, REC_ON);
	else
		atomic_store(&rec_state, rec_windowed() ? REC_PAUSED : REC_STOPPED);
	atomic_store(&rec_switching, 0);
}

/* ---- bounded recordings (--max-size, --duration) ---------------------------------------- */
/* The limit this trace reached, or REC_LIMIT_NONE (writer thread, wlock
 * held). --max-size is checked after every block written (write_buf),
 * --duration every round: the writer's sleep ends at the deadline. */
static int limit_reached(uint64_t now_ns)
{
	(void)now_ns;
	if (size_reached)
		return REC_LIMIT_SIZE;
	if (rec_cfg.duration_ns && limit_elapsed_ns() >= rec_cfg.duration_ns && limit_begin(REC_LIMIT_DURATION))
		return REC_LIMIT_DURATION;
	return REC_LIMIT_NONE;
}

/* Begin a stop on purpose (wlock held, writer thread): REC_CLOSING as the
 * ordinary close sets it, calls counted as after the stop from here
 * (begin() in rec_hooks.c: a call that finds the state closing, also
 * inside rec_thread_enter, took no seq and is counted there). 0 when a
 * close was under way already (an exit, an exec): that close is the
 * ordinary one. */
static int limit_begin(int why)
{
	atomic_store(&rec_limit_stop, why); /* before CLOSING: begin() counts from here */
	int expect = REC_ON;
	if (!atomic_compare_exchange_strong(&rec_state, &expect, REC_CLOSING)) {
		atomic_store(&rec_limit_stop, REC_LIMIT_NONE);
		return 0;
	}
	limit_dropped_base = atomic_load(&rec_dropped_global);
	return 1;
}

void rec_limit_report(void)
{
	int why = atomic_load(&rec_limit_stop);
	if (!why || rec_getpid() != rec_pid || atomic_exchange(&limit_reported, 1))
		return;
	uint64_t after = atomic_load(&rec_dropped_global) - limit_dropped_base;
	for (int i = 0; i < REC_AFTER_STRIPES; i++)
		after += atomic_load(&rec_after_stop[i].n);
	int saved = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	if (rec_writer_lock(2000)) {
		rec_xfsz_guard_t g;
		rec_xfsz_block(&g);
		rec_trace_finish_stopped(after);
		rec_xfsz_restore(&g);
		rec_writer_unlock();
	}
	rec_tls.in_shim = saved;
}

/* ---- the writer thread ---------------------------------------------------------------- */

/* The CPU time of the writer threads (CLOCK_THREAD_CPUTIME_ID): the
 * recorder's own share of the process's CPU time (SPEC 6.10), which the
 * closing thread reads. A writer stores its own each scan; one that ends
 * (a window closed, a limit reached) moves its total to the finished
 * writers', so a later window's writer adds to it as getrusage does. */
static _Atomic uint64_t writer_cpu_done, writer_cpu_ns;

static void writer_cpu_update(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
		atomic_store_explicit(&writer_cpu_ns, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
				      memory_order_relaxed);
}

uint64_t rec_writer_cpu_total_ns(void)
{
	if (rec_tls.is_writer)
		writer_cpu_update();
	return atomic_load(&writer_cpu_done) + atomic_load(&writer_cpu_ns);
}

static void *writer_main(void *arg)
{
	(void)arg;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	rec_tls.is_writer = 1;
	prctl(PR_SET_NAME, "allocrr-writer", 0, 0, 0);
	uint64_t tick = rec_cfg.flush_ns / 2;
	uint64_t last_scan = rec_time_ns();
	uint64_t wait = 0; /* the first round writes the process's start record */
	for (;;) {
		atomic_store(&writer_waiting, 1);
		uint32_t seen = atomic_load(&wake_word);
		if (!atomic_load(&queue) && !atomic_load(&close_req) && wait) {
			struct timespec ts = {(time_t)(wait / 1000000000u), (long)(wait % 1000000000u)};
			syscall(SYS_futex, &wake_word, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
		}
		atomic_store(&writer_waiting, 0);
		while (!try_lock())
			sleep_ns(100000);
		if (atomic_load(&close_req)) {
			do_close();
			unlock();
			break;
		}
		drain_queue();
		uint64_t now = rec_time_ns();
		if (limit_reached(now)) {
			do_close(); /* the ordinary final close, footer and all */
			unlock();
			break;
		}
		if (now - last_scan >= tick) {
			writer_cpu_update();
			rec_clock_refit();
			steal_all(rec_cfg.flush_ns);
			last_scan = now;
			if (size_reached) {
				do_close();
				unlock();
				break;
			}
		}
		if (rotate_due) {
			rotate();
			now = rec_time_ns(); /* the new segment's clock */
			last_scan = now;
			int st = atomic_load(&rec_state);
			if (st == REC_STOPPED || st == REC_PAUSED) {
				unlock();
				break; /* no next segment (a write failed) */
			}
			/* REC_CLOSING: an exit or a --stop took the state first;
			 * its close_req is served by the next round. */
		}
		/* RSS samples (SPEC 6.9): the wake-up waits for the next one. */
		uint64_t due = rec_process_tick(now);
		wait = due < tick ? due : tick;
		uint64_t ran = limit_elapsed_ns();
		if (rec_cfg.duration_ns && ran < rec_cfg.duration_ns && rec_cfg.duration_ns - ran < wait)
			wait = rec_cfg.duration_ns - ran;
		unlock();
		if (atomic_load(&rec_state) == REC_STOPPED)
			break; /* a write failed: nothing more to do */
	}
	writer_cpu_update();
	atomic_fetch_add(&writer_cpu_done, atomic_exchange(&writer_cpu_ns, 0));
	atomic_store(&rec_writer_running, 0);
	syscall(SYS_futex, &closed, FUTEX_WAKE_PRIVATE, 1 << 30, NULL, NULL, 0);
	return NULL;
}

int rec_writer_start(void)
{
	if (atomic_load(&rec_writer_running))
		return 0;
	if (atomic_exchange(&writer_starting, 1))
		return atomic_load(&rec_writer_running) ? 0 : -1;
	int saved = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL; /* pthread_create allocates for us */
	atomic_store(&rec_writer_running, 1);
	int rc = rec_thread_start_detached(writer_main, NULL, 256 * 1024);
	if (rc != 0)
		atomic_store(&rec_writer_running, 0);
	rec_tls.in_shim = saved;
	atomic_store(&writer_starting, 0);
	return rc == 0 ? 0 : -1;
}

static void wake_writer(void)
{
	atomic_fetch_add(&wake_word, 1);
	if (atomic_load(&writer_waiting))
		syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void rec_writer_queue(rec_buf_t *b)
{
	rec_buf_t *head = atomic_load_explicit(&queue, memory_order_relaxed);
	do
		b->next = head;
	while (!atomic_compare_exchange_weak_explicit(&queue, &head, b, memory_order_release,
						      memory_order_relaxed));
}

void rec_writer_kick(void)
{
	if (REC_UNLIKELY(!atomic_load(&rec_writer_running))) {
		if (rec_getpid() != rec_pid)
			return; /* a raw clone/vfork child: not ours to write */
		if (rec_writer_start() != 0 && try_lock()) {
			rec_xfsz_guard_t g;
			rec_xfsz_block(&g);
			drain_queue(); /* no thread: write it ourselves */
			rec_xfsz_restore(&g);
			unlock();
		}
		return;
	}
	wake_writer();
}

void rec_writer_add_thread(rec_thread_t *t)
{
	rec_thread_t *head = atomic_load_explicit(&new_threads, memory_order_relaxed);
	do
		t->all_next = head;
	while (!atomic_compare_exchange_weak_explicit(&new_threads, &head, t, memory_order_release,
						      memory_order_relaxed));
}

void rec_writer_wait_returned(rec_thread_t *t)
{
	for (long ns = 20000; !atomic_load(&t->returned); ns = ns < 1000000 ? ns * 2 : ns) {
		if (atomic_load(&rec_state) != REC_ON)
			return;
		/* A stream: wait while the writer is only busy compressing (as
		 * for a file), never for a reader that lets the pipe fill: then
		 * the caller drops instead (rec_thread.c). */
		if (rec_streaming && rec_trace_stream_full())
			return;
		if (!atomic_load(&rec_writer_running) && rec_writer_start() != 0 && try_lock()) {
			rec_xfsz_guard_t g;
			rec_xfsz_block(&g);
			drain_queue();
			rec_xfsz_restore(&g);
			unlock();
			continue;
		}
		wake_writer();
		sleep_ns(ns);
	}
}

static void finish(int timeout_ms)
{
	int expect;
	for (;;) {
		if (!rec_tls.is_writer)
			rec_switch_wait(timeout_ms); /* a rotation's switch: close the next segment */
		expect = REC_ON;
		if (atomic_compare_exchange_strong(&rec_state, &expect, REC_CLOSING))
			break;
		/* A rotation took the state between our wait and our try. */
		if (expect != REC_CLOSING || rec_tls.is_writer ||
		    (!atomic_load(&rec_switching) && atomic_load(&rec_state) != REC_ON))
			break;
	}
	if (expect == REC_ON)
		rec_tls.closing = 1; /* this thread closes: see rec_writer_finish */
	if (expect != REC_ON) {
		if (expect == REC_STOPPED)
			rec_limit_report(); /* past a limit stop: the image ends (a signal) */
		if (expect == REC_CLOSING) /* someone else is closing: let them finish */
			for (int i = 0; i < timeout_ms && !atomic_load(&closed); i++)
				sleep_ns(1000000);
		return;
	}
	/* Our own buffer first: we are its owner and not inside a call unless
	 * a signal interrupted the shim, in which case it is skipped. */
	rec_thread_t *t = rec_tls.t;
	if (t && t->gen == rec_generation && atomic_load(&t->in_call) && t->appending)
		closer_busy = t; /* a signal stopped us inside rec_thread_append: no wait for it */
	/* Stopped by a signal elsewhere inside a hook (in_call held for a
	 * heap call whose event is not made yet, or waiting for a buffer to
	 * put it in: rec_thread.c, pause_appending): our buffer is whole;
	 * that one call is not recorded. */
	if (t && t->gen == rec_generation && (!atomic_load(&t->in_call) || !t->appending)) {
		if (atomic_load(&t->in_call)) {
			t->quiesced = 1; /* the close must not wait for us to leave */
			if (t->holding_event)
				t->dropped++; /* stopped waiting for a buffer for it */
		}
		rec_buf_t *b = atomic_exchange(&t->cur, NULL);
		atomic_store(&t->first_ns, 0);
		if (b) {
			rec_buf_t *head = atomic_load(&queue);
			do
				b->next = head;
			while (!atomic_compare_exchange_weak(&queue, &head, b));
		}
	}
	if (atomic_load(&rec_writer_running) && !rec_tls.is_writer) {
		atomic_store(&close_req, 1);
		wake_writer();
		for (int i = 0; i < timeout_ms * 10 && !atomic_load(&closed); i++)
			sleep_ns(100000);
		if (!atomic_load(&closed) && rec_streaming)
			rec_warn("the reader of the trace stream %s did not take the rest of the trace within %d s: "
				 "the image ends without waiting longer, so the stream stops where the writer was, "
				 "without its footer (its reader sees a truncated trace)", rec_trace_path(),
				 timeout_ms / 1000);
		return;
	}
	for (int i = 0; i < timeout_ms; i++) {
		if (try_lock()) {
			rec_xfsz_guard_t g;
			rec_xfsz_block(&g);
			if (!atomic_load(&closed))
				do_close();
			rec_xfsz_restore(&g);
			unlock();
			return;
		}
		sleep_ns(1000000);
	}
}

void rec_writer_finish(const char *why, int timeout_ms)
{
	(void)why;
	/* A vfork child shares our memory: it must not touch the state at all.
	 * A thread already closing got here from a signal handler that
	 * interrupted its own close: waiting would be waiting for itself. */
	if (rec_getpid() != rec_pid || rec_tls.closing)
		return;
	/* A pool worker _exit()s as its parent's terminate() sends it SIGTERM:
	 * without the hold, the handler waited 2 s for this very close and the
	 * process died mid-close, its trace without a footer. */
	sigset_t old;
	rec_signals_hold(&old);
	finish(timeout_ms);
	rec_tls.closing = 0;
	rec_signals_release(&old);
}

/* rec_trace_open with SIGXFSZ kept from the program (its header is written
 * on a program thread). */
static int trace_open_guarded(void)
{
	rec_xfsz_guard_t g;
	rec_xfsz_block(&g);
	int rc = rec_trace_open();
	rec_xfsz_restore(&g);
	return rc;
}

int rec_writer_init(int lazy_open)
{
	limit_origin_ns = rec_mono_ns();
	rec_threads_init();
	rec_trace_header_fill();
	if (lazy_open)
		return 0;
	return trace_open_guarded();
}

void rec_writer_reset_child(void)
{
	/* The parent's queue, writer and thread list stay in the parent. */
	rec_trace_forget();
	atomic_store(&wlock, 0);
	wlock_holds_mask = 0; /* a parent thread's: this one's mask is its own */
	atomic_store(&queue, NULL);
	atomic_store(&new_threads, NULL);
	threads = NULL;
	gone = NULL;
	closer_busy = NULL;
	atomic_store(&writer_waiting, 0);
	atomic_store(&close_req, 0);
	atomic_store(&closed, 0);
	atomic_store(&rec_writer_running, 0);
	atomic_store(&writer_starting, 0);
	atomic_store(&rec_dropped_global, 0);
	atomic_store(&rec_limit_stop, REC_LIMIT_NONE); /* a new image: a new limit */
	for (int i = 0; i < REC_AFTER_STRIPES; i++)
		atomic_store(&rec_after_stop[i].n, 0);
	atomic_store(&limit_reported, 0);
	limit_dropped_base = 0;
	size_reached = 0;
	atomic_store(&rec_seq.n, 0);
	atomic_store(&writer_cpu_done, 0); /* the child's writer is its own */
	atomic_store(&writer_cpu_ns, 0);
	atomic_store(&stop_reason, 0);
	rotate_due = 0;
	limit_origin_ns = rec_mono_ns();
	rec_cfg.output[0] = 0; /* -o names the first process only */
	rec_cfg.stream_fd = -1; /* and only it streams */
	rec_cfg.stream_stats[0] = 0;
	rec_pid = rec_getpid();
	uint64_t old_start = rec_start_mono_ns;
	rec_start_mono_ns = rec_mono_ns();
	rec_clock_rebase(old_start);
	rec_threads_reset();
	rec_trace_header_fill();
	rec_process_reset_child();
}

void rec_writer_open_child(void)
{
	if (!try_lock()) /* the only thread of the child: free after the reset */
		return;
	trace_open_guarded(); /* a failure is warned once and ends this image's recording, as at a first write */
	unlock();
}

int rec_writer_new_trace(int window)
{
	/* Every record of the old trace is retired; none is in a call (the
	 * close's handshake reached them all, or gave up on them: their
	 * events are that trace's loss). */
	merge_new_threads();
	rec_thread_t **tail = &threads;
	while (*tail)
		tail = &(*tail)->all_next;
	*tail = gone;
	rec_threads_new_generation(threads);
	threads = NULL;
	gone = NULL;
	closer_busy = NULL;
	atomic_store(&queue, NULL); /* empty after a close: everything was written */
	atomic_store(&close_req, 0);
	atomic_store(&closed, 0);
	atomic_store(&rec_limit_stop, REC_LIMIT_NONE);
	for (int i = 0; i < REC_AFTER_STRIPES; i++)
		atomic_store(&rec_after_stop[i].n, 0);
	atomic_store(&limit_reported, 0);
	limit_dropped_base = 0;
	size_reached = 0;
	rotate_due = 0;
	atomic_store(&rec_dropped_global, 0);
	if (window && !atomic_load(&rec_switching))
		limit_origin_ns = rec_mono_ns(); /* --duration is per window, not per segment */
	uint64_t old_start = rec_start_mono_ns;
	rec_start_mono_ns = rec_mono_ns();
	rec_clock_rebase(old_start);
	rec_stacks_new_trace();
	if (rec_cfg.stack_depth)
		atomic_store(&rec_modules_due, 1);
	rec_trace_forget_closed();
	rec_trace_header_fill();
	rec_process_reset_child();
	return trace_open_guarded();
}
