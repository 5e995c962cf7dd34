/*
 * util.h — the small helpers every allocator file shares: branch hints,
 * symbol visibility, power-of-two arithmetic and the one fatal-error path.
 *
 * Invariants: nothing here allocates or takes a lock, so it is usable from
 * any point inside malloc, including before initialisation.
 */
#ifndef AR_ALLOC_UTIL_H
#define AR_ALLOC_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define AR_LIKELY(x) __builtin_expect(!!(x), 1)
#define AR_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* Only the malloc API and the statistics function leave the .so; everything
 * else is compiled with -fvisibility=hidden. */
#define AR_EXPORT __attribute__((visibility("default")))

/* Every block we return is aligned to this (glibc's MALLOC_ALIGNMENT on x86_64). */
#define AR_MIN_ALIGN ((size_t)16)

/* The largest request we try to serve; glibc refuses anything above
 * PTRDIFF_MAX with ENOMEM, and staying well below SIZE_MAX lets the cores add
 * headers and alignment slack without overflow checks on every path. */
#define AR_MAX_REQUEST ((size_t)PTRDIFF_MAX - ((size_t)1 << 32))

static inline int ar_is_pow2(size_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

/* Round n up to a multiple of a (a power of two); the caller guarantees no overflow. */
static inline size_t ar_align_up(size_t n, size_t a)
{
	return (n + a - 1) & ~(a - 1);
}

static inline uintptr_t ar_align_up_ptr(uintptr_t p, size_t a)
{
	return (p + a - 1) & ~(uintptr_t)(a - 1);
}

/* Smallest power of two >= x, for 1 <= x <= SIZE_MAX/2 + 1. */
static inline size_t ar_next_pow2(size_t x)
{
	return x <= 1 ? 1 : (size_t)1 << (64 - __builtin_clzll((unsigned long long)(x - 1)));
}

/* Write "allocrr: <msg>\n" to stderr with write(2) (no stdio, no malloc). */
void ar_warn(const char *msg);
/* Report heap corruption or misuse (an invalid free) and abort: continuing
 * would hand out overlapping memory. */
_Noreturn void ar_fatal(const char *msg);

#endif
