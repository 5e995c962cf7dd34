/*
 * sites.h — where a trace's heap goes, per allocation site: the model behind
 * `alloctrace stacks` (table and --folded), `alloctrace diff` and the sites
 * table of the results database. Built in one streaming pass over a trace
 * recorded with `allocrec --stacks`, in sequence order, through the trace
 * library's live set (ar_liveset_t, SPEC 4 and 5.5): what is live, when, and
 * the peak are exactly what `alloctrace info|stats` and the replay compiler
 * say. Memory grows with the distinct stacks, threads and live blocks, never
 * with the number of events.
 *
 * A site is one caller chain. Every allocation that returned a block is
 * counted against the stack id its event carries; afterwards each recorded
 * stack is given its label and stacks whose labels are equal (two return
 * addresses in one function, say) are one site. Allocations with stack id 0
 * (none recorded) form the site "[no stack]"; ids no STACK record of the
 * trace defines form "[undefined stack N]" each (a hostile or cut trace),
 * noted once on the notes stream.
 *
 * The label is the folded-stack form flamegraph.pl, inferno and speedscope
 * read: frames outermost first (main before malloc's caller) joined by ';'.
 * A frame is, best known first:
 *   - the function name, C++ demangled ("std::vector<int>::push_back(int&&)"),
 *     without a symbol version ("__libc_start_main", not "...@@GLIBC_2.34");
 *     a call that the compiler inlined is a frame of its own, named after
 *     the inlined function, inside the function it was inlined into
 *     (DWARF inlined subroutines);
 *   - "MODULE+0xOFFSET" (module file name, offset from its recorded base)
 *     when the module is known but the address has no symbol, the file is
 *     missing, stripped, or its build-id differs from the recorded one;
 *   - "0xADDRESS" when no module of the trace covers the address.
 * In a frame, ';' (the separator) becomes ':', and every byte that is not
 * printable ASCII or valid UTF-8, every control character (a newline
 * would end the line) and bidi override, becomes '?'; an empty name is "?".
 * Spaces stay: the three readers split a line at its last space, and C++
 * names have spaces in them.
 *
 * Categories, per site (heaptrack's, on the live-set model):
 *   calls, bytes            allocations that returned a block, and the bytes
 *                           they asked for (ar_event_request_bytes; calloc:
 *                           count * size); a realloc counts as an
 *                           allocation of its result
 *   live_at_peak_*          the site's blocks live at the moment the whole
 *                           trace's live bytes first reached their peak
 *                           (ar_liveset_t.peak_seq; in a window trace the
 *                           peak of the trace's own blocks, pre-existing
 *                           ones belong to no site)
 *   temporary_*             blocks released by the thread that allocated
 *                           them with no other allocation by that thread in
 *                           between (heaptrack: "allocations that are
 *                           directly followed by their deallocation"); as in
 *                           heaptrack a realloc is the release of its input,
 *                           so a buffer grown by realloc right after its
 *                           allocation was temporary; a block another thread
 *                           frees never is
 *   leaked_*                blocks still live at the end of the trace
 * Byte figures saturate at 2^64-1 (a hostile trace may claim any size).
 *
 * Typical use:
 *   ar_sites_t *m;
 *   if (ar_sites_build(&m, r, &(ar_sites_opts_t){.symbolize = 1, .name = path}, &err) == 0) {
 *           ar_sites_sort(m, AR_SITE_BYTES);
 *           for (size_t i = 0; i < ar_sites_count(m); i++) {
 *                   const ar_site_t *s = ar_sites_at(m, i);
 *                   printf("%s %" PRIu64 "\n", s->label, s->bytes);
 *           }
 *           ar_sites_free(m);
 *   }
 */
#ifndef AR_SITES_H
#define AR_SITES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ar_trace.h"

struct ar_sym;

/* The figures of one site, and what can order or value them. */
typedef enum ar_site_metric {
	AR_SITE_CALLS,
	AR_SITE_BYTES,
	AR_SITE_LIVE_AT_PEAK, /* bytes */
	AR_SITE_TEMPORARY,    /* calls */
	AR_SITE_LEAKED,       /* bytes */
	AR_SITE_NMETRICS
} ar_site_metric_t;

