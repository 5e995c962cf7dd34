/*
 * rec_hooks.c — the public face of liballocrr-rec.so: the interposed heap
 * functions, process lifecycle hooks (fork, exec, _exit, dlopen), the
 * loader calls counted for fork's sake (dl_iterate_phdr, dlopen, dlclose)
 * and start-up.
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
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rec_internal.h"

extern char **environ;

#define AR_EXPORT __attribute__((visibility("default")))

rec_config_t rec_cfg;
_Atomic int rec_state;
pid_t rec_pid;
_Alignas(REC_CACHELINE) _Atomic uint64_t rec_seq_counter;
static char seq_pad[REC_CACHELINE] __attribute__((used)); /* keep the counter's line to itself */
uint64_t rec_start_mono_ns;
rec_real_t rec_real;

static _Atomic int init_state; /* 0 never, 1 running, 2 done */
static _Atomic int resolve_state;
static char prog_name[256] = "prog";

/* ---- small helpers ------------------------------------------------------------ */
size_t rec_strlcpy(char *dst, const char *src, size_t cap)
{
	size_t n = strlen(src);
	size_t c = n < cap - 1 ? n : cap - 1;
	memcpy(dst, src, c);
	dst[c] = 0;
	return n;
}

int rec_getenv_int(const char *name, int dflt)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return dflt;
	char *end;
	long v = strtol(s, &end, 10);
	return *end ? dflt : (int)v;
}

pid_t rec_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

pid_t rec_getpid(void)
{
	return (pid_t)syscall(SYS_getpid);
}

const char *rec_prog_name(void)
{
	return prog_name;
}

/* ---- resolving the real functions ------------------------------------------------- */
static void resolve(void)
{
	int z = 0;
	if (!atomic_compare_exchange_strong(&resolve_state, &z, 1))
		return; /* done, or being done by us (dlsym's own calls) or another thread */
	rec_real_t r;
	memset(&r, 0, sizeof r);
#define R(name) *(void **)&r.name = dlsym(RTLD_NEXT, #name)
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

/* ---- start-up ---------------------------------------------------------------------- */
static void read_prog_name(void)
{
	char buf[4096];
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	const char *b = strrchr(buf, '/');
	b = b ? b + 1 : buf;
	if (*b)
		rec_strlcpy(prog_name, b, sizeof prog_name);
}

static void read_config(void)
{
	const char *s;
	if ((s = getenv("ALLOCRR_OUTPUT")) != NULL)
		rec_strlcpy(rec_cfg.output, s, sizeof rec_cfg.output);
	if ((s = getenv("ALLOCRR_DIR")) != NULL && *s)
		rec_strlcpy(rec_cfg.dir, s, sizeof rec_cfg.dir);
	else if (!getcwd(rec_cfg.dir, sizeof rec_cfg.dir))
		rec_strlcpy(rec_cfg.dir, ".", sizeof rec_cfg.dir);
	if ((s = getenv("ALLOCRR_MANIFEST")) != NULL)
		rec_strlcpy(rec_cfg.manifest, s, sizeof rec_cfg.manifest);
	int depth = rec_getenv_int("ALLOCRR_STACKS", 0);
	if (depth < 0)
		depth = 0;
	if (depth > AR_STACK_MAX_DEPTH)
		depth = AR_STACK_MAX_DEPTH;
	rec_cfg.stack_depth = (unsigned)depth;
	rec_cfg.follow_exec = rec_getenv_int("ALLOCRR_FOLLOW", 1);
	rec_cfg.level = rec_getenv_int("ALLOCRR_LEVEL", 3);
	int ms = rec_getenv_int("ALLOCRR_FLUSH_MS", 200);
	rec_cfg.flush_ns = (uint64_t)(ms > 0 ? ms : 200) * 1000000u;
}

static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);

/* Initialise once; runs from the first hook call or the constructor,
 * whichever comes first, with in_shim set. */
