/*
 * gen_core.c — the generator core: the scenario table, the discrete-event
 * scheduler that interleaves threads, the call helpers that number events
 * (SPEC 4) and simulate addresses, and the trace writing around them.
 *
 * Invariants: event seqs are taken from one counter in the order calls are
 * made, and calls are made one at a time in scheduler order, so the address
 * simulator sees frees and allocations exactly in seq order; the thread that
 * runs next is the one with the earliest clock (ties: lowest index), and an
 * event's time is the clock when its step began, so times never decrease in
 * seq order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gen_int.h"

static const ar_gen_scenario_t *const scenarios[] = {
	&ar_gen_s1, &ar_gen_s2, &ar_gen_s3, &ar_gen_s4, &ar_gen_s5,
	&ar_gen_a,  &ar_gen_b,  &ar_gen_d,  &ar_gen_m,  &ar_gen_x,
};

unsigned ar_gen_count(void)
{
	return sizeof scenarios / sizeof *scenarios;
}

const ar_gen_scenario_t *ar_gen_at(unsigned i)
{
	return i < ar_gen_count() ? scenarios[i] : NULL;
}

const ar_gen_scenario_t *ar_gen_find(const char *name)
{
	for (unsigned i = 0; i < ar_gen_count(); i++)
		if (!strcasecmp(scenarios[i]->name, name))
			return scenarios[i];
	return NULL;
}

uint64_t ar_gen_rand(ar_gen_ctx_t *c)
{
	uint64_t z = (c->rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t ar_gen_range(ar_gen_ctx_t *c, uint64_t lo, uint64_t hi)
{
	return lo + ar_gen_rand(c) % (hi - lo + 1);
}

int ar_gen_stopping(const ar_gen_ctx_t *c)
{
	return c->events + c->live >= c->ops;
}

static void fail(ar_gen_ctx_t *c, int code, const char *msg)
{
	if (c->rc)
		return;
	c->rc = code;
	if (msg) {
		c->err->code = code;
		snprintf(c->err->msg, sizeof c->err->msg, "%s", msg);
	}
}

static void emit(ar_gen_ctx_t *c, uint32_t t, ar_event_t *e)
{
	if (c->rc)
		return;
	ar_gen_thread_t *th = &c->th[t];
	e->thread = t;
	e->time_ns = c->step_ns; /* when the step began: see the file comment */
	int rc = ar_evbuf_append(&th->buf, e);
	if (rc == AR_EFULL) {
		rc = ar_writer_write_events(c->w, &th->buf, c->err);
		if (rc != 0) {
			fail(c, rc, NULL);
			return;
		}
		ar_evbuf_reset(&th->buf, th->mem, AR_EVBUF_MAX_BYTES, t, th->buf.os_tid);
		rc = ar_evbuf_append(&th->buf, e);
	}
	if (rc != 0)
		fail(c, rc, "generator made an event that breaks SPEC 4 (a bug in the scenario)");
	else
		c->events++;
}

/* What a call costs on a typical malloc: small requests come from a cache,
 * large ones are mmap/munmap calls; calloc and a moving realloc also touch
 * the bytes (16 bytes per ns). */
static uint64_t alloc_cost(ar_gen_ctx_t *c, uint64_t bytes)
{
	if (bytes >= AR_ADDR_LARGE)
		return ar_gen_range(c, 2000, 4000);
	return bytes > 1024 ? ar_gen_range(c, 40, 120) : ar_gen_range(c, 20, 60);
}

static uint64_t free_cost(ar_gen_ctx_t *c, uint64_t bytes)
{
	return bytes >= AR_ADDR_LARGE ? ar_gen_range(c, 1500, 3000) : ar_gen_range(c, 15, 45);
}

static uint64_t place(ar_gen_ctx_t *c, uint32_t t, uint64_t bytes)
{
	uint64_t p = ar_addr_sim_alloc(&c->addr, t, bytes);
	if (!p)
		fail(c, AR_ENOMEM, "simulated address space exhausted (request too large)");
	return p;
}

uint64_t ar_gen_malloc(ar_gen_ctx_t *c, uint32_t t, uint64_t size)
{
	ar_event_t e = {0};
	e.op = AR_OP_MALLOC;
	e.size = size;
	e.result = place(c, t, size);
	e.seq = ++c->seq; /* SPEC 4: an allocation after the call returned */
	emit(c, t, &e);
	c->live++;
	c->th[t].clock_ns += alloc_cost(c, size);
	return e.result;
}

