/*
 * alloc_stats.c — proves that the statistics our allocators export are
 * true. Run by tests/e2e/alloc_stats.sh under LD_PRELOAD of each of ours:
 *
 *   alloc_stats NAME
 *
 * Everything is measured as a difference between two snapshots around
 * operations the test controls, in a window where nothing else allocates:
 *   - bytes_in_use moves by exactly the sum of malloc_usable_size() of the
 *     blocks made or freed, for malloc, calloc, realloc and every aligned
 *     function; blocks_in_use, allocs_total, frees_total by the block count;
 *   - the size class / bin of the request counts exactly those blocks;
 *   - large blocks: large_* counters, and bytes_mapped moves with the
 *     mappings, which /proc/self/maps confirms exist and then vanish;
 *   - bytes_mapped never exceeds the anonymous memory /proc/self/maps shows;
 *   - per allocator: pool keeps its chunks after free; tlscache's hits,
 *     misses, cached blocks and cap follow the batch rules (batch and cap
 *     come from the environment the script sets); arena resets chunks when
 *     their objects die and a survivor pins its chunk; freelist coalesces,
 *     grows in place and returns emptied segments.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_test.h"
#include "testing.h"

static ar_allocator_stats_fn stats_fn;
static const char *NAME;

static ar_alloc_stats_t snap(void)
{
	ar_alloc_stats_t s;
	EXPECT_U64(stats_fn(&s), 0);
	return s;
}

/* Index of the bin that counts a block of usable size u: the class whose
 * block size is u (pool, tlscache), or the power-of-two bin holding u. */
static unsigned bin_of(const ar_alloc_stats_t *s, size_t u)
{
	for (unsigned i = 0; i < s->nbins; i++)
		if (s->bins[i].block_bytes >= u)
			return i;
	return s->nbins - 1;
}

enum { N = 1000 };
static void *blk[N];

/* Allocate N blocks with fn(size), check every counter moved exactly, free
 * them, check everything came back. */
static void exact_round(const char *what, size_t size, int kind)
{
	ar_alloc_stats_t s0 = snap(), s1, s2;
	uint64_t usable = 0;
	for (int i = 0; i < N; i++) {
		switch (kind) {
		case 0: blk[i] = malloc(size); break;
		case 1: blk[i] = calloc(1, size); break;
		case 2: blk[i] = aligned_alloc(64, size); break;
		case 3: blk[i] = memalign(4096, size); break;
		default: blk[i] = realloc(malloc(size / 2 + 1), size); break;
		}
		usable += malloc_usable_size(blk[i]);
	}
	s1 = snap();
	size_t u0 = malloc_usable_size(blk[0]);
	unsigned b = bin_of(&s1, u0);
	for (int i = 0; i < N; i++)
		free(blk[i]);
	s2 = snap();
	int before = test_failures;
	EXPECT_U64(s1.bytes_in_use - s0.bytes_in_use, usable);
	EXPECT_U64(s1.blocks_in_use - s0.blocks_in_use, N);
	/* A realloc that moves counts one more allocation and one free. */
	EXPECT(s1.allocs_total - s0.allocs_total >= N);
	EXPECT_U64((s1.allocs_total - s0.allocs_total) - (s1.frees_total - s0.frees_total), N);
	EXPECT_U64(s2.bytes_in_use, s0.bytes_in_use);
	EXPECT_U64(s2.blocks_in_use, s0.blocks_in_use);
	EXPECT_U64(s2.frees_total - s0.frees_total - (s2.allocs_total - s0.allocs_total), 0);
	if (u0 <= 16384 && (kind < 2 || kind == 4)) {
		/* Small blocks: the bin/class of the request counts them all. */
		EXPECT_U64(s1.bins[b].blocks_in_use - s0.bins[b].blocks_in_use, N);
		EXPECT_U64(s2.bins[b].blocks_in_use, s0.bins[b].blocks_in_use);
		/* (a block realloc grew in place was allocated in a smaller bin) */
		EXPECT(kind == 4 || s1.bins[b].allocs_total - s0.bins[b].allocs_total >= N);
	}
	if (test_failures != before)
		fprintf(stderr, "  (%s of %zu bytes)\n", what, size);
}

