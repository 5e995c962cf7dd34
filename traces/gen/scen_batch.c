/*
 * scen_batch.c — scenarios that allocate in batches:
 *   S5  bursts of 32-512 short-lived 16-256 B objects, then the whole burst
 *       released (in allocation order), then the work of the next request
 *       (SCENARIOS.md S5: short-lived bursts, batch release);
 *   B   batches of 16-64 objects of 2-8 KiB, double-buffered: batch i is
 *       allocated while batch i-1 is still live, then batch i-1 is freed.
 * Invariant: a thread frees only objects of its own batches, and at the end
 * frees every batch it still holds.
 */
#include <stdlib.h>

#include "gen_int.h"

#define MAX_BATCH 512

typedef struct batch {
	uint64_t ptr[MAX_BATCH], size[MAX_BATCH];
	uint32_t n, target, freed;
} batch_t;

typedef struct batches {
	batch_t b[2];
	int cur;      /* batch being allocated */
	int freeing;  /* releasing b[!cur] (B) or b[cur] (S5) */
	int stopping; /* ops budget reached: free everything, then exit */
} batches_t;

typedef struct batch_cfg {
	uint32_t min_n, max_n;
	uint64_t min_size, max_size;
	int double_buffer;
	uint64_t work_lo, work_hi; /* ns between bursts */
} batch_cfg_t;

static const batch_cfg_t cfg_s5 = {32, 512, 16, 256, 0, 1000, 5000};
static const batch_cfg_t cfg_b = {16, 64, 2048, 8192, 1, 500, 2000};

static int batch_init(ar_gen_ctx_t *c, const batch_cfg_t *cfg)
{
	for (uint32_t t = 0; t < c->nthreads; t++) {
		batches_t *s = calloc(1, sizeof *s);
		c->th[t].state = s;
		if (!s)
			return AR_ENOMEM;
		s->b[0].target = (uint32_t)ar_gen_range(c, cfg->min_n, cfg->max_n);
	}
	return 0;
}

static void batch_fini(ar_gen_ctx_t *c)
{
	for (uint32_t t = 0; t < c->nthreads; t++)
		free(c->th[t].state);
}

/* Free the next object of batch b; 1 if one was freed, 0 when b is empty. */
static int free_next(ar_gen_ctx_t *c, uint32_t t, batch_t *b)
{
	if (b->freed == b->n) {
		b->n = b->freed = 0;
		return 0;
	}
	ar_gen_free(c, t, b->ptr[b->freed], b->size[b->freed]);
	b->freed++;
	return 1;
}

static int batch_step(ar_gen_ctx_t *c, uint32_t t, const batch_cfg_t *cfg)
{
	batches_t *s = c->th[t].state;
	batch_t *cur = &s->b[s->cur], *prev = &s->b[!s->cur];
	if (!s->stopping && !s->freeing && ar_gen_stopping(c))
		s->stopping = 1;
	if (s->stopping) { /* older batch first, then the current one */
		if (free_next(c, t, prev) || free_next(c, t, cur))
			return 1;
		return 0;
	}
	if (!s->freeing) {
		uint64_t size = ar_gen_range(c, cfg->min_size, cfg->max_size);
		cur->ptr[cur->n] = ar_gen_malloc(c, t, size);
		cur->size[cur->n++] = size;
		ar_gen_work(c, t, ar_gen_range(c, 5, 30)); /* initialise the object */
		if (cur->n == cur->target)
			s->freeing = 1;
		return 1;
	}
	batch_t *victim = cfg->double_buffer ? prev : cur;
	if (free_next(c, t, victim))
		return 1;
	/* batch released: work on the next request, then the next batch */
	s->freeing = 0;
	if (cfg->double_buffer)
		s->cur = !s->cur;
	s->b[s->cur].target = (uint32_t)ar_gen_range(c, cfg->min_n, cfg->max_n);
	ar_gen_work(c, t, ar_gen_range(c, cfg->work_lo, cfg->work_hi));
	return 1;
}

static int s5_init(ar_gen_ctx_t *c) { return batch_init(c, &cfg_s5); }
static int s5_step(ar_gen_ctx_t *c, uint32_t t) { return batch_step(c, t, &cfg_s5); }
static int b_init(ar_gen_ctx_t *c) { return batch_init(c, &cfg_b); }
static int b_step(ar_gen_ctx_t *c, uint32_t t) { return batch_step(c, t, &cfg_b); }

const ar_gen_scenario_t ar_gen_s5 = {
	.name = "S5",
	.summary = "bursts of 32-512 short-lived 16-256 B objects, each burst released as a batch, 1 thread",
	.default_threads = 1,
	.min_threads = 1,
	.default_ops = 1000000,
	.init = s5_init,
	.fini = batch_fini,
	.step = s5_step,
};

const ar_gen_scenario_t ar_gen_b = {
	.name = "B",
	.summary = "batches of 16-64 objects of 2-8 KiB, double-buffered (batch i-1 freed after batch i), 1 thread",
	.default_threads = 1,
	.min_threads = 1,
	.default_ops = 500000,
	.init = b_init,
	.fini = batch_fini,
	.step = b_step,
};
