/*
 * ar_hash.h — the one open-addressing hash table of allocrr, as inline code
 * over storage the caller owns.
 *
 * The table never allocates: the caller gives it an array of cap entries
 * (cap a power of two, all bytes zero = every entry empty) and, when
 * ar_hash_needs_room() says so, a new zeroed array of twice the size, into
 * which NAME_rehash() moves the entries. So the same code serves the trace
 * reader (calloc), the replay compiler, the debug allocator (which maps its
 * own pages: it cannot call malloc) and anything that must not touch the heap.
 * The table is not thread-safe: the caller holds whatever lock it needs.
 *
 * Invariants the generated functions keep:
 *   - linear probing from the top log2(cap) bits of HASH(key) (Fibonacci
 *     hashing: a product's high bits depend on every bit of the key), at
 *     most half full (the caller
 *     grows before an insert that would pass that; ar_hash_needs_room), so
 *     every probe ends at an empty entry;
 *   - an entry is empty when EMPTY(e) is true, and an emptied entry is all
 *     zero bytes (so a freshly zeroed array is an empty table);
 *   - removal shifts the later entries of the probe run back into the hole
 *     (no tombstones): probes stay short under churn.
 *
 * One table type is made by
 *
 *   AR_HASH_DEFINE(NAME, ENTRY, EMPTY, KEY, HASH)
 *
 * ENTRY the entry type (the key may live in the entry or elsewhere);
 * EMPTY(e) true when the entry at e is empty; KEY(ctx, e) the uint64_t key of
 * the non-empty entry at e (ctx is the caller's pointer, passed through, for
 * tables whose entries are indices into the caller's own arrays); HASH(k) a
 * uint64_t whose high bits are well mixed (ar_hash_fib, ar_hash_mix32). It
 * defines, all static inline:
 *
 *   uint64_t NAME_pos(const ENTRY *tab, uint64_t mask, const void *ctx, uint64_t key)
 *       Position of key's entry, or of the empty entry where it goes.
 *   uint64_t NAME_find(const ENTRY *tab, uint64_t mask, const void *ctx, uint64_t key)
 *       Position of key's entry, or AR_HASH_ABSENT (also when tab is NULL).
 *   void NAME_remove_at(ENTRY *tab, uint64_t mask, const void *ctx, uint64_t i)
 *       Empty the entry at position i, keeping the others findable.
 *   void NAME_rehash(ENTRY *to, uint64_t to_mask, const ENTRY *from, uint64_t from_cap, const void *ctx)
 *       Place every entry of from (from_cap entries; from may be NULL when 0)
 *       into the zeroed table to, which has room for them all.
 *
 * mask is cap - 1, and cap at least 2.
 *
 * A key that is not one uint64_t (a string, a pair of a parent node and a
 * name) is compared, not read back: the table is then made by
 *
 *   AR_HASH_DEFINE_KEYED(NAME, ENTRY, EMPTY, KEY_T, HASH_KEY, HASH_ENTRY, HOLDS)
 *
 * with the same functions, their key parameter of type KEY_T (a pointer to
 * the caller's key struct, say); HASH_KEY(key) the hash of a key (high bits
 * well mixed), HASH_ENTRY(ctx, e) the hash of the key of the non-empty
 * entry at e (equal to HASH_KEY of that key), HOLDS(ctx, e, key) true when
 * the non-empty entry at e holds key. AR_HASH_DEFINE is this with KEY_T
 * uint64_t, HASH_ENTRY HASH(KEY(ctx, e)) and HOLDS KEY(ctx, e) == key.
 *
 * Where growing is always the same, a second macro
 *
 *   AR_HASH_DEFINE_GROW(NAME, ENTRY, ALLOC, FREE)
 *
 * (after AR_HASH_DEFINE or AR_HASH_DEFINE_KEYED of the same NAME) adds
 *
 *   int NAME_reserve(ENTRY **tab, uint64_t *cap, uint64_t len, uint64_t first, const void *ctx)
 *       Room for one more entry in a table holding len: when it is half
 *       full, a table of twice the size (first entries for the first one)
 *       from ALLOC(bytes) (zeroed memory or NULL), the entries moved, the old
 *       array given to FREE(ptr, bytes). 0, or -1 when ALLOC failed or the
 *       size would overflow (the table is unchanged and still usable).
 */
#ifndef AR_HASH_H
#define AR_HASH_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define AR_HASH_ABSENT UINT64_MAX

/* Fibonacci hashing: k times 2^64 / golden ratio; the table takes the
 * product's high bits, which depend on every bit of k (aligned addresses and
 * sizes differ in their upper bits only). */
static inline uint64_t ar_hash_fib(uint64_t k)
{
	return k * 0x9E3779B97F4A7C15ull;
}

/* A full-avalanche mix of a 32-bit key (small dense keys such as thread
 * indices and stack ids), in the high half. */
static inline uint64_t ar_hash_mix32(uint64_t k)
{
	uint32_t x = (uint32_t)k;
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return (uint64_t)x << 32 | x;
}

/* The home position of hash h in a table of mask + 1 (>= 2) entries: its
 * top log2(mask + 1) bits. */
static inline uint64_t ar_hash_home(uint64_t h, uint64_t mask)
{
	return h >> __builtin_clzll(mask);
}

/* True when a table of cap entries (0 = none yet) holding len must grow
 * before one more insert: it is kept at most half full. */
static inline int ar_hash_needs_room(uint64_t len, uint64_t cap)
{
	return cap == 0 || (len + 1) * 2 > cap;
}