static void test_exact(void)
{
	size_t sizes[] = { 1, 24, 100, 1000, 5000, 30000, 200000 };
	const char *kinds[] = { "malloc", "calloc", "aligned_alloc(64)", "memalign(4096)", "realloc" };
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		for (int k = 0; k < 5; k++)
			exact_round(kinds[k], sizes[i], k);
	/* In-place realloc (grow and shrink) keeps the sum exact too. */
	ar_alloc_stats_t s0 = snap();
	void *p = malloc(1000);
	for (size_t n = 1000; n < 50000; n += 777)
		p = realloc(p, n);
	for (size_t n = 50000; n > 10; n /= 2)
		p = realloc(p, n);
	ar_alloc_stats_t s1 = snap();
	EXPECT_U64(s1.bytes_in_use - s0.bytes_in_use, malloc_usable_size(p));
	EXPECT_U64(s1.blocks_in_use - s0.blocks_in_use, 1);
	free(p);
	EXPECT_U64(snap().bytes_in_use, s0.bytes_in_use);
}

/* Sum of anonymous (unnamed or [heap]-less) mappings in /proc/self/maps,
 * and whether [p, p+n) lies inside one mapping. Reads with a static buffer
 * so that measuring does not allocate. */
static char maps_buf[1 << 20];

static size_t read_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	size_t n = 0;
	if (!f)
		return 0;
	setvbuf(f, NULL, _IONBF, 0);
	size_t r;
	while ((r = fread(maps_buf + n, 1, sizeof maps_buf - 1 - n, f)) > 0)
		n += r;
	fclose(f);
	maps_buf[n] = '\0';
	return n;
}

static uint64_t maps_anon_bytes(void)
{
	uint64_t total = 0;
	read_maps();
	for (char *l = maps_buf; *l; l = strchr(l, '\n') + 1) {
		unsigned long lo, hi, off;
		char perms[8];
		int name_at = 0;
		if (sscanf(l, "%lx-%lx %7s %lx %*s %*s%n", &lo, &hi, perms, &off, &name_at) == 4) {
			const char *name = l + name_at;
			while (*name == ' ')
				name++;
			if (*name == '\n' || *name == '\0')
				total += hi - lo;
		}
		if (!strchr(l, '\n'))
			break;
	}
	return total;
}

static int mapped(const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p;
	read_maps();
	for (char *l = maps_buf; *l; l = strchr(l, '\n') + 1) {
		unsigned long lo, hi;
		if (sscanf(l, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a + n <= hi)
			return 1;
		if (!strchr(l, '\n'))
			break;
	}
	return 0;
}

static void test_large_and_mapped(void)
{
	enum { L = 3 };
	size_t size = (size_t)8 << 20;
	void *p[L];
	ar_alloc_stats_t s0 = snap();
	uint64_t usable = 0;
	for (int i = 0; i < L; i++) {
		p[i] = malloc(size);
		usable += malloc_usable_size(p[i]);
	}
	ar_alloc_stats_t s1 = snap();
	EXPECT_U64(s1.large_blocks_in_use - s0.large_blocks_in_use, L);
	EXPECT_U64(s1.large_bytes_in_use - s0.large_bytes_in_use, usable);
	/* Each mapping is the block plus at most a header page. */
	uint64_t grew = s1.bytes_mapped - s0.bytes_mapped;
	EXPECT(grew >= usable && grew <= usable + L * (uint64_t)65536);
	EXPECT(s1.bytes_mapped_peak >= s1.bytes_mapped);
	for (int i = 0; i < L; i++)
		EXPECT(mapped(p[i], size));
	EXPECT(maps_anon_bytes() >= s1.bytes_mapped);
	for (int i = 0; i < L; i++)
		free(p[i]);
	ar_alloc_stats_t s2 = snap();
	EXPECT_U64(s2.bytes_mapped, s0.bytes_mapped);
	EXPECT_U64(s2.large_blocks_in_use, s0.large_blocks_in_use);
	for (int i = 0; i < L; i++)
		EXPECT(!mapped(p[i], size));
	EXPECT(s2.munmap_calls > s0.munmap_calls);
}

/* ---- pool --------------------------------------------------------------------- */

static void test_pool(void)
{
	ar_alloc_stats_t s0 = snap();
	for (int i = 0; i < N; i++)
		blk[i] = malloc(100);
	for (int i = 0; i < N; i++)
		free(blk[i]);
	ar_alloc_stats_t s1 = snap();
	unsigned b = bin_of(&s1, 100);
	EXPECT_U64(s1.bins[b].block_bytes, 112);
	/* Freed blocks wait on the class's free list; the chunk stays mapped. */
	EXPECT(s1.bins[b].blocks_free - s0.bins[b].blocks_free <= N);
	EXPECT(s1.bins[b].blocks_free >= N);
	EXPECT(s1.bytes_mapped >= s0.bytes_mapped);
	EXPECT(s1.bins[b].chunks >= 1);
	EXPECT_U64(s1.munmap_calls, s0.munmap_calls);
}

/* ---- tlscache ----------------------------------------------------------------- */

static size_t batch, cap;
static void *handed[5];
static pthread_barrier_t bar;
static ar_alloc_stats_t mid[3];

/* T1 allocates 5 blocks of class 3072 and keeps running until T2, which
 * frees them, has been measured. */
static void *t1_main(void *arg)
{
	(void)arg;
	mid[0] = snap();
	for (int i = 0; i < 5; i++)
		handed[i] = malloc(3000);
	mid[1] = snap();
	pthread_barrier_wait(&bar); /* T2 frees */
	pthread_barrier_wait(&bar); /* main measured */
	return NULL;
}

static void *t2_main(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&bar);
	for (int i = 0; i < 5; i++)
		free(handed[i]);
	mid[2] = snap();
	pthread_barrier_wait(&bar);
	return NULL;
}

