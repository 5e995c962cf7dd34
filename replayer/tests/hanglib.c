/*
 * libhang.so — an allocator that hangs, for tests/e2e/torture_replay_faults.sh:
 * the whole malloc API forwarded to glibc's own entry points, except that
 * heap call number ALLOCRR_TEST_HANG_AFTER (default 1000) and every later
 * one never return (the calling thread sleeps forever inside the call, as
 * a deadlocked allocator would). allocreplay's --timeout must kill the
 * worker and store the run as "timeout" while other allocators succeed.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

static _Atomic unsigned long calls;

static void tick(void)
{
	static unsigned long limit;
	if (!limit) {
		const char *e = getenv("ALLOCRR_TEST_HANG_AFTER");
		limit = e && *e ? strtoul(e, NULL, 10) : 1000;
		if (!limit)
			limit = 1;
	}
	if (atomic_fetch_add(&calls, 1) + 1 >= limit)
		for (;;)
			pause();
}

EXPORT void *malloc(size_t n) { tick(); return __libc_malloc(n); }
EXPORT void *calloc(size_t c, size_t n) { tick(); return __libc_calloc(c, n); }
EXPORT void *realloc(void *p, size_t n) { tick(); return __libc_realloc(p, n); }
EXPORT void free(void *p) { tick(); __libc_free(p); }
EXPORT void *memalign(size_t a, size_t n) { tick(); return __libc_memalign(a, n); }
EXPORT void *aligned_alloc(size_t a, size_t n) { tick(); return __libc_memalign(a, n); }
EXPORT void *valloc(size_t n) { tick(); return __libc_valloc(n); }
EXPORT void *pvalloc(size_t n) { tick(); return __libc_pvalloc(n); }
EXPORT int posix_memalign(void **out, size_t a, size_t n)
{
	tick();
	void *p = __libc_memalign(a, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}