static void rec_init(void)
{
	int z = 0;
	if (!atomic_compare_exchange_strong(&init_state, &z, 1))
		return;
	int saved = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	resolve();
	if (getenv("ALLOCRR_DISABLE")) {
		atomic_store(&init_state, 2);
		rec_tls.in_shim = saved;
		return;
	}
	rec_pid = rec_getpid();
	rec_start_mono_ns = rec_mono_ns();
	rec_clock_init();
	read_prog_name();
	read_config();
	if (rec_writer_init(0) == 0) {
		rec_stacks_init();
		pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
		atomic_store(&rec_state, REC_ON);
		rec_signals_init();
		rec_thread_t *t = rec_thread_self();
		if (t)
			rec_modules_scan(t);
	}
	atomic_store(&init_state, 2);
	rec_tls.in_shim = saved;
}

/* The environment is edited here by hand, never with setenv/unsetenv: a
 * program may define those itself, and symbol interposition then hands the
 * shim the program's. bash does: its versions work on its own variable
 * table, and before its main they change nothing, so ALLOCRR_OUTPUT
 * reached every program bash started, and each one's trace replaced the
 * first process's (found by tests/e2e/torture_rec_programs.sh). Edits are
 * in place, as glibc's own unsetenv makes them, so a program reading the
 * envp argument of main sees them too. */
static char **env_entry(const char *name)
{
	size_t len = strlen(name);
	for (char **ep = environ; ep && *ep; ep++)
		if (strncmp(*ep, name, len) == 0 && (*ep)[len] == '=')
			return ep;
	return NULL;
}

static void env_remove(const char *name)
{
	char **ep;
	while ((ep = env_entry(name)) != NULL)
		do
			ep[0] = ep[1];
		while (*ep++);
}

/* Drop our own entry from LD_PRELOAD (for --no-follow) so exec'ed images
 * run unrecorded, keeping whatever else the user preloaded. */
static void unpreload_self(void)
{
	const char *pre = getenv("LD_PRELOAD");
	if (!pre)
		return;
	char out[4096];
	size_t n = 0;
	const char *p = pre;
	while (*p) {
		while (*p == ' ' || *p == ':')
			p++;
		const char *e = p;
		while (*e && *e != ' ' && *e != ':')
			e++;
		size_t len = (size_t)(e - p);
		const char *base = p;
		for (const char *q = p; q < e; q++)
			if (*q == '/')
				base = q + 1;
		int ours = (size_t)(e - base) == strlen("liballocrr-rec.so") &&
			   memcmp(base, "liballocrr-rec.so", (size_t)(e - base)) == 0;
		if (len && !ours && n + len + 2 < sizeof out) {
			if (n)
				out[n++] = ' ';
			memcpy(out + n, p, len);
			n += len;
		}
		p = e;
	}
	out[n] = 0;
	/* out is the old value less our entry, never longer: rewritten in
	 * the string itself (the environment strings are writable). */
	char **ep = env_entry("LD_PRELOAD");
	if (n && ep && n <= strlen(*ep + sizeof "LD_PRELOAD"))
		memcpy(*ep + sizeof "LD_PRELOAD", out, n + 1);
	else
		env_remove("LD_PRELOAD");
}

__attribute__((constructor)) static void rec_ctor(void)
{
	rec_init();
	int saved = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	/* ALLOCRR_OUTPUT names this image's trace only: exec'ed images and
	 * forked children use ALLOCRR_DIR/PROG.PID.zst. */
	env_remove("ALLOCRR_OUTPUT");
	if (!rec_cfg.follow_exec)
		unpreload_self();
	if (atomic_load(&rec_state) == REC_ON)
		rec_writer_start();
	rec_tls.in_shim = saved;
}

__attribute__((destructor)) static void rec_dtor(void)
{
	if (atomic_load(&rec_state) != REC_ON || rec_getpid() != rec_pid)
		return;
	int saved = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	rec_writer_finish("exit", 10000);
	rec_tls.in_shim = saved;
}

/* A new trace for this process (a fork child, an image whose exec failed):
 * fresh writer and stack state, recording on, the module map again. */
