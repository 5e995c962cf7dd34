/*
 * addr_sim.h — a simulated address space for trace generators: hands out
 * pointer values the way a size-class malloc would, so that generated traces
 * have realistic pointers (16-byte aligned, clustered per thread, freed
 * addresses reused LIFO within their class, large blocks page-aligned).
 *
 * Invariants:
 *   - an address is never handed out twice while live: a block returns to a
 *     free list only through ar_addr_sim_free(), and the generator calls that
 *     at the free's sequence number, so in sequence order an address is only
 *     reused after its previous owner's free (SPEC 4);
 *   - arena i owns [AR_ADDR_TOP - (i+1) * 2^36, AR_ADDR_TOP - i * 2^36): a
 *     block freed by another thread goes back to the arena it came from, as
 *     in glibc and jemalloc, which is what makes cross-thread frees cost;
 *   - the simulation is a pure function of its call sequence (no randomness),
 *     so a seeded generator stays deterministic.
 */
#ifndef AR_ADDR_SIM_H
#define AR_ADDR_SIM_H

#include <stdint.h>

#define AR_ADDR_TOP 0x7f0000000000ULL
#define AR_ADDR_ARENA_SHIFT 36 /* 64 GiB of address space per arena */
#define AR_ADDR_MAX_ARENAS 256
/* Classes: 8 of 16 B steps up to 128 B, then 4 per doubling up to 2^42 B. */
#define AR_ADDR_CLASSES 152
/* Blocks of at least this size are page-aligned, as mmap'ed chunks are. */
#define AR_ADDR_LARGE 131072u

typedef struct ar_addr_list {
	uint64_t *ptrs;
	uint32_t n, cap;
} ar_addr_list_t;

typedef struct ar_addr_arena {
	uint64_t base, bump, limit;
	ar_addr_list_t free[AR_ADDR_CLASSES];
} ar_addr_arena_t;

typedef struct ar_addr_sim {
	uint32_t narenas;
	ar_addr_arena_t *arenas;
} ar_addr_sim_t;

/* Set up `narenas` (1..AR_ADDR_MAX_ARENAS) empty arenas. 0, or -1 when out
 * of memory or narenas is out of range. */
int ar_addr_sim_init(ar_addr_sim_t *s, uint32_t narenas);
void ar_addr_sim_free_all(ar_addr_sim_t *s);

/* The class of a request of `size` bytes, and the bytes that class holds
 * (>= size). A request of 0 is in the smallest class. */
unsigned ar_addr_class(uint64_t size);
uint64_t ar_addr_class_bytes(unsigned cls);

/* An address for `size` bytes from arena `arena`: the most recently freed
 * block of the class, else fresh space. Returns 0 when the arena's address
 * space or the host's memory is exhausted. */
uint64_t ar_addr_sim_alloc(ar_addr_sim_t *s, uint32_t arena, uint64_t size);

/* Give back the block at `ptr`, allocated for `size` bytes, to the arena
 * that owns its address. Returns 0, or -1 when ptr is no arena's or memory
 * for the free list is short (the block is then simply not reused). */
int ar_addr_sim_free(ar_addr_sim_t *s, uint64_t ptr, uint64_t size);

#endif
