/*
 * test_compat.c — SPEC 8 forward compatibility, from the reader's side: a
 * trace written by a later minor version (extra header fields, an op this
 * reader does not know, an unknown record type, an unknown block kind, a
 * reserved skippable frame, extra descriptor bytes, fields appended to a
 * known metadata record) must read completely, the new op decoded from its
 * field mask; a different major version must be refused by name; 1.2's
 * header strings are read only from 1.2 headers; a NUL inside a string is
 * shown as \x00, never cuts it.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "format.h"
#include "testing.h"

static uint8_t file[1 << 16];
static size_t flen;

static void put_frame(uint32_t magic, const uint8_t *p, size_t n)
{
	ar_put_u32le(file + flen, magic);
	ar_put_u32le(file + flen + 4, (uint32_t)n);
	memcpy(file + flen + 8, p, n);
	flen += 8 + n;
}

/* A block: descriptor (with `extra` trailing bytes) + zstd frame of raw. */
static void put_block(unsigned kind, uint64_t thread, uint64_t tid, uint64_t count, uint64_t first,
		      uint64_t last, const uint8_t *raw, size_t n, int extra)
{
	uint8_t z[4096], d[128], *q = d;
	size_t c = ZSTD_compress(z, sizeof z, raw, n, 3);
	uint64_t v[8] = {kind, thread, tid, count, first, last, n, c};
	for (int i = 0; i < 8; i++)
		q = ar_put_varint(q, v[i]);
	for (int i = 0; i < extra; i++)
		*q++ = 0x42;
	put_frame(AR_DESCRIPTOR_MAGIC, d, (size_t)(q - d));
	memcpy(file + flen, z, c);
	flen += c;
}

static uint8_t *put_record(uint8_t *q, unsigned type, const uint8_t *body, size_t n)
{
	q = ar_put_varint(q, type);
	q = ar_put_varint(q, n);
	memcpy(q, body, n);
	return q + n;
}

static ar_reader_t *open_mem(void)
{
	int fd = memfd_create("compat", 0);
	if (write(fd, file, flen) != (ssize_t)flen)
		return NULL;
	ar_reader_t *r = NULL;
	ar_error_t err;
	int rc = ar_reader_open_fd(&r, fd, "compat", &err);
	if (rc)
		fprintf(stderr, "open: %s\n", err.msg);
	return r;
}

/* A trace of version major.minor whose op `code` is "mallocx" (align,
 * size, result), an op this reader does not know. */
