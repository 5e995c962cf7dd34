/*
 * ar_alloc.h — allocrr's allocators: the registry that names every allocator
 * allocrr can compare (and says how to load it), and the statistics our own
 * allocators export. This header is their manual; docs/ALLOCATORS.md explains
 * the designs and the tunables.
 *
 * Two halves, used by different programs:
 *
 *   Statistics — each of our allocators (build/lib/liballocrr-NAME.so, NAME in
 *   pool, arena, tlscache, freelist) exports exactly one function besides the
 *   malloc API, ar_allocator_stats(). A process running under one of them finds
 *   it with dlsym(RTLD_DEFAULT, AR_ALLOC_STATS_SYMBOL); under any other
 *   allocator the lookup returns NULL.
 *
 *   Registry — liballocrr-registry.a, linked into tools (the replayer). It
 *   lists glibc, jemalloc, tcmalloc, mimalloc and our four, finds their
 *   libraries, reports versions, and proves from inside a process which
 *   library really serves malloc (a wrong LD_PRELOAD path otherwise silently
 *   measures glibc).
 *
 * Registry functions return 0 on success or a negative AR_E* code from
 * ar_trace.h (ar_strerror() names it); the exceptions are stated.
 */
#ifndef AR_ALLOC_H
#define AR_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "ar_trace.h" /* AR_E* error codes shared by every allocrr library */

