/*
 * writer.c — turn finished buffers into blocks on a file descriptor
 * (SPEC 3): a descriptor skippable frame, then one zstd frame with a content
 * checksum, written together with writev so a block is never split by
 * another block.
 *
 * Invariants: every allocation goes through the caller's ar_mem_t (the
 * recorder runs this under the traced program's malloc); after the first
 * write error the writer refuses further writes, so a trace never continues
 * past a hole.
 */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createCCtx_advanced: custom allocator */
#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zstd.h>

#include "format.h"

struct ar_writer {
	int fd;
	int broken; /* a write failed: refuse the rest */
	ar_mem_t mem;
	ZSTD_CCtx *cctx;
	ar_enc_t enc;
	uint8_t *raw; /* one encoded block before compression */
	size_t raw_cap;
	uint8_t *out;
	size_t out_cap;
	uint64_t bytes;
	ar_footer_t totals;
	uint64_t footer_off; /* where ar_writer_write_footer put it */
	int footer_done;
};

static void *default_alloc(void *opaque, size_t n)
{
	(void)opaque;
	return malloc(n);
}

static void default_free(void *opaque, void *p)
{
	(void)opaque;
	free(p);
}

/* Write all iov bytes, retrying on EINTR and short writes. */
static int write_all(ar_writer_t *w, struct iovec *iov, int n, ar_error_t *err)
{
	while (n > 0) {
		ssize_t k = writev(w->fd, iov, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			w->broken = 1;
			ar_set_error(err, AR_EIO, w->bytes, "write failed: %s", strerror(e));
			if (err)
				err->sys_errno = e;
			return AR_EIO;
		}
		w->bytes += (uint64_t)k;
		while (n > 0 && (size_t)k >= iov->iov_len) {
			k -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + k;
			iov->iov_len -= (size_t)k;
		}
	}
	return 0;
}

static void free_writer(ar_writer_t *w)
{
	ar_mem_t m = w->mem;
	ZSTD_freeCCtx(w->cctx);
	ar_enc_free(&w->enc, &m);
	m.free(m.opaque, w->raw);
	m.free(m.opaque, w->out);
	m.free(m.opaque, w);
}

int ar_writer_open(ar_writer_t **out, int fd, const ar_header_t *h, int level, const ar_mem_t *mem,
		   ar_error_t *err)
{
	ar_mem_t m = mem ? *mem : (ar_mem_t){default_alloc, default_free, NULL};
	*out = NULL;
	uint8_t hdr[8 + 2 * AR_CMDLINE_MAX + 2048];
	ar_header_t hc = *h;
	hc.time_unit_ns = AR_TIME_UNIT_NS; /* what ar_evbuf_append stores */
	int n = ar_header_encode(&hc, hdr + 8, sizeof hdr - 8);
	if (n < 0)
		return ar_set_error(err, AR_EINVAL, 0, "header does not fit %zu bytes", sizeof hdr);
	ar_put_u32le(hdr, AR_HEADER_MAGIC);
	ar_put_u32le(hdr + 4, (uint32_t)n);

	ar_writer_t *w = m.alloc(m.opaque, sizeof *w);
	if (!w)
		return ar_set_error(err, AR_ENOMEM, 0, "cannot allocate the writer");
	memset(w, 0, sizeof *w);
	w->fd = fd;
	w->mem = m;
	w->raw_cap = ar_enc_bound(AR_EVBUF_MAX_EVENTS);
	w->out_cap = ZSTD_compressBound(w->raw_cap);
	w->raw = m.alloc(m.opaque, w->raw_cap);
	w->out = m.alloc(m.opaque, w->out_cap);
	w->cctx = ZSTD_createCCtx_advanced((ZSTD_customMem){m.alloc, m.free, m.opaque});
	if (!w->raw || !w->out || !w->cctx || ar_enc_init(&w->enc, &m) != 0) {
		free_writer(w);
		return ar_set_error(err, AR_ENOMEM, 0, "cannot allocate the compressor");
	}
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1); /* SPEC 3.3: bit flips are caught */
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1);

	struct iovec iov = {hdr, (size_t)n + 8};
	int rc = write_all(w, &iov, 1, err);
	if (rc < 0) {
		free_writer(w);
		return rc;
	}
	*out = w;
	return 0;
}

/* Compress [src, src+n) and write it behind a descriptor (SPEC 3.2). */
static int write_block(ar_writer_t *w, unsigned kind, uint32_t thread, uint64_t os_tid, uint64_t count,
		       uint64_t first_seq, uint64_t last_seq, const uint8_t *src, size_t n, ar_error_t *err)
{
	if (w->broken)
		return ar_set_error(err, AR_EIO, w->bytes, "an earlier write failed; trace closed");
	size_t c = ZSTD_compress2(w->cctx, w->out, w->out_cap, src, n);
	if (ZSTD_isError(c))
		return ar_set_error(err, AR_ECOMPRESS, w->bytes, "zstd: %s", ZSTD_getErrorName(c));
	uint8_t d[8 + 80], *p = d + 8;
	p = ar_put_varint(p, kind);
	p = ar_put_varint(p, thread);
	p = ar_put_varint(p, os_tid);
	p = ar_put_varint(p, count);
	p = ar_put_varint(p, first_seq);
	p = ar_put_varint(p, last_seq);
	p = ar_put_varint(p, n);
	p = ar_put_varint(p, c);
	ar_put_u32le(d, AR_DESCRIPTOR_MAGIC);
	ar_put_u32le(d + 4, (uint32_t)(p - d - 8));
	struct iovec iov[2] = {{d, (size_t)(p - d)}, {w->out, c}};
	int rc = write_all(w, iov, 2, err);
	if (rc == 0)
		w->totals.blocks++;
	return rc;
}

