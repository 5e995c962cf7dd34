/*
 * scen_window.c — the random-window scenarios as a real program (the
 * generator is traces/gen/scen_window.c): S1 (64 B, window 4096, 1 thread),
 * S2 (the same, 8 threads), S4 (1-10 MB, window 4, every byte written),
 * A (16-128 B freed immediately), M (60 % 128 B / 20 % 4 KiB / 15 % 64 KiB /
 * 5 % 2 MiB, window 256). Each thread fills its window, then frees a random
 * slot and allocates into it until its share of --ops is used, then frees
 * the window.
 *   usage: scen_window S1|S2|S4|A|M [--threads N] [--ops N] [--seed S]
 */
#include "scen_common.h"

typedef struct cfg {
	const char *name;
	uint32_t slots;
	unsigned threads;
	uint64_t ops;
	int write_all;
	uint64_t (*size)(uint64_t *rng);
} cfg_t;

static uint64_t size_64(uint64_t *rng)
{
	(void)rng;
	return 64;
}

static uint64_t size_16_128(uint64_t *rng)
{
	return 8 * scen_range(rng, 2, 16);
}

static uint64_t size_large(uint64_t *rng)
{
	return scen_range(rng, 1000000, 10000000);
}

static uint64_t size_mixed(uint64_t *rng)
{
	uint64_t r = scen_rand(rng) % 100;
	return r < 60 ? 128 : r < 80 ? 4096 : r < 95 ? 65536 : 2097152;
}

static const cfg_t cfgs[] = {
	{"S1", 4096, 1, 1000000, 0, size_64},     {"S2", 4096, 8, 1000000, 0, size_64},
	{"S4", 4, 1, 10000, 1, size_large},       {"A", 1, 1, 1000000, 0, size_16_128},
	{"M", 256, 1, 200000, 0, size_mixed},
};

typedef struct worker {
	const cfg_t *cfg;
	uint64_t budget, rng, calls, checksum;
} worker_t;

static void *run(void *arg)
{
	worker_t *w = arg;
	const cfg_t *cfg = w->cfg;
	void **ptr = scen_check(calloc(cfg->slots, sizeof *ptr));
	uint64_t *size = scen_check(calloc(cfg->slots, sizeof *size));
	uint64_t live = 0, calls = 0;
	/* (the two arrays above are this thread's bookkeeping, made before the
	 * scenario starts) */
	for (uint32_t k = 0; k < cfg->slots && calls + live < w->budget; k++) {
		size[k] = cfg->size(&w->rng);
		ptr[k] = scen_check(malloc(size[k]));
		scen_touch(ptr[k], size[k], (unsigned char)k, cfg->write_all);
		calls++, live++;
	}
	while (live == cfg->slots && calls + live < w->budget) {
		uint32_t k = (uint32_t)(scen_rand(&w->rng) % cfg->slots);
		w->checksum += scen_read(ptr[k], size[k]);
		free(ptr[k]);
		size[k] = cfg->size(&w->rng);
		ptr[k] = scen_check(malloc(size[k]));
		scen_touch(ptr[k], size[k], (unsigned char)calls, cfg->write_all);
		calls += 2;
	}
	for (uint32_t k = 0; k < cfg->slots; k++)
		if (ptr[k]) {
			w->checksum += scen_read(ptr[k], size[k]);
			free(ptr[k]);
			calls++;
		}
	w->calls = calls;
	free(ptr);
	free(size);
	return NULL;
}

int main(int argc, char **argv)
{
	scen_args_t a;
	scen_parse(argc, argv, &a, "S1 S2 S4 A M");
	const cfg_t *cfg = NULL;
	for (size_t i = 0; i < sizeof cfgs / sizeof *cfgs; i++)
		if (!strcasecmp(a.scenario, cfgs[i].name))
			cfg = &cfgs[i];
	if (!cfg) {
		fprintf(stderr, "%s: unknown scenario %s (S1 S2 S4 A M)\n", argv[0], a.scenario);
		return 1;
	}
	unsigned threads = a.threads ? a.threads : cfg->threads;
	uint64_t ops = a.ops ? a.ops : cfg->ops;
	worker_t w[SCEN_MAX_THREADS];
	for (unsigned t = 0; t < threads; t++)
		w[t] = (worker_t){cfg, ops / threads, scen_thread_seed(&a, t), 0, 0};
	scen_run_threads(threads, run, w, sizeof *w);
	uint64_t calls = 0, sum = 0;
	for (unsigned t = 0; t < threads; t++)
		calls += w[t].calls, sum += w[t].checksum;
	scen_report(cfg->name, calls, sum);
	return 0;
}
