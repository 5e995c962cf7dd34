/*
 * api.c — the malloc API every liballocrr-NAME.so exports, written once for
 * the four allocators. It owns everything that is about the contract rather
 * than about managing memory:
 *
 *   - glibc-compatible edge cases: malloc(0) returns a unique block;
 *     realloc(p, 0) frees p and returns NULL (glibc's REALLOC_ZERO_BYTES_FREES);
 *     realloc(NULL, n) is malloc(n); sizes above PTRDIFF_MAX fail with ENOMEM;
 *     calloc and reallocarray check n * size for overflow (ENOMEM);
 *     posix_memalign returns EINVAL unless the alignment is a power of two
 *     multiple of sizeof(void *), and leaves *memptr alone on failure;
 *     memalign and aligned_alloc round a non-power-of-two alignment up, and
 *     fail with EINVAL above SIZE_MAX/2+1, like glibc 2.36 (glibc 2.38 made
 *     aligned_alloc reject such alignments; we follow the glibc we run on);
 *     valloc/pvalloc align to the page, pvalloc also rounds the size;
 *     free() preserves errno (glibc since 2.33).
 *   - errno: ENOMEM whenever NULL is returned for lack of memory.
 *   - initialisation without recursion: the first call runs ar_core_init()
 *     (which must not allocate), marks the heap ready, and only then calls
 *     pthread_atfork(), which may itself call malloc.
 *   - fork safety: prepare takes every allocator lock so the child's copy of
 *     the heap is consistent; the child re-initialises the locks.
 *   - the statistics export, and the optional one-line report at exit
 *     (ALLOCRR_ALLOC_STATS_FILE) that proves a program really ran on us.
 *
 * The glibc-internal names (__libc_malloc, ...) are exported as aliases, as
 * tcmalloc and mimalloc do, so code calling them directly stays on one heap.
 *
 * The entry points reach the core through the AR_API_* names of debug.h:
 * the core itself, or in the debug build (-DAR_ALLOC_DEBUG) debug.c's checks
 * in front of it.
 *
 * Compiled with -DAR_API_PREFIX=allocrr_pool_ (say), the same file exports the
 * prefixed API instead (allocrr_pool_malloc, allocrr_pool_free, ...,
 * allocrr_pool_allocator_stats) and neither the glibc aliases nor the report at
 * exit: liballocrr-NAME-prefixed.so, which allocreplay --route loads beside
 * another malloc in one worker (allocators/module.mk, docs/ALLOCATORS.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "debug.h"
#include "map_cache.h"
#include "os.h"
#include "util.h"

/* AR_SYM(malloc): malloc, or with AR_API_PREFIX the prefixed name. */
#ifdef AR_API_PREFIX
#define AR_SYM_CAT2(a, b) a##b
#define AR_SYM_CAT(a, b) AR_SYM_CAT2(a, b)
#define AR_SYM(name) AR_SYM_CAT(AR_API_PREFIX, name)
#define AR_STATS_SYM AR_SYM(allocator_stats)
#else
#define AR_SYM(name) name
#define AR_STATS_SYM ar_allocator_stats
#endif

/* The public prototypes (malloc.h declares the GNU ones). */
void *memalign(size_t align, size_t size);
void *valloc(size_t size);
void *pvalloc(size_t size);
size_t malloc_usable_size(void *p);
#ifdef AR_API_PREFIX
void *AR_SYM(malloc)(size_t size);
void AR_SYM(free)(void *p);
void *AR_SYM(calloc)(size_t n, size_t size);
void *AR_SYM(realloc)(void *p, size_t size);
void *AR_SYM(reallocarray)(void *p, size_t n, size_t size);
int AR_SYM(posix_memalign)(void **memptr, size_t align, size_t size);
void *AR_SYM(memalign)(size_t align, size_t size);
void *AR_SYM(aligned_alloc)(size_t align, size_t size);
void *AR_SYM(valloc)(size_t size);
void *AR_SYM(pvalloc)(size_t size);
size_t AR_SYM(malloc_usable_size)(void *p);
int AR_STATS_SYM(ar_alloc_stats_t *out);
#endif

/* ---- initialisation ---------------------------------------------------- */

enum { INIT_NONE, INIT_RUNNING, INIT_READY };
static _Atomic int init_state;
static char stats_file[PATH_MAX];

static void fork_prepare(void)
{
	AR_DBG_FORK_PREPARE();
	ar_core_fork_prepare();
	ar_mcache_fork_prepare();
	ar_os_fork_prepare();
}

static void fork_parent(void)
{
	ar_os_fork_parent();
	ar_mcache_fork_parent();
	ar_core_fork_parent();
	AR_DBG_FORK_PARENT();
}

