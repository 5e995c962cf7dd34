/*
 * rec_thread.c — per-thread recording state: the hot path of the shim.
 *
 * Each recording thread owns a rec_thread_t and appends events to its current
 * buffer (t->cur) with no lock, no allocation and no syscall. A buffer goes to
 * the writer when it is full, when its first event is older than the flush
 * age (checked on every append with the timestamp the event needs anyway),
 * or when the writer steals it from a thread that went idle.
 *
 * Steal handshake (asymmetric Dekker): the owner sets in_call, issues a light
 * fence, and checks steal before touching cur; the writer sets steal, issues a
 * heavy fence and takes cur only if in_call is clear. With membarrier(2)
 * PRIVATE_EXPEDITED the light fence is only a compiler barrier (the kernel
 * makes the writer's membarrier a full barrier on every running thread);
 * without it both sides use a real fence. Either way the owner never waits
 * on the writer on the hot path unless a steal is in progress (microseconds).
 *
 * Invariants: a thread's seq numbers increase within its buffers; a buffer
 * holds metadata that must precede its events in the file; thread records
 * are never freed (they are 256 bytes and the writer may still point at them).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ar_readfile.h"
#include "rec_internal.h"

__thread rec_tls_t rec_tls __attribute__((tls_model("initial-exec")));
_Atomic uint64_t rec_dropped_global;
_Atomic int rec_modules_due;
unsigned rec_generation;
int rec_membarrier_ok;

static _Atomic uint32_t next_index;
static pthread_key_t exit_key;
static int exit_key_ok;

/* ---- fences for the steal handshake (light_fence, enter, leave: rec_internal.h) -- */
static void heavy_fence(void)
{
	if (rec_membarrier_ok && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
		return;
	atomic_thread_fence(memory_order_seq_cst);
}

static void membarrier_register(void)
{
	rec_membarrier_ok = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

/* ---- buffers ---------------------------------------------------------------- */
#define BUF_HDR ((sizeof(rec_buf_t) + 63) & ~(size_t)63)
#define BUF_TOTAL (BUF_HDR + REC_EVBUF_CAP + REC_METABUF_CAP)

static _Atomic int free_lock;
static rec_buf_t *free_list;

static void spin_lock(_Atomic int *l)
{
	while (atomic_exchange_explicit(l, 1, memory_order_acquire))
		sched_yield();
}

static void spin_unlock(_Atomic int *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
}

void rec_buf_free_list_push(rec_buf_t *b)
{
	spin_lock(&free_lock);
	b->next = free_list;
	free_list = b;
	spin_unlock(&free_lock);
}

static rec_buf_t *free_list_pop(void)
{
	if (!free_list) /* racy peek: avoids the lock in the common case */
		return NULL;
	spin_lock(&free_lock);
	rec_buf_t *b = free_list;
	if (b)
		free_list = b->next;
	spin_unlock(&free_lock);
	return b;
}

static void buf_reset(rec_buf_t *b, rec_thread_t *t)
{
	uint8_t *base = (uint8_t *)b;
	ar_evbuf_reset(&b->eb, base + BUF_HDR, REC_EVBUF_CAP, t->index, (uint64_t)t->tid);
	ar_metabuf_reset(&b->mb, base + BUF_HDR + REC_EVBUF_CAP, REC_METABUF_CAP);
	b->owner = t;
	b->next = NULL;
	b->exit_record = 0;
}

/* Called by the writer once b is on disk: back to its owner, or to the
 * shared free list when the owner is gone. */
void rec_buf_give_back(rec_buf_t *b)
{
	rec_thread_t *t = b->owner;
	if (!t || atomic_load_explicit(&t->writer_gone, memory_order_acquire)) {
		rec_buf_free_list_push(b);
		return;
	}
	rec_buf_t *head = atomic_load_explicit(&t->returned, memory_order_relaxed);
	do
		b->next = head;
	while (!atomic_compare_exchange_weak_explicit(&t->returned, &head, b, memory_order_release,
						      memory_order_relaxed));
}

/* While a thread waits for a buffer or kicks the writer its cur is NULL
 * and every buffer it had is in the writer's queue: nothing is
 * half-written, so `appending` is cleared for that stretch. A signal
 * handler that closes the trace there (SIGTERM to a program held back by
 * the writer lands in exactly that wait) then writes everything and
 * counts the one event still in hand as dropped, instead of giving up
 * on the thread and leaving the trace without a footer. */
static int pause_appending(rec_thread_t *t)
{
	int was = t->appending;
	rec_appending_end(t);
	return was;
}

static void resume_appending(rec_thread_t *t, int was)
{
	if (was)
		rec_appending_begin(t);
}

/* A fresh buffer for t (inside enter/leave). NULL when none can be had. */
static rec_buf_t *take_buffer(rec_thread_t *t)
{
	rec_buf_t *b = atomic_exchange_explicit(&t->returned, NULL, memory_order_acquire);
	if (b) {
		rec_buf_t *rest = b->next;
		while (rest) { /* keep one, the rest go to the shared list */
			rec_buf_t *n = rest->next;
			rec_buf_give_back(rest);
			rest = n;
		}
	} else if ((b = free_list_pop()) != NULL) {
		t->nbufs++;
	} else if (t->nbufs < REC_BUFS_PER_THREAD || t->exited) {
		/* An exited thread submits every event at once, and once the
		 * writer has dropped it (writer_gone) its buffers go to the
		 * shared list, never back to it: waiting for one below would
		 * never end. glibc makes such calls (free of other threads'
		 * DTVs in __nptl_free_stacks) holding its stack-cache lock, so
		 * that wait hung every thread that started or ended. Found by
		 * tests/e2e/torture_rec_threads.sh. */
		b = rec_mmap(BUF_TOTAL);
		if (!b) {
			rec_fail("cannot map a %zu-byte event buffer: %s", (size_t)BUF_TOTAL, strerror(errno));
			return NULL;
		}
		t->nbufs++;
	} else {
		/* Backpressure: the writer is behind; wait for one of ours.
		 * On a stream whose pipe is full the wait ends at once
		 * (rec_writer_wait_returned): the caller then drops the event
		 * and counts it (the footer's dropped_events); a metadata
		 * record is lost, which readers tolerate (SPEC 7.4). */
		rec_writer_wait_returned(t);
		b = atomic_exchange_explicit(&t->returned, NULL, memory_order_acquire);
		if (!b)
			return NULL;
		rec_buf_t *rest = b->next;
		while (rest) {
			rec_buf_t *n = rest->next;
			rec_buf_give_back(rest);
			rest = n;
		}
	}
	buf_reset(b, t);
	return b;
}

/* cur is NULL here: the buffer is empty until it becomes cur (one store),
 * so all of this (a wait, an mmap, page faults) runs with appending
 * paused. */
static rec_buf_t *new_buffer(rec_thread_t *t)
{
	int was = pause_appending(t);
	rec_buf_t *b = take_buffer(t);
	if (b)
		atomic_store_explicit(&t->cur, b, memory_order_relaxed);
	resume_appending(t, was);
	return b;
}

/* appending set: from cur = NULL until b is queued, b is in neither. */
static void submit_cur(rec_thread_t *t, rec_buf_t *b)
{
	atomic_store_explicit(&t->cur, NULL, memory_order_relaxed);
	atomic_store_explicit(&t->first_ns, 0, memory_order_relaxed);
	rec_writer_queue(b);
	int was = pause_appending(t);
	rec_writer_kick();
	resume_appending(t, was);
}

/* ---- the hot path ---------------------------------------------------------- */
/* The hooks hold in_call from before they take a seq until the event is in
 * the buffer (rec_thread_enter, rec_internal.h, ... rec_thread_append): a
 * thread the writer's handshake finds outside a call holds no seq whose
 * event is still to come. That is what lets a rotation cut the stream
 * exactly: every seq taken before the cut is in the old segment, every
 * later one in the next (rec_window.c). */
void rec_thread_append(rec_thread_t *t, ar_event_t *e)
{
	t->holding_event = 1;
	atomic_signal_fence(memory_order_seq_cst);
	rec_appending_begin(t);
	rec_buf_t *b = atomic_load_explicit(&t->cur, memory_order_relaxed);
	if (REC_UNLIKELY(!b) && !(b = new_buffer(t)))
		goto drop;
	int rc = ar_evbuf_append(&b->eb, e);
	if (REC_UNLIKELY(rc == AR_EFULL)) {
		submit_cur(t, b);
		if (!(b = new_buffer(t)))
			goto drop;
		rc = ar_evbuf_append(&b->eb, e);
	}
	if (REC_UNLIKELY(rc != 0))
		goto drop;
	atomic_signal_fence(memory_order_seq_cst);
	t->holding_event = 0;
	uint64_t first = atomic_load_explicit(&t->first_ns, memory_order_relaxed);
	if (first == 0)
		atomic_store_explicit(&t->first_ns, e->time_ns + 1, memory_order_relaxed);
	else if (REC_UNLIKELY(e->time_ns + 1 - first > rec_cfg.flush_ns || t->exited))
		submit_cur(t, b); /* time-based flush: bounds what a SIGKILL loses */
	rec_appending_end(t);
	rec_call_leave(t);
	return;
drop:
	t->dropped++;
	atomic_signal_fence(memory_order_seq_cst);
	t->holding_event = 0;
	rec_appending_end(t);
	rec_call_leave(t);
}

void rec_record_meta(rec_thread_t *t, rec_meta_fn fn, const void *arg)
{
	rec_call_enter(t);
	if (atomic_load_explicit(&rec_state, memory_order_acquire) != REC_ON || t->gen != rec_generation)
		goto out; /* read inside enter/leave: see rec_thread_enter */
	rec_appending_begin(t); /* a record half-written into cur, like an event */
	rec_buf_t *b = atomic_load_explicit(&t->cur, memory_order_relaxed);
	if (!b && !(b = new_buffer(t)))
		goto done;
	if (fn(&b->mb, arg) == AR_EFULL) {
		submit_cur(t, b);
		if (!(b = new_buffer(t)))
			goto done;
		fn(&b->mb, arg);
	}
	if (atomic_load_explicit(&t->first_ns, memory_order_relaxed) == 0)
		atomic_store_explicit(&t->first_ns, rec_time_ns() + 1, memory_order_relaxed);
done:
	rec_appending_end(t);
out:
	rec_call_leave(t);
}

/* ---- thread records ---------------------------------------------------------- */
#define SLAB_COUNT 256
static _Atomic int slab_lock;
static rec_thread_t *slab;
static unsigned slab_used = SLAB_COUNT;

static rec_thread_t *thread_alloc(void)
{
	spin_lock(&slab_lock);
	if (slab_used == SLAB_COUNT) {
		rec_thread_t *s = rec_mmap(SLAB_COUNT * sizeof(rec_thread_t));
		if (!s) {
			spin_unlock(&slab_lock);
			return NULL;
		}
		slab = s;
		slab_used = 0;
	}
	rec_thread_t *t = &slab[slab_used++];
	spin_unlock(&slab_lock);
	return t;
}

struct start_arg {
	uint32_t index;
	uint64_t tid, seq, time;
};
static int meta_start(ar_metabuf_t *m, const void *arg)
{
	const struct start_arg *a = arg;
	return ar_meta_thread_start(m, a->index, a->tid, a->seq, a->time);
}

struct name_arg {
	uint32_t index;
	const char *name;
};
static int meta_name(ar_metabuf_t *m, const void *arg)
{
	const struct name_arg *a = arg;
	return ar_meta_thread_name(m, a->index, a->name);
}

static int meta_exit(ar_metabuf_t *m, const void *arg)
{
	const struct start_arg *a = arg;
	return ar_meta_thread_exit(m, a->index, a->seq, a->time);
}

static void exit_key_dtor(void *arg);

rec_thread_t *rec_thread_self(void)
{
	rec_thread_t *t = rec_tls.t;
	if (REC_LIKELY(t != NULL && t->gen == rec_generation))
		return t;
	if (t && t->retired && !t->exited) {
		/* A live thread's record from a closed window's trace: nothing
		 * of the old trace points at it any more (the new generation
		 * cleared it, rec_threads_new_generation). */
		unsigned rounds = (unsigned)t->dtor_rounds;
		memset(t, 0, sizeof *t);
		t->dtor_rounds = (int)rounds;
	} else {
		t = thread_alloc();
		if (!t)
			return NULL;
	}
	t->gen = rec_generation;
	t->tid = rec_gettid();
	t->index = atomic_fetch_add(&next_index, 1);
	rec_tls.t = t;
	if (exit_key_ok) {
		int saved = rec_tls.in_shim; /* glibc may calloc a key block: ours */
		rec_tls.in_shim = REC_SHIM_INTERNAL;
		pthread_setspecific(exit_key, t);
		rec_tls.in_shim = saved;
	}
	rec_writer_add_thread(t);
	uint64_t seq = rec_next_seq();
	struct start_arg a = {t->index, (uint64_t)t->tid, seq, rec_time_ns()};
	rec_record_meta(t, meta_start, &a);
	if (REC_UNLIKELY(atomic_load_explicit(&rec_modules_due, memory_order_relaxed)) &&
	    atomic_exchange(&rec_modules_due, 0)) {
		int saved = rec_tls.in_shim; /* a window's first thread: the module map again */
		rec_tls.in_shim = REC_SHIM_INTERNAL;
		rec_modules_scan(t);
		rec_tls.in_shim = saved;
	}
	return t;
}

void rec_thread_read_name(pid_t tid, char name[32])
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
	name[0] = 0;
	ssize_t n = rec_read_small_file(path, name, 32);
	if (n > 0 && name[n - 1] == '\n')
		name[n - 1] = 0;
}

void rec_thread_exit(rec_thread_t *t)
{
	if (t->exited)
		return;
	if (t->gen != rec_generation) {
		/* Its record belongs to a closed window's trace: this trace
		 * never saw the thread, so it says nothing of its end. */
		t->exited = 1;
		return;
	}
	rec_thread_read_name(t->tid, t->name);
	if (t->name[0]) {
		struct name_arg na = {t->index, t->name};
		rec_record_meta(t, meta_name, &na);
	}
	struct start_arg a = {t->index, (uint64_t)t->tid, rec_next_seq(), rec_time_ns()};
	rec_record_meta(t, meta_exit, &a);
	t->exited = 1;
	rec_call_enter(t);
	rec_appending_begin(t);
	rec_buf_t *b = atomic_load_explicit(&t->cur, memory_order_relaxed);
	if (b) {
		b->exit_record = 1;
		submit_cur(t, b);
	}
	rec_appending_end(t);
	rec_call_leave(t);
}

/* pthread key destructor. Re-arm until the last destructor round so that
 * other keys' destructors (which may free) still run before our exit record. */
static void exit_key_dtor(void *arg)
{
	rec_thread_t *t = arg;
	if (++t->dtor_rounds < PTHREAD_DESTRUCTOR_ITERATIONS) {
		pthread_setspecific(exit_key, t);
		return;
	}
	int saved = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	rec_thread_exit(t);
	rec_tls.in_shim = saved;
}

void rec_threads_init(void)
{
	membarrier_register();
	exit_key_ok = pthread_key_create(&exit_key, exit_key_dtor) == 0;
}

/* In a fork child: every other thread is gone and the parent's buffers belong
 * to the parent's trace; start over (the parent's memory is simply left). */
void rec_threads_reset(void)
{
	atomic_store(&next_index, 0);
	free_lock = 0;
	free_list = NULL;
	slab_lock = 0;
	slab_used = SLAB_COUNT;
	rec_tls.t = NULL;
	rec_generation++;
	membarrier_register();
}

void rec_thread_writer_done(rec_thread_t *t)
{
	atomic_store_explicit(&t->writer_gone, 1, memory_order_release);
	rec_buf_t *r = atomic_exchange(&t->returned, NULL);
	while (r) {
		rec_buf_t *n = r->next;
		rec_buf_free_list_push(r);
		r = n;
	}
}

int rec_thread_start_detached(void *(*fn)(void *), void *arg, size_t stack_size)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread inherits it */
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (stack_size)
		pthread_attr_setstacksize(&attr, stack_size);
	pthread_t th;
	int rc = pthread_create(&th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

void rec_threads_new_generation(rec_thread_t *list)
{
	for (rec_thread_t *t = list; t; t = t->all_next) {
		rec_thread_writer_done(t);
		rec_buf_t *c = atomic_exchange(&t->cur, NULL); /* none after a clean close */
		if (c)
			rec_buf_free_list_push(c);
		t->retired = 1;
	}
	atomic_store(&next_index, 0);
	rec_generation++;
}

int rec_thread_steal(rec_thread_t *t, rec_buf_t **out, int quiesce)
{
	*out = NULL;
	if (!quiesce && !atomic_load_explicit(&t->cur, memory_order_relaxed))
		return 1;
	atomic_store_explicit(&t->steal, 1, memory_order_relaxed);
	heavy_fence();
	if (atomic_load_explicit(&t->in_call, memory_order_acquire)) {
		atomic_store_explicit(&t->steal, 0, memory_order_release);
		return 0;
	}
	*out = atomic_load_explicit(&t->cur, memory_order_relaxed);
	atomic_store_explicit(&t->cur, NULL, memory_order_relaxed);
	atomic_store_explicit(&t->first_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&t->steal, 0, memory_order_release);
	return 1;
}


int rec_threads_quiesce(rec_thread_t *list, const rec_thread_t *skip, rec_buf_t **taken)
{
	int busy = 0, any = 0;
	for (rec_thread_t *t = list; t; t = t->all_next)
		if (!t->quiesced && t != skip) {
			atomic_store_explicit(&t->steal, 1, memory_order_relaxed);
			any = 1;
		}
	if (!any)
		return 0;
	heavy_fence();
	for (rec_thread_t *t = list; t; t = t->all_next) {
		if (t->quiesced || t == skip)
			continue;
		if (atomic_load_explicit(&t->in_call, memory_order_acquire)) {
			atomic_store_explicit(&t->steal, 0, memory_order_release);
			busy++;
			continue;
		}
		rec_buf_t *b = atomic_load_explicit(&t->cur, memory_order_relaxed);
		atomic_store_explicit(&t->cur, NULL, memory_order_relaxed);
		atomic_store_explicit(&t->first_ns, 0, memory_order_relaxed);
		t->quiesced = 1;
		atomic_store_explicit(&t->steal, 0, memory_order_release);
		if (b) {
			b->next = *taken;
			*taken = b;
		}
	}
	return busy;
}
