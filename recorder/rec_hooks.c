/*
 * rec_hooks.c — the public face of liballocrr-rec.so: the interposed heap
 * functions and their real-function lookup, the exec/_exit hooks (which
 * hand over to rec_lifecycle.c, and keep the recorder in the environment
 * an exec'ed or posix_spawn'ed image gets), and the loader calls counted for fork's
 * sake (dl_iterate_phdr, dlopen, dlclose). Start-up, fork and the
 * environment are rec_lifecycle.c's; configuration is rec_config.c's.
 *
 * Every heap hook follows the SPEC 4 ordering rule: a free takes its sequence
 * number before the real free, an allocation after the real call returned,
 * realloc one of each (seq before, seq2 after). That way, in sequence order,
 * no address is handed out before its previous owner released it, even when
 * the two calls race on different threads.
 *
 * Invariants: errno after a hook is what the real function left; a hook on a
 * thread already inside the shim (rec_tls.in_shim) or while recording is off
 * is a plain call to the real function; before dlsym has found the real
 * functions, requests are served from the bootstrap pool, and pool pointers
 * are never passed to the real allocator.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rec_cost.h"
#include "rec_fast.h"
#include "rec_internal.h"
#include "rec_ownlibs.h"

#define AR_EXPORT __attribute__((visibility("default")))

rec_real_t rec_real;

static _Atomic int resolve_state;

/* ---- resolving the real functions ------------------------------------------------- */
void rec_resolve(void)
{
	rec_resolve_with(RTLD_NEXT);
}

void rec_resolve_with(void *handle)
{
	int z = 0;
	if (!atomic_compare_exchange_strong(&resolve_state, &z, 1))
		return; /* done, or being done by us (dlsym's own calls) or another thread */
	rec_real_t r;
	memset(&r, 0, sizeof r);
#define R(name) *(void **)&r.name = dlsym(handle, #name)
	R(free);
	R(calloc);
	R(realloc);
	R(reallocarray);
	R(posix_memalign);
	R(aligned_alloc);
	R(memalign);
	R(valloc);
	R(pvalloc);
	R(malloc_usable_size);
	R(malloc);
#undef R
	rec_real = r; /* malloc last: callers test it */
	atomic_store(&resolve_state, 2);
}

/* Preloaded objects come before the libraries a program needs in the
 * loader's list, so before libc; an object dlopen'ed into a running
 * process (attach) comes after it. Asking which malloc dlsym(RTLD_DEFAULT)
 * finds does not tell: a non-PIE program that takes malloc's address
 * (python3 does) defines it itself, as a canonical PLT entry. dladdr1 and
 * the list walk allocate nothing. */
