/*
 * test_corruption.c — the reader never trusts its input. A small complete
 * trace is cut at every byte offset, has random bytes flipped, and gets
 * hostile hand-made frames; each time the reader must not crash or hang,
 * must classify the file (complete / truncated / corrupt) with a message and
 * an offset inside the file, and every event it does return must be one the
 * writer wrote, in sequence order. The trace carries every metadata record
 * type, those of format 1.1 included. Hostile lengths — a frame, record,
 * string, column or count claiming gigabytes or 2^32 threads, events,
 * records or stack frames — are built as valid zstd blocks (so only the
 * claim is wrong) and must be refused by the length checks of SPEC 7, with
 * no allocation sized by the claim.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "ar_trace.h"
#include "synth.h"
#include "testing.h"

#define NEVENTS 1500

static uint8_t *trace;
static size_t trace_len;
static ar_event_t written[NEVENTS];
static char last_msg[256]; /* the reader's last complaint (read_all) */

static int memfile(const uint8_t *data, size_t n)
{
	int fd = memfd_create("trace", 0);
	if (fd < 0 || (n && write(fd, data, n) != (ssize_t)n)) {
		perror("memfd");
		exit(2);
	}
	return fd;
}

/* A 3-thread trace with metadata, stacks and small blocks. */
static void make_trace(void)
{
	int fd = memfile(NULL, 0);
	ar_header_t h;
	ar_header_init(&h);
	h.flags = AR_HDR_STACKS;
	snprintf(h.cmdline, sizeof h.cmdline, "corruption test");
	ar_writer_t *w;
	ar_error_t err;
	if (ar_writer_open(&w, fd, &h, 3, NULL, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		exit(2);
	}
	static uint8_t meta_mem[4096], mem[3][64 * 100];
	ar_metabuf_t m;
	ar_metabuf_reset(&m, meta_mem, sizeof meta_mem);
	uint64_t frames[2] = {0x401000, 0x402000};
	ar_meta_stack(&m, 1, frames, 2);
	ar_meta_thread_name(&m, 0, "main");
	ar_module_info_t mod = {.base = 0x400000, .size = 0x10000, .path = "/bin/test", .build_id_len = 4,
				.build_id = {1, 2, 3, 4}};
	ar_meta_module(&m, &mod);
	/* the records of format 1.1 (SPEC 6.8-6.10) */
	ar_meta_allocator(&m, "/usr/lib/x86_64-linux-gnu/libc.so.6", "libc.so.6", "2.36");
	for (uint64_t i = 0; i < 3; i++) {
		ar_rss_sample_t smp = {i * 10000000u, i * 100, (3 + i) << 20};
		ar_meta_rss_sample(&m, &smp);
	}
	ar_process_info_t pi = {.start_rss_bytes = 3u << 20, .peak_rss_bytes = 6u << 20, .end_rss_bytes = 5u << 20,
				.end_time_ns = 30000000, .sample_interval_ns = 10000000};
	ar_meta_process(&m, &pi);
	ar_writer_write_meta(w, &m, &err);
	ar_evbuf_t b[3];
	for (uint32_t t = 0; t < 3; t++)
		ar_evbuf_reset(&b[t], mem[t], sizeof mem[t], t, 500 + t);
	ar_synth_t s;
	ar_synth_init(&s, 3, 77);
	for (int i = 0; i < NEVENTS; i++) {
		uint32_t t = (uint32_t)(ar_synth_rand(&s) % 3);
		ar_synth_next(&s, t, &written[i]);
		written[i].stack = i % 5 == 0 ? 1 : 0;
		written[i].time_ns &= ~(uint64_t)15;
		if (ar_evbuf_append(&b[t], &written[i]) == AR_EFULL) {
			ar_writer_write_events(w, &b[t], &err);
			ar_evbuf_reset(&b[t], mem[t], sizeof mem[t], t, 500 + t);
			ar_evbuf_append(&b[t], &written[i]);
		}
	}
	for (uint32_t t = 0; t < 3; t++)
		ar_writer_write_events(w, &b[t], &err);
	ar_writer_close(w, s.time_ns, 1, &err);
	ar_synth_free(&s);
	trace_len = (size_t)lseek(fd, 0, SEEK_END);
	trace = malloc(trace_len);
	if (pread(fd, trace, trace_len, 0) != (ssize_t)trace_len)
		exit(2);
	close(fd);
}

/* Open data[0..n) and read it in merged order. Returns events read; checks
 * the invariants of a reader facing bad input. */
static long read_all(const uint8_t *data, size_t n, ar_status_t *status, int *iter_rc)
{
	int fd = memfile(data, n);
	ar_reader_t *r;
	ar_error_t err = {0};
	long got = -1;
	*iter_rc = 0;
	if (ar_reader_open_fd(&r, fd, "mem", &err) != 0) {
		EXPECT(err.msg[0] != 0);
		EXPECT(err.offset <= n);
		*status = AR_STATUS_CORRUPT;
	} else {
		ar_event_t e;
		int rc;
		got = 0;
		uint64_t last = 0;
		while ((rc = ar_reader_next_merged(r, &e)) == 1) {
			EXPECT(e.seq > last);
			last = e.seq;
			got++;
		}
		*iter_rc = rc;
		*status = rc < 0 ? AR_STATUS_CORRUPT : ar_reader_status(r);
		if (*status != AR_STATUS_COMPLETE) {
			snprintf(last_msg, sizeof last_msg, "%s", ar_reader_error(r)->msg);
			EXPECT(ar_reader_error(r)->msg[0] != 0);
			EXPECT(ar_reader_error(r)->offset <= n);
		}
		ar_reader_close(r);
	}
	close(fd);
	return got;
}

static void test_complete(void)
{
	ar_status_t st;
	int rc;
	EXPECT_U64(read_all(trace, trace_len, &st, &rc), NEVENTS);
	EXPECT_U64(st, AR_STATUS_COMPLETE);
}

/* Every prefix: header-less prefixes fail to open; the rest are truncated
 * (never corrupt) and yield exactly the events of their complete blocks,
 * each identical to what was written. */
static void test_truncation_at_every_offset(void)
{
	long prev = 0;
	for (size_t n = 0; n < trace_len; n++) {
		int fd = memfile(trace, n);
		ar_reader_t *r;
		ar_error_t err = {0};
		if (ar_reader_open_fd(&r, fd, "prefix", &err) != 0) {
			EXPECT(n < 256); /* only a cut header may fail to open */
			EXPECT(err.offset <= n);
			close(fd);
			continue;
		}
		if (ar_reader_status(r) != AR_STATUS_TRUNCATED) {
			fprintf(stderr, "prefix %zu: status %d: %s\n", n, ar_reader_status(r), ar_reader_error(r)->msg);
			test_failures++;
		}
		ar_event_t e;
		long got = 0;
		int rc;
		while ((rc = ar_reader_next_merged(r, &e)) == 1) {
			/* Events come from complete blocks only, so a prefix may
			 * skip seqs of threads whose block was cut; each event
			 * still equals the written one with its seq. */
			int found = 0;
			for (int i = 0; i < NEVENTS && !found; i++)
				found = written[i].seq == e.seq && written[i].result == e.result &&
					written[i].ptr == e.ptr && written[i].size == e.size &&
					written[i].time_ns == e.time_ns && written[i].stack == e.stack;
			EXPECT(found);
			got++;
		}
		EXPECT(rc == 0);
		EXPECT_U64((uint64_t)got, ar_reader_event_count(r));
		EXPECT(got >= prev); /* a longer prefix never loses events */
		prev = got;
		ar_reader_close(r);
		close(fd);
	}
}

static void test_random_flips(void)
{
	uint8_t *copy = malloc(trace_len);
	uint64_t rng = 12345;
	int corrupt = 0, complete = 0;
	for (int iter = 0; iter < 3000; iter++) {
		memcpy(copy, trace, trace_len);
		int flips = 1 + iter % 3;
		for (int k = 0; k < flips; k++) {
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			copy[(rng >> 33) % trace_len] ^= (uint8_t)(1u << ((rng >> 20) % 8));
		}
		ar_status_t st;
		int rc;
		read_all(copy, trace_len, &st, &rc);
		corrupt += st == AR_STATUS_CORRUPT;
		complete += st == AR_STATUS_COMPLETE;
	}
	/* Flips in the command line or in ignored padding are harmless; nearly
	 * all others must be detected (zstd checksums cover every block). */
	EXPECT(corrupt > 2500);
	free(copy);
}

/* Hand-made hostile frames after a valid header. */
static void hostile(const uint8_t *tail, size_t n, ar_status_t want)
{
	size_t hlen = 8 + (trace[4] | (size_t)trace[5] << 8 | (size_t)trace[6] << 16);
	uint8_t buf[512];
	memcpy(buf, trace, hlen);
	memcpy(buf + hlen, tail, n);
	ar_status_t st;
	int rc;
	read_all(buf, hlen + n, &st, &rc);
	EXPECT_U64(st, want);
}

static void test_hostile_frames(void)
{
	/* descriptor claiming a 4 GiB block */
	const uint8_t huge[] = {0x51, 0x2a, 0x4d, 0x18, 9, 0, 0, 0, 1, 0, 1, 1, 1, 1, 0x80, 0x80, 0x80, 0x80, 0x10};
	hostile(huge, sizeof huge, AR_STATUS_CORRUPT);
	/* descriptor with a 1e9 event count and tiny sizes */
	const uint8_t many[] = {0x51, 0x2a, 0x4d, 0x18, 11, 0, 0, 0, 1, 0, 1, 0x80, 0x94, 0xeb, 0xdc, 3, 1, 1, 50, 20};
	hostile(many, sizeof many, AR_STATUS_CORRUPT);
	/* a skippable frame whose size runs past the end */
	const uint8_t skip[] = {0x55, 0x2a, 0x4d, 0x18, 0xff, 0xff, 0xff, 0x7f, 1, 2, 3};
	hostile(skip, sizeof skip, AR_STATUS_TRUNCATED);
	/* a second header frame */
	const uint8_t hdr2[] = {0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0};
	hostile(hdr2, sizeof hdr2, AR_STATUS_CORRUPT);
	/* a bare zstd frame without descriptor */
	const uint8_t bare[] = {0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0, 0, 0, 0};
	hostile(bare, sizeof bare, AR_STATUS_CORRUPT);
	/* descriptor with a non-terminated varint */
	const uint8_t badvar[] = {0x51, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 0xff, 0xff, 0xff};
	hostile(badvar, sizeof badvar, AR_STATUS_CORRUPT);
	/* unknown skippable frame: ignored, then no footer -> truncated */
	const uint8_t other[] = {0x5f, 0x2a, 0x4d, 0x18, 2, 0, 0, 0, 7, 7};
	hostile(other, sizeof other, AR_STATUS_TRUNCATED);
	/* not a trace at all */
	ar_status_t st;
	int rc;
	const uint8_t junk[] = "this is not a trace file at all";
	EXPECT(read_all(junk, sizeof junk, &st, &rc) == -1);
	const uint8_t zst[] = {0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0, 0};
	EXPECT(read_all(zst, sizeof zst, &st, &rc) == -1);
}

/* ---- hostile lengths inside well-formed blocks ------------------------- */

/* A growable byte string with the SPEC 1 encodings, written independently
 * of trace-format/ (a second reading of the spec). */
typedef struct bytes {
	uint8_t *p;
	size_t n, cap;
} bytes_t;

static void put(bytes_t *b, const void *src, size_t n)
{
	if (n == 0) /* src may be the NULL of an empty bytes_t */
		return;
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			exit(2);
	}
	memcpy(b->p + b->n, src, n);
	b->n += n;
}

