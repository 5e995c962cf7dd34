/*
 * test_hash.c — common/ar_hash.h against a plain model (an array searched
 * linearly): random inserts, finds and removals, with the table grown from a
 * tiny first size through storage this test hands out and counts; then
 * removal across the end of the array (probe runs that wrap), with a hash
 * that sends every key to the last positions; then an index table whose
 * keys live in the caller's array (ctx); then the keyed form, on string
 * keys compared through the caller's array, with a hash weak enough that
 * different keys share a home.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_hash.h"
#include "testing.h"

typedef struct ent {
	uint64_t key; /* 0 = empty */
	uint64_t val;
} ent_t;

static uint64_t allocs, frees, live_bytes;

static void *count_alloc(size_t bytes)
{
	allocs++;
	live_bytes += bytes;
	return calloc(1, bytes);
}

static void count_free(void *p, size_t bytes)
{
	frees++;
	live_bytes -= bytes;
	free(p);
}

#define ENT_EMPTY(e) ((e)->key == 0)
#define ENT_KEY(ctx, e) ((e)->key)
AR_HASH_DEFINE(ent, ent_t, ENT_EMPTY, ENT_KEY, ar_hash_fib)
AR_HASH_DEFINE_GROW(ent, ent_t, count_alloc, count_free)

/* Every key lands at the same home: the worst case, and runs that wrap. */
static inline uint64_t same_home(uint64_t k)
{
	(void)k;
	return (uint64_t)14 << 60; /* position 14 of 16: the top 4 bits */
}
AR_HASH_DEFINE(clump, ent_t, ENT_EMPTY, ENT_KEY, same_home)