int rec_shim_preloaded(void)
{
	Dl_info info;
	struct link_map *lm = NULL;
	if (!dladdr1((void *)rec_shim_preloaded, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return 1; /* cannot tell: behave as preloaded, as before */
	for (const struct link_map *p = lm->l_prev; p; p = p->l_prev)
		if (p->l_name && strstr(p->l_name, "/libc.so."))
			return 0;
	return 1;
}

/* ---- the hot path --------------------------------------------------------------------- */
/* The calling thread's record when this call is to be recorded, else NULL.
 * With a record, in_call is held (rec_thread_enter) until end(): the hook
 * takes its seq inside it. */
static rec_thread_t *begin_slow(void);
static inline __attribute__((always_inline)) rec_thread_t *begin(void)
{
	if (REC_UNLIKELY(rec_tls.in_shim)) {
		/* Inside a hook, a heap call can only come from a signal
		 * handler that interrupted it: the program's call, which we
		 * cannot record (its seq would come after the interrupted
		 * call's but its event before it in the thread's block), so
		 * it is counted in the footer's dropped events. */
		if (rec_tls.in_shim == REC_SHIM_HOOK &&
		    atomic_load_explicit(&rec_state, memory_order_relaxed) == REC_ON)
			atomic_fetch_add_explicit(&rec_dropped_global, 1, memory_order_relaxed);
		return NULL;
	}
	int st = atomic_load_explicit(&rec_state, memory_order_relaxed);
	if (REC_UNLIKELY(st != REC_ON)) {
		/* Between windows (--paused, attach): this load and branch is
		 * the whole cost. Nothing else can be pending then: a rotation
		 * switches from REC_ON, a window's own limit ends in REC_PAUSED
		 * with nothing to count. */
		if (REC_LIKELY(st == REC_PAUSED))
			return NULL;
		return begin_slow();
	}
	rec_tls.in_shim = REC_SHIM_HOOK;
	rec_thread_t *t = rec_thread_self_fast();
	if (REC_LIKELY(t != NULL) && REC_LIKELY(rec_thread_enter(t)))
		return t;
	rec_tls.in_shim = 0;
	return begin_slow();
}

/* Not recording right now: start-up, a rotation's switch (wait for it:
 * the call belongs to the next segment), or pass through. */
static rec_thread_t *begin_slow(void)
{
	for (int round = 0;; round++) {
		if (atomic_load_explicit(&rec_state, memory_order_acquire) != REC_ON) {
			if (atomic_load_explicit(&rec_switching, memory_order_acquire)) {
				if (round > 5000) {
					/* a switch that takes seconds (a stalled disk):
					 * the program must not hang on us; the call is
					 * counted in the next segment's dropped events */
					atomic_fetch_add_explicit(&rec_dropped_global, 1, memory_order_relaxed);
					return NULL;
				}
				struct timespec ts = {0, round < 100 ? 20000 : 1000000};
				int saved = errno;
				nanosleep(&ts, NULL);
				errno = saved;
				continue;
			}
			if (atomic_load_explicit(&rec_init_state, memory_order_relaxed) != 0) {
				rec_note_unrecorded(); /* past a --max-size/--duration stop */
				return NULL;
			}
			rec_init();
			if (atomic_load(&rec_state) != REC_ON)
				return NULL;
		}
		rec_tls.in_shim = REC_SHIM_HOOK;
		rec_thread_t *t = rec_thread_self();
		if (!t) {
			rec_tls.in_shim = 0;
			return NULL;
		}
		if (rec_thread_enter(t))
			return t;
		rec_tls.in_shim = 0;
	}
}

/* The full path of a recorded call: e has its seqs, time is its time
 * (rec_fast_event's, which declined it, or rec_event_stamp's). */
static void end_at(rec_thread_t *t, ar_event_t *e, int saved_errno, uint64_t time)
{
	/* A failed call keeps its errno (posix_memalign sets e->error itself);
	 * realloc(p, 0) returning NULL freed p and did not fail (SPEC 5.3). */
	if (REC_UNLIKELY(!e->result) && e->op != AR_OP_FREE && !e->error) {
		int freed = e->ptr && (e->op == AR_OP_REALLOC ? e->size == 0
					: e->op == AR_OP_REALLOCARRAY && (e->count == 0 || e->size == 0));
		if (!freed)
			e->error = (uint32_t)saved_errno;
	}
	e->time_ns = time;
	rec_stamp_done(&t->stamp, e->seq2 ? e->seq2 : e->seq);
	if (rec_cfg.stack_depth && e->op != AR_OP_FREE)
		e->stack = rec_stack_capture(t);
	rec_thread_append(t, e);
	rec_tls.in_shim = 0;
	errno = saved_errno;
}

static inline void end(rec_thread_t *t, ar_event_t *e, int saved_errno)
{
	end_at(t, e, saved_errno, rec_event_stamp(t, e->seq));
}

/* In a window trace, a block freed or reallocated may predate the window:
 * its size as the allocator has it, measured before the real call
 * (SPEC 6.11). Whole-program traces do not pay for it. */
static inline uint64_t old_size_of(void *p)
{
	if (REC_LIKELY(!rec_window_trace) || !p)
		return 0;
	return rec_real.malloc_usable_size ? rec_real.malloc_usable_size(p) : 0;
}

#define EV(...) ((ar_event_t){__VA_ARGS__})

/* Between windows (--paused, attach) a hook is one load and a branch, then
 * a jump to the real function, before any frame is set up. REC_PAUSED is
 * set only once the real functions are known (rec_init, rec_init_attached). */
static inline int paused(void)
{
	return atomic_load_explicit(&rec_state, memory_order_relaxed) == REC_PAUSED;
}

/* The recorded part of each of the four hottest hooks is written once, as
 * an inline function of `timed`, and compiled twice: untimed in the hook,
 * timed (rec_cost.h) in a function of its own (NAME_timed) that one call in
 * REC_COST_EVERY takes, so the common call carries no timing code. */

static inline __attribute__((always_inline)) void *malloc_rec(rec_thread_t *t, size_t n, const int timed)
{
	uint64_t c0 = rec_cost_mark(timed), r0 = rec_cost_mark(timed);
	void *r = rec_real.malloc(n);
	uint64_t r1 = rec_cost_mark(timed), seq = rec_next_seq(), time;
	if (REC_LIKELY(rec_fast_event(t, r != NULL, AR_OP_MALLOC, seq, 0, 0, n, 0, (uintptr_t)r, &time))) {
		rec_cost_end(timed, c0, r0, r1);
		return r;
	}
	int err = errno;
	ar_event_t e = EV(.op = AR_OP_MALLOC, .size = n, .result = (uintptr_t)r, .seq = seq);
	end_at(t, &e, err, time);
	rec_cost_end(timed, c0, r0, r1);
	return r;
}
static __attribute__((noinline)) void *malloc_timed(rec_thread_t *t, size_t n)
{
	return malloc_rec(t, n, 1);
}

static __attribute__((noinline)) void *malloc_hook(size_t n)
{
	if (REC_UNLIKELY(!rec_real.malloc)) {
		rec_resolve();
		if (!rec_real.malloc)
			return rec_boot_alloc(n, 16);
	}
	rec_thread_t *t = begin();
	if (!t)
		return rec_real.malloc(n);
	if (REC_UNLIKELY(rec_cost_due(t)))
		return malloc_timed(t, n);
	return malloc_rec(t, n, 0);
}

static inline __attribute__((always_inline)) void free_rec(rec_thread_t *t, void *p, const int timed)
{
	uint64_t c0 = rec_cost_mark(timed);
	uint64_t old_size = old_size_of(p), time;
	uint64_t seq = rec_next_seq(); /* SPEC 4: before the real free */
	uint64_t r0 = rec_cost_mark(timed);
	rec_real.free(p);
	uint64_t r1 = rec_cost_mark(timed);
	if (REC_LIKELY(rec_fast_event(t, old_size == 0, AR_OP_FREE, seq, 0, (uintptr_t)p, 0, 0, 0, &time))) {
		rec_cost_end(timed, c0, r0, r1);
		return;
	}
	int err = errno;
	ar_event_t e = EV(.op = AR_OP_FREE, .ptr = (uintptr_t)p, .old_size = old_size, .seq = seq);
	end_at(t, &e, err, time);
	rec_cost_end(timed, c0, r0, r1);
}
static __attribute__((noinline)) void free_timed(rec_thread_t *t, void *p)
{
	free_rec(t, p, 1);
}

static __attribute__((noinline)) void free_hook(void *p)
{
	if (REC_UNLIKELY(p && rec_boot_owns(p)))
		return;
	if (REC_UNLIKELY(!rec_real.free)) {
		rec_resolve();
		if (!rec_real.free)
			return;
	}
	rec_thread_t *t = begin();
	if (!t) {
		rec_real.free(p);
		return;
	}
	if (REC_UNLIKELY(rec_cost_due(t)))
		free_timed(t, p);
	else
		free_rec(t, p, 0);
}

static inline __attribute__((always_inline)) void *calloc_rec(rec_thread_t *t, size_t n, size_t size,
								const int timed)
{
	uint64_t c0 = rec_cost_mark(timed), r0 = rec_cost_mark(timed);
	void *r = rec_real.calloc(n, size);
	uint64_t r1 = rec_cost_mark(timed), seq = rec_next_seq(), time;
	if (REC_LIKELY(rec_fast_event(t, r != NULL, AR_OP_CALLOC, seq, 0, 0, size, n, (uintptr_t)r, &time))) {
		rec_cost_end(timed, c0, r0, r1);
		return r;
	}
	int err = errno;
	ar_event_t e = EV(.op = AR_OP_CALLOC, .count = n, .size = size, .result = (uintptr_t)r, .seq = seq);
	end_at(t, &e, err, time);
	rec_cost_end(timed, c0, r0, r1);
	return r;
}
static __attribute__((noinline)) void *calloc_timed(rec_thread_t *t, size_t n, size_t size)
{
	return calloc_rec(t, n, size, 1);
}

static __attribute__((noinline)) void *calloc_hook(size_t n, size_t size)
{
	if (REC_UNLIKELY(!rec_real.calloc)) {
		rec_resolve();
		if (!rec_real.calloc) {
			if (size && n > SIZE_MAX / size)
				return NULL;
			return rec_boot_alloc(n * size, 16);
		}
	}
	rec_thread_t *t = begin();
	if (!t)
		return rec_real.calloc(n, size);
	if (REC_UNLIKELY(rec_cost_due(t)))
		return calloc_timed(t, n, size);
	return calloc_rec(t, n, size, 0);
}

/* realloc of a bootstrap block: it was never the allocator's, so it becomes
 * a fresh allocation (recorded as malloc) with the old contents. */
static void *boot_realloc(void *p, size_t n)
{
	size_t old = rec_boot_size(p);
	void *r = malloc(n);
	if (r)
		memcpy(r, p, old < n ? old : n);
	return r;
}

static inline __attribute__((always_inline)) void *realloc_rec(rec_thread_t *t, void *p, size_t n, const int timed)
{
	uint64_t c0 = rec_cost_mark(timed);
	uint64_t old_size = old_size_of(p), time;
	uint64_t seq = rec_next_seq(); /* SPEC 4: p may be released by the call */
	uint64_t r0 = rec_cost_mark(timed);
	void *r = rec_real.realloc(p, n);
	uint64_t r1 = rec_cost_mark(timed);
	uint64_t seq2 = rec_next_seq(); /* and the result exists only now */
	if (REC_LIKELY(rec_fast_event(t, r != NULL && old_size == 0, AR_OP_REALLOC, seq, seq2, (uintptr_t)p, n, 0,
				      (uintptr_t)r, &time))) {
		rec_cost_end(timed, c0, r0, r1);
		return r;
	}
	int err = errno;
	ar_event_t e = EV(.op = AR_OP_REALLOC, .ptr = (uintptr_t)p, .size = n, .old_size = old_size, .seq = seq,
			  .seq2 = seq2, .result = (uintptr_t)r);
	end_at(t, &e, err, time);
	rec_cost_end(timed, c0, r0, r1);
	return r;
}
static __attribute__((noinline)) void *realloc_timed(rec_thread_t *t, void *p, size_t n)
{
	return realloc_rec(t, p, n, 1);
}

static __attribute__((noinline)) void *realloc_hook(void *p, size_t n)
{
	if (REC_UNLIKELY(p && rec_boot_owns(p)))
		return boot_realloc(p, n);
	if (REC_UNLIKELY(!rec_real.realloc)) {
		rec_resolve();
		if (!rec_real.realloc)
			return p ? NULL : rec_boot_alloc(n, 16);
	}
	if (REC_UNLIKELY(rec_tls.reallocarray_inner)) {
		/* The one realloc glibc's reallocarray makes: not a nested call
		 * of the program, not counted as dropped (any other call inside
		 * the hook is a signal handler's and is counted by begin()). */
		rec_tls.reallocarray_inner = 0;
		return rec_real.realloc(p, n);
	}
	rec_thread_t *t = begin();
	if (!t)
		return rec_real.realloc(p, n);
	if (REC_UNLIKELY(rec_cost_due(t)))
		return realloc_timed(t, p, n);
	return realloc_rec(t, p, n, 0);
}

/* The four hottest entry points: paused, a jump to the real function (the
 * recording path, with its frame, lives in the *_hook functions above). A
 * bootstrap block never reaches the real allocator. */
AR_EXPORT void *malloc(size_t n)
{
	if (paused())
		return rec_real.malloc(n);
	return malloc_hook(n);
}

AR_EXPORT void free(void *p)
{
	if (paused() && !rec_boot_owns(p)) {
		rec_real.free(p);
		return;
	}
	free_hook(p);
}

AR_EXPORT void *calloc(size_t n, size_t size)
{
	if (paused())
		return rec_real.calloc(n, size);
	return calloc_hook(n, size);
}

AR_EXPORT void *realloc(void *p, size_t n)
{
	if (paused() && !rec_boot_owns(p))
		return rec_real.realloc(p, n);
	return realloc_hook(p, n);
}

AR_EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
	if (REC_UNLIKELY(p && rec_boot_owns(p))) {
		if (size && n > SIZE_MAX / size) {
			errno = ENOMEM;
			return NULL;
		}
		return boot_realloc(p, n * size);
	}
	if (REC_UNLIKELY(!rec_real.reallocarray)) {
		rec_resolve();
		if (!rec_real.reallocarray) {
			errno = ENOMEM;
			return NULL;
		}
	}
	rec_thread_t *t = begin();
	if (!t)
		return rec_real.reallocarray(p, n, size);
	ar_event_t e = EV(.op = AR_OP_REALLOCARRAY, .ptr = (uintptr_t)p, .count = n, .size = size,
			  .old_size = old_size_of(p));
	e.seq = rec_next_seq();
	rec_tls.reallocarray_inner = 1; /* glibc's reallocarray calls realloc once: part of this call */
	void *r = rec_real.reallocarray(p, n, size);
	rec_tls.reallocarray_inner = 0;
	int err = errno;
	e.seq2 = rec_next_seq();
	e.result = (uintptr_t)r;
	end(t, &e, err);
	return r;
}

AR_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	if (REC_UNLIKELY(!rec_real.posix_memalign)) {
		rec_resolve();
		if (!rec_real.posix_memalign) {
			if (!align || (align & (align - 1)) || align % sizeof(void *))
				return EINVAL;
			*out = rec_boot_alloc(n, align);
			return *out ? 0 : ENOMEM;
		}
	}
	rec_thread_t *t = begin();
	if (!t)
		return rec_real.posix_memalign(out, align, n);
	int rc = rec_real.posix_memalign(out, align, n);
	int err = errno;
	ar_event_t e = EV(.op = AR_OP_POSIX_MEMALIGN, .align = align, .size = n,
			  .result = rc == 0 ? (uintptr_t)*out : 0, .error = (uint32_t)rc);
	e.seq = rec_next_seq();
	end(t, &e, err);
	return rc;
}

