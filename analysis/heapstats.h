/*
 * heapstats.h — what a trace says about a program's heap, accumulated in one
 * streaming pass in sequence order: sizes, lifetimes, live bytes over time,
 * per-thread rates, cross-thread frees, realloc patterns, how much a pool or
 * an arena could serve, and allocation sites when stacks were recorded.
 *
 * Memory grows with the live objects (one record each), the distinct sizes,
 * threads and stacks — never with the number of events — so a 100-million-
 * event trace takes the memory of its peak heap population.
 */
#ifndef AR_HEAPSTATS_H
#define AR_HEAPSTATS_H

#include <stdint.h>

#include "ar_trace.h"

#define AR_HS_LOG2 48      /* log2 buckets: [2^i, 2^(i+1)), bucket 0 holds 0 and 1 */
#define AR_HS_TIMELINE 200 /* live-bytes samples over the trace */
#define AR_HS_SMALL 1024   /* "pool-sized": requests up to this many bytes */
#define AR_HS_ARENA_OPS 1000 /* "arena-friendly": freed by its own thread within this many of its calls */

typedef struct ar_hs_thread {
	uint32_t index;
	uint64_t os_tid;
	uint64_t calls, allocs, frees, bytes;
	uint64_t first_ns, last_ns;
	uint64_t cross_frees; /* frees by this thread of blocks another thread allocated */
} ar_hs_thread_t;

typedef struct ar_hs_site {
	uint32_t stack;
	uint64_t calls, bytes;
	uint64_t live_bytes, live_at_peak;
} ar_hs_site_t;

typedef struct ar_hs_size {
	uint64_t size, count;
} ar_hs_size_t;

typedef struct ar_hs_sample {
	uint64_t seq, time_ns, live_bytes, live_objects;
} ar_hs_sample_t;

typedef struct ar_heapstats {
	uint64_t events, calls_by_op[AR_OP_LIMIT];
	uint64_t allocs, frees, failed, free_null, unknown_frees;
	/* A window trace (set `window` before the first event when the header
	 * has AR_HDR_WINDOW): blocks it freed or realloced that predate it, known
	 * by their old_size (SPEC 6.11), and their bytes. peak_live_bytes counts
	 * them (peak_seq 0: the peak is at the window's start); live_bytes and
	 * the timeline count only blocks the trace allocated. */
	int window;
	uint64_t preexisting_blocks, preexisting_bytes;
	uint64_t requested_bytes;
	uint64_t size_log2[AR_HS_LOG2];
	uint64_t life_ops_log2[AR_HS_LOG2];  /* lifetime in the trace's events */
	uint64_t life_ns_log2[AR_HS_LOG2];   /* lifetime in ns */
	uint64_t freed, never_freed, never_freed_bytes;
	uint64_t cross_thread_frees;
	uint64_t small_allocs;          /* requests <= AR_HS_SMALL */
	uint64_t arena_friendly;        /* freed by their own thread within AR_HS_ARENA_OPS of its calls */
	/* realloc */
	uint64_t realloc_grow, realloc_shrink, realloc_same, realloc_in_place, realloc_from_null, realloc_to_zero;
	uint64_t realloc_factor[5]; /* growth new/old: <=1.25, <=1.5, <=2, <=4, >4 */
	/* live bytes */
	uint64_t live_bytes, live_objects, peak_live_bytes, peak_seq, peak_time_ns;
	ar_hs_sample_t timeline[AR_HS_TIMELINE];
	uint32_t ntimeline;
	uint64_t sample_every;
	/* tables (private layout) */
	ar_hs_thread_t *threads;
	uint32_t nthreads, threads_cap, last_thread;
	uint32_t *thread_hash; /* thread index -> position + 1 (ar_hash.h) */
	uint64_t thread_hash_cap;
	ar_hs_size_t *sizes;
	uint64_t nsizes, sizes_cap;
	/* Sites in order of first use from sites[1] on (sites[0] is unused);
	 * stack ids are the trace's (any value up to 2^32-1, SPEC 5.3), so they
	 * are found through site_hash, never used as an index. */
	ar_hs_site_t *sites;
	uint32_t nsites, sites_cap;
	uint32_t *site_hash; /* stack id -> position in sites (ar_hash.h) */
	uint64_t site_hash_cap;
	void *objects;              /* live objects by address */
	uint64_t last_time_ns;
	int pass2, peak_marked;     /* second pass: only site live bytes, to the peak */
} ar_heapstats_t;

/* Prepare for a trace of about `expected_events` (to space the timeline). */
void ar_heapstats_init(ar_heapstats_t *s, uint64_t expected_events);
void ar_heapstats_free(ar_heapstats_t *s);
/* Account one event, given in sequence order. 0 or AR_ENOMEM. */
int ar_heapstats_add(ar_heapstats_t *s, const ar_event_t *e);
/* After the last event: objects still live, final sample. 0 or AR_ENOMEM. */
int ar_heapstats_finish(ar_heapstats_t *s);
/* Start a second pass over the same events (ar_heapstats_add again, from
 * the first event): it only replays the live objects, and when live bytes
 * reach the first pass's peak it records each site's live bytes as its
 * live_at_peak. Counts from the first pass are kept. */
void ar_heapstats_rewind(ar_heapstats_t *s);

/* The site of stack id `stack`, or NULL when no allocation used it. */
const ar_hs_site_t *ar_heapstats_site(const ar_heapstats_t *s, uint32_t stack);

/* Sizes by count, most frequent first (sorts the table in place). */
const ar_hs_size_t *ar_heapstats_top_sizes(ar_heapstats_t *s, uint64_t *n);
/* The size a percentile of allocation requests stays at or below, from the
 * exact size table. */
uint64_t ar_heapstats_size_percentile(ar_heapstats_t *s, double p);

/* ---- the recorded process's RSS (SPEC 6.9, format 1.1) ---------------------- */
#define AR_HS_RSS_POINTS 12 /* samples shown over time, evenly spaced by index */

/* A compact summary of the RSS samples a trace carries. */
typedef struct ar_hs_rss {
	uint32_t n;                 /* samples; 0 = none (every other field 0) */
	uint64_t min_bytes, median_bytes; /* median: the lower middle value */
	uint64_t peak_bytes;        /* the highest sample ... */
	uint64_t peak_time_ns, peak_seq; /* ... the first time it was reached */
	uint64_t first_time_ns, last_time_ns;
	ar_rss_sample_t points[AR_HS_RSS_POINTS]; /* first and last included */
	uint32_t npoints;
} ar_hs_rss_t;

/* Summarise the RSS samples of r into *out. 0, or AR_ENOMEM (the median
 * sorts a copy of the values). */
int ar_heapstats_rss(const ar_reader_t *r, ar_hs_rss_t *out);

#endif