static void build_op_trace(uint16_t major, uint16_t minor, uint8_t code)
{
	flen = 0;
	ar_header_t h;
	ar_header_init(&h);
	h.version_minor = minor;
	h.version_major = major;
	snprintf(h.ops[code].name, sizeof h.ops[code].name, "mallocx");
	h.ops[code].fields = AR_F_ALIGN | AR_F_SIZE | AR_F_RESULT;
	uint8_t hb[8192];
	int n = ar_header_encode(&h, hb, sizeof hb);
	hb[n++] = 0x99; /* a header field of minor version 7 */
	hb[n++] = 0x01;
	put_frame(AR_HEADER_MAGIC, hb, (size_t)n);

	/* metadata: a thread name with an appended field, an unknown record */
	uint8_t meta[256], *q = meta, body[64];
	size_t bn = 0;
	body[bn++] = 0; /* thread 0 */
	body[bn++] = 4;
	memcpy(body + bn, "main", 4);
	bn += 4;
	body[bn++] = 0x7f; /* a later field of THREAD_NAME */
	q = put_record(q, AR_REC_THREAD_NAME, body, bn);
	const uint8_t unknown[] = {1, 2, 3};
	q = put_record(q, 42, unknown, sizeof unknown);
	put_block(AR_BLOCK_META, 0, 0, 2, 0, 0, meta, (size_t)(q - meta), 3);

	const uint8_t skip[] = {7, 7, 7};
	put_frame(0x184D2A5C, skip, sizeof skip); /* reserved skippable frame */

	/* events: malloc(24), mallocx(align 64, size 100), free(first) */
	uint8_t ev[256];
	q = ev;
	*q++ = 0; /* thread */
	q = ar_put_varint(q, 77); /* os tid */
	*q++ = 3; /* count */
	const uint8_t ops[] = {AR_OP_MALLOC, code, AR_OP_FREE};
	const uint8_t seqs[] = {0, 0, 0};   /* seq 1, 2, 3 */
	const uint8_t times[] = {2, 2, 2};  /* +1 unit each */
	uint8_t ptrs[32], *pp = ptrs;
	pp = ar_put_varint(pp, ar_zigzag(0x1000 >> 4) << 2 | AR_PTR_DELTA16); /* malloc -> 0x1000 */
	pp = ar_put_varint(pp, ar_zigzag(0x1000 >> 4) << 2 | AR_PTR_DELTA16); /* mallocx -> 0x2000 */
	pp = ar_put_varint(pp, 1u << 1);                                  /* free: OUT k=2 -> 0x1000 */
	const uint8_t args[] = {24, 64, 100};
	const uint8_t *cols[6] = {ops, seqs, times, ptrs, args, NULL};
	size_t lens[6] = {3, 3, 3, (size_t)(pp - ptrs), 3, 0};
	for (int c = 0; c < 6; c++) {
		q = ar_put_varint(q, lens[c]);
		if (lens[c])
			memcpy(q, cols[c], lens[c]);
		q += lens[c];
	}
	uint8_t rec[300], *rq = put_record(rec, AR_REC_EVENTS, ev, (size_t)(q - ev));
	put_block(AR_BLOCK_EVENTS, 0, 77, 3, 1, 3, rec, (size_t)(rq - rec), 0);

	const uint8_t future[] = {9, 9};
	put_block(9, 0, 0, 1, 0, 0, future, sizeof future, 0); /* unknown block kind */

	/* footer: 3 events, 1 thread, 3 blocks before it, last seq 3 */
	uint8_t f[64], *fq = f;
	const uint64_t fv[] = {3, 1, 3, 3, 48, 0, 0};
	for (int i = 0; i < 7; i++)
		fq = ar_put_varint(fq, fv[i]);
	uint8_t frec[80], *frq = put_record(frec, AR_REC_FOOTER, f, (size_t)(fq - f));
	put_block(AR_BLOCK_META, 0, 0, 1, 0, 0, frec, (size_t)(frq - frec), 0);
}

/* 11-13 are 1.3's sized ops (SPEC 5.1): a later minor's op is above. */
static void build_future_trace(uint16_t major)
{
	build_op_trace(major, 7, 14);
}

/* Before 1.3, codes 11-13 were any later op's (SPEC 8): a 1.2 trace that
 * declares 11 as something else reads as it always did. */
static void test_12_op_11_is_not_sized(void)
{
	build_op_trace(1, 2, 11);
	ar_reader_t *r = open_mem();
	EXPECT(r != NULL);
	if (!r)
		return;
	ar_event_t e;
	EXPECT(ar_reader_next_merged(r, &e) == 1);
	EXPECT(ar_reader_next_merged(r, &e) == 1);
	EXPECT_U64(e.op, 11);
	EXPECT(!ar_op_is_sized(ar_reader_header(r), 11));
	EXPECT(e.align == 64 && e.size == 100 && e.result == 0x2000 && e.old_size == 0);
	EXPECT(ar_reader_next_merged(r, &e) == 1);
	EXPECT(e.op == AR_OP_FREE && e.ptr == 0x1000 && e.old_size == 0);
	EXPECT_U64(ar_reader_status(r), AR_STATUS_COMPLETE);
	ar_reader_close(r);
	/* The same declaration in a 1.3 header breaks SPEC 3.1: corrupt. */
	build_op_trace(1, 3, 11);
	int fd = memfd_create("sized", 0);
	EXPECT(write(fd, file, flen) == (ssize_t)flen);
	ar_error_t err;
	EXPECT_U64(ar_reader_open_fd(&r, fd, "sized", &err), (uint64_t)(int64_t)AR_EFORMAT);
	EXPECT(strstr(err.msg, "SPEC says free_sized") != NULL);
	close(fd);
}