/* aligned_alloc, memalign, valloc, pvalloc: same shape. */
#define ALIGNED_HOOK(fn, OP, params, args, boot_align, ev_align, ev_size)                  \
	AR_EXPORT void *fn params                                                           \
	{                                                                                   \
		if (REC_UNLIKELY(!rec_real.fn)) {                                           \
			rec_resolve();                                                      \
			if (!rec_real.fn)                                                   \
				return rec_boot_alloc(ev_size, boot_align);                 \
		}                                                                           \
		rec_thread_t *t = begin();                                                  \
		if (!t)                                                                     \
			return rec_real.fn args;                                            \
		void *r = rec_real.fn args;                                                 \
		int err = errno;                                                            \
		ar_event_t e = EV(.op = OP, .align = ev_align, .size = ev_size, .result = (uintptr_t)r); \
		e.seq = rec_next_seq();                                                     \
		end(t, &e, err);                                                            \
		return r;                                                                   \
	}

ALIGNED_HOOK(aligned_alloc, AR_OP_ALIGNED_ALLOC, (size_t align, size_t n), (align, n),
	     (align && !(align & (align - 1)) ? align : 16), align, n)
ALIGNED_HOOK(memalign, AR_OP_MEMALIGN, (size_t align, size_t n), (align, n),
	     (align && !(align & (align - 1)) ? align : 16), align, n)
