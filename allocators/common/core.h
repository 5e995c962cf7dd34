/*
 * core.h — the contract between the shared malloc API (api.c) and one
 * allocator. Each liballocrr-NAME.so links api.c with exactly one core that
 * defines these functions; api.c does everything the four have in common
 * (argument checks, errno, alignment rules, calloc overflow, realloc edge
 * cases, initialisation, fork handlers, the exported symbols), so a core only
 * manages memory.
 *
 * Every function except ar_core_init is called after ar_core_init returned.
 * Sizes passed in are in [1, AR_MAX_REQUEST]; pointers are non-NULL and were
 * returned by this core. A core never sets errno: api.c sets ENOMEM when it
 * returns NULL.
 */
#ifndef AR_ALLOC_CORE_H
#define AR_ALLOC_CORE_H

#include <stddef.h>

#include "ar_alloc.h"

/* Name reported in ar_alloc_stats_t.allocator ("pool", ...). */
extern const char ar_core_name[];

/* Read tunables and set up global state. Runs once, before the first
 * allocation, and must not call malloc (nothing is ready yet). */
void ar_core_init(void);

/* A 16-byte aligned block of at least size bytes, or NULL. */
void *ar_core_malloc(size_t size);

/* Like ar_core_malloc, zero-filled. */
void *ar_core_calloc(size_t size);

/* A block of at least size bytes aligned to align (a power of two > 16), or NULL. */
void *ar_core_memalign(size_t align, size_t size);

void ar_core_free(void *p);

/* Resize p to at least size bytes, in place when possible; returns the block
 * (p or a new one holding p's contents) or NULL with p untouched. */
void *ar_core_realloc(void *p, size_t size);

size_t ar_core_usable_size(const void *p);

/* pthread_atfork handlers: prepare takes every lock of the core; parent
 * releases them; child re-initialises them (see lock.h). */
void ar_core_fork_prepare(void);
void ar_core_fork_parent(void);
void ar_core_fork_child(void);

/* Fill the core's part of out (api.c has zeroed it and added os.c's). */
void ar_core_stats(ar_alloc_stats_t *out);

/* Shared by cores: realloc by allocating size bytes, copying
 * min(usable(p), size) bytes and freeing p. */
void *ar_realloc_by_copy(void *p, size_t size);

#endif
