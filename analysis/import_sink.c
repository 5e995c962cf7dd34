/*
 * import_sink.c — the trace an import writes: heap calls arrive in the
 * source's global order and leave through the trace library's writer (no
 * second encoder), one events buffer per thread, sequence numbers handed
 * out in arrival order (SPEC 4: a realloc takes seq and seq2 in turn).
 *
 * Invariants: a thread's buffer holds only its own events, in increasing
 * seq; the first 64 threads holding events get full 1 MiB buffers, later
 * ones 64 KiB (smaller blocks, bounded memory for traces of thousands of
 * threads), and a buffer is written out and freed when its thread is done.
 * Threads are announced by THREAD_START records with seq and time 0, the
 * reader's "start not seen" (the sources do not say when a thread began),
 * so that a thread with no events still has its OS tid.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_hash.h"
#include "import.h"

#define FULL_BUFFERS 64
#define SMALL_BUFFER_BYTES (1024u * 2 * AR_EVENT_SLOT_BYTES) /* at least 1024 events */

typedef struct imp_thread {
	uint8_t *mem; /* NULL until its first event, and again once done */
	ar_evbuf_t buf;
	uint64_t os_tid;
} imp_thread_t;

/* Open addressing on a 64-bit key (tid or caller address); a value of 0
 * marks an empty slot, so values are stored + 1. */
typedef struct imp_entry {
	uint64_t key;
	uint32_t val; /* + 1; 0 = empty */
} imp_entry_t;

typedef struct imp_map { /* common/ar_hash.h */
	imp_entry_t *tab;
	uint64_t cap, len;
} imp_map_t;

struct ar_import {
	ar_writer_t *w;
	ar_error_t *err;
	uint64_t seq, end_time_ns;
	imp_thread_t *th;
	uint32_t nth, cap_th, full_buffers;
	imp_map_t tids, stacks;
	struct { /* a direct-mapped cache in front of tids: lines of a few threads interleave */
		uint64_t tid;
		uint32_t index; /* + 1; 0 = empty */
	} cache[256];
	ar_metabuf_t meta;
	uint8_t *meta_mem;
};

static inline uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

#define IMP_EMPTY(e) ((e)->val == 0)
#define IMP_KEY(ctx, e) ((e)->key)
AR_HASH_DEFINE(imp_map, imp_entry_t, IMP_EMPTY, IMP_KEY, mix)
AR_HASH_DEFINE_GROW(imp_map, imp_entry_t, AR_HASH_CALLOC, AR_HASH_FREE)

/* Set key to val (val < UINT32_MAX). 0 or AR_ENOMEM. */
static int map_put(imp_map_t *m, uint64_t key, uint32_t val)
{
	if (imp_map_reserve(&m->tab, &m->cap, m->len, 1024, NULL))
		return AR_ENOMEM;
	imp_entry_t *e = &m->tab[imp_map_pos(m->tab, m->cap - 1, NULL, key)];
	if (!e->val)
		m->len++;
	*e = (imp_entry_t){key, val + 1};
	return 0;
}

/* 1 with *val when key is in m, else 0. */
static int map_get(const imp_map_t *m, uint64_t key, uint32_t *val)
{
	uint64_t i = imp_map_find(m->tab, m->cap - 1, NULL, key);
	if (i == AR_HASH_ABSENT)
		return 0;
	*val = m->tab[i].val - 1;
	return 1;
}

static int nomem(ar_import_t *im)
{
	im->err->code = AR_ENOMEM;
	snprintf(im->err->msg, sizeof im->err->msg, "out of memory");
	return AR_ENOMEM;
}

