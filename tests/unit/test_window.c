/*
 * test_window.c — window traces (format 1.3, SPEC 3.1 bit 5, 5.1, 5.5,
 * 6.11): a trace that begins while the heap is in use. Three threads free
 * and realloc blocks allocated before the window (sized ops carrying
 * old_size, a reallocarray among them: two evbuf slots), one frees a
 * pointer never returned without old_size (an unknown free), and frees of
 * the window's own blocks carry old_size too. Checked: the writer's sized
 * ops read back as free / realloc / reallocarray with old_size; the WINDOW
 * record and the stop reason; the live set's pre-existing blocks and a
 * peak that counts them (63552 bytes at seq 2, where the window's own
 * blocks alone peak at 51000); the same trace without the window flag has
 * no pre-existing blocks; evbuf's rules for old_size.
 *
 * `test_window FILE` also writes the trace to FILE, for
 * tests/e2e/trace_window.sh (info, stats, dump, verify, replay);
 * `test_window FILE norecord` the same without its WINDOW record, and
 * `test_window FILE absurd` with an old_size of 2^64-1 for P1 (SPEC 7.4).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ar_trace.h"
#include "testing.h"

/* The events, in sequence order (the design is in the comment above). */
typedef struct {
	uint32_t thread;
	ar_event_t e;
} tev_t;

#define P1 0x7000u  /* pre-existing: 4096 bytes, freed by thread 0 */
#define P2 0x8000u  /* 200, realloced by thread 0 */
#define P3 0x9000u  /* 8192, freed by thread 1 */
#define P4 0xa000u  /* 64, reallocarray by thread 1 */
#define PRE_BYTES (4096u + 200u + 8192u + 64u)

static const tev_t events[] = {
	{1, {.op = AR_OP_MALLOC, .seq = 1, .size = 50000, .result = 0x20000}},
	{0, {.op = AR_OP_MALLOC, .seq = 2, .size = 1000, .result = 0x10000}},
	{0, {.op = AR_OP_FREE, .seq = 3, .ptr = P1, .old_size = 4096}},
	{1, {.op = AR_OP_FREE, .seq = 4, .ptr = 0x20000, .old_size = 50008}},
	{1, {.op = AR_OP_FREE, .seq = 5, .ptr = P3, .old_size = 8192}},
	{0, {.op = AR_OP_REALLOC, .seq = 6, .seq2 = 7, .ptr = P2, .size = 300, .result = 0x40000, .old_size = 200}},
	{1, {.op = AR_OP_REALLOCARRAY, .seq = 8, .seq2 = 9, .ptr = P4, .count = 10, .size = 16, .result = 0x30000,
	     .old_size = 64}},
	{2, {.op = AR_OP_FREE, .seq = 10, .ptr = 0xdead0}},
	{2, {.op = AR_OP_FREE, .seq = 11, .ptr = 0x40000, .old_size = 312}},
	{0, {.op = AR_OP_FREE, .seq = 12, .ptr = 0x10000, .old_size = 1008}},
	{1, {.op = AR_OP_FREE, .seq = 13, .ptr = 0x30000, .old_size = 168}},
};
#define NEV (sizeof events / sizeof *events)

static const ar_window_info_t the_window = {
	.index = 2,
	.reason = AR_WINDOW_ATTACH,
	.start_time_ns = 0,
	.process_start_ns = 5000000000u,
	.heap_in_use_bytes = 1000000,
	.heap_source = "glibc mallinfo2",
};

static char path[] = "/tmp/allocrr-window-XXXXXX";
static int with_record = 1, absurd = 0;

