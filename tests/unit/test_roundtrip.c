/*
 * test_roundtrip.c — property test of the trace format: random multi-thread
 * event streams (several seeds, thread counts and buffer sizes) are written
 * through the writer and read back; every event must come back identical,
 * file order must be each thread's order, merged order must be sequence
 * order, metadata and footer must match.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "ar_trace.h"
#include "synth.h"
#include "testing.h"
#include "trace_fixture.h"

typedef struct {
	ar_evbuf_t buf;
	uint8_t *mem;
} tbuf_t;

static int same_event(const ar_event_t *a, const ar_event_t *b)
{
	return a->seq == b->seq && a->seq2 == b->seq2 && a->time_ns == b->time_ns && a->ptr == b->ptr &&
	       a->align == b->align && a->count == b->count && a->size == b->size && a->result == b->result &&
	       a->thread == b->thread && a->stack == b->stack && a->op == b->op;
}

/* Write `n` events of `nthreads` threads with buffers of `cap` bytes to a
 * temp file; keep the events (in seq order) in *out. Returns the fd. */
static int write_trace(uint64_t seed, uint32_t nthreads, size_t cap, size_t n, ar_event_t **out, int footer)
{
	char path[] = "/tmp/allocrr-rt-XXXXXX";
	int fd = mkstemp(path);
	unlink(path);
	ar_header_t h;
	ar_header_init(&h);
	h.pid = 1234;
	snprintf(h.cmdline, sizeof h.cmdline, "synthetic --seed %llu", (unsigned long long)seed);
	h.flags = AR_HDR_SYNTHETIC | AR_HDR_STACKS;
	ar_writer_t *w;
	ar_error_t err;
	EXPECT(ar_writer_open(&w, fd, &h, 1, NULL, &err) == 0);

	ar_synth_t s;
	ar_synth_init(&s, nthreads, seed);
	tbuf_t *tb = calloc(nthreads, sizeof *tb);
	ar_event_t *evs = calloc(n, sizeof *evs);
	uint8_t metamem[8192];
	ar_metabuf_t meta;
	ar_metabuf_reset(&meta, metamem, sizeof metamem);
	for (uint32_t t = 0; t < nthreads; t++) {
		tb[t].mem = malloc(cap);
		ar_evbuf_reset(&tb[t].buf, tb[t].mem, cap, t * 3 + 1, 1000 + t);
		EXPECT(ar_meta_thread_start(&meta, t * 3 + 1, 1000 + t, 0, 5000 + t) == 0);
		char name[32];
		snprintf(name, sizeof name, "worker-%u", t);
		EXPECT(ar_meta_thread_name(&meta, t * 3 + 1, name) == 0);
	}
	uint64_t frames[3] = {0x401000, 0x401234, 0x7f0000001000};
	EXPECT(ar_meta_stack(&meta, 7, frames, 3) == 0);
	EXPECT(ar_writer_write_meta(w, &meta, &err) == 0);

	for (size_t i = 0; i < n; i++) {
		uint32_t t = (uint32_t)(ar_synth_rand(&s) % nthreads);
		ar_synth_next(&s, t, &evs[i]);
		evs[i].thread = t * 3 + 1; /* sparse indices must work too */
		if (i % 17 == 0)
			evs[i].stack = 7;
		int rc = ar_evbuf_append(&tb[t].buf, &evs[i]);
		if (rc == AR_EFULL) {
			EXPECT(ar_writer_write_events(w, &tb[t].buf, &err) == 0);
			ar_evbuf_reset(&tb[t].buf, tb[t].mem, cap, t * 3 + 1, 1000 + t);
			rc = ar_evbuf_append(&tb[t].buf, &evs[i]);
		}
		EXPECT(rc == 0);
	}
	for (uint32_t t = 0; t < nthreads; t++) {
		EXPECT(ar_writer_write_events(w, &tb[t].buf, &err) == 0);
		free(tb[t].mem);
	}
	ar_metabuf_reset(&meta, metamem, sizeof metamem);
	EXPECT(ar_meta_thread_exit(&meta, 1, s.seq, 7000) == 0);
	EXPECT(ar_writer_write_meta(w, &meta, &err) == 0);
	EXPECT(ar_writer_close(w, s.time_ns, footer, &err) == 0);
	free(tb);
	ar_synth_free(&s);
	*out = evs;
	return fd;
}

