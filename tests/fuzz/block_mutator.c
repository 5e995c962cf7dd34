/*
 * block_mutator.c — a libFuzzer custom mutator for targets whose input is a
 * whole trace file (fuzz_alloctrace, fuzz_compile). Writers set zstd's
 * content checksum (SPEC 3.3), so a byte flipped inside a block frame is
 * almost always refused before any event is decoded, and the fuzzer would
 * only ever explore the header, the descriptors and truncation. Half of the
 * time this mutator instead picks one block, decodes its frame, lets
 * libFuzzer mutate the decoded bytes, and writes it back as a fresh frame
 * (without checksum, which SPEC 3.3 allows) with raw_size and comp_size
 * updated in its descriptor: the input stays a trace whose blocks decode,
 * and the mutations reach the event and metadata decoders and everything
 * behind them (live maps, statistics, the workload compiler).
 *
 * Linked into the libFuzzer builds only; the corpus replay in `make test`
 * needs no mutator.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "format.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

#define MAX_BLOCKS 256
#define MAX_RAW (1u << 20) /* decoded bytes of a block this mutator works on */

typedef struct block {
	size_t desc;  /* offset of the descriptor frame */
	size_t frame; /* offset of the zstd frame */
	uint64_t f[8];    /* descriptor fields, SPEC 3.2 (f[6] raw_size, f[7] comp_size) */
} block_t;

/* The blocks of the trace in data, up to MAX_BLOCKS; stops at the first
 * frame it cannot follow. */
static int find_blocks(const uint8_t *data, size_t size, block_t *b)
{
	if (size < 8 || ar_get_u32le(data) != AR_HEADER_MAGIC)
		return 0;
	size_t off = 8 + (size_t)ar_get_u32le(data + 4);
	int n = 0;
	while (n < MAX_BLOCKS && off + 8 <= size && ar_get_u32le(data + off) == AR_DESCRIPTOR_MAGIC) {
		uint32_t len = ar_get_u32le(data + off + 4);
		if (len > size - off - 8)
			break;
		const uint8_t *p = data + off + 8, *end = p + len;
		int ok = 1;
		for (int i = 0; i < 8 && ok; i++)
			ok = ar_get_varint(&p, end, &b[n].f[i]) == 0;
		size_t frame = off + 8 + len;
		if (!ok || b[n].f[7] > size - frame)
			break;
		b[n].desc = off;
		b[n].frame = frame;
		off = frame + (size_t)b[n].f[7];
		n++;
	}
	return n;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	static block_t blocks[MAX_BLOCKS];
	srand(seed);
	int n = (rand() & 1) ? find_blocks(data, size, blocks) : 0;
	if (n == 0)
		return LLVMFuzzerMutate(data, size, max_size);
	block_t *b = &blocks[rand() % n];
	uint8_t *raw = malloc(MAX_RAW);
	size_t got = raw ? ZSTD_decompress(raw, MAX_RAW, data + b->frame, (size_t)b->f[7]) : 0;
	if (!raw || ZSTD_isError(got)) {
		free(raw);
		return LLVMFuzzerMutate(data, size, max_size);
	}
	size_t raw_n = LLVMFuzzerMutate(raw, got, MAX_RAW);
	size_t room = ZSTD_compressBound(raw_n);
	uint8_t *comp = malloc(room);
	size_t comp_n = comp ? ZSTD_compress(comp, room, raw, raw_n, 1) : 0;
	free(raw);
	if (!comp || ZSTD_isError(comp_n)) {
		free(comp);
		return LLVMFuzzerMutate(data, size, max_size);
	}
	/* descriptor frame with the new sizes, then the new frame, then the rest */
	size_t rest = b->frame + (size_t)b->f[7];
	uint8_t desc[8 + 8 * 10], *q = desc + 8;
	b->f[6] = raw_n;
	b->f[7] = comp_n;
	for (int i = 0; i < 8; i++)
		q = ar_put_varint(q, b->f[i]);
	ar_put_u32le(desc, AR_DESCRIPTOR_MAGIC);
	ar_put_u32le(desc + 4, (uint32_t)(q - desc - 8));
	size_t desc_n = (size_t)(q - desc), out_n = b->desc + desc_n + comp_n + (size - rest);
	if (out_n > max_size) {
		free(comp);
		return LLVMFuzzerMutate(data, size, max_size);
	}
	memmove(data + b->desc + desc_n + comp_n, data + rest, size - rest);
	memcpy(data + b->desc, desc, desc_n);
	memcpy(data + b->desc + desc_n, comp, comp_n);
	free(comp);
	return out_n;
}
