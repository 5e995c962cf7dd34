/*
 * sites.c — the per-site model of sites.h: one pass over a trace in
 * sequence order through the trace library's live set, then a label per
 * recorded stack and the stacks merged by label.
 *
 * Invariants: every block the live set holds is tagged (thread << 32) |
 * record, the record being its allocating stack's; a record's live figures
 * are exact (128-bit) and change only in the live set's callbacks.
 *
 * Live at the peak, in the same pass (no second one): `epoch` counts the
 * peaks reached so far. Before a record's live figures change, when it was
 * last touched in an earlier epoch its live figures still are what they
 * were at the latest peak, so they are saved as its at-peak figures; at the
 * end every record not touched since the last peak takes its current ones.
 * A new peak costs O(1), not a walk of every site.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_hash.h"
#include "ar_symbolize.h"
#include "livemap.h"
#include "sites.h"

/* One recorded stack id and what its allocations did. */
typedef struct rec {
	ar_site_t s;            /* figures; label set after the pass */
	unsigned __int128 live; /* bytes live now */
	uint64_t live_blocks;
	unsigned __int128 peak; /* bytes live at the latest peak before `epoch` */
	uint64_t peak_blocks;
	uint64_t epoch;         /* the epoch its live figures last changed in */
	int undefined;          /* no STACK record defines it */
	char *label;            /* owned */
} rec_t;

/* A thread's last allocation (heaptrack's temporaries). */
typedef struct thread_last {
	uint32_t thread;
	uint64_t last; /* its address */
} thread_last_t;

struct ar_sites {
	rec_t *recs;
	uint32_t nrecs, recs_cap;
	uint32_t *by_stack;  /* stack id -> record + 1 (ar_hash.h) */
	uint64_t by_stack_cap;
	thread_last_t *threads;
	uint32_t nthreads, threads_cap;
	uint32_t *by_thread; /* thread -> its entry in threads + 1 (ar_hash.h) */
	uint64_t by_thread_cap;
	ar_liveset_t ls;
	__int128 high;       /* the highest live_exact - pre-existing bytes released (the peak's moment) */
	uint64_t epoch;
	int nomem;
	ar_site_t *sites;    /* merged by label, in label order (ar_sites_find searches it) */
	size_t *order;       /* the order ar_sites_at gives: indexes into sites */
	size_t nsites;
	ar_sites_summary_t sum;
};

/* Index tables (common/ar_hash.h), value position + 1, 0 = empty: stack id
 * -> record, thread -> its thread_last_t; the key is read back from the
 * array. */
#define IDX_EMPTY(e) (*(e) == 0)
#define STACK_KEY(ctx, e) (((const ar_sites_t *)(ctx))->recs[*(e) - 1].s.stack)
#define THREAD_KEY(ctx, e) (((const ar_sites_t *)(ctx))->threads[*(e) - 1].thread)
AR_HASH_DEFINE(stack_idx, uint32_t, IDX_EMPTY, STACK_KEY, ar_hash_fib)
AR_HASH_DEFINE_GROW(stack_idx, uint32_t, AR_HASH_CALLOC, AR_HASH_FREE)
AR_HASH_DEFINE(thread_idx, uint32_t, IDX_EMPTY, THREAD_KEY, ar_hash_fib)
AR_HASH_DEFINE_GROW(thread_idx, uint32_t, AR_HASH_CALLOC, AR_HASH_FREE)

/* ---- the pass ----------------------------------------------------------------- */

/* The record of stack id `stack`, created on first use; NULL when out of memory. */
static rec_t *rec_of(ar_sites_t *m, uint32_t stack, uint32_t *index)
{
	uint64_t h = stack_idx_find(m->by_stack, m->by_stack_cap - 1, m, stack);
	if (h != AR_HASH_ABSENT) {
		*index = m->by_stack[h] - 1;
		return &m->recs[*index];
	}
	if (m->nrecs == UINT32_MAX - 1 || stack_idx_reserve(&m->by_stack, &m->by_stack_cap, m->nrecs, 64, m))
		return NULL;
	if (m->nrecs == m->recs_cap) {
		uint32_t cap = m->recs_cap ? 2 * m->recs_cap : 64;
		rec_t *r = cap > m->recs_cap ? realloc(m->recs, (size_t)cap * sizeof *r) : NULL;
		if (!r)
			return NULL;
		m->recs = r;
		m->recs_cap = cap;
	}
	rec_t *r = &m->recs[m->nrecs];
	memset(r, 0, sizeof *r);
	r->s.stack = stack;
	r->s.nstacks = 1;
	r->epoch = m->epoch;
	m->by_stack[stack_idx_pos(m->by_stack, m->by_stack_cap - 1, m, stack)] = m->nrecs + 1;
	*index = m->nrecs++;
	return r;
}