ALIGNED_HOOK(valloc, AR_OP_VALLOC, (size_t n), (n), 4096, 0, n)
ALIGNED_HOOK(pvalloc, AR_OP_PVALLOC, (size_t n), (n), 4096, 0, n)

AR_EXPORT size_t malloc_usable_size(void *p)
{
	if (p && rec_boot_owns(p))
		return rec_boot_size(p);
	if (REC_UNLIKELY(!rec_real.malloc_usable_size)) {
		rec_resolve();
		if (!rec_real.malloc_usable_size)
			return 0;
	}
	return rec_real.malloc_usable_size(p);
}

/* ---- process lifecycle hooks ---------------------------------------------------------- */
/* The next definition of a libc function, typed from its own declaration. */
#define REAL(name)                              \
	static __typeof__(name) *real_##name;   \
	if (!real_##name)                       \
		*(void **)&real_##name = dlsym(RTLD_NEXT, #name)

/* The exec family: close the trace first (the new image records into its
 * own file), and start a new one if the exec failed and we are still here.
 * The environment the new image gets keeps what recording needs even when
 * the program passes one without it (rec_exec_env); the forms that use
 * environ then go through their envp twin with that copy. The copy lives
 * on this stack: a vfork child must not map memory in its parent. */
#define EXEC_ENV(envp)                                                                  \
	size_t slots_ = rec_exec_env_slots(envp);                                       \
	char *arr_[slots_ < 8192 ? slots_ : 1];                                         \
	char pre_[4200];                                                                \
	char *const *env_ = slots_ < 8192 ? rec_exec_env(envp, arr_, slots_, pre_, sizeof pre_) : (envp)

#define EXEC_HOOK(name, params, call_same, call_env, envp)   \
	AR_EXPORT int name params                            \
	{                                                    \
		REAL(name);                                  \
		EXEC_ENV(envp);                              \
		int closed = rec_close_before("exec");       \
		int rc = env_ == (envp) ? call_same : call_env; \
		if (closed)                                  \
			rec_restart_after_failed_exec();     \
		return rc;                                   \
	}

extern char **environ;
static int real_execve_(const char *path, char *const argv[], char *const envp[])
{
	REAL(execve);
	return real_execve(path, argv, envp);
}
static int real_execvpe_(const char *file, char *const argv[], char *const envp[])
{
	REAL(execvpe);
	return real_execvpe(file, argv, envp);
}

EXEC_HOOK(execve, (const char *path, char *const argv[], char *const envp[]),
	  real_execve(path, argv, envp), real_execve(path, argv, env_), envp)
EXEC_HOOK(execv, (const char *path, char *const argv[]),
	  real_execv(path, argv), real_execve_(path, argv, env_), environ)
EXEC_HOOK(execvp, (const char *file, char *const argv[]),
	  real_execvp(file, argv), real_execvpe_(file, argv, env_), environ)
EXEC_HOOK(execvpe, (const char *file, char *const argv[], char *const envp[]),
	  real_execvpe(file, argv, envp), real_execvpe(file, argv, env_), envp)
EXEC_HOOK(fexecve, (int fd, char *const argv[], char *const envp[]),
	  real_fexecve(fd, argv, envp), real_fexecve(fd, argv, env_), envp)

/* posix_spawn and posix_spawnp reach the kernel's execve inside glibc, past
 * the hooks above: only their environment is ours to look after (the child
 * is a new process whose image opens its own trace). system() and popen()
 * pass environ the same internal way and are not covered. */
#define SPAWN_HOOK(name)                                                                          \
	AR_EXPORT int name(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,   \
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])  \
	{                                                                                         \
		REAL(name);                                                                       \
		EXEC_ENV(envp);                                                                   \
		return real_##name(pid, path, fa, attr, argv, env_);                              \
	}