static void *cap_main(void *arg)
{
	(void)arg;
	static void *many[4000];
	for (int i = 0; i < 4000; i++)
		many[i] = malloc(16 + (size_t)(i % 64) * 250);
	for (int i = 0; i < 4000; i++)
		free(many[i]);
	ar_alloc_stats_t s = snap();
	/* Only this thread caches anything sizeable now; its cache obeys the cap
	 * and each class holds at most two batches. */
	EXPECT(s.bytes_cached <= cap + 4 * 65536);
	for (unsigned i = 0; i < s.nbins; i++) {
		size_t per = 65536 / s.bins[i].block_bytes;
		size_t bb = batch < per ? batch : (per ? per : 1);
		EXPECT(s.bins[i].blocks_cached <= 2 * bb + 2 * 2 * bb);
	}
	return NULL;
}

static void test_tlscache(void)
{
	const char *e = getenv("ALLOCRR_TLSCACHE_BATCH");
	batch = e ? (size_t)atol(e) : 32;
	e = getenv("ALLOCRR_TLSCACHE_MAX_BYTES");
	cap = e ? (size_t)atol(e) : ((size_t)1 << 20);
	if (batch < 5 || 65536 / 3072 < batch) {
		fprintf(stderr, "test_tlscache needs 5 <= ALLOCRR_TLSCACHE_BATCH <= 21\n");
		EXPECT(0);
		return;
	}
	pthread_t a, b;
	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&a, NULL, t1_main, NULL);
	pthread_create(&b, NULL, t2_main, NULL);
	pthread_join(b, NULL);
	pthread_join(a, NULL);
	ar_alloc_stats_t done = snap();
	unsigned c = bin_of(&mid[0], 3000);
	EXPECT_U64(mid[0].bins[c].block_bytes, 3072);
	/* T1: one miss pulls a batch, the other four are hits; batch-5 stay cached. */
	EXPECT_U64(mid[1].cache_misses - mid[0].cache_misses, 1);
	EXPECT_U64(mid[1].cache_hits - mid[0].cache_hits, 4);
	EXPECT_U64(mid[1].bins[c].blocks_in_use - mid[0].bins[c].blocks_in_use, 5);
	EXPECT_U64(mid[1].bins[c].blocks_cached - mid[0].bins[c].blocks_cached, batch - 5);
	EXPECT_U64(mid[1].bytes_cached - mid[0].bytes_cached, (batch - 5) * 3072);
	/* T2 freed T1's blocks into its own cache: cheap, no flush. */
	EXPECT_U64(mid[2].bins[c].blocks_in_use, mid[0].bins[c].blocks_in_use);
	EXPECT_U64(mid[2].bins[c].blocks_cached - mid[0].bins[c].blocks_cached, batch);
	EXPECT_U64(mid[2].cache_flushes, mid[0].cache_flushes);
	EXPECT_U64(mid[2].threads, mid[0].threads + 2); /* T1 and T2 got caches */
	/* Both exited: their caches went back to the central heap. */
	EXPECT_U64(done.bins[c].blocks_cached, mid[0].bins[c].blocks_cached);
	EXPECT_U64(done.bins[c].blocks_free - mid[0].bins[c].blocks_free, batch);
	EXPECT_U64(done.threads, mid[0].threads);
	EXPECT(done.cache_flushes > mid[0].cache_flushes);
	pthread_create(&a, NULL, cap_main, NULL);
	pthread_join(a, NULL);
}

/* ---- arena -------------------------------------------------------------------- */

