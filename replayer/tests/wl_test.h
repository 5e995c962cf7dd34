/*
 * wl_test.h — what the replayer's unit tests share to turn hand-written
 * events into a workload: write them as a trace, compile it, open the
 * workload and decode its streams the way the worker does when they fit in
 * its memory (ar_wl_load), into malloc'd memory here, so ar_wl_ops works.
 * Header-only, one copy per test binary: each test counts its own
 * failures (testing.h).
 */
#ifndef AR_WL_TEST_H
#define AR_WL_TEST_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ar_trace.h"
#include "testing.h"
#include "workload.h"

/* Trace thread indices the writer below takes: 0 .. WLT_MAXT-1. */
#define WLT_MAXT 4

/*
 * Write evs[0..nev) (each thread's events in sequence order) as a trace at
 * path with header flags `flags`: one event buffer per thread, written
 * whenever it fills and at the end. Failures are counted (EXPECT).
 */
/* Event e of a test trace: thread, seq (its time: seq * 16 ns), op, ptr,
 * size and result; every other field zero. */
static inline void wlt_event(ar_event_t *e, uint32_t thread, uint64_t seq, unsigned op, uint64_t ptr,
			     uint64_t size, uint64_t result)
{
	memset(e, 0, sizeof *e);
	e->thread = thread;
	e->seq = seq;
	e->time_ns = seq * 16;
	e->op = (uint8_t)op;
	e->ptr = ptr;
	e->size = size;
	e->result = result;
}

static inline void wlt_write_trace(const char *path, const ar_event_t *evs, size_t nev, uint32_t flags)
{
	static uint8_t mem[WLT_MAXT][AR_EVBUF_MAX_BYTES];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	EXPECT(fd >= 0);
	ar_header_t h;
	ar_header_init(&h);
	h.flags |= flags;
	ar_writer_t *wr = NULL;
	ar_error_t err;
	EXPECT(ar_writer_open(&wr, fd, &h, 1, NULL, &err) == 0);
	ar_evbuf_t b[WLT_MAXT];
	uint32_t nthreads = 0;
	for (size_t i = 0; i < nev; i++)
		if (evs[i].thread + 1 > nthreads)
			nthreads = evs[i].thread + 1;
	EXPECT(nthreads <= WLT_MAXT);
	for (uint32_t t = 0; t < nthreads && t < WLT_MAXT; t++)
		ar_evbuf_reset(&b[t], mem[t], sizeof mem[t], t, 100 + t);
	for (size_t i = 0; i < nev && evs[i].thread < WLT_MAXT; i++) {
		ar_evbuf_t *tb = &b[evs[i].thread];
		int rc = ar_evbuf_append(tb, &evs[i]);
		if (rc == AR_EFULL) {
			EXPECT(ar_writer_write_events(wr, tb, &err) == 0);
			ar_evbuf_reset(tb, mem[evs[i].thread], sizeof mem[0], evs[i].thread, 100 + evs[i].thread);
			rc = ar_evbuf_append(tb, &evs[i]);
		}
		EXPECT(rc == 0);
	}
	for (uint32_t t = 0; t < nthreads && t < WLT_MAXT; t++)
		EXPECT(ar_writer_write_events(wr, &b[t], &err) == 0);
	EXPECT(ar_writer_close(wr, nev * 16 + 16, 1, &err) == 0);
	close(fd);
}

/*
 * Decode every stream of the opened workload w into malloc'd memory
 * (ar_wl_load), so ar_wl_ops works; free it with wlt_close. 0, or -1 with
 * ar_wl_load's message in err (which may be NULL).
 */
static inline int wlt_load(ar_workload_t *w, char *err, size_t errcap)
{
	char why[512] = "out of memory";
	uint64_t bytes = ar_wl_decoded_bytes(w);
	void *mem = malloc(bytes ? (size_t)bytes : 1), *raw = malloc(w->hdr->max_seg_bytes);
	int rc = mem && raw ? ar_wl_load(w, mem, raw, why, sizeof why) : -1;
	if (rc != 0) {
		free(mem);
		if (err)
			snprintf(err, errcap, "%s", why);
	}
	free(raw);
	return rc;
}

/* Close a workload opened by the helpers here, and free its decoded ops. */
static inline void wlt_close(ar_workload_t *w)
{
	free(w->decoded);
	ar_wl_close(w);
}

/*
 * Compile the trace at trace into out (opts may be NULL: the defaults;
 * sha256 goes into the header), open it into *w and decode it (wlt_load).
 * 0, or -1 with the reason printed and counted as a failure.
 */
static inline int wlt_compile_load(const char *trace, const char *out, const char *sha256,
				   const ar_wl_compile_opts_t *opts, ar_workload_t *w)
{
	ar_error_t err;
	char why[512];
	int rc = ar_wl_compile_opts(trace, out, sha256, opts, &err);
	if (rc) {
		fprintf(stderr, "compile %s: %s\n", trace, err.msg);
		EXPECT(rc == 0);
		return -1;
	}
	if (ar_wl_open(w, out, why, sizeof why) != 0) {
		fprintf(stderr, "open: %s\n", why);
		EXPECT(!"the workload opens");
		return -1;
	}
	if (wlt_load(w, why, sizeof why) != 0) {
		fprintf(stderr, "load: %s\n", why);
		EXPECT(!"the workload decodes");
		ar_wl_close(w);
		return -1;
	}
	return 0;
}

/* The stream of trace thread t, or UINT32_MAX. */
static inline uint32_t wlt_stream(const ar_workload_t *w, uint32_t t)
{
	for (uint32_t i = 0; i < w->hdr->nthreads; i++)
		if (w->threads[i].trace_index == t)
			return i;
	return UINT32_MAX;
}

#endif
