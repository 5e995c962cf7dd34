/*
 * scen_hashmap.c — S3, hash-map churn (SCENARIOS.md S3: unordered_map
 * insert/erase): a chained hash map of 8-byte keys and values, one 32 B node
 * per entry (next, hash, key, value) and a bucket array of 8 B heads that
 * doubles by realloc when the load factor passes 1. Each map grows to a
 * random size of 1 Ki-64 Ki entries (3 inserts per erase), churns for twice
 * that many operations (half inserts, half erases of random entries), and
 * is then cleared: every node and the bucket array freed. Then the next map.
 * Invariant: the bucket array never shrinks while a map lives (as in
 * std::unordered_map); the node array below only mirrors which nodes live.
 */
#include <stdlib.h>

#include "gen_int.h"

#define NODE_BYTES 32
#define FIRST_BUCKETS 16
#define MAX_ENTRIES (64u * 1024u)

enum { GROW, CHURN, CLEAR };

typedef struct hashmap {
	uint64_t *nodes;   /* live nodes, unordered (erase = swap with the last) */
	uint32_t count, target;
	uint64_t churn_left;
	uint64_t buckets, nbuckets;
	int phase;
} hashmap_t;

static void new_map(ar_gen_ctx_t *c, hashmap_t *m)
{
	m->target = 1024u << ar_gen_range(c, 0, 6);
	m->phase = GROW;
}

static int s3_init(ar_gen_ctx_t *c)
{
	for (uint32_t t = 0; t < c->nthreads; t++) {
		hashmap_t *m = calloc(1, sizeof *m);
		c->th[t].state = m;
		if (!m || !(m->nodes = calloc(MAX_ENTRIES + 1, sizeof *m->nodes)))
			return AR_ENOMEM;
		new_map(c, m);
	}
	return 0;
}

static void s3_fini(ar_gen_ctx_t *c)
{
	for (uint32_t t = 0; t < c->nthreads; t++) {
		hashmap_t *m = c->th[t].state;
		if (m)
			free(m->nodes);
		free(m);
	}
}

/* One call towards inserting an entry: the bucket array first when there is
 * none or the map is full, else the node. */
static void insert(ar_gen_ctx_t *c, uint32_t t, hashmap_t *m)
{
	if (!m->buckets) {
		m->nbuckets = FIRST_BUCKETS;
		m->buckets = ar_gen_calloc(c, t, m->nbuckets, 8); /* empty heads */
	} else if (m->count + 1 > m->nbuckets) {
		m->buckets = ar_gen_realloc(c, t, m->buckets, m->nbuckets * 8, m->nbuckets * 16);
		m->nbuckets *= 2;
		ar_gen_work(c, t, m->nbuckets * 2); /* rehash: relink every node */
	} else {
		m->nodes[m->count++] = ar_gen_malloc(c, t, NODE_BYTES);
	}
}

static void erase(ar_gen_ctx_t *c, uint32_t t, hashmap_t *m)
{
	uint32_t k = (uint32_t)(ar_gen_rand(c) % m->count);
	ar_gen_free(c, t, m->nodes[k], NODE_BYTES);
	m->nodes[k] = m->nodes[--m->count];
}

static int s3_step(ar_gen_ctx_t *c, uint32_t t)
{
	hashmap_t *m = c->th[t].state;
	ar_gen_work(c, t, ar_gen_range(c, 20, 80)); /* hash, probe the chain */
	if (m->phase != CLEAR && ar_gen_stopping(c))
		m->phase = CLEAR;
	if (m->phase == GROW && m->count >= m->target) {
		m->phase = CHURN;
		m->churn_left = 2ull * m->target;
	}
	if (m->phase == CHURN && m->churn_left-- == 0)
		m->phase = CLEAR;
	switch (m->phase) {
	case GROW:
		if (m->count && ar_gen_rand(c) % 4 == 0)
			erase(c, t, m);
		else
			insert(c, t, m);
		return 1;
	case CHURN:
		if (m->count && (m->count >= MAX_ENTRIES || ar_gen_rand(c) % 2))
			erase(c, t, m);
		else
			insert(c, t, m);
		return 1;
	default:
		if (m->count) {
			ar_gen_free(c, t, m->nodes[--m->count], NODE_BYTES);
		} else if (m->buckets) {
			ar_gen_free(c, t, m->buckets, m->nbuckets * 8);
			m->buckets = 0;
		} else {
			if (ar_gen_stopping(c))
				return 0;
			new_map(c, m);
		}
		return 1;
	}
}

const ar_gen_scenario_t ar_gen_s3 = {
	.name = "S3",
	.summary = "hash-map churn: 32 B node per insert, erase frees one, bucket array doubles by realloc; "
		   "maps of 1Ki-64Ki entries built, churned, cleared; 1 thread",
	.default_threads = 1,
	.min_threads = 1,
	.default_ops = 1000000,
	.init = s3_init,
	.fini = s3_fini,
	.step = s3_step,
};
