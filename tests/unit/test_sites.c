/*
 * test_sites.c — the per-site model (analysis/sites.h) on a two-thread trace
 * written here, whose every figure is worked out by hand in the comments:
 * heaptrack's temporaries (same thread, no allocation of that thread in
 * between; another thread's allocation does not count; a block freed by
 * another thread never is; a realloc releases its input), live at the peak
 * (the moment the whole trace's live bytes peak, a realloc's result live
 * from its seq2), leaks, stacks merged by label, stack id 0 and ids the
 * trace does not define; folded output, sorting and metric names.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sites.h"
#include "testing.h"

static ar_event_t ev(uint64_t seq, uint8_t op, uint64_t ptr, uint64_t size, uint64_t result, uint32_t stack)
{
	return (ar_event_t){.seq = seq, .op = op, .ptr = ptr, .size = size, .result = result, .stack = stack,
			    .time_ns = seq * 16};
}

static void put(ar_writer_t *w, uint32_t thread, const ar_event_t *e, size_t n)
{
	static uint8_t mem[64 * 64];
	ar_evbuf_t b;
	ar_error_t err;
	ar_evbuf_reset(&b, mem, sizeof mem, thread, 100 + thread);
	for (size_t i = 0; i < n; i++)
		EXPECT(ar_evbuf_append(&b, &e[i]) == 0);
	EXPECT(ar_writer_write_events(w, &b, &err) == 0);
}

/* The trace of the comments below, in a memfd. */
static int make_trace(void)
{
	int fd = memfd_create("sites", 0);
	if (fd < 0)
		exit(2);
	ar_header_t h;
	ar_header_init(&h);
	h.flags = AR_HDR_STACKS;
	ar_writer_t *w;
	ar_error_t err;
	if (ar_writer_open(&w, fd, &h, 1, NULL, &err) != 0)
		exit(2);
	static uint8_t meta[4096];
	ar_metabuf_t m;
	ar_metabuf_reset(&m, meta, sizeof meta);
	const uint64_t f1[] = {0x1010, 0x2020}, f2[] = {0x1030, 0x2020}, f3[] = {0x1050};
	EXPECT(ar_meta_stack(&m, 1, f1, 2) == 0);
	EXPECT(ar_meta_stack(&m, 2, f2, 2) == 0);
	EXPECT(ar_meta_stack(&m, 3, f3, 1) == 0);
	EXPECT(ar_meta_stack(&m, 4, f1, 2) == 0); /* the frames of stack 1 again: one site */
	EXPECT(ar_writer_write_meta(w, &m, &err) == 0);
	ar_event_t realloc_d = ev(8, AR_OP_REALLOC, 0xD000, 20, 0xE000, 3);
	realloc_d.seq2 = 9;
	const ar_event_t t0[] = {
		ev(1, AR_OP_MALLOC, 0, 100, 0xA000, 1),   /* A, live 100 */
		ev(2, AR_OP_MALLOC, 0, 200, 0xB000, 2),   /* B, live 300 */
		ev(3, AR_OP_FREE, 0xB000, 0, 0, 0),       /* B temporary: t0's last allocation */
		ev(4, AR_OP_FREE, 0xA000, 0, 0, 0),       /* A not: B came in between */
		ev(5, AR_OP_MALLOC, 0, 50, 0xC000, 1),    /* C, freed by t1 at 6: not temporary */
		ev(7, AR_OP_MALLOC, 0, 10, 0xD000, 3),    /* D */
		realloc_d,                                /* D temporary (released by the realloc); E 20 from seq 9 */
		ev(10, AR_OP_MALLOC, 0, 1000, 0xF000, 2), /* F, live 1020 */
		ev(12, AR_OP_FREE, 0xF000, 0, 0, 0),      /* F temporary: t1's allocation at 11 does not count */
		ev(14, AR_OP_MALLOC, 0, 5, 0x11000, 99),  /* stack 99: not defined; leaks */
	};
	const ar_event_t t1[] = {
		ev(6, AR_OP_FREE, 0xC000, 0, 0, 0),
		ev(11, AR_OP_MALLOC, 0, 300, 0x10000, 1), /* G, live 1320: the peak */
		ev(13, AR_OP_FREE, 0x10000, 0, 0, 0),     /* G temporary (t1's last) */
		ev(15, AR_OP_MALLOC, 0, 7, 0x12000, 0),   /* no stack; leaks */
		ev(16, AR_OP_MALLOC, 0, 1, 0x13000, 4),   /* stack 4 = stack 1's frames; leaks */
		ev(17, AR_OP_MALLOC, 0, 64, 0, 2),        /* failed: not an allocation of a site */
	};
	put(w, 0, t0, sizeof t0 / sizeof *t0);
	put(w, 1, t1, sizeof t1 / sizeof *t1);
	EXPECT(ar_writer_close(w, 1000, 1, &err) == 0);
	return fd;
}

#define EXPECT_SITE(s, calls_, bytes_, peak_b, peak_n, tmp, tmp_b, leak_b, leak_n)   \
	do {                                                                           \
		EXPECT((s) != NULL);                                                   \
		if (s) {                                                               \
			EXPECT_U64((s)->calls, calls_);                                \
			EXPECT_U64((s)->bytes, bytes_);                                \
			EXPECT_U64((s)->live_at_peak_bytes, peak_b);                   \
			EXPECT_U64((s)->live_at_peak_blocks, peak_n);                  \
			EXPECT_U64((s)->temporary_calls, tmp);                         \
			EXPECT_U64((s)->temporary_bytes, tmp_b);                       \
			EXPECT_U64((s)->leaked_bytes, leak_b);                         \
			EXPECT_U64((s)->leaked_blocks, leak_n);                        \
		}                                                                      \
	} while (0)

