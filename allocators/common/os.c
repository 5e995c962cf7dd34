/*
 * os.c — mmap/munmap/mremap with an exact tally, and the metadata allocator.
 *
 * The tally counts address space, not resident memory: it is what our
 * allocator asked the kernel for, so a test can compare it with
 * /proc/self/maps, and the replayer can put it next to RSS.
 *
 * MAP_NORESERVE is deliberately not used: with the kernel's default
 * heuristic overcommit an absurd request (64 TiB) then fails with ENOMEM, as
 * it does under glibc, instead of succeeding and faulting later.
 */
#include "os.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lock.h"
#include "util.h"

size_t ar_page_size = 4096;

static _Atomic uint64_t os_mapped, os_mapped_peak, os_meta;
static _Atomic uint64_t os_mmaps, os_munmaps, os_mremaps;

/* Metadata comes from 64 KiB blocks carved front to back under meta_lock. */
#define META_BLOCK ((size_t)64 << 10)
static ar_lock_t meta_lock = AR_LOCK_INIT;
static char *meta_cur, *meta_end;

void ar_warn(const char *msg)
{
	int saved = errno;
	char buf[512];
	size_t n = strlen(msg);
	if (n > sizeof buf - 11)
		n = sizeof buf - 11;
	memcpy(buf, "allocrr: ", 9);
	memcpy(buf + 9, msg, n);
	buf[9 + n] = '\n';
	ssize_t w = write(2, buf, 10 + n);
	(void)w;
	errno = saved;
}

_Noreturn void ar_fatal(const char *msg)
{
	ar_warn(msg);
	abort();
}

void ar_os_init(void)
{
	long ps = sysconf(_SC_PAGESIZE);
	if (ps > 0 && ar_is_pow2((size_t)ps))
		ar_page_size = (size_t)ps;
}

static void tally_add(size_t len)
{
	uint64_t now = atomic_fetch_add_explicit(&os_mapped, len, memory_order_relaxed) + len;
	uint64_t peak = atomic_load_explicit(&os_mapped_peak, memory_order_relaxed);
	while (now > peak &&
	       !atomic_compare_exchange_weak_explicit(&os_mapped_peak, &peak, now, memory_order_relaxed,
						      memory_order_relaxed))
		;
}

static void tally_sub(size_t len)
{
	atomic_fetch_sub_explicit(&os_mapped, len, memory_order_relaxed);
}

void *ar_os_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	atomic_fetch_add_explicit(&os_mmaps, 1, memory_order_relaxed);
	tally_add(len);
	return p;
}