int ar_import_open(ar_import_t **out, int fd, const ar_imp_header_t *h, ar_error_t *err)
{
	*out = NULL;
	ar_import_t *im = calloc(1, sizeof *im);
	uint8_t *meta = malloc(AR_BLOCK_MAX);
	if (!im || !meta) {
		free(im);
		free(meta);
		err->code = AR_ENOMEM;
		snprintf(err->msg, sizeof err->msg, "out of memory");
		return AR_ENOMEM;
	}
	im->err = err;
	im->meta_mem = meta;
	ar_metabuf_reset(&im->meta, meta, AR_BLOCK_MAX);

	ar_header_t hdr;
	ar_header_init(&hdr);
	hdr.flags = AR_HDR_IMPORTED | (h->has_times ? 0 : AR_HDR_NO_TIMES) | (h->has_stacks ? AR_HDR_STACKS : 0);
	snprintf(hdr.recorder_version, sizeof hdr.recorder_version, "alloctrace import %d", AR_IMPORT_VERSION);
	snprintf(hdr.source_format, sizeof hdr.source_format, "%s", h->source_format);
	/* Not a command line (the source does not have one): where the trace
	 * came from, which is what the reports' program column then shows. */
	snprintf(hdr.cmdline, sizeof hdr.cmdline, "imported from %s: %s", h->source_format, h->input_name);
	hdr.start_mono_ns = h->start_mono_ns;
	hdr.clock_resolution_ns = 0; /* unknown */
	hdr.page_size = 0;           /* unknown */
	int rc = ar_writer_open(&im->w, fd, &hdr, 3, NULL, err);
	if (rc != 0) {
		free(meta);
		free(im);
		return rc;
	}
	*out = im;
	return 0;
}

/* Room for one more metadata record (each of ours is under 64 bytes):
 * write the buffer out when it is nearly full. */
static int meta_room(ar_import_t *im)
{
	if (im->meta.cap - im->meta.len >= 64)
		return 0;
	int rc = ar_writer_write_meta(im->w, &im->meta, im->err);
	ar_metabuf_reset(&im->meta, im->meta_mem, AR_BLOCK_MAX);
	return rc;
}

int ar_import_thread(ar_import_t *im, uint64_t tid, uint32_t *index)
{
	unsigned slot = (unsigned)(tid ^ tid >> 8) & 255;
	if (im->cache[slot].index && im->cache[slot].tid == tid) {
		*index = im->cache[slot].index - 1;
		return 0;
	}
	uint32_t t;
	if (!map_get(&im->tids, tid, &t) || t == UINT32_MAX - 1) { /* unknown, or done */
		if (im->nth == UINT32_MAX - 2)
			return nomem(im);
		if (im->nth == im->cap_th) {
			uint32_t cap = im->cap_th ? im->cap_th * 2 : 64;
			imp_thread_t *th = realloc(im->th, cap * sizeof *th);
			if (!th)
				return nomem(im);
			im->th = th;
			im->cap_th = cap;
		}
		t = im->nth++;
		im->th[t] = (imp_thread_t){.os_tid = tid};
		if (map_put(&im->tids, tid, t) != 0)
			return nomem(im);
		int rc = meta_room(im);
		if (rc == 0)
			rc = ar_meta_thread_start(&im->meta, t, tid, 0, 0);
		if (rc != 0)
			return rc;
	}
	im->cache[slot].tid = tid;
	im->cache[slot].index = t + 1;
	*index = t;
	return 0;
}

/* Write thread t's buffered events; keep = 0 also frees its buffer. */
static int flush_thread(ar_import_t *im, uint32_t t, int keep)
{
	imp_thread_t *th = &im->th[t];
	if (!th->mem)
		return 0;
	int rc = ar_writer_write_events(im->w, &th->buf, im->err);
	if (rc != 0)
		return rc;
	if (keep) {
		ar_evbuf_reset(&th->buf, th->mem, th->buf.cap, t, th->os_tid);
	} else {
		free(th->mem);
		th->mem = NULL;
		if (th->buf.cap == AR_EVBUF_MAX_BYTES)
			im->full_buffers--;
	}
	return 0;
}

