/*
 * writer.c — turn finished buffers into blocks on a file descriptor
 * (SPEC 3): a descriptor skippable frame, then one zstd frame with a content
 * checksum, written together with writev so a block is never split by
 * another block.
 *
 * Since 2.0 an events block is compressed against the decoded bytes of its
 * thread's previous events block (a chain, SPEC 3.4): a thread's blocks
 * repeat each other's sizes, addresses and op patterns far more than a block
 * repeats itself, and zstd finds those matches only in its history. The
 * writer keeps those bytes for the CHAIN_SLOTS threads that wrote last, and
 * stops chaining a thread for a while when it does not pay.
 *
 * Invariants: every allocation goes through the caller's ar_mem_t (the
 * recorder runs this under the traced program's malloc); after the first
 * write error the writer refuses further writes, so a trace never continues
 * past a hole; a block is chained only to a block this writer wrote, into
 * this file, for the same thread, and at most AR_WRITER_CHAIN_MAX blocks
 * form a chain, so a reader decodes any block with at most that many
 * decompressions.
 */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createCCtx_advanced: custom allocator */
#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zstd.h>

#include "format.h"

/* Threads whose last block is kept, and the largest block kept (each slot
 * has room for a block and the next one after it): at most 8 MiB of the
 * recorder's address space, touched only as far as blocks reach (about two
 * blocks, ~200 KB, per thread). A thread not among them, or whose last
 * block was larger, starts a new chain. */
#define CHAIN_SLOTS 16
#define CHAIN_KEEP_MAX (256u << 10)
/* The first chained block of a chain is compressed both ways: chained, it
 * must come out 5 % smaller than alone, else it is written alone and the
 * thread's next CHAIN_PAUSE blocks too, then chaining is tried again; after
 * each further failure the pause doubles, up to CHAIN_PAUSE_MAX.
 * Loading the prefix costs zstd about as much as compressing it
 * (docs/BENCHMARKS.md): on streams without repeats across blocks (random
 * addresses and sizes) that is CPU for nothing. */
#define CHAIN_GAIN_NUM 19
#define CHAIN_GAIN_DEN 20
#define CHAIN_PAUSE 8
#define CHAIN_PAUSE_MAX 64

/* One thread's chain: the decoded bytes of its last events block. */
typedef struct chain {
	int in_use;
	uint32_t thread;
	uint32_t length;         /* blocks in its chain, the last (held in raw) included; 0 = none held */
	uint32_t pause;          /* blocks still to write alone: chaining did not pay */
	uint32_t next_pause;     /* the pause after the next failed try */
	uint64_t used;           /* the writer's block count when last written: LRU */
	uint8_t *raw;
	size_t len;
} chain_t;

struct ar_writer {
	int fd;
	int chains_on;          /* AR_CHAIN_* (SPEC 3.4); AR_CHAIN_OFF in a 1.x trace */
	unsigned version_major; /* of the header written */
	chain_t chains[CHAIN_SLOTS];
	int broken; /* a write failed: refuse the rest */
	ar_mem_t mem;
	ZSTD_CCtx *cctx;
	ar_enc_t enc;
	uint8_t *raw; /* one encoded block before compression */
	size_t raw_cap;
	uint8_t *out;
	size_t out_cap;
	uint8_t *out_alone; /* a probed block compressed alone (chain_probe) */
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
	for (int i = 0; i < CHAIN_SLOTS; i++)
		m.free(m.opaque, w->chains[i].raw);
	m.free(m.opaque, w->raw);
	m.free(m.opaque, w->out);
	m.free(m.opaque, w->out_alone);
	m.free(m.opaque, w);
}

