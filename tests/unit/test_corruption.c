/*
 * test_corruption.c — the reader never trusts its input. A small complete
 * trace is cut at every byte offset, has random bytes flipped, and gets
 * hostile hand-made frames; each time the reader must not crash or hang,
 * must classify the file (complete / truncated / corrupt) with a message and
 * an offset inside the file, and every event it does return must be one the
 * writer wrote, in sequence order.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ar_trace.h"
#include "synth.h"
#include "testing.h"

#define NEVENTS 1500

static uint8_t *trace;
static size_t trace_len;
static ar_event_t written[NEVENTS];

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
			EXPECT(n < 200); /* only a cut header may fail to open */
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

int main(void)
{
	make_trace();
	RUN(test_complete);
	RUN(test_truncation_at_every_offset);
	RUN(test_random_flips);
	RUN(test_hostile_frames);
	free(trace);
	return TEST_END();
}
