/*
 * libc_forward.h — for the fault-injecting test allocators (crashlib.c,
 * hanglib.c, nulllib.c): glibc's own entry points, which such a library
 * forwards to once it has decided not to misbehave, and the whole malloc
 * API defined as "call HOOK, then forward" for those whose fault happens
 * before the call (a crash, a hang).
 */
#ifndef AR_LIBC_FORWARD_H
#define AR_LIBC_FORWARD_H

#include <errno.h>
#include <stddef.h>

#define EXPORT __attribute__((visibility("default")))
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

#define LIBC_FORWARD_ALL(hook)                                                                          \
	EXPORT void *malloc(size_t n) { hook(); return __libc_malloc(n); }                             \
	EXPORT void *calloc(size_t c, size_t n) { hook(); return __libc_calloc(c, n); }                \
	EXPORT void *realloc(void *p, size_t n) { hook(); return __libc_realloc(p, n); }               \
	EXPORT void free(void *p) { hook(); __libc_free(p); }                                          \
	EXPORT void *memalign(size_t a, size_t n) { hook(); return __libc_memalign(a, n); }            \
	EXPORT void *aligned_alloc(size_t a, size_t n) { hook(); return __libc_memalign(a, n); }       \
	EXPORT void *valloc(size_t n) { hook(); return __libc_valloc(n); }                             \
	EXPORT void *pvalloc(size_t n) { hook(); return __libc_pvalloc(n); }                           \
	EXPORT int posix_memalign(void **out, size_t a, size_t n)                                      \
	{                                                                                               \
		hook();                                                                                 \
		void *p = __libc_memalign(a, n);                                                        \
		if (!p)                                                                                 \
			return ENOMEM;                                                                  \
		*out = p;                                                                               \
		return 0;                                                                               \
	}

#endif