static void test_later_minor_reads_completely(void)
{
	build_future_trace(1);
	ar_reader_t *r = open_mem();
	EXPECT(r != NULL);
	if (!r)
		return;
	EXPECT_U64(ar_reader_status(r), AR_STATUS_COMPLETE);
	EXPECT_U64(ar_reader_header(r)->version_minor, 7);
	EXPECT_STR(ar_reader_thread(r, 0)->name, "main");
	ar_event_t e;
	EXPECT(ar_reader_next_merged(r, &e) == 1);
	EXPECT(e.op == AR_OP_MALLOC && e.size == 24 && e.result == 0x1000 && e.time_ns == 16);
	EXPECT(ar_reader_next_merged(r, &e) == 1);
	EXPECT_U64(e.op, 14);
	EXPECT_STR(ar_reader_header(r)->ops[e.op].name, "mallocx");
	EXPECT(e.align == 64 && e.size == 100 && e.result == 0x2000);
	EXPECT(ar_reader_next_merged(r, &e) == 1);
	EXPECT(e.op == AR_OP_FREE && e.ptr == 0x1000 && e.seq == 3);
	EXPECT(ar_reader_next_merged(r, &e) == 0);
	EXPECT_U64(ar_reader_status(r), AR_STATUS_COMPLETE);
	ar_reader_close(r);
}

static void test_other_major_is_refused(void)
{
	build_future_trace(3); /* 2.x is chained blocks (SPEC 3.4): 3 is unknown */
	int fd = memfd_create("major", 0);
	EXPECT(write(fd, file, flen) == (ssize_t)flen);
	ar_reader_t *r;
	ar_error_t err;
	EXPECT_U64(ar_reader_open_fd(&r, fd, "major", &err), (uint64_t)(int64_t)AR_EVERSION);
	EXPECT(strstr(err.msg, "version 3.7") != NULL);
	close(fd);
}

/* A header of minor version `minor` holding 1.2's strings, with a NUL
 * written into the middle of its command line, and a thread name with a
 * NUL in it: a hostile trace's strings are shown, never cut (SPEC 1). */
static ar_reader_t *open_strings_trace(uint16_t minor)
{
	flen = 0;
	ar_header_t h;
	ar_header_init(&h);
	h.version_major = 1;
	h.version_minor = minor;
	snprintf(h.cmdline, sizeof h.cmdline, "prog A#B");
	snprintf(h.source_format, sizeof h.source_format, "mtrace");
	snprintf(h.scrub_note, sizeof h.scrub_note, "paths removed");
	uint8_t hb[8192];
	int n = ar_header_encode(&h, hb, sizeof hb);
	uint8_t *hash = memchr(hb, '#', (size_t)n);
	if (hash)
		*hash = 0;
	if (minor < 2) { /* what a 1.1 writer never wrote: bytes a 1.1 reader ignores */
		memcpy(hb + n, "\x03" "abc" "\x01" "z", 6);
		n += 6;
	}
	put_frame(AR_HEADER_MAGIC, hb, (size_t)n);
	uint8_t meta[64], *q = meta;
	const uint8_t body[] = {0, 5, 'm', 'a', 0, 'i', 'n'};
	q = put_record(q, AR_REC_THREAD_NAME, body, sizeof body);
	put_block(AR_BLOCK_META, 0, 0, 1, 0, 0, meta, (size_t)(q - meta), 0);
	return open_mem();
}

static void test_header_strings(void)
{
	ar_reader_t *r = open_strings_trace(2);
	EXPECT(r != NULL);
	if (!r)
		return;
	const ar_header_t *h = ar_reader_header(r);
	EXPECT_STR(h->cmdline, "prog A\\x00B");
	EXPECT_STR(h->source_format, "mtrace");
	EXPECT_STR(h->scrub_note, "paths removed");
	EXPECT_STR(ar_reader_thread(r, 0)->name, "ma\\x00in");
	ar_reader_close(r);

	r = open_strings_trace(1);
	EXPECT(r != NULL);
	if (!r)
		return;
	h = ar_reader_header(r);
	EXPECT_STR(h->source_format, "");
	EXPECT_STR(h->scrub_note, "");
	ar_reader_close(r);
}

int main(void)
{
	RUN(test_later_minor_reads_completely);
	RUN(test_12_op_11_is_not_sized);
	RUN(test_header_strings);
	RUN(test_other_major_is_refused);
	return TEST_END();
}