static void check_roundtrip(uint64_t seed, uint32_t nthreads, size_t cap, size_t n)
{
	ar_event_t *evs;
	int fd = write_trace(seed, nthreads, cap, n, &evs, 1);
	ar_reader_t *r;
	ar_error_t err;
	EXPECT(ar_reader_open_fd(&r, fd, "roundtrip", &err) == 0);
	if (!r)
		return;
	EXPECT_U64(ar_reader_status(r), AR_STATUS_COMPLETE);
	EXPECT_U64(ar_reader_event_count(r), n);
	EXPECT_U64(ar_reader_thread_count(r), nthreads);
	EXPECT_STR(ar_reader_thread(r, 1)->name, "worker-0");
	EXPECT_U64(ar_reader_thread(r, 1)->os_tid, 1000);
	/* THREAD_START / THREAD_EXIT times (alloctrace scrub copies them). */
	EXPECT_U64(ar_reader_thread(r, 1)->start_time_ns, 5000);
	EXPECT_U64(ar_reader_thread(r, 1)->exit_time_ns, 7000);
	uint32_t depth = 0;
	const uint64_t *fr = ar_reader_stack(r, 7, &depth);
	EXPECT(fr && depth == 3 && fr[2] == 0x7f0000001000);
	const ar_footer_t *f = ar_reader_footer(r);
	EXPECT(f && f->events == n);

	/* Merged order reproduces the generation order exactly. */
	ar_event_t e;
	size_t i = 0;
	int rc;
	while ((rc = ar_reader_next_merged(r, &e)) == 1) {
		evs[i].time_ns = evs[i].time_ns >> AR_TIME_UNIT_SHIFT << AR_TIME_UNIT_SHIFT;
		if (i < n && !same_event(&e, &evs[i])) {
			fprintf(stderr, "merged event %zu differs (seq %llu vs %llu)\n", i, (unsigned long long)e.seq,
				(unsigned long long)evs[i].seq);
			test_failures++;
			break;
		}
		i++;
	}
	EXPECT(rc == 0);
	EXPECT_U64(i, n);

	/* File order: each thread's events in order, all present. */
	ar_reader_rewind(r);
	uint64_t *last = calloc(nthreads * 3 + 2, sizeof *last);
	size_t got = 0;
	while ((rc = ar_reader_next(r, &e)) == 1) {
		EXPECT(e.seq > last[e.thread]);
		last[e.thread] = e.seq2 ? e.seq2 : e.seq;
		got++;
	}
	EXPECT(rc == 0);
	EXPECT_U64(got, n);
	free(last);
	ar_reader_close(r);
	close(fd);
	free(evs);
}

static void test_roundtrip_many(void)
{
	check_roundtrip(1, 1, AR_BLOCK_MAX, 20000);
	check_roundtrip(2, 4, 4096, 30000);
	check_roundtrip(3, 16, 1024, 30000);
	check_roundtrip(4, 3, 200, 5000); /* one or two events per block */
}

static void test_no_footer_reads_as_truncated(void)
{
	ar_event_t *evs;
	int fd = write_trace(9, 2, 2048, 3000, &evs, 0);
	ar_reader_t *r;
	ar_error_t err;
	EXPECT(ar_reader_open_fd(&r, fd, "nofooter", &err) == 0);
	EXPECT_U64(ar_reader_status(r), AR_STATUS_TRUNCATED);
	EXPECT(strstr(ar_reader_error(r)->msg, "truncated after 3000 events") != NULL);
	ar_event_t e;
	size_t n = 0;
	while (ar_reader_next_merged(r, &e) == 1)
		n++;
	EXPECT_U64(n, 3000);
	ar_reader_close(r);
	close(fd);
	free(evs);
}

static void test_writer_rejects_bad_events(void)
{
	uint8_t mem[1024];
	ar_evbuf_t b;
	ar_evbuf_reset(&b, mem, sizeof mem, 0, 1);
	ar_event_t e = {.op = AR_OP_MALLOC, .seq = 5, .size = 8, .result = 0x1000};
	EXPECT(ar_evbuf_append(&b, &e) == 0);
	EXPECT(ar_evbuf_append(&b, &e) == AR_EINVAL); /* seq must grow */
	e.seq = 6;
	e.op = 0;
	EXPECT(ar_evbuf_append(&b, &e) == AR_EINVAL);
	e.op = AR_OP_REALLOC;
	e.seq2 = 6;
	EXPECT(ar_evbuf_append(&b, &e) == AR_EINVAL); /* seq2 after seq */
	/* Full buffers refuse without storing. */
	uint32_t before = 0;
	e.op = AR_OP_MALLOC;
	int rc = 0;
	for (e.seq = 10; rc == 0; e.seq++) {
		before = b.nevents;
		rc = ar_evbuf_append(&b, &e);
	}
	EXPECT(rc == AR_EFULL);
	EXPECT_U64(b.nevents, before);
	EXPECT_U64(before, sizeof mem / AR_EVENT_SLOT_BYTES);
}

