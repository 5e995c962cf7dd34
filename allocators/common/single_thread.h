/*
 * single_thread.h — is the calling thread the only one in the process?
 *
 * glibc's own malloc skips its atomic instructions while the process has one
 * thread (SINGLE_THREAD_P); our cores do the same where a shared structure
 * would otherwise need a lock or a locked instruction: a `lock cmpxchg16b`
 * per pool malloc and free cost more than all the rest of the call
 * (docs/BENCHMARKS.md, issue 19, small blocks).
 *
 * Why it is safe: glibc (2.32 and later) clears __libc_single_threaded in
 * pthread_create before the new thread exists, in the thread that creates
 * it. A thread that reads true is therefore the only thread, and it cannot
 * be in the middle of a plain update when the second thread appears: that
 * thread is created by this one, after its update, and pthread_create
 * publishes every earlier write to it. The flag never goes back to true
 * while a second thread runs. Threads made with a raw clone() bypass the
 * flag, as they bypass glibc's malloc's own check.
 *
 * Without the flag (other C libraries, glibc before 2.32) the answer is
 * always "no", and every path stays the thread-safe one.
 */
#ifndef AR_ALLOC_SINGLE_THREAD_H
#define AR_ALLOC_SINGLE_THREAD_H

#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define AR_HAVE_SINGLE_THREADED 1
#endif
#endif

/* 1 when the calling thread is certainly the process's only thread. */
static inline int ar_one_thread(void)
{
#if defined(AR_HAVE_SINGLE_THREADED) && !defined(__SANITIZE_THREAD__)
	return __libc_single_threaded;
#else
	return 0;
#endif
}

#endif
