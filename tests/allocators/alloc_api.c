/*
 * alloc_api.c — the malloc API conformance suite, run by
 * tests/e2e/alloc_api.sh once per installed allocator of the registry (glibc,
 * jemalloc, tcmalloc, mimalloc and our four) under LD_PRELOAD:
 *
 *   alloc_api NAME
 *
 * It first proves that NAME really serves malloc (the registry's dladdr
 * check), then holds every allocator to glibc's behaviour: alignment,
 * usable sizes, zeroing, realloc's edge cases, overflow and failure paths
 * with their errno, invalid alignments, non-overlap, and blocks crossing
 * threads and libc.
 *
 * Where a system allocator legitimately differs from glibc, the difference
 * is listed in quirks_for() with the reason, and only that check is relaxed
 * for that allocator. Ours have no quirks: they must match glibc exactly.
 * NAME may also be "OURS-debug", the debug build of one of ours
 * (tests/e2e/torture_alloc_debug.sh), held to exactly the same contract.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc_test.h"
#include "testing.h"

typedef struct quirks {
	/* Requests of at most 8 bytes come from an 8-byte size class that is
	 * only 8-aligned. C allows it (alignment for any object that fits the
	 * requested size); glibc always aligns to 16. */
	int tiny_align8;
	/* realloc to a smaller size class moves the block even for a small
	 * shrink (glibc splits in place). */
	int realloc_shrink_moves;
	/* realloc that fails for an impossible size returns NULL (block kept)
	 * without setting errno to ENOMEM. */
	int realloc_fail_no_errno;
	/* realloc(p, 0) returns a minimal block instead of freeing p and
	 * returning NULL. C17 makes this implementation-defined; glibc frees. */
	int realloc_zero_keeps;
	/* The library does not define pvalloc (obsolete, not in POSIX). glibc's
	 * pvalloc would then allocate from glibc's own heap and the library's
	 * free() would crash on it, so pvalloc is not exercised. */
	int no_pvalloc;
	/* aligned_alloc/memalign with a non-power-of-two alignment return NULL
	 * (C11 permits; glibc 2.36 rounds the alignment up). */
	int aligned_alloc_rejects_npot, memalign_rejects_npot;
	/* A failed call returns NULL but leaves errno unset (glibc: ENOMEM /
	 * EINVAL). POSIX asks for ENOMEM; these libraries skip it on some paths. */
	int calloc_overflow_no_errno, memalign_einval_no_errno, enomem_no_errno;
	/* memalign and valloc fail without errno (jemalloc sets it only in
	 * aligned_alloc and posix_memalign). */
	int memalign_enomem_no_errno;
	/* pvalloc(SIZE_MAX - k) wraps around while rounding to the page size and
	 * succeeds with a one-page block (gperftools 2.10 misses the overflow). */
	int pvalloc_overflow_wraps;
	/* Reserves address space without commit accounting (MAP_NORESERVE or
	 * overcommitting its own way), so a 64 TiB malloc can succeed where
	 * glibc's mmap is refused. */
	int huge_malloc_may_succeed;
} quirks_t;

static quirks_t quirks_for(const char *name)
{
	quirks_t q = { 0 };
	if (strcmp(name, "jemalloc") == 0) {
		q.tiny_align8 = 1;
		q.realloc_shrink_moves = 1;
		q.realloc_fail_no_errno = 1;
		q.huge_malloc_may_succeed = 1;
		q.memalign_enomem_no_errno = 1;
		q.no_pvalloc = 1;
		q.aligned_alloc_rejects_npot = 1;
		q.memalign_rejects_npot = 1;
	} else if (strcmp(name, "tcmalloc") == 0) {
		q.tiny_align8 = 1;
		q.calloc_overflow_no_errno = 1;
		q.pvalloc_overflow_wraps = 1;
		q.memalign_einval_no_errno = 1;
	} else if (strcmp(name, "mimalloc") == 0) {
		q.tiny_align8 = 1;
		q.realloc_fail_no_errno = 1;
		q.realloc_zero_keeps = 1;
		q.aligned_alloc_rejects_npot = 1;
		q.memalign_rejects_npot = 1;
		q.calloc_overflow_no_errno = 1;
		q.memalign_einval_no_errno = 1;
		q.enomem_no_errno = 1;
		q.huge_malloc_may_succeed = 1;
	}
	return q;
}

static quirks_t Q;
static const char *NAME;
static size_t page;
/* Volatile so the compiler cannot see (and warn about) absurd sizes. */
static volatile size_t huge_size = SIZE_MAX, ptrdiff_max = PTRDIFF_MAX;