int ar_writer_open(ar_writer_t **out, int fd, const ar_header_t *h, int level, const ar_mem_t *mem,
		   ar_error_t *err)
{
	ar_mem_t m = mem ? *mem : (ar_mem_t){default_alloc, default_free, NULL};
	*out = NULL;
	uint8_t hdr[8 + 2 * AR_CMDLINE_MAX + 2048];
	ar_header_t hc = *h;
	/* The encoder divides ns by a shift, and SPEC 5.3's running time must not
	 * overflow: a power of two within the bounds, else the default. */
	hc.time_unit_ns = ar_time_unit_ok(h->time_unit_ns) ? h->time_unit_ns : AR_TIME_UNIT_NS;
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
	w->version_major = hc.version_major;
	w->chains_on = hc.version_major >= 2 ? AR_CHAIN_WHEN_IT_PAYS : AR_CHAIN_OFF; /* 1.x: block by block */
	w->raw_cap = ar_enc_bound(AR_EVBUF_MAX_EVENTS);
	w->out_cap = ZSTD_compressBound(w->raw_cap);
	w->raw = m.alloc(m.opaque, w->raw_cap);
	w->out = m.alloc(m.opaque, w->out_cap);
	w->cctx = ZSTD_createCCtx_advanced((ZSTD_customMem){m.alloc, m.free, m.opaque});
	if (!w->raw || !w->out || !w->cctx || ar_enc_init(&w->enc, &m) != 0) {
		free_writer(w);
		return ar_set_error(err, AR_ENOMEM, 0, "cannot allocate the compressor");
	}
	w->enc.time_shift = (unsigned)__builtin_ctzll(hc.time_unit_ns);
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

/* Compress [src, src+n) into dst, against prefix[0..plen) when prefix is
 * not NULL: the compressed size or a zstd error code. */
static size_t compress(ar_writer_t *w, uint8_t *dst, const uint8_t *src, size_t n, const uint8_t *prefix, size_t plen)
{
	/* raw content: the block starts with record type 1, never with zstd's
	 * dictionary magic, so it cannot be taken for a trained dictionary */
	size_t c = prefix ? ZSTD_CCtx_refPrefix(w->cctx, prefix, plen) : 0;
	return ZSTD_isError(c) ? c : ZSTD_compress2(w->cctx, dst, w->out_cap, src, n);
}

/* Compress [src, src+n) and write it behind a descriptor (SPEC 3.2); with
 * prefix (SPEC 3.4) against those plen bytes, said in the descriptor. With
 * *probe set, the block is compressed alone too and written so when the
 * prefix does not save CHAIN_GAIN of it; *probe is then cleared. */
static int write_block(ar_writer_t *w, unsigned kind, uint32_t thread, uint64_t os_tid, uint64_t count,
		       uint64_t first_seq, uint64_t last_seq, const uint8_t *src, size_t n, const uint8_t *prefix,
		       size_t plen, int *probe, ar_error_t *err)
{
	if (w->broken)
		return ar_set_error(err, AR_EIO, w->bytes, "an earlier write failed; trace closed");
	uint8_t *frame = w->out;
	size_t c = compress(w, frame, src, n, prefix, plen);
	if (probe && *probe && !ZSTD_isError(c)) {
		if (!w->out_alone && !(w->out_alone = w->mem.alloc(w->mem.opaque, w->out_cap)))
			*probe = 0; /* no memory to compare: keep the chained one */
		size_t a = w->out_alone ? compress(w, w->out_alone, src, n, NULL, 0) : 0;
		if (w->out_alone && !ZSTD_isError(a) && c * CHAIN_GAIN_DEN > a * CHAIN_GAIN_NUM) {
			frame = w->out_alone; /* the prefix did not pay */
			c = a;
			prefix = NULL;
			*probe = 0;
		} else {
			*probe = 1; /* it paid: chained */
		}
	}
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
	if (prefix) /* SPEC 3.4: absent means AR_CHAIN_NONE */
		p = ar_put_varint(p, AR_CHAIN_PREVIOUS);
	ar_put_u32le(d, AR_DESCRIPTOR_MAGIC);
	ar_put_u32le(d + 4, (uint32_t)(p - d - 8));
	struct iovec iov[2] = {{d, (size_t)(p - d)}, {frame, c}};
	int rc = write_all(w, iov, 2, err);
	if (rc == 0)
		w->totals.blocks++;
	return rc;
}

/* The chain slot of `thread`, or NULL. */
static chain_t *chain_of(ar_writer_t *w, uint32_t thread)
{
	for (int i = 0; i < CHAIN_SLOTS; i++)
		if (w->chains[i].in_use && w->chains[i].thread == thread)
			return &w->chains[i];
	return NULL;
}

/* After block [raw, raw+n) of `thread` was written (chained to ch's bytes
 * when `chained`, and then raw is in ch's buffer right after them): keep
 * its bytes as the thread's next prefix, in its slot or the least recently
 * written one; or end the thread's chain, for CHAIN_PAUSE blocks when
 * `unpaid` (a probe found the chained block not worth it). */
static void chain_keep(ar_writer_t *w, chain_t *ch, uint32_t thread, int chained, int unpaid, const uint8_t *raw,
		       size_t n)
{
	if (!ch) {
		ch = &w->chains[0];
		for (int i = 1; i < CHAIN_SLOTS && ch->in_use; i++)
			if (!w->chains[i].in_use || w->chains[i].used < ch->used)
				ch = &w->chains[i];
		*ch = (chain_t){.in_use = 1, .thread = thread, .next_pause = CHAIN_PAUSE, .raw = ch->raw};
	}
	ch->used = w->totals.blocks;
	uint32_t length = chained ? ch->length + 1 : 1;
	ch->length = 0;
	if (unpaid) {
		ch->pause = ch->next_pause;
		ch->next_pause = ch->next_pause * 2 > CHAIN_PAUSE_MAX ? CHAIN_PAUSE_MAX : ch->next_pause * 2;
		return;
	}
	if (chained && length == 2) /* a try that paid */
		ch->next_pause = CHAIN_PAUSE;
	if (ch->pause && --ch->pause) /* the last paused block starts a chain */
		return;
	if (n > CHAIN_KEEP_MAX)
		return;
	if (!ch->raw && !(ch->raw = w->mem.alloc(w->mem.opaque, 2 * CHAIN_KEEP_MAX)))
		return; /* no memory: the thread's next block decodes alone */
	memmove(ch->raw, raw, n);
	ch->len = n;
	ch->length = length;
}

int ar_writer_write_events(ar_writer_t *w, const ar_evbuf_t *b, ar_error_t *err)
{
	if (b->nevents == 0)
		return 0;
	size_t n = ar_enc_events(&w->enc, b, w->raw);
	chain_t *ch = w->chains_on ? chain_of(w, b->thread) : NULL;
	int chained = ch && ch->length && ch->length < AR_WRITER_CHAIN_MAX && n <= CHAIN_KEEP_MAX;
	const uint8_t *src = w->raw;
	if (chained) { /* right after its prefix: zstd then takes both as one
			* window, which compresses faster than a separate prefix */
		memcpy(ch->raw + ch->len, w->raw, n);
		src = ch->raw + ch->len;
	}
	/* a chain's first chained block is the probe (CHAIN_GAIN) */
	int probe = chained && ch->length == 1 && w->chains_on == AR_CHAIN_WHEN_IT_PAYS, paid = probe;
	int rc = write_block(w, AR_BLOCK_EVENTS, b->thread, b->os_tid, b->nevents, b->first_seq, b->last_seq, src,
			     n, chained ? ch->raw : NULL, chained ? ch->len : 0, &paid, err);
	if (rc < 0)
		return rc;
	if (w->chains_on)
		chain_keep(w, ch, b->thread, chained && (paid || !probe), probe && !paid, src, n);
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
	return write_block(w, AR_BLOCK_META, 0, 0, m->nrecords, 0, 0, m->data, m->len, NULL, 0, NULL, err);
}

void ar_writer_set_chaining(ar_writer_t *w, int how)
{
	if (how != AR_CHAIN_OFF && how != AR_CHAIN_ALWAYS)
		how = AR_CHAIN_WHEN_IT_PAYS;
	w->chains_on = w->version_major >= 2 ? how : AR_CHAIN_OFF;
	for (int i = 0; i < CHAIN_SLOTS; i++) /* nothing chains to what came before */
		w->chains[i].in_use = 0;
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