static void write_trace(const char *out, uint32_t flags)
{
	int fd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0600);
	EXPECT(fd >= 0);
	ar_header_t h;
	ar_header_init(&h);
	h.version_major = 1; /* a 1.3 trace, which a 1.2 reader still reads (trace_window.sh) */
	h.version_minor = 3;
	h.flags = flags;
	h.pid = 4321;
	snprintf(h.cmdline, sizeof h.cmdline, "window-test");
	ar_writer_t *w = NULL;
	ar_error_t err;
	EXPECT(ar_writer_open(&w, fd, &h, 1, NULL, &err) == 0);
	static uint8_t meta_mem[AR_BLOCK_MAX];
	ar_metabuf_t m;
	ar_metabuf_reset(&m, meta_mem, sizeof meta_mem);
	if ((flags & AR_HDR_WINDOW) && with_record)
		EXPECT(ar_meta_window(&m, &the_window) == 0);
	for (uint32_t t = 0; t < 3; t++)
		EXPECT(ar_meta_thread_start(&m, t, 100 * (t + 1), 0, 0) == 0);
	EXPECT(ar_writer_write_meta(w, &m, &err) == 0);
	static uint8_t mem[3][AR_EVBUF_MAX_BYTES] __attribute__((aligned(8)));
	ar_evbuf_t b[3];
	for (uint32_t t = 0; t < 3; t++)
		ar_evbuf_reset(&b[t], mem[t], sizeof mem[t], t, 100 * (t + 1));
	for (size_t i = 0; i < NEV; i++) {
		ar_event_t e = events[i].e;
		e.time_ns = 1000 * e.seq;
		if (absurd && e.ptr == P1)
			e.old_size = UINT64_MAX;
		EXPECT(ar_evbuf_append(&b[events[i].thread], &e) == 0);
	}
	EXPECT_U64(b[1].nevents, 5);
	EXPECT_U64(b[1].nslots, 7); /* its reallocarray with old_size takes three, the rest one each */
	EXPECT_U64(b[1].events_by_op[AR_OP_FREE], 3);
	for (uint32_t t = 0; t < 3; t++)
		EXPECT(ar_writer_write_events(w, &b[t], &err) == 0);
	ar_writer_note_stop(w, AR_STOP_DETACH, 17);
	EXPECT(ar_writer_close(w, 20000, 1, &err) == 0);
	close(fd);
}

/* Read back: every event as given, old_size included, in merged order. */
static void test_roundtrip(void)
{
	ar_reader_t *r = NULL;
	ar_error_t err;
	EXPECT(ar_reader_open(&r, path, &err) == 0);
	if (!r)
		return;
	EXPECT_U64(ar_reader_header(r)->version_minor, 3);
	EXPECT(ar_reader_header(r)->flags & AR_HDR_WINDOW);
	EXPECT(ar_op_is_sized(ar_reader_header(r), 11) && !ar_op_is_sized(ar_reader_header(r), 5));
	const ar_window_info_t *w = ar_reader_window(r);
	EXPECT(w != NULL);
	if (w) {
		EXPECT_U64(w->index, 2);
		EXPECT_U64(w->reason, AR_WINDOW_ATTACH);
		EXPECT_U64(w->process_start_ns, 5000000000u);
		EXPECT_U64(w->heap_in_use_bytes, 1000000);
		EXPECT_STR(w->heap_source, "glibc mallinfo2");
	}
	ar_event_t e;
	size_t i = 0;
	while (ar_reader_next_merged(r, &e) == 1 && i < NEV) {
		const ar_event_t *x = &events[i++].e;
		EXPECT_U64(e.seq, x->seq);
		EXPECT_U64(e.op, x->op);
		EXPECT_U64(e.old_size, x->old_size);
		EXPECT_U64(e.align, 0);
		EXPECT_U64(e.ptr, x->ptr);
		EXPECT_U64(e.count, x->count);
		EXPECT_U64(e.size, x->size);
		EXPECT_U64(e.result, x->result);
		EXPECT_U64(e.seq2, x->seq2);
	}
	EXPECT_U64(i, NEV);
	EXPECT(ar_reader_status(r) == AR_STATUS_COMPLETE);
	const ar_footer_t *f = ar_reader_footer(r);
	EXPECT(f && f->stop_reason == AR_STOP_DETACH && f->after_stop == 17);
	EXPECT(f && f->events_by_op[AR_OP_FREE] == 7 && f->events_by_op[11] == 0);
	ar_reader_close(r);
}

