/*
 * chunk.h — how pool, arena and tlscache find the metadata of any pointer
 * without a per-block header or a global map.
 *
 * Every region those allocators hand blocks out of starts with an
 * ar_chunk_t and is aligned to the chunk size C (a power of two fixed at
 * initialisation). The metadata of pointer p lives at
 *
 *     (p - 1) rounded down to a multiple of C
 *
 * which holds because every block starts strictly after its region's header
 * and at most C bytes after it: small blocks lie inside one C-sized chunk
 * behind its header; a large block (large.c) places its header at the
 * C boundary just below p, even when p must be aligned to more than C.
 * The kind field then tells which allocator structure follows; any other
 * value means p did not come from us.
 */
#ifndef AR_ALLOC_CHUNK_H
#define AR_ALLOC_CHUNK_H

#include <stddef.h>
#include <stdint.h>

enum {
	AR_CHUNK_POOL = 0x4c4f4f50u,  /* "POOL": size-class chunk (pool, tlscache) */
	AR_CHUNK_ARENA = 0x4e455241u, /* "AREN": bump chunk (arena) */
	AR_CHUNK_LARGE = 0x4752414cu, /* "LARG": one block in its own mapping */
};

typedef struct ar_chunk {
	uint32_t kind;  /* AR_CHUNK_* */
	uint32_t index; /* pool: size class; otherwise unused */
} ar_chunk_t;

/* ~(C - 1); set once by ar_chunk_set_size() during initialisation. */
extern uintptr_t ar_chunk_mask;

/* Fix the chunk size C (a power of two >= the page size). */
void ar_chunk_set_size(size_t size);

static inline size_t ar_chunk_size(void)
{
	return (size_t)(~ar_chunk_mask + 1);
}

static inline ar_chunk_t *ar_chunk_of(const void *p)
{
	return (ar_chunk_t *)(((uintptr_t)p - 1) & ar_chunk_mask);
}

#endif