#define EXPECT_ALIGNED(p, a) EXPECT(((uintptr_t)(p) & ((a)-1)) == 0)

/* The alignment every block of n bytes must have. */
static size_t min_align(size_t n)
{
	return Q.tiny_align8 && n <= 8 ? 8 : 16;
}

/* errno after a failed call: must be want unless this allocator's quirk
 * says it leaves errno alone. */
#define EXPECT_ERRNO(want, quirk) EXPECT((quirk) || errno == (want))

/* Write and check every usable byte of p: proves usable size is real. */
static void touch(void *p, size_t want, uint64_t tag)
{
	size_t u = malloc_usable_size(p);
	EXPECT(u >= want);
	t_fill(p, u, tag);
	EXPECT_U64(t_check(p, u, tag), u);
}

/* NAME may be "OURS-debug": the debug build of one of ours
 * (liballocrr-OURS-debug.so, not in the registry), held to the same API. */
static void test_provider(void)
{
	ar_allocator_t a;
	char served[AR_ALLOC_PATH_MAX] = "", base[64];
	size_t len = strlen(NAME);
	int debug = len > 6 && len < sizeof base && strcmp(NAME + len - 6, "-debug") == 0;
	snprintf(base, sizeof base, "%.*s", (int)(debug ? len - 6 : len), NAME);
	EXPECT_U64(ar_registry_find(base, &a), 0);
	EXPECT(a.installed);
	int rc = ar_registry_verify(&a, served, sizeof served);
	if (debug) {
		/* verify compares with the normal library: expect its -debug twin. */
		size_t l = strlen(a.library);
		EXPECT(a.kind == AR_ALLOC_OURS && l > 3 && strcmp(a.library + l - 3, ".so") == 0);
		snprintf(a.library + l - 3, sizeof a.library - (l - 3), "-debug.so");
		rc = rc >= 0 && strcmp(served, a.library) == 0 ? 0 : rc;
	}
	if (rc != 0)
		fprintf(stderr, "malloc is served by %s, expected %s (%s)\n", served, a.library, NAME);
	EXPECT_U64(rc, 0);
	/* Ours export statistics, the others must not appear to. */
	EXPECT((t_stats_fn() != NULL) == (a.kind == AR_ALLOC_OURS));
}

static void test_malloc(void)
{
	void *z1 = malloc(0), *z2 = malloc(0);
	EXPECT(z1 && z2 && z1 != z2);
	EXPECT_ALIGNED(z1, min_align(0));
	free(z1);
	free(z2);
	for (size_t n = 1; n <= 4096; n += (n < 300 ? 1 : 37)) {
		void *p = malloc(n);
		EXPECT(p != NULL);
		EXPECT_ALIGNED(p, min_align(n));
		touch(p, n, n);
		free(p);
	}
	for (size_t n = 4096; n <= ((size_t)64 << 20); n *= 2) {
		size_t sizes[3] = { n - 1, n, n + 17 };
		for (int k = 0; k < 3; k++) {
			unsigned char *p = malloc(sizes[k]);
			EXPECT(p != NULL);
			EXPECT_ALIGNED(p, 16);
			EXPECT(malloc_usable_size(p) >= sizes[k]);
			p[0] = 1;
			p[sizes[k] - 1] = 2;
			p[sizes[k] / 2] = 3;
			free(p);
		}
	}
	EXPECT_U64(malloc_usable_size(NULL), 0);
}

static void test_malloc_failure(void)
{
	size_t sizes[] = { huge_size, ptrdiff_max + 1, ptrdiff_max, ptrdiff_max / 2 };
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		errno = 0;
		void *p = malloc(sizes[i]);
		EXPECT(p == NULL);
		EXPECT_ERRNO(ENOMEM, Q.enomem_no_errno);
		free(p);
	}
	errno = 0;
	void *p = malloc((size_t)1 << 46); /* 64 TiB: more than RAM + swap */
	if (!Q.huge_malloc_may_succeed) {
		EXPECT(p == NULL);
		EXPECT_U64(errno, ENOMEM);
	}
	free(p);
}

static void test_free(void)
{
	free(NULL);
	size_t sizes[] = { 8, 1000, 100000, (size_t)4 << 20 };
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		void *p = malloc(sizes[i]);
		errno = 12345;
		free(p);
		EXPECT_U64(errno, 12345); /* glibc >= 2.33 promises free keeps errno */
	}
}

