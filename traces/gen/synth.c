/*
 * synth.c — see synth.h. Everything derives from one seed (splitmix64), so a
 * seed always gives the same stream.
 */
#include <stdlib.h>
#include <string.h>

#include "synth.h"

uint64_t ar_synth_rand(ar_synth_t *s)
{
	uint64_t z = (s->rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int ar_synth_init(ar_synth_t *s, uint32_t nthreads, uint64_t seed)
{
	memset(s, 0, sizeof *s);
	s->rng = seed;
	s->nthreads = nthreads;
	s->threads = calloc(nthreads, sizeof *s->threads);
	if (!s->threads)
		return -1;
	for (uint32_t t = 0; t < nthreads; t++)
		s->threads[t].bump = 0x7f0000000000ULL - ((uint64_t)t << 32) + 0x1000;
	return 0;
}

void ar_synth_free(ar_synth_t *s)
{
	free(s->threads);
	s->threads = NULL;
}

/* Programs allocate from a small set of sizes (their structs, strings and
 * buffers), not from every byte count: 40 sizes from 16 B to 64 KiB, picked
 * with a skew towards the small ones (the square of a uniform index). */
static const uint32_t program_sizes[40] = {
	16,   24,   32,   40,   48,   56,   64,   72,   80,   96,   112,  128,  144,   160,
	192,  224,  256,  288,  320,  384,  448,  512,  640,  768,  1024, 1280, 1536,  2048,
	2560, 3072, 4096, 5120, 6144, 8192, 12288, 16384, 24576, 32768, 49152, 65536,
};

static uint64_t pick_size(uint64_t r)
{
	uint64_t u = r % 1000;
	return program_sizes[(u * u * 40) / 1000000];
}

static unsigned size_class(uint64_t size)
{
	unsigned c = 0;
	while ((16ULL << c) < size && c < AR_SYNTH_CLASSES - 1)
		c++;
	return c;
}

static uint64_t place(ar_synth_thread_t *th, uint64_t size)
{
	unsigned c = size_class(size);
	if (th->nreuse[c])
		return th->reuse[c][--th->nreuse[c]];
	uint64_t p = th->bump;
	th->bump += (16ULL << c) + 16;
	return p;
}

static void release(ar_synth_thread_t *th, uint64_t ptr, uint64_t size)
{
	unsigned c = size_class(size);
	if (th->nreuse[c] < AR_SYNTH_REUSE)
		th->reuse[c][th->nreuse[c]++] = ptr;
}

void ar_synth_next(ar_synth_t *s, uint32_t t, ar_event_t *e)
{
	ar_synth_thread_t *th = &s->threads[t];
	memset(e, 0, sizeof *e);
	e->thread = t;
	s->time_ns += 20 + ar_synth_rand(s) % 180;
	e->time_ns = s->time_ns;
	unsigned slot = (unsigned)(ar_synth_rand(s) % AR_SYNTH_SLOTS);
	uint64_t r = ar_synth_rand(s);
	uint64_t size = pick_size(r);
	if (th->slot_ptr[slot] == 0) {
		unsigned kind = (unsigned)((r >> 32) % 10);
		e->op = kind == 0 ? AR_OP_CALLOC : AR_OP_MALLOC;
		if (e->op == AR_OP_CALLOC) {
			e->count = 1 + (r >> 40) % 8;
			size = (size + e->count - 1) / e->count;
			e->size = size;
			size *= e->count;
		} else {
			e->size = size;
		}
		e->seq = ++s->seq; /* SPEC 4: allocations after the call */
		e->result = place(th, size);
		th->slot_ptr[slot] = e->result;
		th->slot_size[slot] = size;
	} else if ((r >> 32) % 5 == 0) {
		e->op = AR_OP_REALLOC;
		e->ptr = th->slot_ptr[slot];
		e->size = size;
		e->seq = ++s->seq;
		release(th, e->ptr, th->slot_size[slot]);
		e->seq2 = ++s->seq;
		e->result = place(th, size);
		th->slot_ptr[slot] = e->result;
		th->slot_size[slot] = size;
	} else {
		e->op = AR_OP_FREE;
		e->ptr = th->slot_ptr[slot];
		e->seq = ++s->seq; /* SPEC 4: frees before the call */
		release(th, e->ptr, th->slot_size[slot]);
		th->slot_ptr[slot] = 0;
	}
}