static void record_anew(void)
{
	rec_writer_reset_child();
	rec_stacks_reset_child();
	atomic_store(&rec_state, REC_ON);
	rec_thread_t *t = rec_thread_self();
	if (t)
		rec_modules_scan(t);
}

/* glibc runs prepare handlers last registered first, the others in order;
 * ours is registered at start-up, usually before the program's, so the
 * program's prepare handlers (which may allocate and unwind) mostly run
 * before ours closes the gate, and any that run while it is closed do so on
 * the forking thread, which passes it (rec_stacks.c). */
static void atfork_prepare(void)
{
	int saved = errno;
	rec_stacks_fork_prepare();
	errno = saved;
}

static void atfork_parent(void)
{
	int saved = errno; /* fork's own errno when it failed */
	rec_stacks_fork_parent();
	errno = saved;
}

static void atfork_child(void)
{
	rec_stacks_fork_child(); /* first: whether this child may unwind at all */
	if (atomic_load(&rec_state) != REC_ON && atomic_load(&rec_state) != REC_CLOSING)
		return;
	int saved = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	atomic_store(&rec_state, REC_OFF);
	record_anew();
	rec_tls.in_shim = saved;
}

/* ---- the hot path --------------------------------------------------------------------- */
/* The calling thread's record when this call is to be recorded, else NULL. */
static inline rec_thread_t *begin(void)
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
	if (REC_UNLIKELY(atomic_load_explicit(&rec_state, memory_order_relaxed) != REC_ON)) {
		if (atomic_load_explicit(&init_state, memory_order_relaxed) != 0)
			return NULL;
		rec_init();
		if (atomic_load(&rec_state) != REC_ON)
			return NULL;
	}
	rec_tls.in_shim = REC_SHIM_HOOK;
	rec_thread_t *t = rec_thread_self();
	if (REC_UNLIKELY(!t))
		rec_tls.in_shim = 0;
	return t;
}

static inline void end(rec_thread_t *t, ar_event_t *e, int saved_errno)
{
	/* A failed call keeps its errno (posix_memalign sets e->error itself);
	 * realloc(p, 0) returning NULL freed p and did not fail (SPEC 5.3). */
	if (REC_UNLIKELY(!e->result) && e->op != AR_OP_FREE && !e->error) {
		int freed = e->ptr && (e->op == AR_OP_REALLOC ? e->size == 0
					: e->op == AR_OP_REALLOCARRAY && (e->count == 0 || e->size == 0));
		if (!freed)
			e->error = (uint32_t)saved_errno;
	}
	e->time_ns = rec_event_time_ns();
	if (rec_cfg.stack_depth && e->op != AR_OP_FREE)
		e->stack = rec_stack_capture(t);
	rec_record(t, e);
	rec_tls.in_shim = 0;
	errno = saved_errno;
}

#define EV(...) ((ar_event_t){__VA_ARGS__})

AR_EXPORT void *malloc(size_t n)
{
	if (REC_UNLIKELY(!rec_real.malloc)) {
		resolve();
		if (!rec_real.malloc)
			return rec_boot_alloc(n, 16);
	}
	rec_thread_t *t = begin();
	if (!t)
		return rec_real.malloc(n);
	void *r = rec_real.malloc(n);
	int err = errno;
	ar_event_t e = EV(.op = AR_OP_MALLOC, .size = n, .result = (uintptr_t)r);
	e.seq = rec_next_seq();
	end(t, &e, err);
	return r;
}

AR_EXPORT void free(void *p)
{
	if (REC_UNLIKELY(p && rec_boot_owns(p)))
		return;
	if (REC_UNLIKELY(!rec_real.free)) {
		resolve();
		if (!rec_real.free)
			return;
	}
	rec_thread_t *t = begin();
	if (!t) {
		rec_real.free(p);
		return;
	}
	int err = errno;
	ar_event_t e = EV(.op = AR_OP_FREE, .ptr = (uintptr_t)p);
	e.seq = rec_next_seq(); /* SPEC 4: before the real free */
	rec_real.free(p);
	end(t, &e, err);
}