static void test_calloc(void)
{
	/* Dirty memory first, so a calloc that reuses it must clear it. */
	for (size_t n = 1; n < 70000; n = n * 3 + 5) {
		void *d[8];
		for (int i = 0; i < 8; i++) {
			d[i] = malloc(n);
			memset(d[i], 0xa5, n);
		}
		for (int i = 0; i < 8; i++)
			free(d[i]);
		for (int i = 0; i < 8; i++) {
			unsigned char *p = calloc(1, n);
			EXPECT(p != NULL);
			EXPECT_ALIGNED(p, min_align(n));
			size_t bad = 0;
			for (size_t j = 0; j < n; j++)
				bad += p[j] != 0;
			EXPECT_U64(bad, 0);
			d[i] = p;
		}
		for (int i = 0; i < 8; i++)
			free(d[i]);
	}
	void *a = calloc(0, 10), *b = calloc(10, 0);
	EXPECT(a && b && a != b);
	free(a);
	free(b);
	unsigned char *big = calloc((size_t)16 << 20, 4);
	EXPECT(big != NULL);
	if (big) {
		size_t bad = 0;
		for (size_t j = 0; j < ((size_t)64 << 20); j += 4093)
			bad += big[j] != 0;
		EXPECT_U64(bad, 0);
	}
	free(big);
	size_t cases[][2] = { { huge_size, 2 },
			      { (size_t)1 << 33, (size_t)1 << 33 },
			      { huge_size / 2 + 1, 2 },
			      { 2, huge_size / 2 + 1 } };
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		errno = 0;
		void *p = calloc(cases[i][0], cases[i][1]);
		EXPECT(p == NULL);
		EXPECT_ERRNO(ENOMEM, Q.calloc_overflow_no_errno);
		free(p);
	}
}

static void test_realloc(void)
{
	/* realloc(NULL, n) is malloc(n). */
	void *p = realloc(NULL, 100);
	EXPECT(p != NULL);
	touch(p, 100, 1);
	/* realloc(p, 0): glibc frees p and returns NULL. */
	errno = 0;
	void *q = realloc(p, 0);
	if (Q.realloc_zero_keeps)
		free(q);
	else
		EXPECT(q == NULL);
	void *z = realloc(NULL, 0);
	EXPECT(z != NULL);
	free(z);

	/* Grow one byte at a time, then in big steps: contents survive. */
	unsigned char *g = NULL;
	size_t n;
	for (n = 1; n <= 20000; n++) {
		g = realloc(g, n);
		EXPECT(g != NULL);
		if (!g)
			return;
		g[n - 1] = (unsigned char)(n * 7);
	}
	size_t bad = 0;
	for (size_t i = 1; i <= 20000; i++)
		bad += g[i - 1] != (unsigned char)(i * 7);
	EXPECT_U64(bad, 0);
	t_fill(g, 20000, 77);
	for (n = 40000; n <= ((size_t)64 << 20); n *= 4) {
		g = realloc(g, n);
		EXPECT(g != NULL);
		if (!g)
			return;
		EXPECT_ALIGNED(g, 16);
		EXPECT_U64(t_check(g, 20000, 77), 20000);
		g[n - 1] = 1;
	}
	/* Shrink: the prefix survives, large to small too. */
	g = realloc(g, 5000);
	EXPECT(g != NULL);
	EXPECT_U64(t_check(g, 5000, 77), 5000);
	g = realloc(g, 10);
	EXPECT_U64(t_check(g, 10, 77), 10);
	free(g);

	/* In place: a block grown within its usable size, or shrunk by at
	 * most a quarter, does not move. */
	size_t sizes[] = { 64, 200, 1000, 5000, 40000, 300000, (size_t)3 << 20 };
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		unsigned char *b = malloc(sizes[i]), *r;
		size_t u = malloc_usable_size(b), keep = u - u / 4 < sizes[i] ? u - u / 4 : sizes[i];
		t_fill(b, sizes[i], i);
		r = realloc(b, u);
		EXPECT(r == b);
		b = r ? r : b;
		r = realloc(b, u - u / 4);
		EXPECT(r != NULL);
		if (!Q.realloc_shrink_moves && r != b)
			fprintf(stderr, "realloc(%zu-byte block, %zu) moved it\n", u, u - u / 4);
		EXPECT(Q.realloc_shrink_moves || r == b);
		b = r ? r : b;
		EXPECT_U64(t_check(b, keep, i), keep);
		free(b);
	}

	/* A failing realloc leaves the block alone. */
	unsigned char *keep = malloc(300);
	t_fill(keep, 300, 5);
	errno = 0;
	EXPECT(realloc(keep, ptrdiff_max + 1) == NULL);
	EXPECT_ERRNO(ENOMEM, Q.realloc_fail_no_errno);
	errno = 0;
	EXPECT(realloc(keep, huge_size) == NULL);
	EXPECT_ERRNO(ENOMEM, Q.realloc_fail_no_errno);
	EXPECT_U64(t_check(keep, 300, 5), 300);
	keep = realloc(keep, 600);
	EXPECT_U64(t_check(keep, 300, 5), 300);
	free(keep);

	/* An aligned block can be reallocated like any other. */
	void *al = NULL;
	EXPECT_U64(posix_memalign(&al, 4096, 3000), 0);
	t_fill(al, 3000, 9);
	al = realloc(al, 9000);
	EXPECT_U64(t_check(al, 3000, 9), 3000);
	free(al);
}

