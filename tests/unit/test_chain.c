/*
 * test_chain.c — chained events blocks (SPEC 3.4, format 2.0): the writer
 * chains a thread's blocks, restarts a chain every AR_WRITER_CHAIN_MAX
 * blocks and for threads it no longer keeps, writes no chain into a 1.x
 * trace, and stops chaining a thread whose blocks do not repeat each other
 * (random events); the reader gives back every event in file and merged order, also
 * when iteration restarts and a block's prefix must be decoded again, and
 * reads a truncated chained trace up to its last whole block.
 */
#include <stdlib.h>
#include <unistd.h>

#include <zstd.h>

#include "format.h"
#include "synth.h"
#include "testing.h"

#define CAP 2048 /* evbuf bytes: about 30 events a block, so many blocks */

typedef struct {
	uint64_t offset, end; /* descriptor, end of its frame */
	uint64_t kind, thread, chain;
} desc_t;

static int same_event(const ar_event_t *a, const ar_event_t *b)
{
	return a->seq == b->seq && a->seq2 == b->seq2 &&
	       a->time_ns == (b->time_ns >> AR_TIME_UNIT_SHIFT << AR_TIME_UNIT_SHIFT) && a->ptr == b->ptr &&
	       a->align == b->align && a->count == b->count && a->size == b->size && a->result == b->result &&
	       a->thread == b->thread && a->op == b->op;
}

/* Event i of a thread in a steady loop: a malloc and a free of one of 8
 * blocks in turn, so its blocks repeat each other (chaining pays). */
static void steady_event(ar_synth_t *s, uint32_t t, uint64_t i, ar_event_t *e)
{
	uint64_t k = (i / 2) % 8, addr = 0x100000 * (uint64_t)(t + 1) + k * 256;
	*e = (ar_event_t){.seq = ++s->seq, .time_ns = s->time_ns += 160, .thread = t};
	if (i % 2 == 0) {
		e->op = AR_OP_MALLOC;
		e->size = 16 * (k + 1);
		e->result = addr;
	} else {
		e->op = AR_OP_FREE;
		e->ptr = addr;
	}
}

/* Write n events of nthreads threads (steady ones, or synthetic random
 * ones) as format `major`; the events in seq order in *out. Returns the fd
 * of the (unlinked) file. */
static int write_trace(int major, uint32_t nthreads, size_t n, int steady, ar_event_t **out)
{
	char path[] = "/tmp/allocrr-chain-XXXXXX";
	int fd = mkstemp(path);
	unlink(path);
	ar_header_t h;
	ar_header_init(&h);
	if (major == 1) {
		h.version_major = 1;
		h.version_minor = 3;
	}
	ar_writer_t *w;
	ar_error_t err;
	EXPECT(ar_writer_open(&w, fd, &h, 3, NULL, &err) == 0);
	ar_synth_t s;
	ar_synth_init(&s, nthreads, 7);
	ar_evbuf_t *b = calloc(nthreads, sizeof *b);
	uint8_t *mem = malloc((size_t)nthreads * CAP);
	ar_event_t *evs = calloc(n, sizeof *evs);
	uint64_t *count = calloc(nthreads, sizeof *count);
	for (uint32_t t = 0; t < nthreads; t++)
		ar_evbuf_reset(&b[t], mem + (size_t)t * CAP, CAP, t, 100 + t);
	for (size_t i = 0; i < n; i++) {
		uint32_t t = (uint32_t)(ar_synth_rand(&s) % nthreads);
		if (steady)
			steady_event(&s, t, count[t]++, &evs[i]);
		else
			ar_synth_next(&s, t, &evs[i]);
		evs[i].thread = t;
		if (ar_evbuf_append(&b[t], &evs[i]) == AR_EFULL) {
			EXPECT(ar_writer_write_events(w, &b[t], &err) == 0);
			ar_evbuf_reset(&b[t], b[t].data, CAP, t, 100 + t);
			EXPECT(ar_evbuf_append(&b[t], &evs[i]) == 0);
		}
	}
	for (uint32_t t = 0; t < nthreads; t++)
		EXPECT(ar_writer_write_events(w, &b[t], &err) == 0);
	EXPECT(ar_writer_close(w, s.time_ns, 1, &err) == 0);
	ar_synth_free(&s);
	free(count);
	free(b);
	free(mem);
	*out = evs;
	return fd;
}

