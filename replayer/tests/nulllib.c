/*
 * libnull.so — an allocator that runs out of memory, for
 * tests/e2e/torture_replay_faults.sh: the whole malloc API forwarded to
 * glibc's own entry points, except that once ALLOCRR_TEST_NULL_AFTER heap
 * calls (default 0) have been made, each allocation fails (NULL, errno
 * ENOMEM) with probability ALLOCRR_TEST_NULL_PERMILLE / 1000 (default 1000:
 * every one), drawn from a generator seeded by ALLOCRR_TEST_NULL_SEED
 * (default 1), so a replay sees intermittent NULLs at points that repeat.
 * free never fails, and neither does realloc(p, 0).
 *
 * With ALLOCRR_TEST_NULL_COUNT=FILE, the process writes "<calls> <nulls>"
 * to FILE when it exits normally: the test compares nulls with the
 * worker's failed_allocs, and learns how many calls start-up makes.
 * The counters are C11 atomics (replay threads call in parallel); the
 * decision for call n depends only on the seed and n.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "libc_forward.h"

static _Atomic unsigned long calls, nulls;
static unsigned long after, permille = 1000, seed = 1;
static _Atomic int configured;

static unsigned long env(const char *name, unsigned long dflt)
{
	const char *e = getenv(name); /* getenv does not allocate */
	return e && *e ? strtoul(e, NULL, 10) : dflt;
}

/* 1 when this allocation should fail. */
static int fail_now(void)
{
	if (!atomic_load(&configured)) {
		after = env("ALLOCRR_TEST_NULL_AFTER", 0);
		permille = env("ALLOCRR_TEST_NULL_PERMILLE", 1000);
		seed = env("ALLOCRR_TEST_NULL_SEED", 1);
		atomic_store(&configured, 1);
	}
	unsigned long n = atomic_fetch_add(&calls, 1) + 1;
	if (n <= after)
		return 0;
	/* splitmix64 of (seed, call number): the same calls fail every run */
	unsigned long long x = (unsigned long long)seed * 0x9E3779B97F4A7C15ull + n;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	x ^= x >> 31;
	if (x % 1000 >= permille)
		return 0;
	atomic_fetch_add(&nulls, 1);
	errno = ENOMEM;
	return 1;
}

EXPORT void *malloc(size_t n) { return fail_now() ? NULL : __libc_malloc(n); }
EXPORT void *calloc(size_t c, size_t n) { return fail_now() ? NULL : __libc_calloc(c, n); }
EXPORT void *realloc(void *p, size_t n)
{
	if (p && !n) { /* a free: never fails */
		atomic_fetch_add(&calls, 1);
		return __libc_realloc(p, n);
	}
	return fail_now() ? NULL : __libc_realloc(p, n);
}
EXPORT void free(void *p)
{
	atomic_fetch_add(&calls, 1);
	__libc_free(p);
}
EXPORT void *memalign(size_t a, size_t n) { return fail_now() ? NULL : __libc_memalign(a, n); }
EXPORT void *aligned_alloc(size_t a, size_t n) { return fail_now() ? NULL : __libc_memalign(a, n); }
EXPORT void *valloc(size_t n) { return fail_now() ? NULL : __libc_valloc(n); }
EXPORT void *pvalloc(size_t n) { return fail_now() ? NULL : __libc_pvalloc(n); }
EXPORT int posix_memalign(void **out, size_t a, size_t n)
{
	if (fail_now())
		return ENOMEM;
	void *p = __libc_memalign(a, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

__attribute__((destructor)) static void write_count(void)
{
	const char *path = getenv("ALLOCRR_TEST_NULL_COUNT");
	if (!path || !*path)
		return;
	char line[64];
	int len = snprintf(line, sizeof line, "%lu %lu\n", atomic_load(&calls), atomic_load(&nulls));
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)len) != len)
		(void)unlink(path); /* a short count file would mislead the test */
	close(fd);
}
