/*
 * test_evbuf_slots.c — the event buffer's slots (trace-format/format.h):
 * which events take one, two or three 32-byte slots, that each reads back
 * (ar_slot_get) as it was stored, including the ones the one-slot form
 * cannot hold (a seq of 2^56 or more, a stack, an error code, an old size
 * on a reallocarray), that a buffer is full at AR_EVBUF_MAX_EVENTS events
 * however few slots they take, and that such events survive the writer and
 * the reader unchanged.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "format.h"
#include "testing.h"

#define BIG (1ull << 56) /* the first seq the one-slot form cannot hold */

typedef struct {
	ar_event_t e;
	unsigned slots;
} case_t;

/* In seq order, as one thread's buffer must hold them; times in whole
 * trace time units (AR_TIME_UNIT_NS), which is what a trace keeps. */
static const case_t cases[] = {
	{{.op = AR_OP_MALLOC, .seq = 1, .time_ns = 128, .size = 24, .result = 0x1000}, 1},
	{{.op = AR_OP_FREE, .seq = 2, .time_ns = 256, .ptr = 0x1000}, 1},
	{{.op = AR_OP_FREE, .seq = 3, .time_ns = 384, .ptr = 0x2000, .old_size = 40}, 1},
	{{.op = AR_OP_VALLOC, .seq = 4, .time_ns = 512, .size = 4096, .result = 0x3000}, 1},
	{{.op = AR_OP_PVALLOC, .seq = 5, .time_ns = 640, .size = 5000, .result = 0x5000}, 1},
	{{.op = AR_OP_MALLOC, .seq = 6, .time_ns = 768, .size = 8, .result = 0x6000, .stack = 7}, 2},
	{{.op = AR_OP_MALLOC, .seq = 7, .time_ns = 896, .size = (uint64_t)1 << 62, .error = 12}, 2},
	{{.op = AR_OP_MALLOC, .seq = 8, .time_ns = 1024, .size = 0}, 1}, /* NULL without an error code */
	{{.op = AR_OP_CALLOC, .seq = 9, .time_ns = 1152, .count = 3, .size = 16, .result = 0x7000}, 2},
	{{.op = AR_OP_REALLOC, .seq = 10, .seq2 = 12, .time_ns = 1280, .ptr = 0x7000, .size = 64, .result = 0x8000},
	 2},
	{{.op = AR_OP_REALLOC, .seq = 13, .seq2 = 14, .time_ns = 1408, .ptr = 0x8000, .size = 96, .result = 0x9000,
	  .old_size = 72},
	 2},
	{{.op = AR_OP_REALLOCARRAY, .seq = 15, .seq2 = 16, .time_ns = 1536, .ptr = 0x9000, .count = 4, .size = 32,
	  .result = 0xa000},
	 2},
	{{.op = AR_OP_REALLOCARRAY, .seq = 17, .seq2 = 18, .time_ns = 1664, .ptr = 0xa000, .count = 5, .size = 32,
	  .result = 0xb000, .old_size = 136},
	 3},
	{{.op = AR_OP_POSIX_MEMALIGN, .seq = 19, .time_ns = 1792, .align = 64, .size = 100, .result = 0xc000}, 2},
	{{.op = AR_OP_FREE, .seq = 20, .time_ns = 1920, .ptr = 0xc000, .stack = 9}, 2},
	{{.op = AR_OP_MALLOC, .seq = BIG, .time_ns = 2048, .size = 48, .result = 0xd000}, 2},
	{{.op = AR_OP_FREE, .seq = BIG + 1, .time_ns = 2176, .ptr = 0xd000}, 2},
	{{.op = AR_OP_FREE, .seq = UINT64_MAX - 1, .time_ns = 2304, .ptr = 0x5000, .old_size = 5008}, 2},
};
#define NCASES (sizeof cases / sizeof *cases)

/* What ar_slot_get must give back for e. */
static void expect_slot(const ar_slot_event_t *v, const ar_event_t *e, const char *what)
{
	unsigned f = ar_known_op_fields[e->op];
	int bad = v->op != e->op || v->seq != e->seq || v->time_ns != e->time_ns || v->stack != e->stack ||
		  v->old_size != e->old_size || ((f & AR_F_SEQ2) && v->seq2 != e->seq2) ||
		  ((f & AR_F_PTR) && v->ptr != e->ptr) || ((f & AR_F_SIZE) && v->size != e->size) ||
		  ((f & AR_F_RESULT) && v->result != e->result) ||
		  ((f & AR_F_ALIGN) && v->aux != e->align) || ((f & AR_F_COUNT) && v->aux != e->count) ||
		  ((f & AR_F_RESULT) && !e->result && v->error != e->error);
	if (bad) {
		fprintf(stderr, "%s: event seq %llu op %u read back differently\n", what, (unsigned long long)e->seq,
			e->op);
		test_failures++;
	}
}