int ar_import_event(ar_import_t *im, uint32_t t, ar_event_t *e)
{
	imp_thread_t *th = &im->th[t];
	if (!th->mem) {
		size_t cap = im->full_buffers < FULL_BUFFERS ? AR_EVBUF_MAX_BYTES : SMALL_BUFFER_BYTES;
		if (!(th->mem = aligned_alloc(64, cap)))
			return nomem(im);
		im->full_buffers += cap == AR_EVBUF_MAX_BYTES;
		ar_evbuf_reset(&th->buf, th->mem, cap, t, th->os_tid);
	}
	e->thread = t;
	e->seq = ++im->seq;
	e->seq2 = e->op == AR_OP_REALLOC ? ++im->seq : 0;
	if (e->time_ns > im->end_time_ns)
		im->end_time_ns = e->time_ns;
	int rc = ar_evbuf_append(&th->buf, e);
	if (rc == AR_EFULL) {
		if ((rc = flush_thread(im, t, 1)) != 0)
			return rc;
		rc = ar_evbuf_append(&th->buf, e);
	}
	if (rc == AR_EINVAL) {
		im->err->code = rc;
		snprintf(im->err->msg, sizeof im->err->msg, "the trace writer refused an event (a bug in the importer)");
	}
	return rc;
}

int ar_import_thread_exit(ar_import_t *im, uint64_t tid, uint64_t time_ns)
{
	uint32_t t;
	int rc = ar_import_thread(im, tid, &t);
	if (rc == 0)
		rc = flush_thread(im, t, 0);
	if (rc == 0)
		rc = meta_room(im);
	if (rc == 0)
		rc = ar_meta_thread_exit(&im->meta, t, im->seq, time_ns);
	if (rc != 0)
		return rc;
	if (time_ns > im->end_time_ns)
		im->end_time_ns = time_ns;
	unsigned slot = (unsigned)(tid ^ tid >> 8) & 255;
	im->cache[slot].index = 0;
	return map_put(&im->tids, tid, UINT32_MAX - 1) ? nomem(im) : 0; /* a later use is a new thread */
}

int ar_import_stack(ar_import_t *im, uint64_t addr, uint32_t *id)
{
	if (map_get(&im->stacks, addr, id))
		return 0;
	if (im->stacks.len >= UINT32_MAX - 2)
		return nomem(im);
	uint32_t n = (uint32_t)im->stacks.len + 1; /* ids from 1 (SPEC 6.5) */
	int rc = meta_room(im);
	if (rc == 0)
		rc = ar_meta_stack(&im->meta, n, &addr, 1);
	if (rc != 0)
		return rc;
	if (map_put(&im->stacks, addr, n) != 0)
		return nomem(im);
	*id = n;
	return 0;
}

int ar_import_close(ar_import_t *im, int ok, ar_imp_totals_t *tot, ar_error_t *err)
{
	int rc = 0;
	for (uint32_t t = 0; t < im->nth && ok && rc == 0; t++)
		rc = flush_thread(im, t, 0);
	if (ok && rc == 0 && im->meta.nrecords)
		rc = ar_writer_write_meta(im->w, &im->meta, err);
	if (tot) {
		ar_footer_t f;
		ar_writer_totals(im->w, &f);
		*tot = (ar_imp_totals_t){.events = f.events, .threads = im->nth, .stacks = im->stacks.len,
					 .last_seq = im->seq, .end_time_ns = im->end_time_ns};
	}
	ar_error_t close_err = {0};
	int crc = ar_writer_close(im->w, im->end_time_ns, ok && rc == 0, &close_err);
	if (rc == 0 && crc != 0) {
		*err = close_err;
		rc = crc;
	}
	for (uint32_t t = 0; t < im->nth; t++)
		free(im->th[t].mem);
	free(im->th);
	free(im->tids.tab);
	free(im->stacks.tab);
	free(im->meta_mem);
	free(im);
	return rc;
}
