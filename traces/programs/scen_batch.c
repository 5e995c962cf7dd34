/*
 * scen_batch.c — S5 and B as a real program (generator: traces/gen/
 * scen_batch.c). S5: bursts of 32-512 objects of 16-256 B, initialised,
 * then read and freed as a batch in allocation order. B: batches of 16-64
 * objects of 2-8 KiB, double-buffered: batch i is allocated while batch
 * i-1 lives, then batch i-1 is freed.
 *   usage: scen_batch S5|B [--threads N] [--ops N] [--seed S]
 */
#include "scen_common.h"

#define MAX_BATCH 512

typedef struct cfg {
	const char *name;
	uint32_t min_n, max_n;
	uint64_t min_size, max_size, ops;
	int double_buffer;
} cfg_t;

static const cfg_t cfgs[] = {
	{"S5", 32, 512, 16, 256, 1000000, 0},
	{"B", 16, 64, 2048, 8192, 500000, 1},
};

typedef struct batch {
	void *ptr[MAX_BATCH];
	uint64_t size[MAX_BATCH];
	uint32_t n;
} batch_t;

typedef struct worker {
	const cfg_t *cfg;
	uint64_t budget, rng, calls, checksum, live;
	batch_t b[2];
} worker_t;

static void release(worker_t *w, batch_t *b)
{
	for (uint32_t i = 0; i < b->n; i++) {
		w->checksum += scen_read(b->ptr[i], b->size[i]);
		free(b->ptr[i]);
		w->calls++, w->live--;
	}
	b->n = 0;
}

static void *run(void *arg)
{
	worker_t *w = arg;
	const cfg_t *cfg = w->cfg;
	int cur = 0;
	while (w->calls + w->live < w->budget) {
		batch_t *b = &w->b[cur];
		uint32_t n = (uint32_t)scen_range(&w->rng, cfg->min_n, cfg->max_n);
		while (b->n < n && w->calls + w->live < w->budget) {
			uint64_t size = scen_range(&w->rng, cfg->min_size, cfg->max_size);
			b->ptr[b->n] = scen_check(malloc(size));
			scen_touch(b->ptr[b->n], size, (unsigned char)b->n, 0);
			b->size[b->n++] = size;
			w->calls++, w->live++;
		}
		if (w->calls + w->live >= w->budget)
			break;
		if (cfg->double_buffer) {
			release(w, &w->b[!cur]);
			cur = !cur;
		} else {
			release(w, b);
		}
	}
	release(w, &w->b[!cur]);
	release(w, &w->b[cur]);
	return NULL;
}

int main(int argc, char **argv)
{
	scen_args_t a;
	scen_parse(argc, argv, &a, "S5 B");
	const cfg_t *cfg = NULL;
	for (size_t i = 0; i < sizeof cfgs / sizeof *cfgs; i++)
		if (!strcasecmp(a.scenario, cfgs[i].name))
			cfg = &cfgs[i];
	if (!cfg) {
		fprintf(stderr, "%s: unknown scenario %s (S5 B)\n", argv[0], a.scenario);
		return 1;
	}
	unsigned threads = a.threads ? a.threads : 1;
	uint64_t ops = a.ops ? a.ops : cfg->ops;
	static worker_t w[SCEN_MAX_THREADS];
	for (unsigned t = 0; t < threads; t++) {
		memset(&w[t], 0, sizeof w[t]);
		w[t].cfg = cfg;
		w[t].budget = ops / threads;
		w[t].rng = scen_thread_seed(&a, t);
	}
	scen_run_threads(threads, run, w, sizeof *w);
	uint64_t calls = 0, sum = 0;
	for (unsigned t = 0; t < threads; t++)
		calls += w[t].calls, sum += w[t].checksum;
	scen_report(cfg->name, calls, sum);
	return 0;
}