static uint64_t rng = 42;
static uint64_t next_rand(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

#define MODEL_MAX 4096
static uint64_t model_key[MODEL_MAX], model_val[MODEL_MAX];
static unsigned model_n;

static int model_find(uint64_t key)
{
	for (unsigned i = 0; i < model_n; i++)
		if (model_key[i] == key)
			return (int)i;
	return -1;
}

static void test_against_model(void)
{
	ent_t *tab = NULL;
	uint64_t cap = 0, len = 0;
	for (int step = 0; step < 200000; step++) {
		/* keys from a small range, so inserts hit present keys and removals present ones */
		uint64_t key = (next_rand() % 3000 + 1) * 16;
		unsigned op = (unsigned)(next_rand() % 3);
		int m = model_find(key);
		uint64_t pos = ent_find(tab, cap - 1, NULL, key);
		EXPECT((m >= 0) == (pos != AR_HASH_ABSENT));
		if (m >= 0 && pos != AR_HASH_ABSENT)
			EXPECT_U64(tab[pos].val, model_val[m]);
		if (op < 2 && m < 0 && model_n < MODEL_MAX) {
			EXPECT(ent_reserve(&tab, &cap, len, 4, NULL) == 0);
			EXPECT(len * 2 < cap);
			uint64_t i = ent_pos(tab, cap - 1, NULL, key);
			EXPECT(ENT_EMPTY(&tab[i]));
			tab[i] = (ent_t){key, step};
			len++;
			model_key[model_n] = key;
			model_val[model_n++] = (uint64_t)step;
		} else if (op == 2 && m >= 0) {
			ent_remove_at(tab, cap - 1, NULL, pos);
			len--;
			model_key[m] = model_key[--model_n];
			model_val[m] = model_val[model_n];
		}
	}
	/* every key of the model is found, and nothing else is in the table */
	uint64_t in_table = 0;
	for (uint64_t i = 0; i < cap; i++)
		in_table += !ENT_EMPTY(&tab[i]);
	EXPECT_U64(in_table, model_n);
	EXPECT_U64(len, model_n);
	for (unsigned i = 0; i < model_n; i++) {
		uint64_t pos = ent_find(tab, cap - 1, NULL, model_key[i]);
		EXPECT(pos != AR_HASH_ABSENT);
		if (pos != AR_HASH_ABSENT)
			EXPECT_U64(tab[pos].val, model_val[i]);
	}
	/* growth went through the caller's functions only, and freed each old table */
	EXPECT(allocs > 5);
	EXPECT_U64(frees, allocs - 1);
	EXPECT_U64(live_bytes, cap * sizeof *tab);
	count_free(tab, cap * sizeof *tab);
}

static void test_wrapping_runs(void)
{
	ent_t tab[16] = {{0, 0}};
	/* home 14 for all: the run is 14, 15, 0, 1, 2, 3 */
	for (uint64_t k = 1; k <= 6; k++) {
		uint64_t i = clump_pos(tab, 15, NULL, k);
		EXPECT_U64(i, (14 + k - 1) & 15);
		tab[i] = (ent_t){k, k * 10};
	}
	/* remove from the middle of the run, then its wrapped part, then its head */
	uint64_t order[] = {3, 5, 1, 6, 2, 4};
	for (unsigned r = 0; r < 6; r++) {
		uint64_t pos = clump_find(tab, 15, NULL, order[r]);
		EXPECT(pos != AR_HASH_ABSENT);
		clump_remove_at(tab, 15, NULL, pos);
		EXPECT(clump_find(tab, 15, NULL, order[r]) == AR_HASH_ABSENT);
		for (unsigned later = r + 1; later < 6; later++) {
			uint64_t p = clump_find(tab, 15, NULL, order[later]);
			EXPECT(p != AR_HASH_ABSENT);
			if (p != AR_HASH_ABSENT)
				EXPECT_U64(tab[p].val, order[later] * 10);
		}
	}
	for (unsigned i = 0; i < 16; i++)
		EXPECT(ENT_EMPTY(&tab[i]) && tab[i].val == 0); /* emptied entries are zero bytes */
	EXPECT(clump_find(NULL, 0, NULL, 1) == AR_HASH_ABSENT);
}

/* Index table: entries are positions + 1 into names[], whose key is id. */
typedef struct named {
	uint32_t id;
	const char *name;
} named_t;
#define IDX_EMPTY(e) (*(e) == 0)
#define IDX_KEY(ctx, e) (((const named_t *)(ctx))[*(e) - 1].id)
AR_HASH_DEFINE(idx, uint32_t, IDX_EMPTY, IDX_KEY, ar_hash_mix32)
AR_HASH_DEFINE_GROW(idx, uint32_t, AR_HASH_CALLOC, AR_HASH_FREE)

static void test_index_table(void)
{
	static named_t names[1000];
	uint32_t *tab = NULL;
	uint64_t cap = 0;
	for (uint32_t n = 0; n < 1000; n++) {
		names[n] = (named_t){n * 7919u, "x"}; /* id 0 too: the key need not be non-zero */
		EXPECT(idx_reserve(&tab, &cap, n, 8, names) == 0);
		uint64_t i = idx_pos(tab, cap - 1, names, names[n].id);
		EXPECT(tab[i] == 0);
		tab[i] = n + 1;
	}
	for (uint32_t n = 0; n < 1000; n++) {
		uint64_t i = idx_find(tab, cap - 1, names, n * 7919u);
		EXPECT(i != AR_HASH_ABSENT && tab[i] == n + 1);
	}
	EXPECT(idx_find(tab, cap - 1, names, 1) == AR_HASH_ABSENT);
	EXPECT_U64(cap, 2048);
	free(tab);
}

/* Keyed form: entries are positions + 1 into words[], compared by string. */
static char words[600][8];
static inline uint64_t word_hash(const char *w)
{
	return ar_hash_fib(strlen(w)); /* weak on purpose: every word of a length shares a home */
}
static inline uint64_t word_entry_hash(const void *ctx, const uint32_t *e)
{
	return word_hash(((const char (*)[8])ctx)[*e - 1]);
}
static inline int word_is(const void *ctx, const uint32_t *e, const char *w)
{
	return strcmp(((const char (*)[8])ctx)[*e - 1], w) == 0;
}
AR_HASH_DEFINE_KEYED(word, uint32_t, IDX_EMPTY, const char *, word_hash, word_entry_hash, word_is)
AR_HASH_DEFINE_GROW(word, uint32_t, AR_HASH_CALLOC, AR_HASH_FREE)

static void test_keyed(void)
{
	uint32_t *tab = NULL;
	uint64_t cap = 0;
	for (uint32_t n = 0; n < 600; n++) {
		snprintf(words[n], sizeof words[n], "w%u", n * 37u);
		EXPECT(word_reserve(&tab, &cap, n, 4, words) == 0);
		uint64_t i = word_pos(tab, cap - 1, words, words[n]);
		EXPECT(tab[i] == 0);
		tab[i] = n + 1;
	}
	char probe[8];
	for (uint32_t n = 0; n < 600; n++) {
		snprintf(probe, sizeof probe, "w%u", n * 37u); /* another copy: found by content */
		uint64_t i = word_find(tab, cap - 1, words, probe);
		EXPECT(i != AR_HASH_ABSENT && tab[i] == n + 1);
	}
	EXPECT(word_find(tab, cap - 1, words, "w1") == AR_HASH_ABSENT);
	/* remove every other word: the rest stay findable */
	for (uint32_t n = 0; n < 600; n += 2)
		word_remove_at(tab, cap - 1, words, word_find(tab, cap - 1, words, words[n]));
	for (uint32_t n = 0; n < 600; n++) {
		uint64_t i = word_find(tab, cap - 1, words, words[n]);
		EXPECT(n % 2 ? i != AR_HASH_ABSENT && tab[i] == n + 1 : i == AR_HASH_ABSENT);
	}
	free(tab);
}

static void test_sizes(void)
{
	EXPECT(ar_hash_needs_room(0, 0));
	EXPECT(!ar_hash_needs_room(1, 4));
	EXPECT(ar_hash_needs_room(2, 4));
	EXPECT_U64(ar_hash_grown_cap(0, 64), 64);
	EXPECT_U64(ar_hash_grown_cap(64, 8), 128);
	EXPECT_U64(ar_hash_grown_cap((uint64_t)1 << 63, 8), 0);
}

int main(void)
{
	RUN(test_against_model);
	RUN(test_wrapping_runs);
	RUN(test_index_table);
	RUN(test_keyed);
	RUN(test_sizes);
	return TEST_END();
}