void *ar_os_map_at(void *addr, size_t len)
{
#ifdef MAP_FIXED_NOREPLACE
	int saved = errno;
	void *p = mmap(addr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	errno = saved;
	if (p == MAP_FAILED)
		return NULL;
	if (p != addr) { /* a kernel before 4.17 took the flag as a mere hint */
		munmap(p, len);
		errno = saved;
		return NULL;
	}
	atomic_fetch_add_explicit(&os_mmaps, 1, memory_order_relaxed);
	tally_add(len);
	return p;
#else
	(void)addr;
	(void)len;
	return NULL;
#endif
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

void ar_os_populate(void *p, size_t len)
{
	static _Atomic int unsupported;
	if (atomic_load_explicit(&unsupported, memory_order_relaxed))
		return;
	int saved = errno;
	if (madvise(p, len, MADV_POPULATE_WRITE) != 0 && errno == EINVAL)
		atomic_store_explicit(&unsupported, 1, memory_order_relaxed);
	errno = saved;
}

void ar_os_unmap(void *p, size_t len)
{
	int saved = errno;
	if (munmap(p, len) != 0)
		ar_fatal("munmap failed: the heap's bookkeeping is corrupt");
	atomic_fetch_add_explicit(&os_munmaps, 1, memory_order_relaxed);
	tally_sub(len);
	errno = saved;
}

/* The aligned len bytes inside raw (span bytes, mapped with align -
 * page of slack); the rest is unmapped, through the tally when it was in
 * it. */
static char *keep_aligned(char *raw, size_t span, size_t len, size_t align, int tallied)
{
	char *p = (char *)ar_align_up_ptr((uintptr_t)raw, align);
	size_t head = (size_t)(p - raw), tail = span - head - len;
	int saved = errno;
	if (head)
		tallied ? ar_os_unmap(raw, head) : (void)munmap(raw, head);
	if (tail)
		tallied ? ar_os_unmap(p + len, tail) : (void)munmap(p + len, tail);
	errno = saved;
	return p;
}

void *ar_os_map_aligned(size_t len, size_t align)
{
	if (align <= ar_page_size)
		return ar_os_map(len);
	size_t span;
	if (__builtin_add_overflow(len, align - ar_page_size, &span))
		return NULL;
	char *raw = ar_os_map(span);
	return raw ? keep_aligned(raw, span, len, align, 1) : NULL;
}

void *ar_os_reserve(size_t len, size_t align)
{
	size_t span;
	if (align < ar_page_size)
		align = ar_page_size;
	if (__builtin_add_overflow(len, align - ar_page_size, &span))
		return NULL;
	int saved = errno;
	/* PROT_NONE: nothing resident and no commit charge (the kernel charges
	 * only writable private mappings); not in the tally. Without
	 * MAP_NORESERVE, so that ar_os_commit's mprotect is charged like any
	 * other mapping (the rule above). */
	char *raw = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	errno = saved;
	return raw == MAP_FAILED ? NULL : keep_aligned(raw, span, len, align, 0);
}

int ar_os_commit(void *p, size_t len)
{
	int saved = errno;
	int rc = mprotect(p, len, PROT_READ | PROT_WRITE);
	errno = saved;
	if (rc != 0)
		return -1;
	atomic_fetch_add_explicit(&os_mmaps, 1, memory_order_relaxed);
	tally_add(len);
	return 0;
}

int ar_os_resize(void *p, size_t old_len, size_t new_len)
{
	if (new_len == old_len)
		return 0;
	if (new_len < old_len) {
		ar_os_unmap((char *)p + new_len, old_len - new_len);
		return 0;
	}
	int saved = errno;
	void *q = mremap(p, old_len, new_len, 0);
	errno = saved;
	if (q == MAP_FAILED)
		return -1;
	atomic_fetch_add_explicit(&os_mremaps, 1, memory_order_relaxed);
	tally_add(new_len - old_len);
	return 0;
}

void *ar_os_move(void *p, size_t old_len, size_t new_len, size_t align)
{
	/* Reserve an aligned destination first, then let mremap replace it
	 * atomically: the pages travel, the bytes are never copied. */
	char *dst = ar_os_map_aligned(new_len, align);
	if (!dst)
		return NULL;
	void *q = mremap(p, old_len, new_len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (q == MAP_FAILED) {
		ar_os_unmap(dst, new_len);
		return NULL;
	}
	/* dst's reservation was replaced (not unmapped by us) and p's range went
	 * away: the tally loses old_len. */
	atomic_fetch_add_explicit(&os_mremaps, 1, memory_order_relaxed);
	tally_sub(old_len);
	return q;
}

void *ar_os_meta_alloc(size_t size)
{
	size = ar_align_up(size, 64);
	if (size > META_BLOCK)
		return NULL;
	ar_lock(&meta_lock);
	if ((size_t)(meta_end - meta_cur) < size) {
		char *b = ar_os_map(META_BLOCK);
		if (!b) {
			ar_unlock(&meta_lock);
			return NULL;
		}
		atomic_fetch_add_explicit(&os_meta, META_BLOCK, memory_order_relaxed);
		meta_cur = b;
		meta_end = b + META_BLOCK;
	}
	void *p = meta_cur;
	meta_cur += size;
	ar_unlock(&meta_lock);
	return p;
}

void ar_os_stats(ar_alloc_stats_t *out)
{
	out->bytes_mapped = atomic_load_explicit(&os_mapped, memory_order_relaxed);
	out->bytes_mapped_peak = atomic_load_explicit(&os_mapped_peak, memory_order_relaxed);
	out->bytes_metadata = atomic_load_explicit(&os_meta, memory_order_relaxed);
	out->mmap_calls = atomic_load_explicit(&os_mmaps, memory_order_relaxed);
	out->munmap_calls = atomic_load_explicit(&os_munmaps, memory_order_relaxed);
	out->mremap_calls = atomic_load_explicit(&os_mremaps, memory_order_relaxed);
}

void ar_os_fork_prepare(void)
{
	ar_lock(&meta_lock);
}

void ar_os_fork_parent(void)
{
	ar_unlock(&meta_lock);
}

void ar_os_fork_child(void)
{
	ar_lock_reinit(&meta_lock);
}