static void test_model(void)
{
	int fd = make_trace();
	ar_reader_t *r;
	ar_error_t err;
	if (ar_reader_open_fd(&r, fd, "sites", &err) != 0) {
		fprintf(stderr, "open: %s\n", err.msg);
		test_failures++;
		return;
	}
	ar_sites_t *m = NULL;
	EXPECT(ar_sites_build(&m, r, &(ar_sites_opts_t){.symbolize = 0}, &err) == 0);
	if (!m)
		return;
	const ar_sites_summary_t *sum = ar_sites_summary(m);
	EXPECT_U64(sum->status, AR_STATUS_COMPLETE);
	EXPECT_U64(sum->events, 16);
	EXPECT_U64(sum->calls, 10);
	EXPECT_U64(sum->bytes, 100 + 200 + 50 + 10 + 20 + 1000 + 5 + 300 + 7 + 1);
	EXPECT_U64(sum->peak_live_bytes, 1320);
	EXPECT_U64(sum->peak_seq, 11);
	EXPECT_U64(sum->leaked_bytes, 20 + 5 + 7 + 1);
	EXPECT_U64(sum->leaked_blocks, 4);
	EXPECT_U64(sum->no_stack_calls, 1);
	EXPECT_U64(sum->undefined_stack_calls, 1);
	EXPECT_U64(sum->stacks, 4);

	/* by label: frames outermost first; stacks 1 and 4 are one site */
	EXPECT_U64(ar_sites_count(m), 5);
	const char *want[] = {"0x1050", "0x2020;0x1010", "0x2020;0x1030", "[no stack]", "[undefined stack 99]"};
	for (size_t i = 0; i < 5 && i < ar_sites_count(m); i++)
		EXPECT_STR(ar_sites_at(m, i)->label, want[i]);
	/*          site                                  calls bytes peak   n  tmp tmp_b leak n */
	EXPECT_SITE(ar_sites_find(m, "0x2020;0x1010"), 4, 451, 300, 1, 1, 300, 1, 1);
	EXPECT_SITE(ar_sites_find(m, "0x2020;0x1030"), 2, 1200, 1000, 1, 2, 1200, 0, 0);
	EXPECT_SITE(ar_sites_find(m, "0x1050"), 2, 30, 20, 1, 1, 10, 20, 1);
	EXPECT_SITE(ar_sites_find(m, "[no stack]"), 1, 7, 0, 0, 0, 0, 7, 1);
	EXPECT_SITE(ar_sites_find(m, "[undefined stack 99]"), 1, 5, 0, 0, 0, 0, 5, 1);
	EXPECT_U64(ar_sites_find(m, "0x2020;0x1010")->nstacks, 2);
	EXPECT_U64(ar_sites_find(m, "0x2020;0x1010")->stack, 1);
	EXPECT_SITE(ar_sites_of_stack(m, 4), 1, 1, 0, 0, 0, 0, 1, 1);
	EXPECT_SITE(ar_sites_of_stack(m, 1), 3, 450, 300, 1, 1, 300, 0, 0);
	EXPECT(ar_sites_of_stack(m, 5) == NULL);
	EXPECT(ar_sites_find(m, "0x2020") == NULL);

	/* folded, by leaked bytes, largest first; zero lines left out */
	ar_sites_sort(m, AR_SITE_LEAKED);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	EXPECT(ar_sites_write_folded(m, AR_SITE_LEAKED, f) == 0);
	fclose(f);
	EXPECT_STR(buf, "0x1050 20\n[no stack] 7\n[undefined stack 99] 5\n0x2020;0x1010 1\n");
	free(buf);
	ar_sites_sort(m, AR_SITE_TEMPORARY);
	EXPECT_STR(ar_sites_at(m, 0)->label, "0x2020;0x1030");

	ar_site_metric_t k;
	for (int i = 0; i < AR_SITE_NMETRICS; i++)
		EXPECT(ar_site_metric_parse(ar_site_metric_name((ar_site_metric_t)i), &k) == 0 && (int)k == i);
	EXPECT(ar_site_metric_parse("live", &k) == -1);
	EXPECT_STR(ar_site_metric_name(AR_SITE_LIVE_AT_PEAK), "live-at-peak");
	ar_sites_free(m);
	ar_reader_close(r);
	close(fd);
}

/* A trace without stacks is one site, "[no stack]". */
static void test_no_stacks(void)
{
	int fd = memfd_create("nostacks", 0);
	ar_header_t h;
	ar_header_init(&h);
	ar_writer_t *w;
	ar_error_t err;
	if (fd < 0 || ar_writer_open(&w, fd, &h, 1, NULL, &err) != 0)
		exit(2);
	const ar_event_t e[] = {ev(1, AR_OP_MALLOC, 0, 8, 0x100, 0), ev(2, AR_OP_CALLOC, 0, 4, 0x200, 0)};
	ar_event_t c = e[1];
	c.count = 3;
	put(w, 0, (ar_event_t[]){e[0], c}, 2);
	EXPECT(ar_writer_close(w, 100, 1, &err) == 0);
	ar_reader_t *r;
	EXPECT(ar_reader_open_fd(&r, fd, "nostacks", &err) == 0);
	ar_sites_t *m = NULL;
	EXPECT(ar_sites_build(&m, r, &(ar_sites_opts_t){.symbolize = 1}, &err) == 0);
	EXPECT_U64(ar_sites_count(m), 1);
	if (ar_sites_count(m) == 1)
		EXPECT_SITE(ar_sites_at(m, 0), 2, 8 + 12, 20, 2, 0, 0, 20, 2);
	ar_sites_free(m);
	ar_reader_close(r);
	close(fd);
}

int main(void)
{
	test_model();
	test_no_stacks();
	return TEST_END();
}