/* The descriptors of the file behind fd (at most cap), SPEC 3.2. */
static size_t descriptors(int fd, desc_t *d, size_t cap, uint64_t *size)
{
	*size = (uint64_t)lseek(fd, 0, SEEK_END);
	uint8_t *f = malloc(*size);
	EXPECT(pread(fd, f, *size, 0) == (ssize_t)*size);
	size_t n = 0;
	for (uint64_t off = 8 + ar_get_u32le(f + 4); off + 8 <= *size && n < cap;) {
		uint32_t len = ar_get_u32le(f + off + 4);
		const uint8_t *p = f + off + 8, *end = p + len;
		uint64_t v[9] = {0};
		for (int i = 0; i < 9 && p < end; i++)
			EXPECT(ar_get_varint(&p, end, &v[i]) == 0);
		d[n] = (desc_t){off, off + 8 + len + v[7], v[0], v[1], v[8]};
		off = d[n++].end;
	}
	free(f);
	return n;
}

/* Every event back (times in the trace's 16 ns units), in merged order, from r; then in file order, each
 * thread's events in seq order and as many as written. */
static void check_events(ar_reader_t *r, const ar_event_t *evs, size_t n, uint32_t nthreads)
{
	ar_event_t e;
	size_t i = 0;
	int rc;
	while ((rc = ar_reader_next_merged(r, &e)) == 1 && i < n)
		if (!same_event(&e, &evs[i++]))
			break;
	EXPECT_U64(i, n);
	EXPECT_U64(rc, 0);
	ar_reader_rewind(r);
	uint64_t *last = calloc(nthreads, sizeof *last);
	size_t got = 0;
	while (ar_reader_next(r, &e) == 1) {
		EXPECT(e.thread < nthreads && e.seq > last[e.thread]);
		last[e.thread] = e.seq;
		got++;
	}
	EXPECT_U64(got, n);
	free(last);
}

/* SPEC 3.4: chains per thread, restarted every AR_WRITER_CHAIN_MAX blocks;
 * more threads than the writer keeps still chain where they can; random
 * events are rarely chained (a try every CHAIN_PAUSE + 2 blocks, kept only
 * when it saved 5 %). */
static void test_chains_written_and_read(uint32_t nthreads, size_t n, int steady)
{
	ar_event_t *evs;
	int fd = write_trace(2, nthreads, n, steady, &evs);
	static desc_t d[20000];
	uint64_t size;
	size_t nd = descriptors(fd, d, 20000, &size);
	size_t chained = 0, events_blocks = 0;
	uint32_t *len = calloc(nthreads, sizeof *len);
	int *seen = calloc(nthreads, sizeof *seen);
	for (size_t i = 0; i < nd; i++) {
		if (d[i].kind != AR_BLOCK_EVENTS) {
			EXPECT_U64(d[i].chain, 0);
			continue;
		}
		events_blocks++;
		uint32_t t = (uint32_t)d[i].thread;
		EXPECT(d[i].chain <= AR_CHAIN_PREVIOUS);
		EXPECT(!d[i].chain || seen[t]); /* a link exists */
		len[t] = d[i].chain ? len[t] + 1 : 1;
		EXPECT(len[t] <= AR_WRITER_CHAIN_MAX);
		chained += d[i].chain != 0;
		seen[t] = 1;
	}
	/* a chain start per thread and per 16 blocks at least, so never all;
	 * with more threads than it keeps, the writer chains less */
	EXPECT(chained < events_blocks);
	if (!steady) /* tries only, most found not worth it */
		EXPECT(chained * 8 < events_blocks);
	else
		EXPECT(nthreads > 16 ? chained > 0 : chained > events_blocks / 2);
	ar_reader_t *r;
	ar_error_t err;
	EXPECT(ar_reader_open_fd(&r, fd, "chain", &err) == 0);
	if (r) {
		EXPECT_U64(ar_reader_status(r), AR_STATUS_COMPLETE);
		EXPECT_U64(ar_reader_header(r)->version_major, 2);
		check_events(r, evs, n, nthreads);
		/* Read part of the file in file order, then merged from the
		 * start: each thread's kept prefix is now a later block's, so
		 * the chains are decoded again. */
		ar_reader_rewind(r);
		ar_event_t e;
		for (size_t i = 0; i < n / 2; i++)
			EXPECT(ar_reader_next(r, &e) == 1);
		ar_reader_rewind(r);
		check_events(r, evs, n, nthreads);
		ar_reader_close(r);
	}
	free(len);
	free(seen);
	free(evs);
	close(fd);
}

