/*
 * torture.h — shared by the recorder torture programs (tests/progs/torture_*.c)
 * and their checker (torture_check.c).
 *
 * Every heap call a torture program wants checked uses a "tagged" size: one
 * in a range no library uses, so the checker can pick exactly the program's
 * own calls out of a trace that also holds libc's. A program counts what it
 * did per op (tt_counts_t, atomic adds) and prints the counts in the same
 * format the checker prints them, so the test compares two texts.
 *
 * Tagged ranges (size of the event, calloc's element size):
 *   [TT_LO, TT_LO + 1000)            tt_mix: one of each call per iteration
 *   [TT_SEQ_LO + w*1000, ... + 1000) worker w's sequence TT_SEQ_SIZE(w, i)
 *   TT_HANDLER                        the mallocs a signal handler makes
 * A shared file (tt_shared_t, mmap'ed MAP_SHARED) lets a program that dies
 * (SIGKILL, exit from a thread) leave what it did behind for the checker.
 */
#ifndef TORTURE_H
#define TORTURE_H
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { TT_MALLOC, TT_CALLOC, TT_REALLOC, TT_REALLOCARRAY, TT_POSIX_MEMALIGN, TT_ALIGNED_ALLOC, TT_MEMALIGN,
       TT_FREE, TT_NOPS };
static const char *const tt_names[TT_NOPS] = {"malloc",         "calloc",        "realloc",  "reallocarray",
					      "posix_memalign", "aligned_alloc", "memalign", "free"};

typedef struct tt_counts {
	_Atomic uint64_t n[TT_NOPS];
} tt_counts_t;

static inline void tt_count(tt_counts_t *c, int op, uint64_t k)
{
	atomic_fetch_add_explicit(&c->n[op], k, memory_order_relaxed);
}

/* The format torture_check prints: "op NAME N" for every op, fixed order. */
static inline void tt_print_counts(FILE *f, const tt_counts_t *c)
{
	for (int i = 0; i < TT_NOPS; i++)
		fprintf(f, "op %s %llu\n", tt_names[i], (unsigned long long)atomic_load(&c->n[i]));
}

static inline uint64_t tt_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the mixed iteration ------------------------------------------------- */
#define TT_LO 61000u /* [61000, 62000): never used by glibc or the loader */
#define TT_HI (TT_LO + 1000u)

/* One iteration: every kind of call once, all blocks freed: 6 allocations
 * (malloc, calloc, realloc of the malloc'ed block, reallocarray,
 * posix_memalign, aligned_alloc, memalign: 7 calls) and 6 frees. */
static inline void tt_mix(unsigned i, tt_counts_t *c)
{
	size_t v = i % 100;
	void *a = malloc(TT_LO + v);
	void *b = calloc(3, TT_LO + 100 + v);
	void *a2 = realloc(a, TT_LO + 200 + v);
	if (a2)
		a = a2;
	void *r = reallocarray(NULL, 2, TT_LO + 300 + v);
	void *p = NULL;
	int rc = posix_memalign(&p, 64, TT_LO + 400 + v);
	void *d = aligned_alloc(64, TT_LO + 448 + 64 * (i % 4));
	void *m = memalign(32, TT_LO + 700 + v);
	free(a);
	free(b);
	free(r);
	free(rc == 0 ? p : NULL);
	free(d);
	free(m);
	if (c) {
		tt_count(c, TT_MALLOC, 1);
		tt_count(c, TT_CALLOC, 1);
		tt_count(c, TT_REALLOC, 1);
		tt_count(c, TT_REALLOCARRAY, 1);
		tt_count(c, TT_POSIX_MEMALIGN, 1);
		tt_count(c, TT_ALIGNED_ALLOC, 1);
		tt_count(c, TT_MEMALIGN, 1);
		tt_count(c, TT_FREE, 6);
	}
}

/* ---- per-worker sequences (prefix checks) ------------------------------------ */
#define TT_SEQ_LO 40000u
#define TT_SEQ_MAXW 16
/* Worker w's i-th malloc: a size that tells i apart from i+1 .. i+996. */
#define TT_SEQ_SIZE(w, i) (TT_SEQ_LO + 1000u * (unsigned)(w) + (unsigned)(((uint64_t)(i) * 7u) % 997u))

/* Signal handlers that allocate use this size (a tcache size: see torture_threads.c). */
#define TT_HANDLER 1000u
#define TT_HANDLER_WARM 999u /* same glibc bin, told apart in the trace */

/* ---- the shared file ------------------------------------------------------------ */
#define TT_MAGIC 0x54525455u
#define TT_PROGRESS 65536 /* progress records kept (a ring) */
typedef struct tt_progress {
	_Atomic uint64_t t_ns; /* CLOCK_MONOTONIC when taken; written last */
	uint64_t done[TT_SEQ_MAXW];
} tt_progress_t;

typedef struct tt_shared {
	uint32_t magic, nworkers;
	_Atomic uint64_t done[TT_SEQ_MAXW];     /* mallocs returned, per worker */
	_Atomic uint64_t snapshot[TT_SEQ_MAXW]; /* done[] just before exit() */
	_Atomic uint64_t snapshot_taken;
	_Atomic uint64_t nprogress;             /* records written so far */
	tt_progress_t progress[TT_PROGRESS];
} tt_shared_t;


/* Create (truncate) PATH as a tt_shared_t for nworkers workers and map it
 * shared; exits with status 2 when it cannot. */
static inline tt_shared_t *tt_shared_create(const char *path, unsigned nworkers)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)sizeof(tt_shared_t)) != 0 || nworkers > TT_SEQ_MAXW) {
		perror(path);
		exit(2);
	}
	tt_shared_t *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (s == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	s->nworkers = nworkers;
	s->magic = TT_MAGIC;
	return s;
}

/* Worker w's endless sequence: malloc i, count it, free it. */
static inline void tt_seq_run(tt_shared_t *s, unsigned w, unsigned burst, unsigned pause_us)
{
	for (uint64_t i = 0;; i++) {
		void *p = malloc(TT_SEQ_SIZE(w, i));
		atomic_store_explicit(&s->done[w], i + 1, memory_order_release);
		free(p);
		if (burst && (i + 1) % burst == 0)
			usleep(pause_us);
	}
}
#endif