/* Where thread `thread` keeps the address of its last allocation; NULL when out of memory. */
static uint64_t *thread_last(ar_sites_t *m, uint32_t thread)
{
	uint64_t h = thread_idx_find(m->by_thread, m->by_thread_cap - 1, m, thread);
	if (h != AR_HASH_ABSENT)
		return &m->threads[m->by_thread[h] - 1].last;
	if (m->nthreads == UINT32_MAX - 1 ||
	    thread_idx_reserve(&m->by_thread, &m->by_thread_cap, m->nthreads, 16, m))
		return NULL;
	if (m->nthreads == m->threads_cap) {
		uint32_t cap = m->threads_cap ? 2 * m->threads_cap : 16;
		thread_last_t *t = cap > m->threads_cap ? realloc(m->threads, (size_t)cap * sizeof *t) : NULL;
		if (!t)
			return NULL;
		m->threads = t;
		m->threads_cap = cap;
	}
	m->threads[m->nthreads] = (thread_last_t){.thread = thread};
	m->by_thread[thread_idx_pos(m->by_thread, m->by_thread_cap - 1, m, thread)] = m->nthreads + 1;
	return &m->threads[m->nthreads++].last;
}

/* r's live figures are about to change: keep what they were at the latest peak. */
static void touch(ar_sites_t *m, rec_t *r)
{
	if (r->epoch != m->epoch) {
		r->peak = r->live;
		r->peak_blocks = r->live_blocks;
		r->epoch = m->epoch;
	}
}

static void on_acquired(void *ctx, const ar_live_t *b)
{
	ar_sites_t *m = ctx;
	rec_t *r = &m->recs[(uint32_t)b->tag];
	touch(m, r);
	r->live += b->bytes;
	r->live_blocks++;
	uint64_t *last = thread_last(m, (uint32_t)(b->tag >> 32));
	if (last)
		*last = b->ptr;
	else
		m->nomem = 1;
	/* the moment of the peak, as ar_liveset_t decides it (SPEC 4) */
	__int128 now = (__int128)m->ls.live_exact - (__int128)m->ls.preexisting_exact;
	if (now > m->high) {
		m->high = now;
		m->epoch++;
	}
}

/* heaptrack's temporary: released by its allocating thread, whose last
 * allocation it still is (no other allocation by that thread in between). */
static void on_released(void *ctx, const ar_live_t *b, const ar_event_t *by)
{
	ar_sites_t *m = ctx;
	rec_t *r = &m->recs[(uint32_t)b->tag];
	touch(m, r);
	r->live -= b->bytes;
	r->live_blocks--;
	uint32_t thread = (uint32_t)(b->tag >> 32);
	uint64_t *last = thread_last(m, thread);
	if (!last) {
		m->nomem = 1;
		return;
	}
	if (*last == b->ptr) {
		if (by && by->thread == thread) {
			r->s.temporary_calls++;
			r->s.temporary_bytes = ar_sat_add(r->s.temporary_bytes, b->bytes);
		}
		*last = 0;
	}
}