static void *arena_main(void *arg)
{
	(void)arg;
	/* Pairs of malloc/free rewind the thread's chunk in place. */
	ar_alloc_stats_t s0 = snap();
	for (int i = 0; i < 100; i++)
		free(malloc(64));
	ar_alloc_stats_t s1 = snap();
	EXPECT(s1.chunk_resets - s0.chunk_resets >= 100);
	void *again = malloc(64), *again2;
	free(again);
	again2 = malloc(64);
	EXPECT(again == again2); /* the same bytes, reused */
	free(again2);

	/* A survivor pins its chunk: fill ~3 chunks, keep the very first block. */
	static void *v[3000];
	for (int i = 0; i < 3000; i++)
		v[i] = malloc(1000);
	ar_alloc_stats_t s2 = snap();
	for (int i = 1; i < 3000; i++)
		free(v[i]);
	ar_alloc_stats_t s3 = snap();
	EXPECT(s3.chunks_in_use >= 2);    /* the pinned one and the one being filled */
	EXPECT(s3.chunks_in_use < s2.chunks_in_use);
	EXPECT_U64(s3.blocks_in_use + 2999, s2.blocks_in_use);
	free(v[0]);
	return NULL;
}

static void test_arena(void)
{
	ar_alloc_stats_t s0 = snap();
	pthread_t t;
	pthread_create(&t, NULL, arena_main, NULL);
	pthread_join(t, NULL);
	ar_alloc_stats_t s1 = snap();
	/* Thread gone, all its objects dead: its chunks are free or unmapped. */
	EXPECT(s1.chunks_in_use <= s0.chunks_in_use + 1); /* pthread's own TLS block may live on */
	EXPECT(s1.chunk_resets > s0.chunk_resets);
	EXPECT_U64(s1.threads, s0.threads);
}

/* ---- freelist ------------------------------------------------------------------- */

static void test_freelist(void)
{
	/* Grow in place into a freed neighbour. */
	char *p = malloc(1000), *q = malloc(1000);
	if (q == p + malloc_usable_size(p) + 8) {
		free(q);
		EXPECT(realloc(p, 1900) == p);
	} else {
		free(q);
	}
	free(p);
	/* Coalescing: three neighbours freed out of order make one chunk that a
	 * bigger request reuses. */
	char *a = malloc(2000), *b = malloc(2000), *c = malloc(2000), *guard = malloc(16);
	int adjacent = b == a + malloc_usable_size(a) + 8 && c == b + malloc_usable_size(b) + 8;
	free(a);
	free(c);
	free(b);
	if (adjacent) {
		ar_alloc_stats_t s = snap();
		unsigned big = bin_of(&s, 6000);
		EXPECT(s.bins[big].blocks_free >= 1);
	}
	free(guard);
	/* Emptied segments go back to the kernel (one is kept). */
	ar_alloc_stats_t s0 = snap();
	for (int i = 0; i < N; i++)
		blk[i] = malloc(8000); /* ~8 MB: several segments */
	ar_alloc_stats_t s1 = snap();
	for (int i = 0; i < N; i++)
		free(blk[i]);
	ar_alloc_stats_t s2 = snap();
	EXPECT(s1.chunks_in_use > s0.chunks_in_use + 2);
	EXPECT(s2.chunks_in_use <= s0.chunks_in_use + 1);
	EXPECT(s2.bytes_mapped <= s0.bytes_mapped + ((uint64_t)1 << 20));
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: alloc_stats NAME   (under LD_PRELOAD of liballocrr-NAME.so)\n");
		return 1;
	}
	NAME = argv[1];
	stats_fn = t_stats_fn();
	if (!stats_fn) {
		fprintf(stderr, "%s not found: not running under one of our allocators\n",
			AR_ALLOC_STATS_SYMBOL);
		return 1;
	}
	/* stdio allocates its buffers on first use: do that before measuring. */
	printf("alloc_stats %s\n", NAME);
	fflush(stdout);
	ar_alloc_stats_t s = snap();
	EXPECT_U64(s.version, AR_ALLOC_STATS_VERSION);
	EXPECT_STR(s.allocator, NAME);
	EXPECT(s.nbins > 0 && s.nbins <= AR_ALLOC_MAX_BINS);
	RUN(test_exact);
	RUN(test_large_and_mapped);
	if (strcmp(NAME, "pool") == 0)
		RUN(test_pool);
	else if (strcmp(NAME, "tlscache") == 0)
		RUN(test_tlscache);
	else if (strcmp(NAME, "arena") == 0)
		RUN(test_arena);
	else if (strcmp(NAME, "freelist") == 0)
		RUN(test_freelist);
	if (!test_failures)
		printf("alloc_stats %s: all checks passed\n", NAME);
	return TEST_END();
}