SPAWN_HOOK(posix_spawn)
SPAWN_HOOK(posix_spawnp)

/* execl, execlp, execle: collect the variadic arguments on the stack, then
 * go through the array forms above (glibc's own versions would call the
 * internal execve directly, past our hook). */
#define COLLECT_ARGS(arg0, ap, argv, extra)                                      \
	size_t argc_ = 1;                                                        \
	va_start(ap, arg0);                                                      \
	while (va_arg(ap, const char *))                                         \
		argc_++;                                                         \
	va_end(ap);                                                              \
	const char *argv[argc_ + 1];                                             \
	argv[0] = arg0;                                                          \
	va_start(ap, arg0);                                                      \
	for (size_t i_ = 1; i_ <= argc_; i_++)                                   \
		argv[i_] = va_arg(ap, const char *);                             \
	extra;                                                                   \
	va_end(ap)

AR_EXPORT int execl(const char *path, const char *arg0, ...)
{
	va_list ap;
	COLLECT_ARGS(arg0, ap, argv, (void)0);
	return execv(path, (char *const *)argv);
}

AR_EXPORT int execlp(const char *file, const char *arg0, ...)
{
	va_list ap;
	COLLECT_ARGS(arg0, ap, argv, (void)0);
	return execvp(file, (char *const *)argv);
}