static void test_reallocarray(void)
{
	unsigned char *p = reallocarray(NULL, 10, 10);
	EXPECT(p != NULL);
	t_fill(p, 100, 3);
	p = reallocarray(p, 1000, 10);
	EXPECT(p != NULL);
	EXPECT_U64(t_check(p, 100, 3), 100);
	errno = 0;
	EXPECT(reallocarray(p, (size_t)1 << 33, (size_t)1 << 33) == NULL);
	EXPECT_U64(errno, ENOMEM);
	EXPECT_U64(t_check(p, 100, 3), 100);
	void *q = reallocarray(p, 0, 8); /* realloc(p, 0) */
	if (Q.realloc_zero_keeps)
		free(q);
	else
		EXPECT(q == NULL);
}

static const size_t align_sizes[] = { 0, 1, 17, 100, 4000, 70000, ((size_t)1 << 20) + 3 };
#define NALIGN_SIZES (sizeof align_sizes / sizeof align_sizes[0])

static void test_posix_memalign(void)
{
	size_t bad_aligns[] = { 0, 1, 2, 4, 3, 24, 48, 1000, huge_size, ((size_t)1 << 20) + 16 };
	for (size_t i = 0; i < sizeof bad_aligns / sizeof bad_aligns[0]; i++) {
		void *m = (void *)0x1234;
		EXPECT_U64(posix_memalign(&m, bad_aligns[i], 16), EINVAL);
		EXPECT(m == (void *)0x1234);
	}
	for (size_t a = sizeof(void *); a <= ((size_t)2 << 20); a *= 2) {
		for (size_t k = 0; k < NALIGN_SIZES; k++) {
			void *m = NULL;
			size_t n = align_sizes[k];
			EXPECT_U64(posix_memalign(&m, a, n), 0);
			EXPECT(m != NULL);
			EXPECT_ALIGNED(m, a);
			if (n <= 100000)
				touch(m, n, a + n);
			else
				EXPECT(malloc_usable_size(m) >= n);
			free(m);
		}
	}
	void *m = (void *)0x1234;
	errno = 0;
	EXPECT_U64(posix_memalign(&m, 64, huge_size), ENOMEM);
	EXPECT(m == (void *)0x1234);
	EXPECT_U64(posix_memalign(&m, 64, ptrdiff_max), ENOMEM);
	EXPECT(m == (void *)0x1234);
}

/* aligned_alloc and memalign share glibc's rules: any alignment below 16
 * gives a malloc'd block, others are honoured up to huge values, a
 * non-power-of-two one is rounded up to the next power of two. */
static void test_aligned(const char *what, void *(*fn)(size_t, size_t), int rejects_npot,
			 int enomem_no_errno)
{
	for (size_t a = 1; a <= ((size_t)1 << 21); a *= 2) {
		for (size_t k = 0; k < NALIGN_SIZES; k++) {
			size_t n = align_sizes[k];
			void *p = fn(a, n);
			EXPECT(p != NULL);
			EXPECT_ALIGNED(p, a < 16 ? min_align(n) : a);
			if (n && n <= 100000)
				touch(p, n, a ^ n);
			free(p);
		}
	}
	size_t npot[] = { 24, 48, 96, 3000 };
	for (size_t i = 0; i < sizeof npot / sizeof npot[0]; i++) {
		errno = 0;
		void *p = fn(npot[i], 100);
		if (rejects_npot) {
			EXPECT(p == NULL);
		} else {
			if (!p)
				fprintf(stderr, "%s(%zu, 100) failed\n", what, npot[i]);
			EXPECT(p != NULL);
			size_t want = (size_t)1 << (64 - __builtin_clzll(npot[i] - 1));
			EXPECT_ALIGNED(p, want);
		}
		free(p);
	}
	void *z = fn(0, 100);
	EXPECT(z != NULL || rejects_npot);
	free(z);
	errno = 0;
	void *h = fn(64, huge_size);
	EXPECT(h == NULL);
	EXPECT_ERRNO(ENOMEM, enomem_no_errno);
	errno = 0;
	h = fn(((size_t)1 << 63) + 1, 1); /* above SIZE_MAX/2+1: invalid */
	EXPECT(h == NULL);
	EXPECT_ERRNO(EINVAL, Q.memalign_einval_no_errno || rejects_npot);
}