uint64_t ar_gen_calloc(ar_gen_ctx_t *c, uint32_t t, uint64_t count, uint64_t size)
{
	ar_event_t e = {0};
	e.op = AR_OP_CALLOC;
	e.count = count;
	e.size = size;
	e.result = place(c, t, count * size);
	e.seq = ++c->seq;
	emit(c, t, &e);
	c->live++;
	c->th[t].clock_ns += alloc_cost(c, count * size) + count * size / 16;
	return e.result;
}

uint64_t ar_gen_realloc(ar_gen_ctx_t *c, uint32_t t, uint64_t ptr, uint64_t old_size, uint64_t new_size)
{
	ar_event_t e = {0};
	e.op = AR_OP_REALLOC;
	e.ptr = ptr;
	e.size = new_size;
	e.seq = ++c->seq; /* SPEC 4: the release point, before the call */
	uint64_t cost = alloc_cost(c, new_size);
	if (ar_addr_class(old_size) == ar_addr_class(new_size)) {
		e.result = ptr; /* grows or shrinks in place */
	} else {
		if (ar_addr_sim_free(&c->addr, ptr, old_size) != 0)
			fail(c, AR_ENOMEM, "out of memory simulating the address space");
		e.result = place(c, t, new_size);
		cost += (old_size < new_size ? old_size : new_size) / 16;
	}
	e.seq2 = ++c->seq; /* the acquire point, after the call returned */
	emit(c, t, &e);
	c->th[t].clock_ns += cost;
	return e.result;
}

void ar_gen_free(ar_gen_ctx_t *c, uint32_t t, uint64_t ptr, uint64_t size)
{
	ar_event_t e = {0};
	e.op = AR_OP_FREE;
	e.ptr = ptr;
	e.seq = ++c->seq; /* SPEC 4: a free before the call */
	emit(c, t, &e);
	if (ar_addr_sim_free(&c->addr, ptr, size) != 0)
		fail(c, AR_ENOMEM, "out of memory simulating the address space");
	c->live--;
	c->th[t].clock_ns += free_cost(c, size);
}

void ar_gen_work(ar_gen_ctx_t *c, uint32_t t, uint64_t ns)
{
	c->th[t].clock_ns += ns;
}

/* Thread start/name records before the first event, exit records at the end. */
static int write_meta_threads(ar_gen_ctx_t *c, int exits, uint64_t *tids)
{
	static uint8_t mem[64 * 1024] __attribute__((aligned(8)));
	ar_metabuf_t m;
	ar_metabuf_reset(&m, mem, sizeof mem);
	for (uint32_t t = 0; t < c->nthreads; t++) {
		char name[32];
		if (c->sc->thread_name)
			c->sc->thread_name(t, c->nthreads, name);
		else
			snprintf(name, sizeof name, "%s-%u", c->sc->name, t);
		int rc = exits ? ar_meta_thread_exit(&m, t, c->seq, c->th[t].clock_ns)
			       : ar_meta_thread_start(&m, t, tids[t], 0, 0);
		if (rc == 0 && !exits)
			rc = ar_meta_thread_name(&m, t, name);
		if (rc != 0) {
			fail(c, rc, "thread metadata does not fit one block");
			return rc;
		}
	}
	int rc = ar_writer_write_meta(c->w, &m, c->err);
	if (rc != 0)
		fail(c, rc, NULL);
	return rc;
}

static void cleanup(ar_gen_ctx_t *c)
{
	if (c->sc->fini)
		c->sc->fini(c);
	if (c->th)
		for (uint32_t t = 0; t < c->nthreads; t++)
			free(c->th[t].mem);
	free(c->th);
	ar_addr_sim_free_all(&c->addr);
}

static int bad_threads(ar_error_t *err, const ar_gen_scenario_t *sc, uint32_t threads)
{
	err->code = AR_EINVAL;
	snprintf(err->msg, sizeof err->msg, "scenario %s needs %s%u to %u threads, not %u", sc->name,
		 sc->threads_even ? "an even number of " : "", sc->min_threads, AR_GEN_MAX_THREADS, threads);
	return AR_EINVAL;
}

