/*
 * alloc_test.h — helpers for the programs tests/e2e/alloc_*.sh run under
 * LD_PRELOAD of each allocator: a deterministic random generator, block
 * patterns that expose overlap and corruption, and access to our
 * allocators' statistics.
 *
 * Patterns: every byte of a block is a function of a per-block tag and the
 * byte's offset, so a block that another block overlaps, or that the
 * allocator wrote its own metadata into, fails its check at free time.
 */
#ifndef AR_ALLOC_TEST_H
#define AR_ALLOC_TEST_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_alloc.h"

/* splitmix64: small, fast, and the same sequence on every run. */
static inline uint64_t t_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A size between 1 and max, log-uniform so small sizes dominate as they do
 * in real programs, yet every magnitude up to max occurs. */
static inline size_t t_rand_size(uint64_t *state, size_t max)
{
	unsigned bits = 64u - (unsigned)__builtin_clzll((unsigned long long)max);
	unsigned b = (unsigned)(t_rand(state) % bits) + 1;
	size_t lim = b >= 64 ? max : ((size_t)1 << b);
	if (lim > max)
		lim = max;
	return (size_t)(t_rand(state) % lim) + 1;
}

/* Byte i of tag's pattern: byte i % 8 of word i / 8 of a sequence that
 * differs for every tag and every word, so shifted or swapped data shows. */
static inline uint64_t t_pattern_word(uint64_t tag, size_t w)
{
	return (tag * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)w * 0xff51afd7ed558ccdull) ^ (uint64_t)w;
}

/* Fill n bytes of p with tag's pattern, a word at a time. */
static inline void t_fill(void *p, size_t n, uint64_t tag)
{
	unsigned char *c = p;
	size_t w = 0;
	for (; (w + 1) * 8 <= n; w++) {
		uint64_t v = t_pattern_word(tag, w);
		memcpy(c + w * 8, &v, 8);
	}
	uint64_t v = t_pattern_word(tag, w);
	memcpy(c + w * 8, &v, n - w * 8);
}

/* Offset of the first byte that differs from tag's pattern, or n. */
static inline size_t t_check(const void *p, size_t n, uint64_t tag)
{
	const unsigned char *c = p;
	size_t w = 0;
	for (; (w + 1) * 8 <= n; w++) {
		uint64_t v = t_pattern_word(tag, w), got;
		memcpy(&got, c + w * 8, 8);
		if (got != v)
			break;
	}
	uint64_t v = t_pattern_word(tag, w);
	const unsigned char *want = (const unsigned char *)&v;
	for (size_t i = w * 8; i < n && i < w * 8 + 8; i++)
		if (c[i] != want[i - w * 8])
			return i;
	return n;
}

/* Our allocator's statistics function, or NULL when another allocator serves
 * this process. */
static inline ar_allocator_stats_fn t_stats_fn(void)
{
	return (ar_allocator_stats_fn)(uintptr_t)dlsym(RTLD_DEFAULT, AR_ALLOC_STATS_SYMBOL);
}

#endif