static void test_slot_forms(void)
{
	static uint8_t mem[64 * AR_EVENT_SLOT_BYTES] __attribute__((aligned(8)));
	ar_evbuf_t b;
	ar_evbuf_reset(&b, mem, sizeof mem, 0, 1);
	uint32_t at[NCASES];
	for (size_t i = 0; i < NCASES; i++) {
		at[i] = b.nslots;
		EXPECT_U64(ar_evbuf_append(&b, &cases[i].e), 0);
		EXPECT_U64(b.nslots - at[i], cases[i].slots);
	}
	EXPECT_U64(b.nevents, NCASES);
	const ar_slot_t *s = (const ar_slot_t *)(const void *)b.data;
	for (size_t i = 0; i < NCASES; i++) {
		ar_slot_event_t v;
		EXPECT_U64(ar_slot_get(s + at[i], &v), cases[i].slots);
		expect_slot(&v, &cases[i].e, "ar_slot_get");
	}
}

/* One-slot events fill a 1 MiB buffer to half, then the event limit holds. */
static void test_full_at_max_events(void)
{
	uint8_t *mem = malloc(AR_EVBUF_MAX_BYTES);
	ar_evbuf_t b;
	ar_evbuf_reset(&b, mem, AR_EVBUF_MAX_BYTES, 0, 1);
	ar_event_t e = {.op = AR_OP_FREE, .ptr = 0x1000};
	int rc = 0;
	for (e.seq = 1; rc == 0; e.seq++)
		rc = ar_evbuf_append(&b, &e);
	EXPECT_U64(rc, AR_EFULL);
	EXPECT_U64(b.nevents, AR_EVBUF_MAX_EVENTS);
	EXPECT_U64(b.nslots, AR_EVBUF_MAX_EVENTS);
	/* two-slot events: the bytes run out at the same count */
	ar_evbuf_reset(&b, mem, AR_EVBUF_MAX_BYTES, 0, 1);
	e = (ar_event_t){.op = AR_OP_CALLOC, .count = 2, .size = 8, .result = 0x1000};
	rc = 0;
	for (e.seq = 1; rc == 0; e.seq++)
		rc = ar_evbuf_append(&b, &e);
	EXPECT_U64(rc, AR_EFULL);
	EXPECT_U64(b.nevents, AR_EVBUF_MAX_EVENTS);
	EXPECT_U64(b.nslots, 2 * AR_EVBUF_MAX_EVENTS);
	free(mem);
}

/* Every form through the writer and the reader. */
static void test_forms_roundtrip(void)
{
	char path[] = "/tmp/allocrr-slots-XXXXXX";
	int fd = mkstemp(path);
	EXPECT(fd >= 0);
	unlink(path);
	ar_header_t h;
	ar_header_init(&h);
	h.flags = AR_HDR_STACKS | AR_HDR_WINDOW; /* stack ids and old sizes are allowed */
	ar_writer_t *w;
	ar_error_t err;
	EXPECT(ar_writer_open(&w, fd, &h, 1, NULL, &err) == 0);
	static uint8_t mem[64 * AR_EVENT_SLOT_BYTES] __attribute__((aligned(8)));
	ar_evbuf_t b;
	ar_evbuf_reset(&b, mem, sizeof mem, 0, 1);
	for (size_t i = 0; i < NCASES; i++)
		EXPECT_U64(ar_evbuf_append(&b, &cases[i].e), 0);
	EXPECT(ar_writer_write_events(w, &b, &err) == 0);
	EXPECT(ar_writer_close(w, 3000, 0, &err) == 0);
	ar_reader_t *r;
	EXPECT(ar_reader_open_fd(&r, fd, "slots", &err) == 0);
	ar_event_t e;
	for (size_t i = 0; i < NCASES; i++) {
		EXPECT(ar_reader_next_merged(r, &e) == 1);
		ar_slot_event_t v = {.op = (uint8_t)e.op, .seq = e.seq, .seq2 = e.seq2, .time_ns = e.time_ns,
				     .ptr = e.ptr, .size = e.size, .result = e.result, .old_size = e.old_size,
				     .stack = e.stack, .error = (uint16_t)e.error,
				     .aux = (ar_known_op_fields[e.op] & AR_F_ALIGN) ? e.align : e.count};
		expect_slot(&v, &cases[i].e, "read back");
	}
	EXPECT(ar_reader_next_merged(r, &e) == 0);
	ar_reader_close(r);
	close(fd);
}

int main(void)
{
	RUN(test_slot_forms);
	RUN(test_full_at_max_events);
	RUN(test_forms_roundtrip);
	return TEST_END();
}
