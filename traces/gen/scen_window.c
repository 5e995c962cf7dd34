/*
 * scen_window.c — the "random window" scenarios: each thread keeps W live
 * objects in slots; after filling them it repeatedly frees a random slot and
 * allocates a new object into it, so every object lives a random time.
 *   S1  64 B objects, window 4096, 1 thread     (SCENARIOS.md S1)
 *   S2  the same on 8 threads, a window each    (SCENARIOS.md S2)
 *   S4  1-10 MB buffers, window 4               (SCENARIOS.md S4)
 *   A   16-128 B freed immediately (window 1)   (SCENARIOS.md, 1/4/8 threads)
 *   M   60 % 128 B / 20 % 4 KiB / 15 % 64 KiB / 5 % 2 MiB, window 256
 * Invariant: a slot is freed before a new object goes into it, and at the
 * end (ops budget reached) every thread frees its occupied slots in order.
 */
#include <stdlib.h>

#include "gen_int.h"

enum { FILL, REPLACE, TEARDOWN };
#define NO_SLOT UINT32_MAX

typedef struct window_cfg {
	uint32_t slots;
	uint64_t (*size)(ar_gen_ctx_t *c);
	uint64_t work_lo, work_hi; /* ns of the program's work after each call */
	uint64_t bytes_per_ns;     /* plus touching the new object, 0 = not */
} window_cfg_t;

typedef struct window {
	uint64_t *ptr, *size;
	uint32_t filled, pending, tear;
	int phase;
} window_t;

static uint64_t size_64(ar_gen_ctx_t *c)
{
	(void)c;
	return 64;
}

static uint64_t size_16_128(ar_gen_ctx_t *c)
{
	return 8 * ar_gen_range(c, 2, 16);
}

static uint64_t size_large(ar_gen_ctx_t *c)
{
	return ar_gen_range(c, 1000000, 10000000);
}

static uint64_t size_mixed(ar_gen_ctx_t *c)
{
	uint64_t r = ar_gen_rand(c) % 100;
	return r < 60 ? 128 : r < 80 ? 4096 : r < 95 ? 65536 : 2097152;
}

static const window_cfg_t cfg_s1 = {4096, size_64, 10, 50, 0};
static const window_cfg_t cfg_s4 = {4, size_large, 1000, 5000, 10};
static const window_cfg_t cfg_a = {1, size_16_128, 10, 30, 0};
static const window_cfg_t cfg_m = {256, size_mixed, 20, 100, 0};

static int window_init(ar_gen_ctx_t *c, const window_cfg_t *cfg)
{
	for (uint32_t t = 0; t < c->nthreads; t++) {
		window_t *w = calloc(1, sizeof *w);
		c->th[t].state = w;
		if (!w)
			return AR_ENOMEM;
		w->ptr = calloc(cfg->slots, sizeof *w->ptr);
		w->size = calloc(cfg->slots, sizeof *w->size);
		if (!w->ptr || !w->size)
			return AR_ENOMEM;
		w->pending = NO_SLOT;
	}
	return 0;
}

static void window_fini(ar_gen_ctx_t *c)
{
	for (uint32_t t = 0; t < c->nthreads; t++) {
		window_t *w = c->th[t].state;
		if (w) {
			free(w->ptr);
			free(w->size);
			free(w);
		}
	}
}

static void put(ar_gen_ctx_t *c, uint32_t t, const window_cfg_t *cfg, window_t *w, uint32_t k)
{
	uint64_t size = cfg->size(c);
	w->ptr[k] = ar_gen_malloc(c, t, size);
	w->size[k] = size;
	ar_gen_work(c, t, ar_gen_range(c, cfg->work_lo, cfg->work_hi) + (cfg->bytes_per_ns ? size / cfg->bytes_per_ns : 0));
}

static int window_step(ar_gen_ctx_t *c, uint32_t t, const window_cfg_t *cfg)
{
	window_t *w = c->th[t].state;
	if (w->phase != TEARDOWN && w->pending == NO_SLOT && ar_gen_stopping(c))
		w->phase = TEARDOWN;
	switch (w->phase) {
	case FILL:
		put(c, t, cfg, w, w->filled++);
		if (w->filled == cfg->slots)
			w->phase = REPLACE;
		return 1;
	case REPLACE:
		if (w->pending != NO_SLOT) {
			put(c, t, cfg, w, w->pending);
			w->pending = NO_SLOT;
		} else {
			uint32_t k = (uint32_t)(ar_gen_rand(c) % cfg->slots);
			ar_gen_free(c, t, w->ptr[k], w->size[k]);
			w->ptr[k] = 0;
			w->pending = k;
			ar_gen_work(c, t, ar_gen_range(c, cfg->work_lo, cfg->work_hi));
		}
		return 1;
	default:
		while (w->tear < cfg->slots && !w->ptr[w->tear])
			w->tear++;
		if (w->tear == cfg->slots)
			return 0;
		ar_gen_free(c, t, w->ptr[w->tear], w->size[w->tear]);
		w->ptr[w->tear++] = 0;
		return 1;
	}
}

#define WINDOW_SCENARIO(var, cfg, nm, sum, threads, ops)                                                        \
	static int var##_init(ar_gen_ctx_t *c) { return window_init(c, &cfg); }                                \
	static int var##_step(ar_gen_ctx_t *c, uint32_t t) { return window_step(c, t, &cfg); }                 \
	const ar_gen_scenario_t var = {                                                                         \
		.name = nm, .summary = sum, .default_threads = threads, .min_threads = 1,                       \
		.default_ops = ops, .init = var##_init, .fini = window_fini, .step = var##_step,                \
	};

WINDOW_SCENARIO(ar_gen_s1, cfg_s1, "S1",
		"64 B objects held in a random window of 4096 (free a random slot, allocate into it), 1 thread",
		1, 1000000)
WINDOW_SCENARIO(ar_gen_s2, cfg_s1, "S2", "S1 on 8 threads, each with its own window of 4096 64 B objects", 8,
		1000000)
WINDOW_SCENARIO(ar_gen_s4, cfg_s4, "S4",
		"large buffers of 1-10 MB (uniform), 4 live, each written after allocation, 1 thread", 1, 10000)
WINDOW_SCENARIO(ar_gen_a, cfg_a, "A", "16-128 B objects (multiples of 8) freed immediately, 1 thread", 1,
		1000000)
WINDOW_SCENARIO(ar_gen_m, cfg_m, "M",
		"mixed sizes 60% 128 B / 20% 4 KiB / 15% 64 KiB / 5% 2 MiB in a random window of 256, 1 thread",
		1, 200000)