AR_EXPORT int execle(const char *path, const char *arg0, ...)
{
	va_list ap;
	char *const *envp;
	COLLECT_ARGS(arg0, ap, argv, envp = va_arg(ap, char *const *));
	return execve(path, (char *const *)argv, envp);
}

AR_EXPORT void _exit(int status)
{
	REAL(_exit);
	rec_close_before("_exit");
	real__exit(status);
	__builtin_unreachable();
}

AR_EXPORT void _Exit(int status)
{
	_exit(status);
}

/* dl_iterate_phdr, dlopen and dlclose hold the loader's dl_load_write_lock
 * for a while (a callback, a list update), and a fork child inherits it held
 * (glibc does not reset it): counted so that a child knows whether it may
 * unwind (rec_stacks.c). Otherwise plain calls. */
AR_EXPORT int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	REAL(dl_iterate_phdr);
	rec_loader_enter(1);
	int r = real_dl_iterate_phdr(cb, data);
	rec_loader_leave(1);
	return r;
}

AR_EXPORT int dlclose(void *h)
{
	REAL(dlclose);
	rec_loader_enter(0);
	int r = real_dlclose(h);
	rec_loader_leave(0);
	return r;
}

AR_EXPORT void *dlopen(const char *file, int flags)
{
	REAL(dlopen);
	rec_loader_enter(0);
	void *h = real_dlopen(file, flags);
	rec_loader_leave(0);
	if (h && !rec_tls.in_shim) {
		int saved = errno;
		rec_own_dlopened(h); /* its memory: a library of ours it needs is now the program's too */
		errno = saved;
	}
	if (h && rec_cfg.stack_depth && !rec_tls.in_shim && atomic_load(&rec_state) == REC_ON) {
		int saved = errno;
		rec_tls.in_shim = REC_SHIM_INTERNAL;
		rec_thread_t *t = rec_thread_self();
		if (t)
			rec_modules_scan(t);
		rec_tls.in_shim = 0;
		errno = saved;
	}
	return h;
}