static void fork_child(void)
{
	ar_os_fork_child();
	ar_mcache_fork_child();
	ar_core_fork_child();
	AR_DBG_FORK_CHILD();
}

static __attribute__((noinline, cold)) void init_slow(void)
{
	int expected = INIT_NONE;
	if (!atomic_compare_exchange_strong(&init_state, &expected, INIT_RUNNING)) {
		/* Another thread is initialising; nothing in ar_core_init can
		 * call back into malloc, so this thread is not that one. */
		while (atomic_load_explicit(&init_state, memory_order_acquire) != INIT_READY)
			sched_yield();
		return;
	}
	ar_os_init();
	ar_mcache_init();
	const char *f = getenv("ALLOCRR_ALLOC_STATS_FILE");
	if (f && strlen(f) < sizeof stats_file)
		strcpy(stats_file, f);
	ar_core_init();
	AR_DBG_INIT();
	atomic_store_explicit(&init_state, INIT_READY, memory_order_release);
	/* Registered after READY: glibc may allocate inside pthread_atfork. */
	if (pthread_atfork(fork_prepare, fork_parent, fork_child) != 0)
		ar_warn("pthread_atfork failed: fork() from a threaded program may deadlock");
}

static inline void ensure_init(void)
{
	if (AR_UNLIKELY(atomic_load_explicit(&init_state, memory_order_acquire) != INIT_READY))
		init_slow();
}

/* ---- shared helpers ------------------------------------------------------ */

void *ar_realloc_by_copy(void *p, size_t size)
{
	void *q = ar_core_malloc(size);
	if (!q)
		return NULL;
	size_t old = ar_core_usable_size(p);
	memcpy(q, p, old < size ? old : size);
	AR_API_RETIRE(p); /* the debug build quarantines p rather than freeing it */
	return q;
}

/* The bodies of malloc and realloc, called directly from the other entry
 * points so they never go through the PLT to some other malloc. */
/* NULL with errno ENOMEM, out of line: malloc's fast path then keeps
 * nothing across its call into the core and saves no register. */
static __attribute__((noinline, cold)) void *no_memory(void)
{
	errno = ENOMEM;
	return NULL;
}

static __attribute__((noinline)) void *malloc_rare_size(size_t size)
{
	if (size > AR_MAX_REQUEST)
		return no_memory();
	void *p = AR_API_MALLOC(1);
	return p ? p : no_memory();
}

static inline void *malloc_impl(size_t size)
{
	ensure_init();
	/* One test for both sizes that need care, 0 (a unique block) and above
	 * the limit: size - 1 wraps for 0. */
	if (AR_UNLIKELY(size - 1 >= AR_MAX_REQUEST))
		return malloc_rare_size(size);
	void *p = AR_API_MALLOC(size);
	return AR_LIKELY(p != NULL) ? p : no_memory();
}

static inline void *realloc_impl(void *p, size_t size)
{
	if (!p)
		return malloc_impl(size);
	if (size == 0) {
		AR_API_FREE(p);
		return NULL;
	}
	if (AR_UNLIKELY(size > AR_MAX_REQUEST)) {
		errno = ENOMEM;
		return NULL;
	}
	void *q = AR_API_REALLOC(p, size);
	if (AR_UNLIKELY(!q))
		errno = ENOMEM;
	return q;
}

/* memalign's rules, shared by every aligned entry point. align > 0. */
static void *memalign_impl(size_t align, size_t size)
{
	ensure_init();
	if (align <= AR_MIN_ALIGN)
		return malloc_impl(size);
	if (align > SIZE_MAX / 2 + 1) {
		errno = EINVAL;
		return NULL;
	}
	if (!ar_is_pow2(align))
		align = ar_next_pow2(align);
	if (size > AR_MAX_REQUEST) {
		errno = ENOMEM;
		return NULL;
	}
	void *p = AR_API_MEMALIGN(align, size ? size : 1);
	if (AR_UNLIKELY(!p))
		errno = ENOMEM;
	return p;
}

/* ---- the exported API ------------------------------------------------------ */

AR_EXPORT void *AR_SYM(malloc)(size_t size)
{
	return malloc_impl(size);
}

AR_EXPORT void AR_SYM(free)(void *p)
{
	if (AR_LIKELY(p != NULL))
		AR_API_FREE(p);
}

AR_EXPORT void *AR_SYM(calloc)(size_t n, size_t size)
{
	size_t bytes;
	ensure_init();
	if (AR_UNLIKELY(__builtin_mul_overflow(n, size, &bytes) || bytes > AR_MAX_REQUEST)) {
		errno = ENOMEM;
		return NULL;
	}
	void *p = AR_API_CALLOC(bytes ? bytes : 1);
	if (AR_UNLIKELY(!p))
		errno = ENOMEM;
	return p;
}