static void *call_aligned_alloc(size_t a, size_t n)
{
	return aligned_alloc(a, n);
}

static void *call_memalign(size_t a, size_t n)
{
	return memalign(a, n);
}

static void test_aligned_alloc(void)
{
	test_aligned("aligned_alloc", call_aligned_alloc, Q.aligned_alloc_rejects_npot, Q.enomem_no_errno);
}

static void test_memalign(void)
{
	test_aligned("memalign", call_memalign, Q.memalign_rejects_npot,
		     Q.enomem_no_errno || Q.memalign_enomem_no_errno);
}

static void test_valloc(void)
{
	for (size_t k = 0; k < NALIGN_SIZES; k++) {
		void *p = valloc(align_sizes[k]);
		EXPECT(p != NULL);
		EXPECT_ALIGNED(p, page);
		if (align_sizes[k] && align_sizes[k] <= 100000)
			touch(p, align_sizes[k], k);
		free(p);
	}
	errno = 0;
	EXPECT(valloc(huge_size) == NULL);
	EXPECT_ERRNO(ENOMEM, Q.enomem_no_errno || Q.memalign_enomem_no_errno);
	if (Q.no_pvalloc)
		return;
	for (size_t k = 0; k < NALIGN_SIZES; k++) {
		size_t n = align_sizes[k];
		void *p = pvalloc(n);
		EXPECT(p != NULL);
		EXPECT_ALIGNED(p, page);
		EXPECT(malloc_usable_size(p) >= ((n + page - 1) & ~(page - 1)));
		free(p);
	}
	errno = 0;
	void *p = pvalloc(huge_size - 100);
	if (Q.pvalloc_overflow_wraps) {
		free(p);
	} else {
		EXPECT(p == NULL);
		EXPECT_ERRNO(ENOMEM, Q.enomem_no_errno);
	}
}

/* Many live blocks of random sizes and alignments, each with its own
 * pattern: any overlap, or metadata written into a live block, shows. */
static void test_no_overlap(void)
{
	enum { N = 20000 };
	static void *blk[N];
	static size_t len[N];
	uint64_t rng = 42;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < N; i++) {
			if (blk[i])
				continue;
			size_t n = t_rand_size(&rng, round == 2 ? 300000 : 5000);
			uint64_t r = t_rand(&rng) % 16;
			if (r == 0) {
				void *m = NULL;
				EXPECT_U64(posix_memalign(&m, (size_t)64 << (t_rand(&rng) % 8), n), 0);
				blk[i] = m;
			} else if (r == 1) {
				blk[i] = calloc(1, n);
			} else {
				blk[i] = malloc(n);
			}
			EXPECT(blk[i] != NULL);
			len[i] = n;
			t_fill(blk[i], n, (uint64_t)i * 1000003u + round);
		}
		for (int i = 0; i < N; i++)
			if (blk[i] && t_check(blk[i], len[i], (uint64_t)i * 1000003u + round) != len[i]) {
				fprintf(stderr, "block %d (%zu bytes) corrupted\n", i, len[i]);
				EXPECT(0);
				break;
			}
		for (int i = 0; i < N; i++) {
			if (t_rand(&rng) % 2) {
				free(blk[i]);
				blk[i] = NULL;
			}
		}
		/* The survivors keep their patterns under a new round's tag. */
		for (int i = 0; i < N; i++)
			if (blk[i])
				t_fill(blk[i], len[i], (uint64_t)i * 1000003u + round + 1);
	}
	for (int i = 0; i < N; i++) {
		if (blk[i] && t_check(blk[i], len[i], (uint64_t)i * 1000003u + 3) != len[i]) {
			EXPECT(0);
			break;
		}
	}
	for (int i = 0; i < N; i++) {
		free(blk[i]);
		blk[i] = NULL;
	}
}

