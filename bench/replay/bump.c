/*
 * bump.c — a null allocator for measuring the replay harness (make
 * bench-replay), preloaded into allocreplay-worker as libbump.so. Not one of
 * our allocators and not in the registry: the benchmark names it to the
 * worker with --library, which proves it serves malloc like any other.
 *
 * It does as little as an allocator can, so that a replay under it costs
 * what the harness costs:
 *   - one size class per power of two, 16 B to 4 GiB, each a 64 GiB region
 *     of one MAP_NORESERVE mapping made on the first call; a block's class
 *     is its address's region, so there is no header and nothing is written
 *     to memory: with the worker's --touch none a replay faults no page in;
 *   - each thread bumps through its own chunk of each class (at least
 *     64 KiB, taken from the region with one atomic add), so threads never
 *     share a cache line;
 *   - free is a no-op; memory is never reused, so every block is fresh
 *     zero-filled mmap memory (calloc needs no memset);
 *   - realloc stays in place while the new size fits the block's class,
 *     otherwise it takes a new block and copies only what is not zero (the
 *     new block is fresh, so already zero): non-zero 64-byte lines, and for
 *     blocks of 16 KiB and more only the pages mincore finds resident. The
 *     replay's --touch none writes no block, so the copy writes nothing and
 *     reads little; the arena asks for transparent huge pages, so reading
 *     a never-written small block maps the huge zero page, one fault per
 *     2 MiB; alignment comes from the class
 *     (a class-2^k block is 2^k-aligned), so the memalign family asks for
 *     the class of max(size, alignment).
 * Errors follow the malloc contract: NULL with ENOMEM past 4 GiB or when a
 * region is used up, EINVAL for a bad alignment, calloc/reallocarray
 * overflow checked. realloc of a pointer it did not hand out (there is none
 * in a worker: it is preloaded before the first call) fails with EINVAL.
 */
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

enum {
	MIN_SHIFT = 4,     /* 16 B: malloc's alignment */
	MAX_SHIFT = 32,    /* 4 GiB: the largest block */
	NCLASSES = MAX_SHIFT - MIN_SHIFT + 1,
	REGION_SHIFT = 36, /* 64 GiB of address space per class */
	CHUNK_SHIFT = 16,  /* a thread takes at least 64 KiB of a class at once */
};

static char *_Atomic base;                     /* class k: base + (k << REGION_SHIFT) */
static _Atomic uint64_t region_used[NCLASSES]; /* bytes handed to threads */

typedef struct {
	char *cur, *end;
} chunk_t;
static _Thread_local chunk_t chunks[NCLASSES] __attribute__((tls_model("initial-exec")));

/* The one mapping, made by the first call of any thread; a thread that
 * loses the race unmaps its own. NULL when the kernel refuses it. */
