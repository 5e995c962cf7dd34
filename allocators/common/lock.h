/*
 * lock.h — the mutex every allocator uses, and how fork resets it.
 *
 * An adaptive pthread mutex: allocator critical sections are a few dozen
 * instructions, so spinning briefly before sleeping beats an immediate futex
 * wait. pthread_mutex_* never call malloc, so they are safe inside malloc.
 *
 * Fork: the atfork prepare handler takes every lock, so no other thread is
 * inside the heap when the address space is copied; the child, which has
 * only the forking thread, re-initialises them (unlocking a mutex whose
 * owner thread does not exist in the child is not defined behaviour).
 */
#ifndef AR_ALLOC_LOCK_H
#define AR_ALLOC_LOCK_H

#include <pthread.h>

typedef pthread_mutex_t ar_lock_t;

#define AR_LOCK_INIT PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP

static inline void ar_lock(ar_lock_t *l)
{
	pthread_mutex_lock(l);
}

static inline void ar_unlock(ar_lock_t *l)
{
	pthread_mutex_unlock(l);
}

/* Fork child only: the lock is held by the (copied) prepare handler. */
static inline void ar_lock_reinit(ar_lock_t *l)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(l, &a);
	pthread_mutexattr_destroy(&a);
}

#endif
