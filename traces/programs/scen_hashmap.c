/*
 * scen_hashmap.c — S3 as a real program (generator: traces/gen/
 * scen_hashmap.c): a chained hash map of 8-byte keys, a 32 B node per entry,
 * a bucket array that doubles by realloc (and is rehashed) when the load
 * factor passes 1. Each map grows to 1 Ki-64 Ki entries (3 inserts per
 * erase), churns for twice that many operations, and is cleared; then the
 * next map, until --ops heap calls are used.
 *   usage: scen_hashmap S3 [--threads N] [--ops N] [--seed S]
 * Invariant: `keys` mirrors the live entries, so an erase always finds its
 * key in the map.
 */
#include "scen_common.h"

#define FIRST_BUCKETS 16
#define MAX_ENTRIES (64u * 1024u)

typedef struct node {
	struct node *next;
	uint64_t hash, key, value;
} node_t; /* 32 bytes, the generator's NODE_BYTES */

typedef struct map {
	node_t **buckets;
	uint64_t nbuckets, count;
} map_t;

typedef struct worker {
	uint64_t budget, rng, calls, checksum, live;
	uint64_t *keys; /* live keys, unordered */
} worker_t;

static uint64_t hash(uint64_t k)
{
	uint64_t s = k;
	return scen_rand(&s);
}

static void insert(worker_t *w, map_t *m)
{
	if (!m->buckets) {
		m->nbuckets = FIRST_BUCKETS;
		m->buckets = scen_check(calloc(m->nbuckets, sizeof *m->buckets)); /* empty heads */
		w->calls++, w->live++;
		return;
	}
	if (m->count + 1 > m->nbuckets) { /* grow and rehash */
		uint64_t old = m->nbuckets;
		m->buckets = scen_check(realloc(m->buckets, 2 * old * sizeof *m->buckets));
		m->nbuckets = 2 * old;
		memset(m->buckets + old, 0, old * sizeof *m->buckets);
		for (uint64_t i = 0; i < old; i++) {
			node_t **pp = &m->buckets[i];
			while (*pp) {
				node_t *n = *pp;
				if ((n->hash & (m->nbuckets - 1)) != i) {
					*pp = n->next;
					n->next = m->buckets[i + old];
					m->buckets[i + old] = n;
				} else {
					pp = &n->next;
				}
			}
		}
		w->calls++;
		return;
	}
	node_t *n = scen_check(malloc(sizeof *n));
	n->key = scen_rand(&w->rng);
	n->hash = hash(n->key);
	n->value = w->calls;
	uint64_t b = n->hash & (m->nbuckets - 1);
	n->next = m->buckets[b];
	m->buckets[b] = n;
	w->keys[m->count++] = n->key;
	w->calls++, w->live++;
}

static void erase_key(worker_t *w, map_t *m, uint64_t key)
{
	uint64_t h = hash(key);
	for (node_t **pp = &m->buckets[h & (m->nbuckets - 1)]; *pp; pp = &(*pp)->next)
		if ((*pp)->key == key) {
			node_t *n = *pp;
			*pp = n->next;
			w->checksum += n->value;
			free(n);
			w->calls++, w->live--;
			return;
		}
	abort(); /* the keys array and the map disagree: a bug here */
}

static void erase(worker_t *w, map_t *m)
{
	uint64_t k = scen_rand(&w->rng) % m->count;
	uint64_t key = w->keys[k];
	w->keys[k] = w->keys[--m->count];
	erase_key(w, m, key);
}

static void *run(void *arg)
{
	worker_t *w = arg;
	w->keys = scen_check(calloc(MAX_ENTRIES + 1, sizeof *w->keys));
	while (w->calls + w->live < w->budget) {
		map_t m = {0};
		uint64_t target = 1024u << scen_range(&w->rng, 0, 6);
		while (m.count < target && w->calls + w->live < w->budget) {
			if (m.count && scen_rand(&w->rng) % 4 == 0)
				erase(w, &m);
			else
				insert(w, &m);
		}
		for (uint64_t i = 0; i < 2 * target && w->calls + w->live < w->budget; i++) {
			if (m.count && (m.count >= MAX_ENTRIES || scen_rand(&w->rng) % 2))
				erase(w, &m);
			else
				insert(w, &m);
		}
		while (m.count) /* clear: newest first, as the generator */
			erase_key(w, &m, w->keys[--m.count]);
		if (m.buckets) {
			free(m.buckets);
			w->calls++, w->live--;
		}
	}
	free(w->keys);
	return NULL;
}

int main(int argc, char **argv)
{
	scen_args_t a;
	scen_parse(argc, argv, &a, "S3");
	if (strcasecmp(a.scenario, "S3")) {
		fprintf(stderr, "%s: unknown scenario %s (S3)\n", argv[0], a.scenario);
		return 1;
	}
	unsigned threads = a.threads ? a.threads : 1;
	uint64_t ops = a.ops ? a.ops : 1000000;
	worker_t w[SCEN_MAX_THREADS];
	for (unsigned t = 0; t < threads; t++)
		w[t] = (worker_t){ops / threads, scen_thread_seed(&a, t), 0, 0, 0, NULL};
	scen_run_threads(threads, run, w, sizeof *w);
	uint64_t calls = 0, sum = 0;
	for (unsigned t = 0; t < threads; t++)
		calls += w[t].calls, sum += w[t].checksum;
	scen_report("S3", calls, sum);
	return 0;
}