/* Failed calls keep their error code; successful ones and free have none. */
static void test_error_codes(void)
{
	ar_header_t h;
	ar_header_init(&h);
	int fd;
	ar_writer_t *w = fixture_temp_writer(&h, &fd);
	ar_error_t err;
	static uint8_t mem[AR_EVBUF_MAX_BYTES];
	ar_evbuf_t b;
	ar_evbuf_reset(&b, mem, sizeof mem, 0, 9);
	ar_event_t in[] = {
		{.op = AR_OP_MALLOC, .seq = 1, .size = (uint64_t)1 << 60, .error = 12},
		{.op = AR_OP_POSIX_MEMALIGN, .seq = 2, .align = 3, .size = 8, .error = 22},
		{.op = AR_OP_MALLOC, .seq = 3, .size = 8, .result = 0x1000, .error = 99}, /* not kept: succeeded */
		{.op = AR_OP_REALLOC, .seq = 4, .seq2 = 5, .ptr = 0x1000, .size = 0},        /* freed, no error */
		{.op = AR_OP_CALLOC, .seq = 6, .count = 3, .size = 8, .error = 70000},       /* clamped */
	};
	for (size_t i = 0; i < sizeof in / sizeof *in; i++)
		EXPECT(ar_evbuf_append(&b, &in[i]) == 0);
	EXPECT(ar_writer_write_events(w, &b, &err) == 0);
	EXPECT(ar_writer_close(w, 100, 1, &err) == 0);
	ar_reader_t *r;
	EXPECT(ar_reader_open_fd(&r, fd, "errors", &err) == 0);
	const uint32_t want[] = {12, 22, 0, 0, 65535};
	ar_event_t e;
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		EXPECT(ar_reader_next_merged(r, &e) == 1);
		EXPECT_U64(e.error, want[i]);
		EXPECT_U64(e.result, in[i].result);
	}
	EXPECT(ar_reader_next_merged(r, &e) == 0);
	ar_reader_close(r);
	close(fd);
}

/* The writer keeps a header's time unit when it is a power of two from 16 ns
 * to AR_TIME_UNIT_MAX_NS, and writes 16 ns for any other; times read back
 * rounded down to the unit, in order and never later than written. */
static void test_time_unit(void)
{
	static const struct {
		uint64_t asked, kept;
	} cases[] = {{0, 16}, {16, 16}, {48, 16}, {64, 64}, {1024, 1024}, {AR_TIME_UNIT_MAX_NS, AR_TIME_UNIT_MAX_NS},
		     {2 * (uint64_t)AR_TIME_UNIT_MAX_NS, 16}, {UINT64_MAX, 16}};
	static const uint64_t times[] = {0, 15, 16, 63, 64, 1000, 1023, 1024, 5000000, 5000063, 123456789};
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		ar_header_t h;
		ar_header_init(&h);
		h.time_unit_ns = cases[c].asked;
		int fd;
		ar_writer_t *w = fixture_temp_writer(&h, &fd);
		ar_error_t err;
		static uint8_t mem[AR_EVBUF_MAX_BYTES];
		ar_evbuf_t b;
		ar_evbuf_reset(&b, mem, sizeof mem, 0, 9);
		for (size_t i = 0; i < sizeof times / sizeof *times; i++) {
			ar_event_t e = {.op = AR_OP_MALLOC, .seq = i + 1, .size = 8, .result = 0x1000 + 16 * i,
					.time_ns = times[i]};
			EXPECT(ar_evbuf_append(&b, &e) == 0);
		}
		EXPECT(ar_writer_write_events(w, &b, &err) == 0);
		EXPECT(ar_writer_close(w, 100, 1, &err) == 0);
		ar_reader_t *r;
		EXPECT(ar_reader_open_fd(&r, fd, "unit", &err) == 0);
		EXPECT_U64(ar_reader_header(r)->time_unit_ns, cases[c].kept);
		ar_event_t e;
		for (size_t i = 0; i < sizeof times / sizeof *times; i++) {
			EXPECT(ar_reader_next_merged(r, &e) == 1);
			EXPECT_U64(e.time_ns, times[i] / cases[c].kept * cases[c].kept);
		}
		EXPECT(ar_reader_next_merged(r, &e) == 0);
		ar_reader_close(r);
		close(fd);
	}
}

int main(void)
{
	RUN(test_time_unit);
	RUN(test_error_codes);
	RUN(test_roundtrip_many);
	RUN(test_no_footer_reads_as_truncated);
	RUN(test_writer_rejects_bad_events);
	return TEST_END();
}