typedef struct ar_site {
	const char *label; /* folded caller chain (above); valid until ar_sites_free */
	uint64_t calls, bytes;
	uint64_t live_at_peak_bytes, live_at_peak_blocks;
	uint64_t temporary_calls, temporary_bytes;
	uint64_t leaked_bytes, leaked_blocks;
	uint32_t stack;   /* the lowest recorded stack id labelled so; 0 for "[no stack]" */
	uint32_t nstacks; /* recorded stack ids merged into this site */
} ar_site_t;

/* What the pass saw of the whole trace. */
typedef struct ar_sites_summary {
	uint64_t events;                 /* events read (the valid prefix) */
	uint64_t calls, bytes;           /* over every site */
	uint64_t peak_live_bytes, peak_seq; /* the live set's (ar_liveset_t) */
	uint64_t leaked_bytes, leaked_blocks;
	uint64_t no_stack_calls;         /* allocations carrying stack id 0 */
	uint64_t undefined_stack_calls;  /* allocations naming an id the trace does not define */
	uint32_t stacks;                 /* STACK records in the trace */
	uint32_t unsymbolised_modules;   /* modules missing or rebuilt (build-id differs): frames as module+offset */
	uint64_t bare_frames;            /* frames labelled MODULE+0xOFFSET or 0xADDRESS, counted per stack */
	ar_status_t status;              /* COMPLETE, or how the events stopped (then figures are of the prefix) */
	ar_error_t error;                /* where and why, when status is not COMPLETE */
} ar_sites_summary_t;

typedef struct ar_sites_opts {
	int symbolize;      /* 0: no libdw, no file the module map names is opened; frames as module+offset */
	struct ar_sym *sym; /* a symboliser of this reader to use (not closed), or NULL to open one when symbolize */
	FILE *notes;        /* where fallbacks are noted ("alloctrace: NAME: ..."), NULL for none */
	const char *name;   /* the trace's name in notes, NULL for "trace" */
} ar_sites_opts_t;

typedef struct ar_sites ar_sites_t;

/*
 * Read every event of r (from its first, in sequence order; r is rewound
 * first) and build its sites, labelled as opt says. A trace without stacks
 * gives the one site "[no stack]". A trace that is truncated or corrupt
 * part way is not an error: the model is of the events before the problem
 * and the summary's status and error say so. Returns 0 with *out, or
 * AR_ENOMEM / AR_EINVAL (err filled when not NULL).
 */
int ar_sites_build(ar_sites_t **out, ar_reader_t *r, const ar_sites_opts_t *opt, ar_error_t *err);
void ar_sites_free(ar_sites_t *m);

/* Sites, ordered by label (strcmp) until ar_sites_sort. */
size_t ar_sites_count(const ar_sites_t *m);
const ar_site_t *ar_sites_at(const ar_sites_t *m, size_t i);
/* The site labelled label, or NULL (a binary search, whatever the order). */
const ar_site_t *ar_sites_find(const ar_sites_t *m, const char *label);
/* Order the sites by metric, largest first, ties by label (pointers from
 * ar_sites_at and ar_sites_find stay valid: only the order changes). */
void ar_sites_sort(ar_sites_t *m, ar_site_metric_t by);
/* The figures of one recorded stack id, before labels merged it with
 * others (site->label is then that site's label), or NULL when no
 * allocation carried it. */
const ar_site_t *ar_sites_of_stack(const ar_sites_t *m, uint32_t stack);
const ar_sites_summary_t *ar_sites_summary(const ar_sites_t *m);

/* The value of metric for s. */
uint64_t ar_site_value(const ar_site_t *s, ar_site_metric_t metric);
/* "calls", "bytes", "live-at-peak", "temporary", "leaked". */
const char *ar_site_metric_name(ar_site_metric_t metric);
/* The metric named name (as above); 0, or -1 for an unknown name. */
int ar_site_metric_parse(const char *name, ar_site_metric_t *out);

/* Write the folded stacks of m, one line "LABEL VALUE" per site whose value
 * of metric is not 0, in the current order. Returns 0, or -1 when writing
 * failed (errno set). */
int ar_sites_write_folded(const ar_sites_t *m, ar_site_metric_t metric, FILE *f);

#endif