/* A 1.x header gets a trace without chains that reads the same. */
static void test_1x_has_no_chain(void)
{
	ar_event_t *evs;
	size_t n = 20000;
	int fd = write_trace(1, 3, n, 1, &evs);
	static desc_t d[4000];
	uint64_t size;
	size_t nd = descriptors(fd, d, 4000, &size);
	EXPECT(nd > 100);
	for (size_t i = 0; i < nd; i++)
		EXPECT_U64(d[i].chain, 0);
	ar_reader_t *r;
	ar_error_t err;
	EXPECT(ar_reader_open_fd(&r, fd, "v13", &err) == 0);
	if (r) {
		EXPECT_U64(ar_reader_header(r)->version_major, 1);
		EXPECT_U64(ar_reader_header(r)->version_minor, 3);
		check_events(r, evs, n, 3);
		ar_reader_close(r);
	}
	free(evs);
	close(fd);
}

/* SPEC 2, 7.2: a chained trace cut anywhere reads up to its last whole
 * block: exactly the events of the blocks before the cut. */
static void test_truncated_chain(void)
{
	ar_event_t *evs;
	size_t n = 6000;
	int fd = write_trace(2, 2, n, 1, &evs);
	static desc_t d[1000];
	uint64_t size;
	size_t nd = descriptors(fd, d, 1000, &size);
	uint8_t *f = malloc(size);
	EXPECT(pread(fd, f, size, 0) == (ssize_t)size);
	for (size_t k = 1; k + 1 < nd; k += nd / 9) {
		/* cut in the middle of block k's frame */
		uint64_t cut = (d[k].offset + d[k].end) / 2, whole = 0;
		for (size_t i = 0; i < k; i++)
			if (d[i].kind == AR_BLOCK_EVENTS) {
				uint64_t v[4] = {0};
				const uint8_t *p = f + d[i].offset + 8, *end = p + 16;
				for (int j = 0; j < 4; j++)
					ar_get_varint(&p, end, &v[j]);
				whole += v[3];
			}
		char path[] = "/tmp/allocrr-chain-cut-XXXXXX";
		int cfd = mkstemp(path);
		unlink(path);
		EXPECT(write(cfd, f, cut) == (ssize_t)cut);
		ar_reader_t *r;
		ar_error_t err;
		EXPECT(ar_reader_open_fd(&r, cfd, "cut", &err) == 0);
		if (r) {
			EXPECT_U64(ar_reader_status(r), AR_STATUS_TRUNCATED);
			EXPECT_U64(ar_reader_event_count(r), whole);
			ar_event_t e;
			size_t got = 0;
			while (ar_reader_next_merged(r, &e) == 1)
				got++;
			EXPECT_U64(got, whole);
			ar_reader_close(r);
		}
		close(cfd);
	}
	free(f);
	free(evs);
	close(fd);
}

static void test_one_thread(void) { test_chains_written_and_read(1, 30000, 1); }
static void test_four_threads(void) { test_chains_written_and_read(4, 40000, 1); }
/* more threads than the writer keeps the last block of */
static void test_forty_threads(void) { test_chains_written_and_read(40, 60000, 1); }
static void test_random_events(void) { test_chains_written_and_read(2, 40000, 0); }

int main(void)
{
	RUN(test_one_thread);
	RUN(test_four_threads);
	RUN(test_forty_threads);
	RUN(test_random_events);
	RUN(test_1x_has_no_chain);
	RUN(test_truncated_chain);
	return TEST_END();
}