int ar_gen_write(int fd, const ar_gen_scenario_t *sc, uint32_t threads, uint64_t ops, uint64_t seed,
		 ar_gen_result_t *res, ar_error_t *err)
{
	memset(err, 0, sizeof *err);
	if (!threads)
		threads = sc->default_threads;
	if (!ops)
		ops = sc->default_ops;
	if (threads < sc->min_threads || threads > AR_GEN_MAX_THREADS || (sc->threads_even && threads % 2))
		return bad_threads(err, sc, threads);

	ar_gen_ctx_t ctx, *c = &ctx;
	memset(c, 0, sizeof *c);
	c->sc = sc;
	c->nthreads = threads;
	c->ops = ops;
	c->seed = seed;
	c->rng = seed ^ 0x616c6c6f63727221ULL; /* "allocrr!": seed 0 is a fine seed too */
	c->err = err;
	uint64_t tids[AR_GEN_MAX_THREADS];
	c->th = calloc(threads, sizeof *c->th);
	if (!c->th || ar_addr_sim_init(&c->addr, threads) != 0) {
		free(c->th);
		err->code = AR_ENOMEM;
		snprintf(err->msg, sizeof err->msg, "out of memory");
		return AR_ENOMEM;
	}
	for (uint32_t t = 0; t < threads; t++) {
		c->th[t].mem = aligned_alloc(64, AR_EVBUF_MAX_BYTES);
		if (!c->th[t].mem)
			c->rc = AR_ENOMEM;
		tids[t] = 1000 + t; /* synthetic OS tids, stable across runs */
		ar_evbuf_reset(&c->th[t].buf, c->th[t].mem, AR_EVBUF_MAX_BYTES, t, tids[t]);
	}
	if (c->rc == 0 && sc->init)
		c->rc = sc->init(c);
	if (c->rc) {
		cleanup(c);
		err->code = AR_ENOMEM;
		snprintf(err->msg, sizeof err->msg, "out of memory");
		return AR_ENOMEM;
	}

	ar_header_t h;
	ar_header_init(&h);
	h.flags = AR_HDR_SYNTHETIC;
	snprintf(h.recorder_version, sizeof h.recorder_version, "alloctrace-gen %d", AR_GEN_VERSION);
	snprintf(h.cmdline, sizeof h.cmdline, "alloctrace gen %s --threads %u --ops %llu --seed %llu", sc->name,
		 threads, (unsigned long long)ops, (unsigned long long)seed);
	h.clock_resolution_ns = 1;
	h.page_size = 4096;
	int rc = ar_writer_open(&c->w, fd, &h, 3, NULL, err);
	if (rc != 0) {
		cleanup(c);
		return rc;
	}
	write_meta_threads(c, 0, tids);

	uint32_t running = threads;
	while (running && !c->rc) {
		uint32_t t = 0;
		uint64_t best = UINT64_MAX;
		for (uint32_t i = 0; i < threads; i++)
			if (!c->th[i].done && c->th[i].clock_ns < best) {
				best = c->th[i].clock_ns;
				t = i;
			}
		c->step_ns = best;
		if (!sc->step(c, t)) {
			c->th[t].done = 1;
			running--;
		}
		if (c->th[t].clock_ns == best) /* a step always takes time */
			c->th[t].clock_ns++;
	}
	uint64_t end = 0;
	for (uint32_t t = 0; t < threads && !c->rc; t++) {
		if (c->th[t].clock_ns > end)
			end = c->th[t].clock_ns;
		rc = ar_writer_write_events(c->w, &c->th[t].buf, err);
		if (rc != 0)
			fail(c, rc, NULL);
	}
	if (!c->rc && c->live)
		fail(c, AR_EINVAL, "scenario ended with live objects (a bug in the scenario)");
	if (!c->rc)
		write_meta_threads(c, 1, tids);
	rc = c->rc;
	if (res) {
		res->events = c->events;
		res->last_seq = c->seq;
		res->end_time_ns = end;
	}
	ar_error_t close_err;
	int crc = ar_writer_close(c->w, end, rc == 0, &close_err);
	if (rc == 0 && crc != 0) {
		*err = close_err;
		rc = crc;
	}
	cleanup(c);
	return rc;
}