AR_EXPORT void *calloc(size_t n, size_t size)
{
	if (REC_UNLIKELY(!rec_real.calloc)) {
		resolve();
		if (!rec_real.calloc) {
			if (size && n > SIZE_MAX / size)
				return NULL;
			return rec_boot_alloc(n * size, 16);
		}
	}
	rec_thread_t *t = begin();
	if (!t)
		return rec_real.calloc(n, size);
	void *r = rec_real.calloc(n, size);
	int err = errno;
	ar_event_t e = EV(.op = AR_OP_CALLOC, .count = n, .size = size, .result = (uintptr_t)r);
	e.seq = rec_next_seq();
	end(t, &e, err);
	return r;
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

AR_EXPORT void *realloc(void *p, size_t n)
{
	if (REC_UNLIKELY(p && rec_boot_owns(p)))
		return boot_realloc(p, n);
	if (REC_UNLIKELY(!rec_real.realloc)) {
		resolve();
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
	ar_event_t e = EV(.op = AR_OP_REALLOC, .ptr = (uintptr_t)p, .size = n);
	e.seq = rec_next_seq(); /* SPEC 4: p may be released by the call */
	void *r = rec_real.realloc(p, n);
	int err = errno;
	e.seq2 = rec_next_seq(); /* and the result exists only now */
	e.result = (uintptr_t)r;
	end(t, &e, err);
	return r;
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
		resolve();
		if (!rec_real.reallocarray) {
			errno = ENOMEM;
			return NULL;
		}
	}
	rec_thread_t *t = begin();
	if (!t)
		return rec_real.reallocarray(p, n, size);
	ar_event_t e = EV(.op = AR_OP_REALLOCARRAY, .ptr = (uintptr_t)p, .count = n, .size = size);
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
		resolve();
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
			resolve();                                                          \
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
		resolve();
		if (!rec_real.malloc_usable_size)
			return 0;
	}
	return rec_real.malloc_usable_size(p);
}

/* ---- process lifecycle -------------------------------------------------------------------- */
/* Called before an exec or _exit replaces or ends this image. Returns 1 if
 * the trace was closed (and recording may restart if the exec fails). */
static int close_before(const char *why)
{
	/* In a vfork child (or raw clone) we share the parent's memory: hands off. */
	if (atomic_load(&rec_state) != REC_ON || rec_getpid() != rec_pid || rec_tls.in_shim)
		return 0;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	rec_writer_finish(why, 10000);
	rec_tls.in_shim = 0;
	return 1;
}

/* The exec failed: this image goes on, so it gets a new trace file. */
static void restart_after_failed_exec(void)
{
	int saved = errno;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	for (int i = 0; i < 1000 && atomic_load(&rec_writer_running); i++) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	record_anew();
	rec_tls.in_shim = 0;
	errno = saved;
}

/* The next definition of a libc function, typed from its own declaration. */
#define REAL(name)                              \
	static __typeof__(name) *real_##name;   \
	if (!real_##name)                       \
		*(void **)&real_##name = dlsym(RTLD_NEXT, #name)

/* The exec family: close the trace first (the new image records into its
 * own file), and start a new one if the exec failed and we are still here. */
#define EXEC_HOOK(name, params, args)                      \
	AR_EXPORT int name params                          \
	{                                                  \
		REAL(name);                                \
		int closed = close_before("exec");         \
		int rc = real_##name args;                 \
		if (closed)                                \
			restart_after_failed_exec();       \
		return rc;                                 \
	}

EXEC_HOOK(execve, (const char *path, char *const argv[], char *const envp[]), (path, argv, envp))
EXEC_HOOK(execv, (const char *path, char *const argv[]), (path, argv))
EXEC_HOOK(execvp, (const char *file, char *const argv[]), (file, argv))
EXEC_HOOK(execvpe, (const char *file, char *const argv[], char *const envp[]), (file, argv, envp))
EXEC_HOOK(fexecve, (int fd, char *const argv[], char *const envp[]), (fd, argv, envp))

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
	close_before("_exit");
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