/* The capacity to grow a table of cap entries to: first (a power of two)
 * for the first table, else twice cap; 0 when that would overflow. */
static inline uint64_t ar_hash_grown_cap(uint64_t cap, uint64_t first)
{
	return cap == 0 ? first : cap > UINT64_MAX / 2 ? 0 : cap * 2;
}

#define AR_HASH_DEFINE(NAME, ENTRY, EMPTY, KEY, HASH)                                                        \
	static inline __attribute__((unused)) uint64_t NAME##_hash_of(const void *ctx, const ENTRY *e)       \
	{                                                                                                    \
		(void)ctx;                                                                                   \
		return HASH(KEY(ctx, e));                                                                    \
	}                                                                                                    \
	static inline __attribute__((unused)) int NAME##_holds(const void *ctx, const ENTRY *e, uint64_t key) \
	{                                                                                                    \
		(void)ctx;                                                                                   \
		return (KEY(ctx, e)) == key;                                                                 \
	}                                                                                                    \
	AR_HASH_DEFINE_KEYED(NAME, ENTRY, EMPTY, uint64_t, HASH, NAME##_hash_of, NAME##_holds)

#define AR_HASH_DEFINE_KEYED(NAME, ENTRY, EMPTY, KEY_T, HASH_KEY, HASH_ENTRY, HOLDS)                        \
	static inline __attribute__((unused)) uint64_t NAME##_pos(const ENTRY *tab, uint64_t mask,           \
								   const void *ctx, KEY_T key)              \
	{                                                                                                    \
		(void)ctx;                                                                                   \
		uint64_t i = ar_hash_home(HASH_KEY(key), mask);                                              \
		while (!(EMPTY(&tab[i])) && !(HOLDS(ctx, &tab[i], key)))                                     \
			i = (i + 1) & mask;                                                                  \
		return i;                                                                                    \
	}                                                                                                    \
	static inline __attribute__((unused)) uint64_t NAME##_find(const ENTRY *tab, uint64_t mask,          \
								    const void *ctx, KEY_T key)             \
	{                                                                                                    \
		if (!tab)                                                                                    \
			return AR_HASH_ABSENT;                                                               \
		uint64_t i = NAME##_pos(tab, mask, ctx, key);                                                \
		return EMPTY(&tab[i]) ? AR_HASH_ABSENT : i;                                                  \
	}                                                                                                    \
	static inline __attribute__((unused)) void NAME##_remove_at(ENTRY *tab, uint64_t mask, const void *ctx, \
								     uint64_t i)                           \
	{                                                                                                    \
		(void)ctx;                                                                                   \
		for (uint64_t j = (i + 1) & mask; !(EMPTY(&tab[j])); j = (j + 1) & mask) {                   \
			uint64_t h = ar_hash_home(HASH_ENTRY(ctx, &tab[j]), mask);                           \
			/* j's entry may fill the hole unless its home lies cyclically in (i, j] */          \
			int stays = (i <= j) ? (i < h && h <= j) : (i < h || h <= j);                        \
			if (!stays) {                                                                        \
				tab[i] = tab[j];                                                             \
				i = j;                                                                       \
			}                                                                                    \
		}                                                                                            \
		memset(&tab[i], 0, sizeof tab[i]);                                                           \
	}                                                                                                    \
	static inline __attribute__((unused)) void NAME##_rehash(ENTRY *to, uint64_t to_mask, const ENTRY *from, \
								  uint64_t from_cap, const void *ctx)      \
	{                                                                                                    \
		(void)ctx;                                                                                   \
		for (uint64_t i = 0; i < from_cap; i++) {                                                    \
			if (EMPTY(&from[i]))                                                                 \
				continue;                                                                    \
			uint64_t j = ar_hash_home(HASH_ENTRY(ctx, &from[i]), to_mask);                       \
			while (!(EMPTY(&to[j])))                                                             \
				j = (j + 1) & to_mask;                                                       \
			to[j] = from[i];                                                                     \
		}                                                                                            \
	}

#define AR_HASH_DEFINE_GROW(NAME, ENTRY, ALLOC, FREE)                                                       \
	static __attribute__((unused, noinline)) int NAME##_grow(ENTRY **tab, uint64_t *cap, uint64_t first,    \
								  const void *ctx)                          \
	{                                                                                                    \
		uint64_t ncap = ar_hash_grown_cap(*cap, first);                                              \
		ENTRY *t = ncap && ncap <= SIZE_MAX / sizeof(ENTRY) ? (ENTRY *)(ALLOC(ncap * sizeof(ENTRY))) : NULL; \
		if (!t)                                                                                      \
			return -1;                                                                           \
		NAME##_rehash(t, ncap - 1, *tab, *cap, ctx);                                                 \
		if (*tab)                                                                                    \
			FREE(*tab, *cap * sizeof(ENTRY));                                                    \
		*tab = t;                                                                                    \
		*cap = ncap;                                                                                 \
		return 0;                                                                                    \
	}                                                                                                    \
	static inline __attribute__((unused)) int NAME##_reserve(ENTRY **tab, uint64_t *cap, uint64_t len,      \
								  uint64_t first, const void *ctx)          \
	{                                                                                                    \
		return ar_hash_needs_room(len, *cap) ? NAME##_grow(tab, cap, first, ctx) : 0;                \
	}

/* ALLOC and FREE for tables on the C heap. */
#define AR_HASH_CALLOC(bytes) calloc(1, (bytes))
#define AR_HASH_FREE(p, bytes) free(p)

#endif