static char *arena(void)
{
	char *b = atomic_load_explicit(&base, memory_order_acquire);
	if (b)
		return b;
	size_t align = (size_t)1 << REGION_SHIFT, len = ((size_t)NCLASSES + 1) << REGION_SHIFT;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	char *aligned = (char *)(((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1));
	madvise(aligned, len - align, MADV_HUGEPAGE); /* a hint: fine if refused */
	char *expect = NULL;
	if (!atomic_compare_exchange_strong_explicit(&base, &expect, aligned,
						     memory_order_acq_rel, memory_order_acquire)) {
		munmap(m, len);
		return expect;
	}
	return aligned;
}

/* Class index of a request of n bytes (n >= 1), or -1 when too large. */
static inline int class_of(size_t n)
{
	if (n <= ((size_t)1 << MIN_SHIFT))
		return 0;
	int shift = 64 - __builtin_clzll((unsigned long long)(n - 1));
	return shift > MAX_SHIFT ? -1 : shift - MIN_SHIFT;
}

/* A fresh block of class k, or NULL with ENOMEM. */
static void *take(int k)
{
	size_t size = (size_t)1 << (k + MIN_SHIFT);
	chunk_t *c = &chunks[k];
	if ((size_t)(c->end - c->cur) < size) {
		char *b = arena();
		size_t chunk = size > ((size_t)1 << CHUNK_SHIFT) ? size : (size_t)1 << CHUNK_SHIFT;
		uint64_t off = b ? atomic_fetch_add_explicit(&region_used[k], chunk, memory_order_relaxed)
				 : UINT64_MAX;
		if (!b || off + chunk > ((uint64_t)1 << REGION_SHIFT)) {
			errno = ENOMEM;
			return NULL;
		}
		c->cur = b + ((size_t)k << REGION_SHIFT) + off;
		c->end = c->cur + chunk;
	}
	void *p = c->cur;
	c->cur += size;
	return p;
}

static void *alloc(size_t n)
{
	int k = class_of(n ? n : 1);
	if (k < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return take(k);
}

/* Usable size of p (its class size), or 0 when p is not one of ours. */
static size_t block_size(const void *p)
{
	const char *b = atomic_load_explicit(&base, memory_order_acquire);
	if (!b || (const char *)p < b || (const char *)p >= b + ((size_t)NCLASSES << REGION_SHIFT))
		return 0;
	return (size_t)1 << ((size_t)((const char *)p - b) >> REGION_SHIFT) << MIN_SHIFT;
}

/* Aligned allocation; align must be a power of two. */
static void *alloc_aligned(size_t align, size_t n)
{
	return alloc(n > align ? n : align);
}

API void *malloc(size_t n)
{
	return alloc(n);
}

API void free(void *p)
{
	(void)p;
}

API void *calloc(size_t count, size_t n)
{
	size_t total;
	if (__builtin_mul_overflow(count, n, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return alloc(total); /* never reused memory: already zero */
}

/* Copy `words` words from p to q, where q is known to be zero: only the
 * 64-byte lines that are not zero. */
static void copy_lines(uint64_t *q, const uint64_t *p, size_t words)
{
	size_t i = 0;
	for (; i + 8 <= words; i += 8) {
		uint64_t any = 0;
		for (int j = 0; j < 8; j++)
			any |= p[i + j];
		if (any)
			for (int j = 0; j < 8; j++)
				q[i + j] = p[i + j];
	}
	for (; i < words; i++)
		if (p[i])
			q[i] = p[i];
}

/* realloc's copy of block p (have bytes) into q, a fresh block and so all
 * zero. Blocks of 16 KiB and more (page-aligned, by their class) copy only
 * their resident pages (mincore): a page never written nor read holds
 * zeros. Under --touch none this reads little and writes nothing. */
static void copy_block(uint64_t *q, const uint64_t *p, size_t have)
{
	enum { PAGE = 4096, BATCH = 256 };
	if (have < 4 * PAGE) {
		copy_lines(q, p, have / 8);
		return;
	}
	unsigned char vec[BATCH];
	for (size_t off = 0; off < have; off += (size_t)BATCH * PAGE) {
		size_t len = have - off < (size_t)BATCH * PAGE ? have - off : (size_t)BATCH * PAGE;
		int known = mincore((char *)p + off, len, vec) == 0;
		for (size_t pg = 0; pg < len / PAGE; pg++)
			if (!known || (vec[pg] & 1))
				copy_lines(q + (off + pg * PAGE) / 8, p + (off + pg * PAGE) / 8, PAGE / 8);
	}
}

API void *realloc(void *p, size_t n)
{
	if (!p)
		return alloc(n);
	size_t have = block_size(p);
	if (!have) {
		errno = EINVAL;
		return NULL;
	}
	if (n <= have)
		return p;
	void *q = alloc(n);
	if (q)
		copy_block(q, p, have);
	return q;
}

API void *reallocarray(void *p, size_t count, size_t n)
{
	size_t total;
	if (__builtin_mul_overflow(count, n, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, total);
}

API int posix_memalign(void **out, size_t align, size_t n)
{
	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	int saved = errno;
	void *p = alloc_aligned(align, n);
	if (!p) {
		errno = saved;
		return ENOMEM;
	}
	*out = p;
	return 0;
}

API void *aligned_alloc(size_t align, size_t n)
{
	if (!align || (align & (align - 1))) {
		errno = EINVAL;
		return NULL;
	}
	return alloc_aligned(align, n);
}

API void *memalign(size_t align, size_t n)
{
	if (align & (align - 1)) /* like glibc: round up to a power of two */
		align = align > ((size_t)1 << MAX_SHIFT) ? SIZE_MAX : (size_t)1 << (64 - __builtin_clzll(align));
	return alloc_aligned(align, n);
}

API void *valloc(size_t n)
{
	return alloc_aligned((size_t)sysconf(_SC_PAGESIZE), n);
}

API void *pvalloc(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	if (n > SIZE_MAX - page) {
		errno = ENOMEM;
		return NULL;
	}
	return alloc_aligned(page, (n + page - 1) & ~(page - 1));
}

API size_t malloc_usable_size(void *p)
{
	return p ? block_size(p) : 0;
}