/* Memory that libc allocates for us comes from the same heap. */
static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static void test_libc(void)
{
	char *s = strdup("allocrr");
	EXPECT(s && strcmp(s, "allocrr") == 0);
	free(s);
	char *a = NULL;
	EXPECT(asprintf(&a, "%s-%d", "x", 42) > 0);
	EXPECT(a && strcmp(a, "x-42") == 0);
	free(a);
	char *buf = NULL;
	size_t blen = 0;
	FILE *f = open_memstream(&buf, &blen);
	for (int i = 0; i < 10000; i++)
		fprintf(f, "%d\n", i);
	fclose(f);
	EXPECT(blen > 40000);
	f = fmemopen(buf, blen, "r");
	char *line = NULL;
	size_t cap = 0;
	long sum = 0;
	while (getline(&line, &cap, f) > 0)
		sum += atol(line);
	fclose(f);
	free(line);
	free(buf);
	EXPECT_U64(sum, 49995000);
	enum { N = 200000 };
	int *v = malloc(N * sizeof *v);
	uint64_t rng = 7;
	for (int i = 0; i < N; i++)
		v[i] = (int)(t_rand(&rng) % 1000000);
	qsort(v, N, sizeof *v, cmp_int); /* glibc's qsort mallocs a buffer */
	int sorted = 1;
	for (int i = 1; i < N; i++)
		sorted &= v[i - 1] <= v[i];
	EXPECT(sorted);
	free(v);
}

/* Blocks allocated in threads, freed by the main thread, and the reverse. */
enum { XT_THREADS = 4, XT_BLOCKS = 5000 };
static void *xt_blocks[XT_THREADS][XT_BLOCKS];

static void *xt_alloc(void *arg)
{
	uintptr_t t = (uintptr_t)arg;
	for (int i = 0; i < XT_BLOCKS; i++) {
		size_t n = 1 + (size_t)(i * 37 + t) % 3000;
		xt_blocks[t][i] = malloc(n);
		t_fill(xt_blocks[t][i], n, t * XT_BLOCKS + i);
	}
	return NULL;
}

static void *xt_free(void *arg)
{
	uintptr_t t = (uintptr_t)arg;
	for (int i = 0; i < XT_BLOCKS; i++)
		free(xt_blocks[t][i]);
	return NULL;
}

static void test_threads(void)
{
	pthread_t th[XT_THREADS];
	for (uintptr_t t = 0; t < XT_THREADS; t++)
		pthread_create(&th[t], NULL, xt_alloc, (void *)t);
	for (int t = 0; t < XT_THREADS; t++)
		pthread_join(th[t], NULL);
	size_t bad = 0;
	for (int t = 0; t < XT_THREADS; t++)
		for (int i = 0; i < XT_BLOCKS; i++) {
			size_t n = 1 + (size_t)(i * 37 + t) % 3000;
			bad += t_check(xt_blocks[t][i], n, (uint64_t)t * XT_BLOCKS + i) != n;
		}
	EXPECT_U64(bad, 0);
	/* Thread t frees the blocks thread t+1 allocated. */
	void *tmp[XT_BLOCKS];
	memcpy(tmp, xt_blocks[0], sizeof tmp);
	for (int t = 0; t < XT_THREADS - 1; t++)
		memcpy(xt_blocks[t], xt_blocks[t + 1], sizeof tmp);
	memcpy(xt_blocks[XT_THREADS - 1], tmp, sizeof tmp);
	for (uintptr_t t = 0; t < XT_THREADS; t++)
		pthread_create(&th[t], NULL, xt_free, (void *)t);
	for (int t = 0; t < XT_THREADS; t++)
		pthread_join(th[t], NULL);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: alloc_api NAME   (run under LD_PRELOAD of NAME's library)\n");
		return 1;
	}
	NAME = argv[1];
	Q = quirks_for(NAME);
	page = (size_t)sysconf(_SC_PAGESIZE);
	RUN(test_provider);
	RUN(test_malloc);
	RUN(test_malloc_failure);
	RUN(test_free);
	RUN(test_calloc);
	RUN(test_realloc);
	RUN(test_reallocarray);
	RUN(test_posix_memalign);
	RUN(test_aligned_alloc);
	RUN(test_memalign);
	RUN(test_valloc);
	RUN(test_no_overlap);
	RUN(test_libc);
	RUN(test_threads);
	if (!test_failures)
		printf("alloc_api %s: all checks passed\n", NAME);
	return TEST_END();
}
