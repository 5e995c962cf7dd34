/*
 * os.h — the only place our allocators talk to the kernel for memory: mmap,
 * munmap and mremap wrappers that keep an exact tally of the bytes mapped
 * (what ar_allocator_stats() reports as bytes_mapped), and a small metadata
 * allocator for per-thread state that must never come from malloc.
 *
 * Invariants: the tally changes only together with a successful system call,
 * by exactly the length that call added or removed; no function here calls
 * malloc; ar_os_unmap() leaves errno unchanged, because free() must (glibc
 * promises it since 2.33).
 */
#ifndef AR_ALLOC_OS_H
#define AR_ALLOC_OS_H

#include <stddef.h>

#include "ar_alloc.h"

/* Page size, set by ar_os_init(). */
extern size_t ar_page_size;

/* Read the page size. Called once from the API's initialisation. */
void ar_os_init(void);

/* Map len bytes (a multiple of the page size) of zeroed read/write memory.
 * Returns NULL when the kernel refuses. */
void *ar_os_map(size_t len);

/* Map len bytes (a page multiple) at an address that is a multiple of align
 * (a power of two >= the page size), by over-mapping and trimming.
 * NULL on failure or when len + align overflows. */
void *ar_os_map_aligned(size_t len, size_t align);

/* Map len bytes exactly at addr (page-aligned) if nothing is mapped there,
 * or return NULL without touching anything (MAP_FIXED_NOREPLACE); errno is
 * preserved. */
void *ar_os_map_at(void *addr, size_t len);

/* Reserve len bytes (a page multiple) of address space at a multiple of
 * align (a power of two), inaccessible: no memory, no commit charge, not in
 * the tally. Nothing else can be mapped there, so an address inside it is
 * known to be the caller's. NULL when the kernel refuses (RLIMIT_AS, a
 * small address space). Never released. */
void *ar_os_reserve(size_t len, size_t align);

/* Make [p, p+len) of a reservation (page-aligned) zeroed read/write memory,
 * counted like a mapping (bytes_mapped, one mmap call: it is an mprotect).
 * 0, or -1 when the kernel refuses (the range stays reserved). */
int ar_os_commit(void *p, size_t len);

/* Fault in the pages of [p, p+len) (page-aligned) now, in one system call
 * (MADV_POPULATE_WRITE), for memory the caller is about to fill anyway: one
 * call instead of a trap per page. A kernel without it (before 5.14) leaves
 * the pages to fault one by one, as before; errno is preserved. */
void ar_os_populate(void *p, size_t len);

/* Unmap [p, p+len); errno is preserved. */
void ar_os_unmap(void *p, size_t len);

/* Resize the mapping [p, p+old_len) to new_len without moving it. Returns 0
 * on success, -1 when the neighbouring address space is taken. */
int ar_os_resize(void *p, size_t old_len, size_t new_len);

/* Move the mapping [p, p+old_len) to a fresh address that is a multiple of
 * align, growing it to new_len; the page contents move, nothing is copied.
 * Returns the new address or NULL (the old mapping is then untouched). */
void *ar_os_move(void *p, size_t old_len, size_t new_len, size_t align);

/* Zeroed, 64-byte aligned bookkeeping memory (thread states) that is never
 * returned; callers recycle their own objects. NULL when out of memory. */
void *ar_os_meta_alloc(size_t size);

/* Add the OS-level counters (bytes_mapped, peak, metadata, call counts) to out. */
void ar_os_stats(ar_alloc_stats_t *out);

void ar_os_fork_prepare(void);
void ar_os_fork_parent(void);
void ar_os_fork_child(void);

#endif
