/*
 * test_spec_example.c — the worked example of trace-format/SPEC.md section
 * 10 must be what the writer really produces: the four events below encode
 * to exactly the EVENTS record bytes printed there, and decode back.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <zstd.h>

#include "ar_trace.h"
#include "testing.h"

/* SPEC.md section 10, byte for byte. */
static const char spec_hex[] = "01 25 00 92 21 04 04 01 03 05 01 05 00 00 00 01 00 04 7c 1a 32 32 0b 89 a0 81 80 a8 d5 0a 00 00 00 00 03 18 64 18 00";

static const ar_event_t example[] = {
	{.op = AR_OP_MALLOC, .seq = 1, .time_ns = 1000, .size = 24, .result = 0x55550000a010},
	{.op = AR_OP_REALLOC, .seq = 2, .seq2 = 3, .time_ns = 1200, .ptr = 0x55550000a010, .size = 100,
	 .result = 0x55550000a010},
	{.op = AR_OP_FREE, .seq = 5, .time_ns = 1600, .ptr = 0x55550000a010},
	{.op = AR_OP_MALLOC, .seq = 6, .time_ns = 2000, .size = 24, .result = 0x55550000a010},
};

static void test_example_bytes(void)
{
	char path[] = "/tmp/allocrr-spec-XXXXXX";
	int fd = mkstemp(path);
	ar_header_t h;
	ar_header_init(&h);
	ar_writer_t *w;
	ar_error_t err;
	EXPECT(ar_writer_open(&w, fd, &h, 1, NULL, &err) == 0);
	static uint8_t mem[AR_EVBUF_MAX_BYTES];
	ar_evbuf_t b;
	ar_evbuf_reset(&b, mem, sizeof mem, 0, 4242);
	for (size_t i = 0; i < sizeof example / sizeof *example; i++)
		EXPECT(ar_evbuf_append(&b, &example[i]) == 0);
	EXPECT(ar_writer_write_events(w, &b, &err) == 0);
	EXPECT(ar_writer_close(w, 3000, 1, &err) == 0);

	/* Find the first data frame: header frame, then the descriptor. */
	off_t size = lseek(fd, 0, SEEK_END);
	uint8_t *file = malloc((size_t)size);
	EXPECT(pread(fd, file, (size_t)size, 0) == size);
	size_t off = 8 + (file[4] | file[5] << 8 | (size_t)file[6] << 16);
	EXPECT(file[off] == 0x51 && file[off + 1] == 0x2a);
	off += 8 + file[off + 4];
	uint8_t raw[256];
	size_t frame = ZSTD_findFrameCompressedSize(file + off, (size_t)size - off);
	size_t n = ZSTD_decompress(raw, sizeof raw, file + off, frame);
	EXPECT(!ZSTD_isError(n));
	char hex[sizeof raw * 3 + 1] = "";
	for (size_t i = 0; i < n && !ZSTD_isError(n); i++)
		snprintf(hex + (i ? 3 * i - 1 : 0), 4, i ? " %02x" : "%02x", raw[i]);
	EXPECT_STR(hex, spec_hex);

	ar_reader_t *r;
	EXPECT(ar_reader_open(&r, path, &err) == 0);
	ar_event_t e;
	for (size_t i = 0; i < sizeof example / sizeof *example; i++) {
		EXPECT(ar_reader_next_merged(r, &e) == 1);
		EXPECT_U64(e.seq, example[i].seq);
		EXPECT_U64(e.result, example[i].result);
		EXPECT_U64(e.ptr, example[i].ptr);
		EXPECT_U64(e.time_ns, example[i].time_ns / 16 * 16);
	}
	EXPECT(ar_reader_next_merged(r, &e) == 0);
	EXPECT_U64(ar_reader_status(r), AR_STATUS_COMPLETE);
	ar_reader_close(r);
	free(file);
	close(fd);
	unlink(path);
}

int main(void)
{
	RUN(test_example_bytes);
	return TEST_END();
}
