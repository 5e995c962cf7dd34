/*
 * scen_cache.c — D as a real program (generator: traces/gen/scen_cache.c):
 * a long-lived cache of 2048 entries of 64 B-4 KiB filled first, then
 * temporaries of 16-512 B living a few steps (a FIFO of at most 16), and one
 * step in ten a cache update: an entry evicted and replaced, or (one update
 * in four) resized with realloc.
 *   usage: scen_cache D [--threads N] [--ops N] [--seed S]
 */
#include "scen_common.h"

#define CACHE 2048u
#define TEMPS 16u

typedef struct worker {
	uint64_t budget, rng, calls, checksum, live;
	void *ptr[CACHE], *tptr[TEMPS];
	uint64_t size[CACHE], tsize[TEMPS];
} worker_t;

static uint64_t cache_size(uint64_t *rng)
{
	uint64_t u = scen_rand(rng) % 1000;
	return 64 + u * u * 4032 / 999999;
}

static void put(worker_t *w, uint32_t k)
{
	w->size[k] = cache_size(&w->rng);
	w->ptr[k] = scen_check(malloc(w->size[k]));
	scen_touch(w->ptr[k], w->size[k], (unsigned char)k, 1);
	w->calls++, w->live++;
}

static void drop(worker_t *w, void *p, uint64_t size)
{
	w->checksum += scen_read(p, size);
	free(p);
	w->calls++, w->live--;
}

static void *run(void *arg)
{
	worker_t *w = arg;
	uint32_t filled = 0, head = 0, tn = 0;
	while (filled < CACHE && w->calls + w->live < w->budget)
		put(w, filled++);
	while (w->calls + w->live < w->budget) {
		uint64_t r = scen_rand(&w->rng);
		if (r % 10 == 0) {
			uint32_t k = (uint32_t)((r >> 8) % CACHE);
			if ((r >> 40) % 4 == 0) {
				uint64_t size = cache_size(&w->rng);
				w->ptr[k] = scen_check(realloc(w->ptr[k], size));
				if (size > w->size[k])
					memset((char *)w->ptr[k] + w->size[k], 1, size - w->size[k]);
				w->size[k] = size;
				w->calls++;
			} else {
				drop(w, w->ptr[k], w->size[k]);
				put(w, k);
			}
		} else if (tn && (tn == TEMPS || (r >> 20) % 2)) {
			drop(w, w->tptr[head], w->tsize[head]);
			head = (head + 1) % TEMPS;
			tn--;
		} else {
			uint32_t k = (head + tn++) % TEMPS;
			w->tsize[k] = 8 * scen_range(&w->rng, 2, 64);
			w->tptr[k] = scen_check(malloc(w->tsize[k]));
			scen_touch(w->tptr[k], w->tsize[k], (unsigned char)r, 1);
			w->calls++, w->live++;
		}
	}
	for (; tn; tn--, head = (head + 1) % TEMPS)
		drop(w, w->tptr[head], w->tsize[head]);
	for (uint32_t k = 0; k < filled; k++)
		drop(w, w->ptr[k], w->size[k]);
	return NULL;
}

int main(int argc, char **argv)
{
	scen_args_t a;
	scen_parse(argc, argv, &a, "D");
	if (strcasecmp(a.scenario, "D")) {
		fprintf(stderr, "%s: unknown scenario %s (D)\n", argv[0], a.scenario);
		return 1;
	}
	unsigned threads = a.threads ? a.threads : 1;
	uint64_t ops = a.ops ? a.ops : 1000000;
	static worker_t w[SCEN_MAX_THREADS];
	for (unsigned t = 0; t < threads; t++) {
		memset(&w[t], 0, sizeof w[t]);
		w[t].budget = ops / threads;
		w[t].rng = scen_thread_seed(&a, t);
	}
	scen_run_threads(threads, run, w, sizeof *w);
	uint64_t calls = 0, sum = 0;
	for (unsigned t = 0; t < threads; t++)
		calls += w[t].calls, sum += w[t].checksum;
	scen_report("D", calls, sum);
	return 0;
}