AR_EXPORT void *AR_SYM(realloc)(void *p, size_t size)
{
	return realloc_impl(p, size);
}

AR_EXPORT void *AR_SYM(reallocarray)(void *p, size_t n, size_t size)
{
	size_t bytes;
	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc_impl(p, bytes);
}

AR_EXPORT int AR_SYM(posix_memalign)(void **memptr, size_t align, size_t size)
{
	if (align < sizeof(void *) || !ar_is_pow2(align))
		return EINVAL;
	int saved = errno;
	void *p = memalign_impl(align, size);
	if (!p)
		return ENOMEM; /* errno says ENOMEM too, as under glibc */
	errno = saved;
	*memptr = p;
	return 0;
}

AR_EXPORT void *AR_SYM(memalign)(size_t align, size_t size)
{
	return memalign_impl(align ? align : 1, size);
}

AR_EXPORT void *AR_SYM(aligned_alloc)(size_t align, size_t size)
{
	return memalign_impl(align ? align : 1, size);
}

AR_EXPORT void *AR_SYM(valloc)(size_t size)
{
	ensure_init();
	return memalign_impl(ar_page_size, size);
}

AR_EXPORT void *AR_SYM(pvalloc)(size_t size)
{
	size_t rounded;
	ensure_init();
	if (__builtin_add_overflow(size, ar_page_size - 1, &rounded)) {
		errno = ENOMEM;
		return NULL;
	}
	return memalign_impl(ar_page_size, rounded & ~(ar_page_size - 1));
}

AR_EXPORT size_t AR_SYM(malloc_usable_size)(void *p)
{
	return p ? AR_API_USABLE_SIZE(p) : 0;
}

#ifndef AR_API_PREFIX
/* glibc's internal names, for programs that call them directly. */
AR_EXPORT void *__libc_malloc(size_t size) __attribute__((alias("malloc"), copy(malloc)));
AR_EXPORT void __libc_free(void *p) __attribute__((alias("free"), copy(free)));
AR_EXPORT void *__libc_calloc(size_t n, size_t size) __attribute__((alias("calloc"), copy(calloc)));
AR_EXPORT void *__libc_realloc(void *p, size_t size) __attribute__((alias("realloc"), copy(realloc)));
AR_EXPORT void *__libc_memalign(size_t align, size_t size) __attribute__((alias("memalign"), copy(memalign)));
AR_EXPORT void *__libc_valloc(size_t size) __attribute__((alias("valloc"), copy(valloc)));
AR_EXPORT void *__libc_pvalloc(size_t size) __attribute__((alias("pvalloc"), copy(pvalloc)));
#endif

/* ---- statistics -------------------------------------------------------------- */

AR_EXPORT int AR_STATS_SYM(ar_alloc_stats_t *out)
{
	if (!out)
		return -1;
	ensure_init();
	memset(out, 0, sizeof *out);
	out->version = AR_ALLOC_STATS_VERSION;
	strncpy(out->allocator, ar_core_name, sizeof out->allocator - 1);
	ar_os_stats(out);
	ar_core_stats(out);
	return 0;
}

/*
 * With ALLOCRR_ALLOC_STATS_FILE set, every process that exits normally
 * appends one line to that file: which allocator, which program, how many
 * blocks it served. Tests use it to prove a real program (and each program
 * it spawned) allocated through us. snprintf with these conversions does
 * not allocate.
 */
#ifndef AR_API_PREFIX /* a prefixed heap is not the process's: no line of its own */
__attribute__((destructor)) static void report_at_exit(void)
{
	if (!stats_file[0] || atomic_load(&init_state) != INIT_READY)
		return;
	ar_alloc_stats_t s;
	AR_STATS_SYM(&s);
	char exe[PATH_MAX], line[PATH_MAX + 512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
	int len = snprintf(line, sizeof line,
			   "allocrr-stats pid=%ld allocator=%s exe=%s allocs_total=%llu frees_total=%llu "
			   "bytes_in_use=%llu bytes_mapped=%llu bytes_mapped_peak=%llu\n",
			   (long)getpid(), s.allocator, exe, (unsigned long long)s.allocs_total,
			   (unsigned long long)s.frees_total, (unsigned long long)s.bytes_in_use,
			   (unsigned long long)s.bytes_mapped, (unsigned long long)s.bytes_mapped_peak);
	int saved = errno;
	int fd = open(stats_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		ssize_t w = write(fd, line, len > 0 && (size_t)len < sizeof line ? (size_t)len : 0);
		(void)w;
		close(fd);
	}
	errno = saved;
}
#endif
