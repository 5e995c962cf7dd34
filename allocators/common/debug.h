/*
 * debug.h — the debug build of our allocators (liballocrr-NAME-debug.so):
 * the same sources compiled with -DAR_ALLOC_DEBUG, which routes every API
 * call through debug.c's checks before it reaches the core. In the spirit of
 * jemalloc's opt.junk, mimalloc's MI_DEBUG and glibc's MALLOC_CHECK_, from
 * outside the core so the four allocators share one implementation:
 *
 *   - new blocks are filled with AR_DBG_ALLOC_BYTE (reads of uninitialised
 *     memory show), calloc'd ones stay zero;
 *   - every block gets at least AR_DBG_GUARD guard bytes after the requested
 *     size (AR_DBG_GUARD_BYTE up to the end of the core's block), checked on
 *     free and realloc: an overflow by one byte aborts;
 *   - freed blocks are filled with AR_DBG_FREE_BYTE and held in a FIFO
 *     quarantine; when a block leaves it to be reused by the core (and at
 *     exit) the fill is verified: a write after free aborts;
 *   - a table of live blocks (address -> requested size) makes double free,
 *     free of a pointer we never returned (interior, stack, static, another
 *     heap's) and the core handing out a block that is still live exact,
 *     for every core, without touching the pointer's memory.
 *
 * Every violation prints one line on stderr naming the allocator, the check,
 * the address and the size, then abort()s. docs/ALLOCATORS.md, "Debug
 * build", says what each check catches and what it cannot.
 *
 * In the normal build every AR_API_* macro below is the core function itself
 * and the hooks are empty: the debug code compiles out completely.
 */
#ifndef AR_ALLOC_DEBUG_H
#define AR_ALLOC_DEBUG_H

#include <stddef.h>

#include "core.h"

#ifdef AR_ALLOC_DEBUG

#define AR_DBG_ALLOC_BYTE 0xa5 /* new, uninitialised bytes */
#define AR_DBG_FREE_BYTE 0x5a  /* freed bytes */
#define AR_DBG_GUARD_BYTE 0xfd /* guard bytes after the requested size */
#define AR_DBG_GUARD ((size_t)16)

/* Read ALLOCRR_DEBUG_QUARANTINE; called once after ar_core_init. */
void ar_dbg_init(void);

/* The core's entry points with the checks around them; same contracts as
 * core.h (sizes in [1, AR_MAX_REQUEST], pointers non-NULL). malloc_usable_size
 * reports the requested size, so a program using all of it stays clear of the
 * guard. */
void *ar_dbg_malloc(size_t size);
void *ar_dbg_calloc(size_t size);
void *ar_dbg_memalign(size_t align, size_t size);
void ar_dbg_free(void *p);
void *ar_dbg_realloc(void *p, size_t size);
size_t ar_dbg_usable_size(const void *p);

/* A core realloc moved p (ar_realloc_by_copy): fill it and quarantine it
 * instead of freeing it at once. */
void ar_dbg_retire(void *p);

void ar_dbg_fork_prepare(void);
void ar_dbg_fork_parent(void);
void ar_dbg_fork_child(void);

#define AR_API_MALLOC ar_dbg_malloc
#define AR_API_CALLOC ar_dbg_calloc
#define AR_API_MEMALIGN ar_dbg_memalign
#define AR_API_FREE ar_dbg_free
#define AR_API_REALLOC ar_dbg_realloc
#define AR_API_USABLE_SIZE ar_dbg_usable_size
#define AR_API_RETIRE ar_dbg_retire
#define AR_DBG_INIT() ar_dbg_init()
#define AR_DBG_FORK_PREPARE() ar_dbg_fork_prepare()
#define AR_DBG_FORK_PARENT() ar_dbg_fork_parent()
#define AR_DBG_FORK_CHILD() ar_dbg_fork_child()

#else

#define AR_API_MALLOC ar_core_malloc
#define AR_API_CALLOC ar_core_calloc
#define AR_API_MEMALIGN ar_core_memalign
#define AR_API_FREE ar_core_free
#define AR_API_REALLOC ar_core_realloc
#define AR_API_USABLE_SIZE ar_core_usable_size
#define AR_API_RETIRE ar_core_free
#define AR_DBG_INIT() ((void)0)
#define AR_DBG_FORK_PREPARE() ((void)0)
#define AR_DBG_FORK_PARENT() ((void)0)
#define AR_DBG_FORK_CHILD() ((void)0)

#endif

#endif