#ifdef __cplusplus
extern "C" {
#endif

#define AR_ALLOC_VERSION_MAJOR 1
#define AR_ALLOC_VERSION_MINOR 0
#define AR_ALLOC_VERSION_PATCH 0
#define AR_ALLOC_VERSION_STRING "1.0.0"

/* ======================================================================
 * Statistics exported by our allocators
 * ====================================================================== */

/* Bumped whenever ar_alloc_stats_t changes layout; a reader compiled
 * against another version must not interpret the struct. */
#define AR_ALLOC_STATS_VERSION 1
#define AR_ALLOC_MAX_BINS 64
#define AR_ALLOC_STATS_SYMBOL "ar_allocator_stats"

/*
 * One size class (pool, tlscache) or one power-of-two bin of usable sizes
 * (arena, freelist: bin i holds blocks whose usable size is in
 * (block_bytes/2, block_bytes]).
 */
typedef struct ar_alloc_bin_stats {
	uint64_t block_bytes;   /* class block size / bin upper bound, bytes */
	uint64_t blocks_in_use; /* live blocks the program holds */
	uint64_t blocks_free;   /* pool, tlscache: carved blocks on the central free
				 * lists; freelist: free chunks in this bin; arena: 0 */
	uint64_t blocks_cached; /* tlscache: free blocks held in thread caches */
	uint64_t allocs_total;  /* blocks handed out from this bin since start */
	uint64_t chunks;        /* pool, tlscache: chunks carved for this class */
} ar_alloc_bin_stats_t;

/*
 * A snapshot of one allocator. Exact when no other thread allocates during
 * the call; under concurrency each counter is individually consistent but
 * the snapshot is not atomic as a whole.
 *
 * bytes_in_use is exactly the sum of malloc_usable_size(p) over every live
 * block p, for every allocation function; tests hold each allocator to it.
 */
typedef struct ar_alloc_stats {
	uint32_t version;        /* AR_ALLOC_STATS_VERSION */
	uint32_t nbins;          /* valid entries of bins[] */
	char allocator[16];      /* "pool", "arena", "tlscache" or "freelist" */
	uint64_t bytes_in_use;   /* sum of malloc_usable_size() of live blocks */
	uint64_t blocks_in_use;  /* live blocks */
	uint64_t allocs_total;   /* blocks handed out since start (a realloc that
				  * moves counts one alloc and one free) */
	uint64_t frees_total;    /* blocks taken back since start */
	uint64_t bytes_mapped;   /* address space mmap'ed by the allocator right
				  * now, data and metadata: the allocator's own
				  * tally of its mmap/munmap/mremap calls */
	uint64_t bytes_mapped_peak;
	uint64_t bytes_metadata; /* part of bytes_mapped holding bookkeeping
				  * (thread states), not blocks */
	uint64_t bytes_cached;   /* bytes of free memory held for reuse: freed
				  * large mappings kept by the cache of
				  * map_cache.h (all four), plus for tlscache
				  * free blocks sitting in thread caches */
	uint64_t large_blocks_in_use; /* blocks that own their mapping */
	uint64_t large_bytes_in_use;  /* their usable bytes (inside bytes_in_use) */
	uint64_t mmap_calls, munmap_calls, mremap_calls;
	uint64_t chunks_in_use;  /* pool, tlscache: chunks carved into blocks;
				  * arena: chunks holding live objects or being
				  * filled; freelist: heap segments */
	uint64_t chunks_free;    /* arena: empty chunks kept for reuse */
	uint64_t chunk_resets;   /* arena: chunks reset after their last object died */
	uint64_t cache_hits;     /* tlscache: mallocs served from the thread cache */
	uint64_t cache_misses;   /* tlscache: mallocs that had to refill from the
				  * central heap (one per refill batch) */
	uint64_t cache_flushes;  /* tlscache: batches returned to the central heap */
	uint64_t threads;        /* tlscache, arena: live per-thread states */
	ar_alloc_bin_stats_t bins[AR_ALLOC_MAX_BINS];
} ar_alloc_stats_t;

/*
 * Fill *out with a snapshot of the allocator serving this process. Never
 * allocates, takes each internal lock at most briefly. Returns 0, or -1 when
 * out is NULL. Exported by liballocrr-NAME.so only; look it up with dlsym.
 */
int ar_allocator_stats(ar_alloc_stats_t *out);
typedef int (*ar_allocator_stats_fn)(ar_alloc_stats_t *out);

/* ======================================================================
 * Registry (liballocrr-registry.a)
 * ====================================================================== */

typedef enum ar_alloc_kind {
	AR_ALLOC_SYSTEM = 0, /* an installed third-party allocator (or glibc) */
	AR_ALLOC_OURS = 1    /* built by allocrr: liballocrr-NAME.so */
} ar_alloc_kind_t;

#define AR_ALLOC_PATH_MAX 4096

typedef struct ar_allocator {
	const char *name;        /* stable key used on command lines and in results:
				  * glibc, jemalloc, tcmalloc, mimalloc, pool, arena,
				  * tlscache, freelist */
	ar_alloc_kind_t kind;
	const char *package;     /* Debian package of the library; NULL for ours */
	const char *description; /* one line */
	int installed;           /* 1 when the library file was found (glibc: always) */
	char preload[AR_ALLOC_PATH_MAX]; /* LD_PRELOAD value selecting it: "" for glibc
					  * (nothing to preload), else an absolute
					  * path; "" when not installed */
	char library[AR_ALLOC_PATH_MAX]; /* canonical path of the file that must serve
					  * malloc (glibc: libc.so.6); "" when not
					  * installed */
	char version[64];         /* upstream version: glibc from
				   * gnu_get_libc_version(), system allocators
				   * from their Debian package, ours
				   * AR_ALLOC_VERSION_STRING; "unknown" otherwise */
	char package_version[64]; /* full Debian version ("5.3.0-1"); "" for ours or
				   * when dpkg has no record */
	const char *stats_symbol; /* ours: AR_ALLOC_STATS_SYMBOL; NULL for system
				   * allocators (they have their own APIs) */
} ar_allocator_t;

/* Number of allocators the registry knows, installed or not. */
int ar_registry_count(void);

/*
 * Describe allocator number index (0 <= index < ar_registry_count(); glibc
 * is 0, system allocators come before ours). Looks for the library on disk
 * each call. Our libraries are searched, first hit wins, in:
 *   1. each directory of $ALLOCRR_LIBDIR (colon-separated);
 *   2. <directory of the running executable>/../lib, ../lib/allocrr and
 *      ../../lib/allocrr (build/bin -> build/lib, PREFIX/bin ->
 *      PREFIX/lib/allocrr, the worker's PREFIX/libexec/allocrr -> the same);
 *   3. $ALLOCRR_BUILD/lib;
 *   4. the install directory compiled in (PREFIX/lib/allocrr).
 * System libraries are searched in the directory of libc.so.6, then
 * /usr/local/lib, /usr/lib. Returns 0, or AR_EINVAL for a bad index or NULL out.
 */
int ar_registry_get(int index, ar_allocator_t *out);

/* Like ar_registry_get() by name. AR_EINVAL when the name is unknown. */
int ar_registry_find(const char *name, ar_allocator_t *out);

/*
 * The proof of which library serves malloc in this process: resolves
 * "malloc" with dlsym(RTLD_DEFAULT), finds the object containing it with
 * dladdr and writes that object's canonical path to path[0..cap). Returns 0,
 * AR_EINVAL when path is NULL or cap too small, AR_EIO when the symbol or its
 * object cannot be found.
 */
int ar_registry_malloc_provider(char *path, size_t cap);

/*
 * Check that allocator a serves malloc in this process. Writes the serving
 * library's path to served (when served is not NULL). Returns 0 when it is
 * a's library, 1 when it is another one (the wrong allocator would be
 * measured), or a negative code from ar_registry_malloc_provider(), or
 * AR_EINVAL when a is not installed.
 */
int ar_registry_verify(const ar_allocator_t *a, char *served, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