/* The live set over path: pre-existing blocks when `window`. */
static void live_of(int window, ar_liveset_t *ls)
{
	ar_reader_t *r = NULL;
	ar_error_t err;
	ar_liveset_init(ls, NULL, NULL, NULL);
	ls->window = window;
	EXPECT(ar_reader_open(&r, path, &err) == 0);
	if (!r)
		return;
	ar_event_t e;
	while (ar_reader_next_merged(r, &e) == 1)
		EXPECT(ar_liveset_apply(ls, &e, 0) == 0);
	EXPECT(ar_liveset_advance(ls, UINT64_MAX) == 0);
	ar_reader_close(r);
}

static void test_liveset(void)
{
	ar_liveset_t ls;
	live_of(1, &ls);
	EXPECT_U64(ls.preexisting_blocks, 4);
	EXPECT_U64((uint64_t)ls.preexisting_exact, PRE_BYTES);
	EXPECT_U64(ls.unknown_releases, 1);
	/* at seq 2 the heap held the 4 pre-existing blocks, 50000 and 1000 */
	EXPECT_U64(ls.peak_live_bytes, PRE_BYTES + 51000);
	EXPECT_U64(ls.peak_seq, 2);
	EXPECT_U64(ls.len, 0);
	ar_liveset_free(&ls);
	/* Without the window rule the same releases are unknown frees. */
	live_of(0, &ls);
	EXPECT_U64(ls.preexisting_blocks, 0);
	EXPECT_U64(ls.unknown_releases, 5); /* P1, P3, 0xdead0 and the reallocs of P2 and P4 */
	EXPECT_U64(ls.peak_live_bytes, 51000);
	ar_liveset_free(&ls);
}

/* A trace without the window flag keeps old_size (dump shows it) but has
 * no pre-existing blocks for the tools, which follow the flag. */
static void test_not_a_window(void)
{
	write_trace(path, 0);
	ar_reader_t *r = NULL;
	ar_error_t err;
	EXPECT(ar_reader_open(&r, path, &err) == 0);
	if (!r)
		return;
	EXPECT(ar_reader_window(r) == NULL);
	ar_event_t e;
	uint64_t sized = 0;
	while (ar_reader_next(r, &e) == 1)
		sized += e.old_size != 0;
	EXPECT_U64(sized, 8);
	ar_reader_close(r);
}

/* SPEC 5.1: old_size only on the three ops that end a block; a sized
 * reallocarray needs three slots (format.h), a sized free one. */
static void test_evbuf_rules(void)
{
	static uint8_t mem[4 * AR_EVENT_SLOT_BYTES] __attribute__((aligned(8)));
	ar_evbuf_t b;
	ar_evbuf_reset(&b, mem, sizeof mem, 0, 1);
	ar_event_t m = {.op = AR_OP_MALLOC, .seq = 1, .size = 8, .result = 0x100, .old_size = 8};
	EXPECT_U64(ar_evbuf_append(&b, &m), AR_EINVAL);
	ar_event_t ra = {.op = AR_OP_REALLOCARRAY, .seq = 2, .seq2 = 3, .ptr = 0x100, .count = 2, .size = 8,
			 .result = 0x200, .old_size = 24};
	EXPECT_U64(ar_evbuf_append(&b, &ra), 0);
	ra.seq = 4, ra.seq2 = 5;
	EXPECT_U64(ar_evbuf_append(&b, &ra), AR_EFULL); /* one slot left, it needs three */
	ar_event_t f = {.op = AR_OP_FREE, .seq = 4, .ptr = 0x200, .old_size = 24};
	EXPECT_U64(ar_evbuf_append(&b, &f), 0);
	EXPECT_U64(b.nevents, 2);
	EXPECT_U64(b.nslots, 4);
}

int main(int argc, char **argv)
{
	int tmp = mkstemp(path);
	EXPECT(tmp >= 0);
	close(tmp);
	write_trace(path, AR_HDR_WINDOW);
	RUN(test_roundtrip);
	RUN(test_liveset);
	RUN(test_not_a_window);
	RUN(test_evbuf_rules);
	unlink(path);
	with_record = !(argc > 2 && !strcmp(argv[2], "norecord"));
	absurd = argc > 2 && !strcmp(argv[2], "absurd");
	if (argc > 1)
		write_trace(argv[1], AR_HDR_WINDOW);
	return TEST_END();
}