static void varint(bytes_t *b, uint64_t v)
{
	uint8_t t[10];
	size_t k = 0;
	do {
		t[k] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			t[k] |= 0x80;
		k++;
	} while (v);
	put(b, t, k);
}

static void u32le(bytes_t *b, uint32_t v)
{
	uint8_t t[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	put(b, t, 4);
}

/* Append a descriptor (SPEC 3.2) and the zstd frame of raw to b. A count of
 * 0 means "the real number"; the caller passes what it wants the
 * descriptor to claim. */
static void block(bytes_t *b, uint64_t kind, uint64_t thread, uint64_t count, uint64_t first, uint64_t last,
		  const bytes_t *raw)
{
	size_t cap = ZSTD_compressBound(raw->n);
	uint8_t *z = malloc(cap);
	size_t zn = ZSTD_compress(z, cap, raw->p, raw->n, 1);
	if (!z || ZSTD_isError(zn))
		exit(2);
	bytes_t d = {0};
	varint(&d, kind);
	varint(&d, thread);
	varint(&d, 500); /* os tid, as in events_case's records */
	varint(&d, count);
	varint(&d, first);
	varint(&d, last);
	varint(&d, raw->n);
	varint(&d, zn);
	u32le(b, 0x184D2A51u);
	u32le(b, (uint32_t)d.n);
	put(b, d.p, d.n);
	put(b, z, zn);
	free(d.p);
	free(z);
}

/* A metadata record: type, body length (as claimed), body. */
static void record(bytes_t *b, uint64_t type, uint64_t claimed_len, const bytes_t *body)
{
	varint(b, type);
	varint(b, claimed_len);
	put(b, body->p, body->n);
}

/* The valid header of the test trace, then tail; returns the status and
 * checks the reader's invariants (read_all). */
static ar_status_t after_header(const bytes_t *tail, long *events)
{
	size_t hlen = 8 + (trace[4] | (size_t)trace[5] << 8 | (size_t)trace[6] << 16);
	bytes_t f = {0};
	put(&f, trace, hlen);
	put(&f, tail->p, tail->n);
	ar_status_t st;
	int rc;
	long got = read_all(f.p, f.n, &st, &rc);
	if (events)
		*events = got;
	free(f.p);
	return st;
}

static int hostile_variants;

/* One metadata block holding `rec`, its descriptor claiming `count` records. */
static void meta_case(const char *what, const bytes_t *rec, uint64_t count, ar_status_t want)
{
	bytes_t t = {0};
	block(&t, 2, 0, count, 0, 0, rec);
	ar_status_t st = after_header(&t, NULL);
	if (st != want) {
		fprintf(stderr, "hostile metadata \"%s\": status %d, want %d\n", what, st, want);
		test_failures++;
	}
	hostile_variants++;
	free(t.p);
}

static void test_hostile_lengths_meta(void)
{
	bytes_t body = {0}, rec = {0};
	/* a record whose body length claims 2^60 bytes */
	varint(&body, 0);
	record(&rec, 2, 1ull << 60, &body);
	meta_case("record length 2^60", &rec, 1, AR_STATUS_CORRUPT);
	/* a descriptor claiming 2^32 records for a block holding one */
	rec.n = body.n = 0;
	varint(&body, 0);
	varint(&body, 1);
	varint(&body, 1);
	varint(&body, 0);
	record(&rec, 2, body.n, &body);
	meta_case("2^32 records claimed", &rec, 1ull << 32, AR_STATUS_CORRUPT);
	/* a thread name whose length claims 4 GiB */
	rec.n = body.n = 0;
	varint(&body, 0);
	varint(&body, 4ull << 30);
	put(&body, "x", 1);
	record(&rec, 4, body.n, &body);
	meta_case("thread name 4 GiB", &rec, 1, AR_STATUS_CORRUPT);
	/* a stack claiming 2^32 frames, with two */
	rec.n = body.n = 0;
	varint(&body, 1);
	varint(&body, 1ull << 32);
	varint(&body, 2);
	varint(&body, 2);
	record(&rec, 5, body.n, &body);
	meta_case("stack depth 2^32", &rec, 1, AR_STATUS_CORRUPT);
	/* a stack id beyond 32 bits */
	rec.n = body.n = 0;
	varint(&body, 1ull << 32);
	varint(&body, 1);
	varint(&body, 2);
	record(&rec, 5, body.n, &body);
	meta_case("stack id 2^32", &rec, 1, AR_STATUS_CORRUPT);
	/* a module path claiming 2^40 bytes */
	rec.n = body.n = 0;
	varint(&body, 0x400000);
	varint(&body, 0x1000);
	varint(&body, 1ull << 40);
	record(&rec, 6, body.n, &body);
	meta_case("module path 2^40", &rec, 1, AR_STATUS_CORRUPT);
	/* an allocator path claiming 2^40 bytes (SPEC 6.8) */
	rec.n = body.n = 0;
	varint(&body, 1ull << 40);
	put(&body, "/lib", 4);
	record(&rec, 8, body.n, &body);
	meta_case("allocator path 2^40", &rec, 1, AR_STATUS_CORRUPT);
	/* an allocator version of 64 bytes, one past its limit */
	rec.n = body.n = 0;
	varint(&body, 0);
	varint(&body, 0);
	varint(&body, 64);
	for (int i = 0; i < 64; i++)
		put(&body, "9", 1);
	record(&rec, 8, body.n, &body);
	meta_case("allocator version 64 bytes", &rec, 1, AR_STATUS_CORRUPT);
	/* an RSS sample and a PROCESS record cut short (SPEC 6.9, 6.10) */
	rec.n = body.n = 0;
	varint(&body, 1);
	varint(&body, 1);
	record(&rec, 9, body.n, &body);
	meta_case("RSS sample of 2 fields", &rec, 1, AR_STATUS_CORRUPT);
	rec.n = body.n = 0;
	for (int i = 0; i < 5; i++)
		varint(&body, 1ull << 62);
	record(&rec, 10, body.n, &body);
	meta_case("PROCESS of 5 fields", &rec, 1, AR_STATUS_CORRUPT);
	/* thread records with an index beyond 32 bits */
	rec.n = body.n = 0;
	varint(&body, 1ull << 33);
	varint(&body, 1);
	varint(&body, 1);
	varint(&body, 0);
	record(&rec, 2, body.n, &body);
	meta_case("thread index 2^33", &rec, 1, AR_STATUS_CORRUPT);
	/* a footer claiming 2^32 threads and 2^40 events, and an op table of
	 * 2^40 entries with three present: the events disagree (SPEC 6.7) */
	rec.n = body.n = 0;
	varint(&body, 1ull << 40);
	varint(&body, 1ull << 32);
	varint(&body, 0);
	varint(&body, 1);
	varint(&body, 0);
	varint(&body, 0);
	varint(&body, 1ull << 40);
	varint(&body, 0);
	varint(&body, 0);
	varint(&body, 0);
	record(&rec, 7, body.n, &body);
	meta_case("footer 2^40 events, 2^40 op counts", &rec, 1, AR_STATUS_CORRUPT);
	/* a footer that agrees on events and blocks but claims 2^32 threads:
	 * informative only, so the trace is complete (and nothing was sized
	 * by the claim) */
	rec.n = body.n = 0;
	varint(&body, 0);
	varint(&body, 1ull << 32);
	varint(&body, 0);
	varint(&body, 0);
	varint(&body, 0);
	varint(&body, 0);
	varint(&body, 0);
	record(&rec, 7, body.n, &body);
	meta_case("footer 2^32 threads", &rec, 1, AR_STATUS_COMPLETE);
	/* 20000 threads declared by THREAD_START: complete, each one small */
	rec.n = 0;
	for (uint32_t i = 0; i < 20000; i++) {
		body.n = 0;
		varint(&body, 4000000000u - i);
		varint(&body, i);
		varint(&body, 0);
		varint(&body, 0);
		record(&rec, 2, body.n, &body);
	}
	bytes_t t = {0}, foot = {0};
	block(&t, 2, 0, 20000, 0, 0, &rec);
	body.n = 0;
	for (int i = 0; i < 7; i++)
		varint(&body, i == 2 ? 1 : 0);
	record(&foot, 7, body.n, &body);
	block(&t, 2, 0, 1, 0, 0, &foot);
	EXPECT_U64(after_header(&t, NULL), AR_STATUS_COMPLETE);
	hostile_variants++;
	free(t.p);
	free(foot.p);
	free(rec.p);
	free(body.p);
}

/* An events block whose EVENTS record (SPEC 5.2) carries `head` then the
 * given six column lengths and contents. */
static ar_status_t events_case(const char *what, uint64_t rec_len_delta, uint64_t count, const uint64_t lens[6],
			       const bytes_t *cols, uint64_t desc_count, ar_status_t want)
{
	bytes_t body = {0}, rec = {0}, t = {0};
	varint(&body, 0);
	varint(&body, 500);
	varint(&body, count);
	for (int c = 0; c < 6; c++) {
		varint(&body, lens[c]);
		put(&body, cols[c].p, cols[c].n);
	}
	record(&rec, 1, body.n + rec_len_delta, &body);
	block(&t, 1, 0, desc_count, 1, 1, &rec);
	long got;
	ar_status_t st = after_header(&t, &got);
	if (st != want || got > 1) {
		fprintf(stderr, "hostile events \"%s\": status %d (want %d), %ld events: %s\n", what, st, want, got,
			last_msg);
		test_failures++;
	}
	hostile_variants++;
	free(body.p);
	free(rec.p);
	free(t.p);
	return st;
}

static void test_hostile_lengths_events(void)
{
	/* one malloc(16) = 0x1000 at seq 1: ops 01, seq 00, time 00, ptr
	 * delta16 of 0x100 (zigzag 0x200 << 2 | 1), args 16, no stack */
	bytes_t cols[6] = {{0}};
	const uint8_t op = 1, zero = 0, sz = 16;
	put(&cols[0], &op, 1);
	put(&cols[1], &zero, 1);
	put(&cols[2], &zero, 1);
	varint(&cols[3], (0x200ull << 2) | 1);
	put(&cols[4], &sz, 1);
	uint64_t lens[6];
	for (int c = 0; c < 6; c++)
		lens[c] = cols[c].n;
	/* the well-formed block reads (a truncated trace: no footer) */
	EXPECT_U64(events_case("valid", 0, 1, lens, cols, 1, AR_STATUS_TRUNCATED), AR_STATUS_TRUNCATED);
	/* a column claiming 2^62 bytes */
	uint64_t l2[6];
	memcpy(l2, lens, sizeof l2);
	l2[3] = 1ull << 62;
	events_case("pointer column 2^62", 0, 1, l2, cols, 1, AR_STATUS_CORRUPT);
	/* the record head claiming 2^32 events (descriptor too) */
	events_case("2^32 events in the record", 0, 1ull << 32, lens, cols, 1ull << 32, AR_STATUS_CORRUPT);
	/* the record says 16384 events, the columns hold one */
	events_case("16384 events, one present", 0, 16384, lens, cols, 1, AR_STATUS_CORRUPT);
	/* the record's body length claims 4 GiB more than the block holds */
	events_case("record length + 4 GiB", 4ull << 30, 1, lens, cols, 1, AR_STATUS_CORRUPT);
	for (int c = 0; c < 6; c++)
		free(cols[c].p);
}

/* Frame lengths at the top of the u32 range, and a header whose strings
 * and op table claim more than the frame holds. */
static void test_hostile_lengths_frames(void)
{
	/* a descriptor frame claiming 4 GiB - 1 of payload */
	bytes_t t = {0};
	u32le(&t, 0x184D2A51u);
	u32le(&t, 0xffffffffu);
	put(&t, "\x01\x00", 2);
	EXPECT_U64(after_header(&t, NULL), AR_STATUS_CORRUPT);
	/* a descriptor claiming a 4 GiB compressed frame behind it */
	t.n = 0;
	bytes_t d = {0};
	const uint64_t f[8] = {1, 0, 1, 1, 1, 1, 100, 4ull << 30};
	for (int i = 0; i < 8; i++)
		varint(&d, f[i]);
	u32le(&t, 0x184D2A51u);
	u32le(&t, (uint32_t)d.n);
	put(&t, d.p, d.n);
	EXPECT_U64(after_header(&t, NULL), AR_STATUS_CORRUPT);
	hostile_variants += 2;
	free(t.p);
	free(d.p);

	/* headers: the frame size past the 1 MiB limit or past the file, and
	 * fields claiming more than the frame */
	const struct {
		const char *what;
		uint32_t frame_size; /* 0: the real size */
		uint64_t cmdline_len, ops;
	} hs[] = {
		{"frame 4 GiB - 1", 0xffffffffu, 4, 10},
		{"frame 2 MiB", 2u << 20, 4, 10},
		{"command line 2^40 bytes", 0, 1ull << 40, 10},
		{"op table 2^32 entries", 0, 4, 1ull << 32},
	};
	for (size_t i = 0; i < sizeof hs / sizeof *hs; i++) {
		bytes_t p = {0}, h = {0};
		put(&p, "ALLOCRRT\x01\x00\x00\x00\x00\x00\x00\x00", 16);
		varint(&p, 3);
		put(&p, "gen", 3);
		varint(&p, 1);
		varint(&p, 1);
		varint(&p, hs[i].cmdline_len);
		put(&p, "prog", 4);
		for (int k = 0; k < 5; k++)
			varint(&p, k == 4 ? 16 : 1);
		varint(&p, hs[i].ops);
		u32le(&h, 0x184D2A50u);
		u32le(&h, hs[i].frame_size ? hs[i].frame_size : (uint32_t)p.n);
		put(&h, p.p, p.n);
		ar_status_t st;
		int rc;
		long got = read_all(h.p, h.n, &st, &rc);
		if (got != -1) {
			fprintf(stderr, "hostile header \"%s\" opened\n", hs[i].what);
			test_failures++;
		}
		hostile_variants++;
		free(p.p);
		free(h.p);
	}
}

int main(void)
{
	make_trace();
	RUN(test_complete);
	RUN(test_truncation_at_every_offset);
	RUN(test_random_flips);
	RUN(test_hostile_frames);
	RUN(test_hostile_lengths_meta);
	RUN(test_hostile_lengths_events);
	RUN(test_hostile_lengths_frames);
	printf("variants: %zu truncations, 3000 flip sets, %d hostile frames and lengths\n", trace_len,
	       9 + hostile_variants);
	free(trace);
	return TEST_END();
}
