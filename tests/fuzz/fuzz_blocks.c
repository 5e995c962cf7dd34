/*
 * fuzz_blocks.c — libFuzzer target that reaches the block decoders behind
 * zstd's checksum. Mutating a real trace mostly breaks the checksum; here the
 * input IS the decoded content of one block, which the harness wraps into a
 * valid trace (header, descriptor, zstd frame), so every mutation is seen by
 * the metadata parser or the columnar event decoder through the public API.
 *
 * Input: byte 0 = block kind (1 events, 2 metadata, else events); then three
 * varints: count, first_seq, last_seq (descriptor fields); the rest is the
 * block content.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "ar_trace.h"
#include "format.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t *put_skippable(uint8_t *p, uint32_t magic, const uint8_t *payload, size_t n)
{
	ar_put_u32le(p, magic);
	ar_put_u32le(p + 4, (uint32_t)n);
	memcpy(p + 8, payload, n);
	return p + 8 + n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4 || size > AR_LIMIT_RAW_BLOCK)
		return 0;
	const uint8_t *p = data + 1, *end = data + size;
	uint64_t kind = data[0] == 2 ? AR_BLOCK_META : AR_BLOCK_EVENTS, count, first, last;
	if (ar_get_varint(&p, end, &count) || ar_get_varint(&p, end, &first) || ar_get_varint(&p, end, &last))
		return 0;
	size_t raw = (size_t)(end - p);

	static uint8_t hdr[8192], desc[128];
	static ar_header_t h;
	ar_header_init(&h);
	int hn = ar_header_encode(&h, hdr, sizeof hdr);
	size_t cap = ZSTD_compressBound(raw) + 1024 + (size_t)hn + sizeof desc;
	uint8_t *file = malloc(cap), *q = file;
	q = put_skippable(q, AR_HEADER_MAGIC, hdr, (size_t)hn);
	uint8_t *dq = desc;
	size_t comp_room = ZSTD_compressBound(raw);
	uint8_t *frame = malloc(comp_room);
	size_t comp = ZSTD_compress(frame, comp_room, p, raw, 1);
	dq = ar_put_varint(dq, kind);
	dq = ar_put_varint(dq, 0);
	dq = ar_put_varint(dq, 7);
	dq = ar_put_varint(dq, count);
	dq = ar_put_varint(dq, first);
	dq = ar_put_varint(dq, last);
	dq = ar_put_varint(dq, raw);
	dq = ar_put_varint(dq, comp);
	q = put_skippable(q, AR_DESCRIPTOR_MAGIC, desc, (size_t)(dq - desc));
	memcpy(q, frame, comp);
	q += comp;
	free(frame);

	int fd = fuzz_input_fd("fuzz", file, (size_t)(q - file));
	if (fd >= 0) {
		ar_reader_t *r;
		ar_error_t err;
		if (ar_reader_open_fd(&r, fd, "fuzz", &err) == 0) {
			ar_event_t e;
			while (ar_reader_next_merged(r, &e) == 1)
				;
			ar_reader_rewind(r);
			while (ar_reader_next(r, &e) == 1)
				;
			ar_reader_close(r);
		}
	}
	if (fd >= 0)
		close(fd);
	free(file);
	return 0;
}
