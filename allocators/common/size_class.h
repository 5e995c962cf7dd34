/*
 * size_class.h — the size classes shared by pool and tlscache.
 *
 * Classes are fine where programs allocate most (every 16 bytes up to 256),
 * then four per power of two up to 256 KiB, so internal waste stays below
 * 25 % (below 12.5 % on average) while the class count stays at 56:
 *
 *   16 32 48 ... 256 | 320 384 448 512 | 640 768 896 1024 | ... | 229376 262144
 *
 * Every class size is a multiple of 16, so blocks carved back to back from a
 * 16-aligned start stay 16-aligned. Each allocator uses the classes up to its
 * own maximum (a tunable); bigger requests go to large.c.
 */
#ifndef AR_ALLOC_SIZE_CLASS_H
#define AR_ALLOC_SIZE_CLASS_H

#include <stddef.h>
#include <stdint.h>

#define AR_SC_COUNT 56
#define AR_SC_LIMIT ((size_t)256 << 10) /* largest class size */

/* Class index for a request of size bytes, 1 <= size <= AR_SC_LIMIT. */
static inline unsigned ar_sc_index(size_t size)
{
	if (size <= 256)
		return (unsigned)((size + 15) >> 4) - 1;
	unsigned lg = 63u - (unsigned)__builtin_clzll((unsigned long long)(size - 1));
	return 16u + (lg - 8u) * 4u + (unsigned)(((size - 1) >> (lg - 2)) & 3u);
}

/* Block size of class idx (idx < AR_SC_COUNT). */
static inline size_t ar_sc_size(unsigned idx)
{
	if (idx < 16)
		return (size_t)(idx + 1) << 4;
	unsigned g = (idx - 16) / 4, k = (idx - 16) % 4;
	return ((size_t)256 << g) + (size_t)(k + 1) * ((size_t)64 << g);
}

#endif
