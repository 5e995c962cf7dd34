/*
 * librec_count.so — an independent second opinion for the recorder tests:
 * a preload shim that only counts heap calls per function and, when the
 * process image ends (exit, _exit, exec), appends one line to the file named
 * by REC_COUNT_OUT:  "PID malloc N calloc N realloc N ...".
 *
 * It shares no code with the recorder on purpose. Like the recorder it
 * counts calls made through the public symbols (so also libc's internal
 * uses of malloc) but not calls nested inside another heap call, ignores
 * calls made while resolving the real functions,
 * starts from zero in a fork child and skips vfork children (which share
 * the parent's memory).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <pthread.h>

#define EXPORT __attribute__((visibility("default")))
enum { MALLOC, CALLOC, REALLOC, REALLOCARRAY, FREE, POSIX_MEMALIGN, ALIGNED_ALLOC, MEMALIGN, VALLOC, PVALLOC, NOPS };
static const char *names[NOPS] = {"malloc", "calloc", "realloc", "reallocarray", "free",
				  "posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc"};
static _Atomic unsigned long counts[NOPS];
static void *fn[NOPS];
static _Atomic int resolving;
static pid_t mypid;
static __thread int busy;

static char pool[65536];
static _Atomic size_t pool_used;
static void *pool_alloc(size_t n)
{
	size_t off = atomic_fetch_add(&pool_used, (n + 15) & ~(size_t)15);
	return off + n <= sizeof pool ? pool + off : NULL;
}
static int in_pool(void *p)
{
	return (char *)p >= pool && (char *)p < pool + sizeof pool;
}

static void resolve(void)
{
	if (fn[FREE] || atomic_exchange(&resolving, 1))
		return;
	for (int i = NOPS - 1; i >= 0; i--)
		fn[i] = dlsym(RTLD_NEXT, names[i]);
}

static void dump(void)
{
	const char *out = getenv("REC_COUNT_OUT");
	if (!out || (pid_t)syscall(SYS_getpid) != mypid)
		return;
	char line[1024];
	int n = snprintf(line, sizeof line, "%d", (int)mypid);
	for (int i = 0; i < NOPS; i++)
		n += snprintf(line + n, sizeof line - (size_t)n, " %s %lu", names[i], atomic_load(&counts[i]));
	line[n++] = '\n';
	int fd = open(out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		ssize_t w = write(fd, line, (size_t)n);
		(void)w;
		close(fd);
	}
	for (int i = 0; i < NOPS; i++)
		atomic_store(&counts[i], 0);
}

static void child(void)
{
	mypid = (pid_t)syscall(SYS_getpid);
	for (int i = 0; i < NOPS; i++)
		atomic_store(&counts[i], 0);
}

__attribute__((constructor)) static void init(void)
{
	mypid = (pid_t)syscall(SYS_getpid);
	busy = 1;
	pthread_atfork(NULL, NULL, child);
	busy = 0;
}
__attribute__((destructor)) static void fini(void) { dump(); }

/* Count a call unless it is nested in another heap call (glibc's
 * reallocarray calls realloc, for instance): the program made one call. */
#define CALL(i, type, args)                                                                 \
	({                                                                                  \
		if (!busy)                                                                  \
			atomic_fetch_add_explicit(&counts[i], 1, memory_order_relaxed);     \
		busy++;                                                                     \
		__typeof__(((type)0) args) r_ = ((type)fn[i]) args;                         \
		busy--;                                                                     \
		r_;                                                                         \
	})

EXPORT void *malloc(size_t n)
{
	resolve();
	if (!fn[MALLOC]) return pool_alloc(n);
	return CALL(MALLOC, void *(*)(size_t), (n));
}
EXPORT void *calloc(size_t a, size_t b)
{
	resolve();
	if (!fn[CALLOC]) return pool_alloc(a * b);
	return CALL(CALLOC, void *(*)(size_t, size_t), (a, b));
}
EXPORT void free(void *p)
{
	if (in_pool(p)) return;
	resolve();
	if (!fn[FREE]) return;
	if (!busy)
		atomic_fetch_add_explicit(&counts[FREE], 1, memory_order_relaxed);
	busy++;
	((void (*)(void *))fn[FREE])(p);
	busy--;
}
EXPORT void *realloc(void *p, size_t n)
{
	resolve();
	return CALL(REALLOC, void *(*)(void *, size_t), (p, n));
}
EXPORT void *reallocarray(void *p, size_t a, size_t b)
{
	resolve();
	return CALL(REALLOCARRAY, void *(*)(void *, size_t, size_t), (p, a, b));
}
EXPORT int posix_memalign(void **out, size_t a, size_t n)
{
	resolve();
	return CALL(POSIX_MEMALIGN, int (*)(void **, size_t, size_t), (out, a, n));
}
EXPORT void *aligned_alloc(size_t a, size_t n)
{
	resolve();
	return CALL(ALIGNED_ALLOC, void *(*)(size_t, size_t), (a, n));
}
EXPORT void *memalign(size_t a, size_t n)
{
	resolve();
	return CALL(MEMALIGN, void *(*)(size_t, size_t), (a, n));
}
EXPORT void *valloc(size_t n)
{
	resolve();
	return CALL(VALLOC, void *(*)(size_t), (n));
}
EXPORT void *pvalloc(size_t n)
{
	resolve();
	return CALL(PVALLOC, void *(*)(size_t), (n));
}

/* The image ends here too: count what it did before. */
#define EXEC_HOOK(name, params, args)                                      \
	EXPORT int name params                                             \
	{                                                                  \
		static int (*real) params;                                 \
		if (!real) *(void **)&real = dlsym(RTLD_NEXT, #name);      \
		dump();                                                    \
		return real args;                                          \
	}
EXEC_HOOK(execve, (const char *p, char *const a[], char *const e[]), (p, a, e))
EXEC_HOOK(execv, (const char *p, char *const a[]), (p, a))
EXEC_HOOK(execvp, (const char *p, char *const a[]), (p, a))
EXEC_HOOK(execvpe, (const char *p, char *const a[], char *const e[]), (p, a, e))

EXPORT void _exit(int st)
{
	static void (*real)(int);
	if (!real) *(void **)&real = dlsym(RTLD_NEXT, "_exit");
	dump();
	real(st);
	__builtin_unreachable();
}