int ar_writer_write_events(ar_writer_t *w, const ar_evbuf_t *b, ar_error_t *err)
{
	if (b->nevents == 0)
		return 0;
	size_t n = ar_enc_events(&w->enc, b, w->raw);
	int rc = write_block(w, AR_BLOCK_EVENTS, b->thread, b->os_tid, b->nevents, b->first_seq, b->last_seq,
			     w->raw, n, err);
	if (rc < 0)
		return rc;
	w->totals.events += b->nevents;
	if (b->thread + 1u > w->totals.threads)
		w->totals.threads = b->thread + 1u;
	if (b->last_seq > w->totals.last_seq)
		w->totals.last_seq = b->last_seq;
	for (unsigned op = 0; op < AR_OP_LIMIT; op++)
		w->totals.events_by_op[op] += b->events_by_op[op];
	return 0;
}

int ar_writer_write_meta(ar_writer_t *w, const ar_metabuf_t *m, ar_error_t *err)
{
	if (m->nrecords == 0)
		return 0;
	return write_block(w, AR_BLOCK_META, 0, 0, m->nrecords, 0, 0, m->data, m->len, err);
}

void ar_writer_note_dropped(ar_writer_t *w, uint64_t n) { w->totals.dropped_events += n; }

void ar_writer_totals(const ar_writer_t *w, ar_footer_t *f) { *f = w->totals; }

uint64_t ar_writer_bytes(const ar_writer_t *w) { return w->bytes; }

void ar_writer_set_fd(ar_writer_t *w, int fd) { w->fd = fd; }

void ar_writer_note_stop(ar_writer_t *w, unsigned why, uint64_t after_stop)
{
	w->totals.stop_reason = why;
	w->totals.after_stop = after_stop;
}

/* The FOOTER record's block (SPEC 6.7). */
static int put_footer(ar_writer_t *w, ar_error_t *err)
{
	/* SPEC 6.7: the footer counts the blocks before its own. */
	ar_footer_t *t = &w->totals;
	uint8_t body[18 * 10 + AR_OP_LIMIT * 10], *p = body;
	p = ar_put_varint(p, t->events);
	p = ar_put_varint(p, t->threads);
	p = ar_put_varint(p, t->blocks);
	p = ar_put_varint(p, t->last_seq);
	p = ar_put_varint(p, t->end_time_ns);
	p = ar_put_varint(p, t->dropped_events);
	p = ar_put_varint(p, AR_OP_LIMIT);
	for (unsigned op = 0; op < AR_OP_LIMIT; op++)
		p = ar_put_varint(p, t->events_by_op[op]);
	if (t->stop_reason) { /* since 1.2; absent: the recording was not stopped */
		p = ar_put_varint(p, t->stop_reason);
		p = ar_put_varint(p, t->after_stop);
	}
	uint8_t rec[sizeof body + 16];
	ar_metabuf_t m;
	ar_metabuf_reset(&m, rec, sizeof rec);
	uint8_t *q = rec;
	q = ar_put_varint(q, AR_REC_FOOTER);
	q = ar_put_varint(q, (uint64_t)(p - body));
	memcpy(q, body, (size_t)(p - body));
	m.len = (size_t)(q - rec) + (size_t)(p - body);
	m.nrecords = 1;
	return ar_writer_write_meta(w, &m, err);
}

int ar_writer_write_footer(ar_writer_t *w, uint64_t end_time_ns, ar_error_t *err)
{
	if (w->broken)
		return ar_set_error(err, AR_EIO, w->bytes, "an earlier write failed; trace closed");
	w->totals.end_time_ns = end_time_ns;
	w->footer_off = w->bytes;
	int rc = put_footer(w, err);
	w->footer_done = rc == 0;
	return rc;
}

int ar_writer_rewrite_footer(ar_writer_t *w, ar_error_t *err)
{
	if (!w->footer_done || w->broken)
		return ar_set_error(err, AR_EIO, w->bytes, "no footer to rewrite");
	uint64_t old_end = w->bytes;
	if (lseek(w->fd, (off_t)w->footer_off, SEEK_SET) < 0) {
		int e = errno;
		lseek(w->fd, (off_t)old_end, SEEK_SET);
		ar_set_error(err, AR_EIO, w->footer_off, "cannot seek back to the footer: %s", strerror(e));
		if (err)
			err->sys_errno = e;
		return AR_EIO;
	}
	/* Written over the old one, never cut first: a crash leaves one
	 * footer or the other, and at worst (a shorter new footer) stray
	 * bytes after it until the cut below. */
	w->bytes = w->footer_off;
	w->totals.blocks--;
	int rc = put_footer(w, err);
	if (rc == 0 && w->bytes < old_end && ftruncate(w->fd, (off_t)w->bytes) != 0) {
		int e = errno;
		ar_set_error(err, AR_EIO, w->bytes, "cannot cut the file after the footer: %s", strerror(e));
		if (err)
			err->sys_errno = e;
		rc = AR_EIO;
	}
	return rc;
}

int ar_writer_close(ar_writer_t *w, uint64_t end_time_ns, int write_footer, ar_error_t *err)
{
	int rc = 0;
	if (write_footer && !w->broken) {
		w->totals.end_time_ns = end_time_ns;
		rc = put_footer(w, err);
	}
	free_writer(w);
	return rc;
}