static uint64_t sat128(unsigned __int128 v)
{
	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

/* Every event of r in sequence order into m. 0 or AR_ENOMEM. */
static int pass(ar_sites_t *m, ar_reader_t *r)
{
	ar_event_t e;
	int rc;
	ar_reader_rewind(r);
	while ((rc = ar_reader_next_merged(r, &e)) == 1) {
		m->sum.events++;
		uint64_t tag = 0;
		/* what ar_liveset_apply acquires (any op but free with a result,
		 * an op only the header's table names too) is an allocation */
		if (e.op != AR_OP_FREE && e.result) {
			uint32_t idx;
			rec_t *rec = rec_of(m, e.stack, &idx);
			if (!rec)
				return AR_ENOMEM;
			rec->s.calls++;
			rec->s.bytes = ar_sat_add(rec->s.bytes, ar_event_request_bytes(&e));
			tag = ((uint64_t)e.thread << 32) | idx;
		}
		if (ar_liveset_apply(&m->ls, &e, tag) || m->nomem)
			return AR_ENOMEM;
	}
	if (ar_liveset_advance(&m->ls, UINT64_MAX) || m->nomem)
		return AR_ENOMEM;
	m->sum.status = ar_reader_status(r);
	if (rc < 0) {
		m->sum.status = AR_STATUS_CORRUPT;
		m->sum.error = *ar_reader_error(r);
	} else if (m->sum.status != AR_STATUS_COMPLETE) {
		m->sum.error = *ar_reader_error(r);
	}
	m->sum.peak_live_bytes = m->ls.peak_live_bytes;
	m->sum.peak_seq = m->ls.peak_seq;
	for (uint32_t i = 0; i < m->nrecs; i++) {
		rec_t *x = &m->recs[i];
		touch(m, x); /* the figures at the last peak, if they changed since */
		x->s.live_at_peak_bytes = sat128(x->peak);
		x->s.live_at_peak_blocks = x->peak_blocks;
		x->s.leaked_bytes = sat128(x->live);
		x->s.leaked_blocks = x->live_blocks;
	}
	return 0;
}

/* ---- labels --------------------------------------------------------------------- */

typedef struct strbuf {
	char *p;
	size_t len, cap;
	int nomem;
	uint64_t frames, bare; /* frames written, and those without a function name */
} strbuf_t;

static void sb_putn(strbuf_t *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->nomem = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void sb_puts(strbuf_t *b, const char *s) { sb_putn(b, s, strlen(s)); }

/* The length of the valid UTF-8 character at s (1-4), or 0 when it is not one
 * or is a control character (C1 controls, U+0080-U+009F). */
static size_t utf8_char(const unsigned char *s)
{
	if (s[0] < 0x80)
		return s[0] >= 0x20 && s[0] != 0x7f;
	size_t n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 0; /* C1 control */
	if ((n == 3 && s[0] == 0xe0 && s[1] < 0xa0) || (n == 3 && s[0] == 0xed && s[1] >= 0xa0) ||
	    (n == 4 && s[0] == 0xf0 && s[1] < 0x90) || (n == 4 && s[0] == 0xf4 && s[1] >= 0x90))
		return 0; /* overlong, surrogate, past U+10FFFF */
	if (n == 3 && s[0] == 0xe2 && s[1] == 0x80 && s[2] >= 0xaa && s[2] <= 0xae)
		return 0; /* bidi overrides */
	if (n == 3 && s[0] == 0xe2 && s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9)
		return 0; /* bidi isolates */
	return n;
}

/* One frame name into the label, as sites.h says: ';' -> ':', anything not
 * printable -> '?'. */
static void sb_frame(strbuf_t *b, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	while (*u) {
		size_t n = utf8_char(u);
		if (n == 0) {
			sb_putn(b, "?", 1);
			u++;
		} else if (*u == ';') {
			sb_putn(b, ":", 1);
			u++;
		} else {
			sb_putn(b, (const char *)u, n);
			u += n;
		}
	}
	if (u == (const unsigned char *)s)
		sb_putn(b, "?", 1); /* an empty name would merge with its neighbour */
}

/* A function name without the symbol version the symbol table may carry
 * ("__libc_start_main@@GLIBC_2.34"): one function, whichever version. */
static void sb_function(strbuf_t *b, const char *name)
{
	const char *at = strchr(name, '@');
	size_t keep = at && at > name && strspn(at + 1 + (at[1] == '@'), "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
									   "abcdefghijklmnopqrstuvwxyz0123456789_.") ==
						     strlen(at + 1 + (at[1] == '@')) ? (size_t)(at - name) : strlen(name);
	char buf[512];
	if (keep < strlen(name) && keep < sizeof buf) {
		memcpy(buf, name, keep);
		buf[keep] = 0;
		sb_frame(b, buf);
	} else {
		sb_frame(b, name);
	}
}

/* "MODULE+0xOFF" or "0xADDR" for an address without a symbol. */
static void sb_address(strbuf_t *b, const char *module, uint64_t off, uint64_t addr)
{
	char num[40];
	b->bare++;
	if (module) {
		const char *base = strrchr(module, '/');
		sb_frame(b, base && base[1] ? base + 1 : module);
		snprintf(num, sizeof num, "+0x%" PRIx64, off);
	} else {
		snprintf(num, sizeof num, "0x%" PRIx64, addr);
	}
	sb_puts(b, num);
}

/* Frames of one address, outermost first, each followed by ';'. */
static void sb_addr_frames(strbuf_t *b, const ar_reader_t *r, ar_sym_t *sym, uint64_t addr)
{
	if (sym) {
		ar_sym_frame_t f[AR_SYM_INLINE_MAX];
		int n = ar_sym_lookup_inline(sym, addr, f, AR_SYM_INLINE_MAX);
		if (n > AR_SYM_INLINE_MAX)
			n = AR_SYM_INLINE_MAX;
		for (int i = n - 1; i >= 0; i--) {
			b->frames++;
			if (f[i].function)
				sb_function(b, f[i].function);
			else
				sb_address(b, f[i].module, f[i].module_offset, addr);
			sb_putn(b, ";", 1);
		}
		return;
	}
	const ar_module_info_t *m = NULL;
	for (uint32_t i = 0; i < ar_reader_module_count(r); i++) { /* later records win, as in symbolize.c */
		const ar_module_info_t *x = ar_reader_module(r, i);
		if (addr >= x->base && addr - x->base < x->size)
			m = x;
	}
	b->frames++;
	sb_address(b, m ? m->path : NULL, m ? addr - m->base : 0, addr);
	sb_putn(b, ";", 1);
}

/* The label of record x; frames and bare frames added to *frames, *bare.
 * 0, or -1 when out of memory. */
static int label_rec(rec_t *x, const ar_reader_t *r, ar_sym_t *sym, uint64_t *frames_n, uint64_t *bare)
{
	strbuf_t b = {0};
	uint32_t depth = 0;
	const uint64_t *frames = x->s.stack ? ar_reader_stack(r, x->s.stack, &depth) : NULL;
	if (!x->s.stack) {
		sb_puts(&b, "[no stack]");
	} else if (!frames || !depth) {
		char t[48];
		snprintf(t, sizeof t, frames ? "[empty stack %" PRIu32 "]" : "[undefined stack %" PRIu32 "]", x->s.stack);
		sb_puts(&b, t);
		x->undefined = !frames;
	} else {
		for (uint32_t i = depth; i-- > 0;) /* frames are innermost first */
			sb_addr_frames(&b, r, sym, frames[i]);
		if (b.len)
			b.p[--b.len] = 0; /* the last ';' */
	}
	if (b.nomem || !b.p) {
		free(b.p);
		return -1;
	}
	*frames_n += b.frames;
	*bare += b.bare;
	x->label = b.p;
	x->s.label = b.p;
	return 0;
}

static int cmp_rec_label(const void *a, const void *b)
{
	const rec_t *x = *(rec_t *const *)a, *y = *(rec_t *const *)b;
	int c = strcmp(x->label, y->label);
	return c ? c : (x->s.stack > y->s.stack) - (x->s.stack < y->s.stack);
}

/* Sites from records, one per distinct label (sorted). 0 or -1. */
static int merge_labels(ar_sites_t *m)
{
	rec_t **v = malloc((m->nrecs ? m->nrecs : 1) * sizeof *v);
	m->sites = calloc(m->nrecs ? m->nrecs : 1, sizeof *m->sites);
	m->order = calloc(m->nrecs ? m->nrecs : 1, sizeof *m->order);
	if (!v || !m->sites || !m->order) {
		free(v);
		return -1;
	}
	for (uint32_t i = 0; i < m->nrecs; i++)
		v[i] = &m->recs[i];
	qsort(v, m->nrecs, sizeof *v, cmp_rec_label);
	for (uint32_t i = 0; i < m->nrecs; i++) {
		const ar_site_t *x = &v[i]->s;
		ar_site_t *s = m->nsites ? &m->sites[m->nsites - 1] : NULL;
		if (!s || strcmp(s->label, x->label) != 0) {
			m->sites[m->nsites++] = *x;
			continue;
		}
		s->nstacks++;
		s->calls += x->calls;
		s->bytes = ar_sat_add(s->bytes, x->bytes);
		s->live_at_peak_bytes = ar_sat_add(s->live_at_peak_bytes, x->live_at_peak_bytes);
		s->live_at_peak_blocks += x->live_at_peak_blocks;
		s->temporary_calls += x->temporary_calls;
		s->temporary_bytes = ar_sat_add(s->temporary_bytes, x->temporary_bytes);
		s->leaked_bytes = ar_sat_add(s->leaked_bytes, x->leaked_bytes);
		s->leaked_blocks += x->leaked_blocks;
	}
	free(v);
	for (size_t i = 0; i < m->nsites; i++)
		m->order[i] = i;
	return 0;
}

/* ---- the API ----------------------------------------------------------------------- */

int ar_sites_build(ar_sites_t **out, ar_reader_t *r, const ar_sites_opts_t *opt, ar_error_t *err)
{
	ar_error_t e0 = {0};
	if (!err)
		err = &e0;
	if (!out || !r || !opt) {
		*err = (ar_error_t){.code = AR_EINVAL};
		snprintf(err->msg, sizeof err->msg, "ar_sites_build: NULL argument");
		return AR_EINVAL;
	}
	*out = NULL;
	ar_sites_t *m = calloc(1, sizeof *m);
	if (!m)
		goto nomem;
	ar_liveset_init(&m->ls, on_released, on_acquired, m);
	m->ls.window = (ar_reader_header(r)->flags & AR_HDR_WINDOW) != 0; /* SPEC 6.11 */
	if (pass(m, r))
		goto nomem;
	ar_liveset_free(&m->ls);
	m->sum.stacks = ar_reader_stack_count(r);

	ar_sym_t *sym = opt->sym;
	const char *name = opt->name ? opt->name : "trace";
	if (!sym && opt->symbolize && m->sum.stacks) {
		uint32_t skipped = 0;
		int src = ar_sym_open(&sym, r, &skipped);
		if (src && opt->notes)
			fprintf(opt->notes, "alloctrace: %s: cannot set up symbolisation (%s): frames show module+offset\n",
				name, ar_strerror(src));
		m->sum.unsymbolised_modules = skipped;
		if (skipped && opt->notes)
			fprintf(opt->notes,
				"alloctrace: %s: %u module(s) missing or rebuilt since recording (build-id differs): "
				"their frames show module+offset\n",
				name, skipped);
	}
	int bad = 0;
	uint64_t nframes = 0, bare = 0;
	for (uint32_t i = 0; i < m->nrecs && !bad; i++) {
		rec_t *x = &m->recs[i];
		bad = label_rec(x, r, sym, &nframes, &bare) != 0;
		m->sum.calls += x->s.calls;
		m->sum.bytes = ar_sat_add(m->sum.bytes, x->s.bytes);
		m->sum.leaked_bytes = ar_sat_add(m->sum.leaked_bytes, x->s.leaked_bytes);
		m->sum.leaked_blocks += x->s.leaked_blocks;
		if (!x->s.stack)
			m->sum.no_stack_calls += x->s.calls;
		if (x->undefined)
			m->sum.undefined_stack_calls += x->s.calls;
	}
	if (sym != opt->sym)
		ar_sym_close(sym);
	if (bare && opt->notes && (opt->symbolize || opt->sym))
		fprintf(opt->notes,
			"alloctrace: %s: %" PRIu64 " of %" PRIu64 " frames have no symbol (a stripped or missing "
			"module, or code outside any): shown as MODULE+0xOFFSET\n",
			name, bare, nframes);
	m->sum.bare_frames = bare;
	if (bad || merge_labels(m))
		goto nomem;
	if (m->sum.undefined_stack_calls && opt->notes)
		fprintf(opt->notes,
			"alloctrace: %s: %" PRIu64 " allocation(s) name a stack id the trace does not define: "
			"shown as [undefined stack N]\n",
			name, m->sum.undefined_stack_calls);
	*out = m;
	return 0;
nomem:
	ar_sites_free(m);
	*err = (ar_error_t){.code = AR_ENOMEM};
	snprintf(err->msg, sizeof err->msg, "out of memory building the allocation sites");
	return AR_ENOMEM;
}

void ar_sites_free(ar_sites_t *m)
{
	if (!m)
		return;
	ar_liveset_free(&m->ls);
	for (uint32_t i = 0; i < m->nrecs; i++)
		free(m->recs[i].label);
	free(m->recs);
	free(m->by_stack);
	free(m->by_thread);
	free(m->threads);
	free(m->sites);
	free(m->order);
	free(m);
}

size_t ar_sites_count(const ar_sites_t *m) { return m ? m->nsites : 0; }

const ar_site_t *ar_sites_at(const ar_sites_t *m, size_t i)
{
	return m && i < m->nsites ? &m->sites[m->order[i]] : NULL;
}

const ar_site_t *ar_sites_find(const ar_sites_t *m, const char *label)
{
	size_t lo = 0, hi = m && label ? m->nsites : 0; /* sites stay in label order */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(m->sites[mid].label, label);
		if (!c)
			return &m->sites[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const ar_site_t *ar_sites_of_stack(const ar_sites_t *m, uint32_t stack)
{
	uint64_t h = m ? stack_idx_find(m->by_stack, m->by_stack_cap - 1, m, stack) : AR_HASH_ABSENT;
	return h != AR_HASH_ABSENT ? &m->recs[m->by_stack[h] - 1].s : NULL;
}

const ar_sites_summary_t *ar_sites_summary(const ar_sites_t *m) { return m ? &m->sum : NULL; }

uint64_t ar_site_value(const ar_site_t *s, ar_site_metric_t metric)
{
	switch (metric) {
	case AR_SITE_CALLS: return s->calls;
	case AR_SITE_BYTES: return s->bytes;
	case AR_SITE_LIVE_AT_PEAK: return s->live_at_peak_bytes;
	case AR_SITE_TEMPORARY: return s->temporary_calls;
	case AR_SITE_LEAKED: return s->leaked_bytes;
	default: return 0;
	}
}

static const char *const metric_names[AR_SITE_NMETRICS] = {"calls", "bytes", "live-at-peak", "temporary", "leaked"};

const char *ar_site_metric_name(ar_site_metric_t metric)
{
	return (unsigned)metric < AR_SITE_NMETRICS ? metric_names[metric] : "?";
}

int ar_site_metric_parse(const char *name, ar_site_metric_t *out)
{
	for (int i = 0; name && i < AR_SITE_NMETRICS; i++)
		if (!strcmp(name, metric_names[i])) {
			*out = (ar_site_metric_t)i;
			return 0;
		}
	return -1;
}

static ar_site_metric_t sort_metric; /* qsort has no context argument */
static const ar_site_t *sort_sites;

static int cmp_site(const void *a, const void *b)
{
	const ar_site_t *x = &sort_sites[*(const size_t *)a], *y = &sort_sites[*(const size_t *)b];
	uint64_t vx = ar_site_value(x, sort_metric), vy = ar_site_value(y, sort_metric);
	if (vx != vy)
		return vx < vy ? 1 : -1;
	return strcmp(x->label, y->label);
}

void ar_sites_sort(ar_sites_t *m, ar_site_metric_t by)
{
	if (!m || !m->nsites)
		return;
	sort_metric = by;
	sort_sites = m->sites;
	qsort(m->order, m->nsites, sizeof *m->order, cmp_site);
}

int ar_sites_write_folded(const ar_sites_t *m, ar_site_metric_t metric, FILE *f)
{
	for (size_t i = 0; m && i < m->nsites; i++) {
		const ar_site_t *s = ar_sites_at(m, i);
		uint64_t v = ar_site_value(s, metric);
		if (v)
			fprintf(f, "%s %" PRIu64 "\n", s->label, v);
	}
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}
