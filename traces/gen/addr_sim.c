/*
 * addr_sim.c — see addr_sim.h. Layout of a block: a 16-byte header (as
 * glibc's chunk header) before the pointer handed out; small blocks are
 * packed at the class size plus that header; large ones start on a page so
 * the pointer is page + 16, like glibc's mmap'ed chunks.
 */
#include <stdlib.h>
#include <string.h>

#include "addr_sim.h"

#define PAGE 4096ULL
#define HDR 16ULL

int ar_addr_sim_init(ar_addr_sim_t *s, uint32_t narenas)
{
	memset(s, 0, sizeof *s);
	if (narenas == 0 || narenas > AR_ADDR_MAX_ARENAS)
		return -1;
	s->arenas = calloc(narenas, sizeof *s->arenas);
	if (!s->arenas)
		return -1;
	s->narenas = narenas;
	for (uint32_t i = 0; i < narenas; i++) {
		ar_addr_arena_t *a = &s->arenas[i];
		a->base = AR_ADDR_TOP - ((uint64_t)(i + 1) << AR_ADDR_ARENA_SHIFT);
		a->limit = a->base + (1ULL << AR_ADDR_ARENA_SHIFT);
		a->bump = a->base + 0x10000; /* leave the arena's own header page(s) */
	}
	return 0;
}

void ar_addr_sim_free_all(ar_addr_sim_t *s)
{
	for (uint32_t i = 0; i < s->narenas; i++)
		for (unsigned c = 0; c < AR_ADDR_CLASSES; c++)
			free(s->arenas[i].free[c].ptrs);
	free(s->arenas);
	memset(s, 0, sizeof *s);
}

unsigned ar_addr_class(uint64_t size)
{
	if (size <= 128)
		return size ? (unsigned)((size + 15) / 16 - 1) : 0;
	/* 2^p < size <= 2^(p+1), four classes of 2^(p-2) steps above 2^p */
	unsigned p = 63u - (unsigned)__builtin_clzll(size - 1);
	uint64_t step = 1ULL << (p - 2);
	uint64_t k = (size - (1ULL << p) + step - 1) / step; /* 1..4 */
	unsigned c = 8 + (p - 7) * 4 + (unsigned)(k - 1);
	return c < AR_ADDR_CLASSES ? c : AR_ADDR_CLASSES - 1;
}

uint64_t ar_addr_class_bytes(unsigned cls)
{
	if (cls < 8)
		return 16ULL * (cls + 1);
	unsigned p = 7 + (cls - 8) / 4, k = (cls - 8) % 4 + 1;
	return (1ULL << p) + (uint64_t)k * (1ULL << (p - 2));
}

static ar_addr_arena_t *owner(ar_addr_sim_t *s, uint64_t ptr)
{
	if (ptr >= AR_ADDR_TOP)
		return NULL;
	uint64_t i = (AR_ADDR_TOP - 1 - ptr) >> AR_ADDR_ARENA_SHIFT;
	return i < s->narenas ? &s->arenas[i] : NULL;
}

uint64_t ar_addr_sim_alloc(ar_addr_sim_t *s, uint32_t arena, uint64_t size)
{
	if (arena >= s->narenas)
		return 0;
	ar_addr_arena_t *a = &s->arenas[arena];
	unsigned c = ar_addr_class(size);
	uint64_t bytes = ar_addr_class_bytes(c);
	if (bytes < size) /* beyond the last class: no such block */
		return 0;
	ar_addr_list_t *l = &a->free[c];
	if (l->n)
		return l->ptrs[--l->n];
	uint64_t start = a->bump, stride = bytes + HDR;
	if (bytes >= AR_ADDR_LARGE) {
		start = (start + PAGE - 1) & ~(PAGE - 1);
		stride = (bytes + HDR + PAGE - 1) & ~(PAGE - 1);
	}
	if (start + stride > a->limit || start + stride < start)
		return 0;
	a->bump = start + stride;
	return start + HDR;
}

int ar_addr_sim_free(ar_addr_sim_t *s, uint64_t ptr, uint64_t size)
{
	ar_addr_arena_t *a = owner(s, ptr);
	if (!a)
		return -1;
	ar_addr_list_t *l = &a->free[ar_addr_class(size)];
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 64;
		uint64_t *p = realloc(l->ptrs, (size_t)cap * sizeof *p);
		if (!p)
			return -1;
		l->ptrs = p;
		l->cap = cap;
	}
	l->ptrs[l->n++] = ptr;
	return 0;
}
