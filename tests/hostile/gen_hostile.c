/*
 * gen_hostile.c — traces that are well-formed bytes but say absurd things,
 * for tests/e2e/hostile_traces.sh (issue 9: a trace is untrusted input).
 *
 *   gen_hostile DIR [--live N] [--threads N]
 *
 * writes one DIR/NAME.zst per case below and prints the names, one a line.
 * Everything goes through the writer API (which only refuses what the bytes
 * cannot say): every file reads back as the events given here, so each case
 * tests what the tools make of its *meaning* — a 1 TiB malloc, a free of a
 * pointer never returned, 100000 threads, a stack id nobody defined — not
 * the reader's byte checks (tests/unit/test_corruption.c does those).
 *
 * Invariant: the output depends only on the arguments (no clock, no pid), so
 * the expected results in the e2e script hold on every machine.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ar_trace.h"

#define TIB (1ull << 40)
#define ENOMEM_ 12 /* errno values as a Linux recorder stores them */
#define EINVAL_ 22

static const char *outdir;
static uint64_t live_blocks = 2000000;
static uint32_t many_threads = 100000;
static const char *cmdline_override; /* the next g_open's header strings */

static uint8_t evmem[AR_EVBUF_MAX_BYTES] __attribute__((aligned(8)));
static uint8_t metamem[AR_BLOCK_MAX];

typedef struct gen {
	ar_writer_t *w;
	int fd;
	ar_metabuf_t m;
	uint64_t end_ns;
} gen_t;

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "gen_hostile: %s: %s\n", what, detail);
	exit(2);
}

static void g_open(gen_t *g, const char *name, uint32_t flags)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s.zst", outdir, name);
	g->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (g->fd < 0)
		die(path, "cannot create");
	ar_header_t h;
	ar_header_init(&h);
	h.flags = flags | AR_HDR_SYNTHETIC;
	h.pid = 4242;
	h.ppid = 1;
	h.page_size = 4096;
	h.clock_resolution_ns = 1;
	snprintf(h.recorder_version, sizeof h.recorder_version, "%s", cmdline_override ? cmdline_override : "gen_hostile");
	if (cmdline_override)
		snprintf(h.cmdline, sizeof h.cmdline, "%s", cmdline_override);
	else
		snprintf(h.cmdline, sizeof h.cmdline, "gen_hostile %s", name);
	cmdline_override = NULL;
	ar_error_t err;
	if (ar_writer_open(&g->w, g->fd, &h, 3, NULL, &err))
		die(name, err.msg);
	ar_metabuf_reset(&g->m, metamem, sizeof metamem);
	g->end_ns = 0;
	printf("%s\n", name);
}

static void g_meta_flush(gen_t *g)
{
	ar_error_t err;
	if (ar_writer_write_meta(g->w, &g->m, &err))
		die("metadata", err.msg);
	ar_metabuf_reset(&g->m, metamem, sizeof metamem);
}

/* Append a metadata record through fn-like expression `call` (retried once
 * after flushing a full buffer). */
#define META(g, call)                                               \
	do {                                                        \
		int rc_ = (call);                                   \
		if (rc_ == AR_EFULL) {                              \
			g_meta_flush(g);                            \
			rc_ = (call);                               \
		}                                                   \
		if (rc_)                                            \
			die("metadata record", ar_strerror(rc_));   \
	} while (0)

/* A block writer for one thread: events go in, full buffers go out. */
typedef struct tbuf {
	gen_t *g;
	ar_evbuf_t b;
	uint32_t thread;
} tbuf_t;

static void t_begin(tbuf_t *t, gen_t *g, uint32_t thread)
{
	t->g = g;
	t->thread = thread;
	ar_evbuf_reset(&t->b, evmem, sizeof evmem, thread, 1000 + (uint64_t)thread);
}

static void t_flush(tbuf_t *t)
{
	ar_error_t err;
	if (ar_writer_write_events(t->g->w, &t->b, &err))
		die("events block", err.msg);
	ar_evbuf_reset(&t->b, evmem, sizeof evmem, t->thread, 1000 + (uint64_t)t->thread);
}

static void t_add(tbuf_t *t, const ar_event_t *e)
{
	int rc = ar_evbuf_append(&t->b, e);
	if (rc == AR_EFULL) {
		t_flush(t);
		rc = ar_evbuf_append(&t->b, e);
	}
	if (rc)
		die("event", "the writer refused it");
	if (e->time_ns > t->g->end_ns)
		t->g->end_ns = e->time_ns;
}

static void g_close(gen_t *g, int footer)
{
	ar_error_t err;
	if (g->m.nrecords)
		g_meta_flush(g);
	if (ar_writer_close(g->w, g->end_ns, footer, &err))
		die("close", err.msg);
	close(g->fd);
}

/* Event constructors; time is seq microseconds unless a case sets it. */
static ar_event_t ev(unsigned op, uint64_t seq)
{
	ar_event_t e;
	memset(&e, 0, sizeof e);
	e.op = (uint8_t)op;
	e.seq = seq;
	e.time_ns = seq * 1000;
	return e;
}

static ar_event_t mal(uint64_t seq, uint64_t size, uint64_t result)
{
	ar_event_t e = ev(AR_OP_MALLOC, seq);
	e.size = size;
	e.result = result;
	e.error = result ? 0 : ENOMEM_;
	return e;
}

static ar_event_t fre(uint64_t seq, uint64_t ptr)
{
	ar_event_t e = ev(AR_OP_FREE, seq);
	e.ptr = ptr;
	return e;
}

static ar_event_t rea(uint64_t seq, uint64_t ptr, uint64_t size, uint64_t result)
{
	ar_event_t e = ev(AR_OP_REALLOC, seq);
	e.seq2 = seq + 1;
	e.ptr = ptr;
	e.size = size;
	e.result = result;
	e.error = result || !size ? 0 : ENOMEM_;
	return e;
}

static ar_event_t cal(uint64_t seq, uint64_t count, uint64_t size, uint64_t result)
{
	ar_event_t e = ev(AR_OP_CALLOC, seq);
	e.count = count;
	e.size = size;
	e.result = result;
	e.error = result ? 0 : ENOMEM_;
	return e;
}

static ar_event_t ali(unsigned op, uint64_t seq, uint64_t align, uint64_t size, uint64_t result, uint32_t error)
{
	ar_event_t e = ev(op, seq);
	e.align = align;
	e.size = size;
	e.result = result;
	e.error = result ? 0 : error;
	return e;
}

/* One thread's events, written in as many blocks as they need. */
static void write_thread(gen_t *g, uint32_t thread, const ar_event_t *evs, size_t n)
{
	tbuf_t t;
	t_begin(&t, g, thread);
	for (size_t i = 0; i < n; i++)
		t_add(&t, &evs[i]);
	t_flush(&t);
}

#define ONE_THREAD(name, ...)                                          \
	do {                                                           \
		gen_t g;                                               \
		const ar_event_t evs_[] = {__VA_ARGS__};               \
		g_open(&g, name, 0);                                   \
		write_thread(&g, 0, evs_, sizeof evs_ / sizeof *evs_); \
		g_close(&g, 1);                                        \
	} while (0)

#define A(k) (0x10000000ull + (uint64_t)(k) * 0x1000) /* plausible heap addresses */

static void absurd_sizes(void)
{
	/* A 1 TiB request: failed as it would on most machines, and once
	 * "succeeded" (overcommit), freed again; ordinary calls around it. */
	ONE_THREAD("malloc-1tib", mal(1, 64, A(1)), mal(2, TIB, 0), mal(3, TIB, 0x7f0000000000ull),
		   mal(4, 128, A(2)), fre(5, 0x7f0000000000ull), fre(6, A(1)), fre(7, A(2)));
	/* SIZE_MAX: refused, then claimed to succeed while other blocks live
	 * (live bytes would pass 2^64). */
	ONE_THREAD("malloc-sizemax", mal(1, 64, A(1)), mal(2, UINT64_MAX, 0), mal(3, UINT64_MAX, A(2)),
		   mal(4, UINT64_MAX - 1, A(3)), mal(5, 32, A(4)), fre(6, A(2)), fre(7, A(3)), fre(8, A(1)),
		   fre(9, A(4)));
	/* count x size overflows 64 bits: refused, and once "succeeded". */
	ONE_THREAD("calloc-overflow", cal(1, 1ull << 33, 1ull << 33, 0), cal(2, UINT64_MAX, 2, 0),
		   cal(3, 1ull << 33, 1ull << 33, A(1)), cal(4, 10, 10, A(2)), fre(5, A(1)), fre(6, A(2)));
	/* Alignments that are not powers of two, zero, or larger than memory. */
	ONE_THREAD("align-absurd", ali(AR_OP_POSIX_MEMALIGN, 1, 3, 64, 0, EINVAL_),
		   ali(AR_OP_POSIX_MEMALIGN, 2, 24, 64, A(1), 0), ali(AR_OP_ALIGNED_ALLOC, 3, TIB, 64, 0, ENOMEM_),
		   ali(AR_OP_ALIGNED_ALLOC, 4, 1ull << 63, 16, A(2), 0), ali(AR_OP_MEMALIGN, 5, 0, 64, A(3), 0),
		   ali(AR_OP_MEMALIGN, 6, UINT64_MAX, 64, A(4), 0), ali(AR_OP_ALIGNED_ALLOC, 7, 48, 100, A(5), 0),
		   fre(8, A(1)), fre(9, A(2)), fre(10, A(3)), fre(11, A(4)), fre(12, A(5)));
}

static void unknown_pointers(void)
{
	/* realloc of a pointer the trace never returned (allocated before
	 * recording, or invented); its result is then used normally. */
	ONE_THREAD("realloc-unknown", mal(1, 16, A(1)), rea(2, 0xdead0000ull, 100, A(2)),
		   rea(4, A(2), 200, A(3)), fre(6, A(3)), fre(7, A(1)));
	ONE_THREAD("free-unknown", mal(1, 16, A(1)), fre(2, 0xbeef0000ull), fre(3, 0xbeef0010ull), fre(4, A(1)));
	ONE_THREAD("double-free", mal(1, 48, A(1)), fre(2, A(1)), fre(3, A(1)), mal(4, 48, A(2)), fre(5, A(2)));
	/* The same address handed out twice while live (a free the recorder
	 * missed), then freed once. */
	ONE_THREAD("addr-twice", mal(1, 64, A(1)), mal(2, 64, A(1)), mal(3, 32, A(2)), fre(4, A(1)), fre(5, A(2)));
}

static void sequences(void)
{
	/* The same seq on two threads: each thread's own order is fine. */
	{
		gen_t g;
		g_open(&g, "seq-duplicate", 0);
		const ar_event_t t0[] = {mal(1, 16, A(1)), mal(2, 16, A(2)), fre(3, A(1))};
		const ar_event_t t1[] = {mal(2, 32, A(3)), fre(4, A(3))};
		write_thread(&g, 0, t0, 3);
		write_thread(&g, 1, t1, 2);
		g_close(&g, 1);
	}
	/* A thread's second block starts below its first block's last seq. */
	{
		gen_t g;
		g_open(&g, "seq-backwards", 0);
		const ar_event_t b1[] = {mal(10, 16, A(1)), mal(11, 16, A(2)), fre(12, A(1))};
		const ar_event_t b2[] = {fre(5, A(2)), mal(6, 16, A(3))};
		write_thread(&g, 0, b1, 3);
		write_thread(&g, 0, b2, 2);
		g_close(&g, 1);
	}
	/* Sequence numbers at the top of the 64-bit range: a realloc whose
	 * seq2 is 2^64-1, the largest value there is. */
	{
		uint64_t top = UINT64_MAX - 4;
		ar_event_t r = rea(top + 2, A(1), 64, A(2));
		r.seq2 = UINT64_MAX;
		ONE_THREAD("seq-huge", mal(top, 16, A(1)), r);
	}
}

static void threads_and_stacks(void)
{
	/* Events of threads no metadata declares, with indices at the top of
	 * the 32-bit range; one block frees what another thread allocated. */
	{
		gen_t g;
		g_open(&g, "thread-undeclared", 0);
		const ar_event_t a[] = {mal(1, 16, A(1)), mal(3, 16, A(2))};
		const ar_event_t b[] = {fre(2, A(1)), fre(4, A(2))};
		const ar_event_t c[] = {mal(5, 8, A(3)), fre(6, A(3))};
		write_thread(&g, UINT32_MAX, a, 2);
		write_thread(&g, 4000000000u, b, 2);
		write_thread(&g, 7, c, 2);
		g_close(&g, 1);
	}
	/* many_threads threads declared (start, name, exit), one with events. */
	{
		gen_t g;
		g_open(&g, "threads-declared", 0);
		for (uint32_t i = 0; i < many_threads; i++) {
			char name[32];
			snprintf(name, sizeof name, "worker-%u", i);
			META(&g, ar_meta_thread_start(&g.m, i, 1000 + i, 0, i));
			META(&g, ar_meta_thread_name(&g.m, i, name));
			META(&g, ar_meta_thread_exit(&g.m, i, 0, i + 1));
		}
		g_meta_flush(&g);
		const ar_event_t e[] = {mal(1, 16, A(1)), fre(2, A(1))};
		write_thread(&g, 0, e, 2);
		g_close(&g, 1);
	}
	/* many_threads threads with one allocation each, all still live. */
	{
		gen_t g;
		g_open(&g, "threads-active", 0);
		for (uint32_t i = 0; i < many_threads; i++) {
			ar_event_t e = mal(1 + i, 16, A(i + 1));
			write_thread(&g, i, &e, 1);
		}
		g_close(&g, 1);
	}
	/* Stack ids nobody defined, up to 2^32-1, in a trace that says it has
	 * stacks; one defined stack for contrast. */
	{
		gen_t g;
		g_open(&g, "stack-undefined", AR_HDR_STACKS);
		uint64_t frames[2] = {0x401000, 0x402000};
		META(&g, ar_meta_stack(&g.m, 1, frames, 2));
		g_meta_flush(&g);
		ar_event_t e[] = {mal(1, 16, A(1)), mal(2, 16, A(2)), mal(3, 16, A(3)), mal(4, 16, A(4)),
				  fre(5, A(1)), fre(6, A(2)), fre(7, A(3)), fre(8, A(4))};
		e[0].stack = 1;
		e[1].stack = UINT32_MAX;
		e[2].stack = 0x80000000u;
		e[3].stack = 123456789;
		e[4].stack = UINT32_MAX - 1;
		write_thread(&g, 0, e, 8);
		g_close(&g, 1);
	}
}

static void time_and_lifecycle(void)
{
	/* Time jumps forward by hours, back to 0, forward again. */
	{
		ar_event_t e[] = {mal(1, 16, A(1)), mal(2, 16, A(2)), fre(3, A(1)), fre(4, A(2)), mal(5, 8, A(3)),
				  fre(6, A(3))};
		const uint64_t t[] = {5000000000000ull, 16, 7200000000000ull, 0, 32, 48};
		for (int i = 0; i < 6; i++)
			e[i].time_ns = t[i];
		gen_t g;
		g_open(&g, "time-backwards", 0);
		write_thread(&g, 0, e, 6);
		g_close(&g, 1);
	}
	/* A thread that exits at seq 2 and then keeps calling malloc. */
	{
		gen_t g;
		g_open(&g, "after-exit", 0);
		META(&g, ar_meta_thread_start(&g.m, 0, 1000, 1, 0));
		META(&g, ar_meta_thread_exit(&g.m, 0, 2, 2000));
		g_meta_flush(&g);
		const ar_event_t e[] = {mal(1, 16, A(1)), mal(5, 16, A(2)), fre(6, A(1)), fre(7, A(2))};
		write_thread(&g, 0, e, 4);
		g_close(&g, 1);
	}
	/* Terminal escape sequences in the header's strings (a window title
	 * and a screen clear): every tool must show them escaped. */
	{
		gen_t g;
		cmdline_override = "evil \x1b]0;owned\x07\x1b[2J\r\n";
		g_open(&g, "escape-strings", 0);
		const ar_event_t e[] = {mal(1, 16, A(1)), fre(2, A(1))};
		write_thread(&g, 0, e, 2);
		g_close(&g, 1);
	}
	/* SPEC 7.4, format 1.1: a PROCESS record whose peak RSS is below its
	 * start, and one whose recorder memory exceeds the peak, with an
	 * allocator no registry knows. Replay must use none of these figures
	 * and say why. */
	{
		gen_t g;
		g_open(&g, "process-peak-below-start", 0);
		const ar_process_info_t pb = {.start_rss_bytes = 100u << 20, .peak_rss_bytes = 1u << 20,
					      .end_time_ns = 1000, .has_cpu = 1, .cpu_user_ns = 5000};
		META(&g, ar_meta_process(&g.m, &pb));
		g_meta_flush(&g);
		const ar_event_t e[] = {mal(1, 16, A(1)), fre(2, A(1))};
		write_thread(&g, 0, e, 2);
		g_close(&g, 1);
		g_open(&g, "process-recorder-over-peak", 0);
		META(&g, ar_meta_allocator(&g.m, "/nonexistent/libnosuch.so.1", "libnosuch.so.1", "9"));
		const ar_process_info_t pr = {.start_rss_bytes = 1u << 20, .peak_rss_bytes = 10u << 20,
					      .end_time_ns = 1000, .has_cpu = 1, .cpu_user_ns = 5000,
					      .recorder_rss_bytes = 20u << 20};
		META(&g, ar_meta_process(&g.m, &pr));
		g_meta_flush(&g);
		write_thread(&g, 0, e, 2);
		g_close(&g, 1);
	}
	/* Nothing at all: closed cleanly, and header only (never closed). */
	{
		gen_t g;
		g_open(&g, "empty", 0);
		g_close(&g, 1);
		g_open(&g, "header-only", 0);
		g_close(&g, 0);
	}
	/* live_blocks mallocs, none freed: memory of every tool follows the
	 * live set, which here is the whole trace. */
	{
		gen_t g;
		g_open(&g, "live-millions", 0);
		tbuf_t t;
		t_begin(&t, &g, 0);
		for (uint64_t i = 0; i < live_blocks; i++) {
			ar_event_t e = mal(1 + i, 32, 0x100000000ull + i * 48);
			e.time_ns = i * 16;
			t_add(&t, &e);
		}
		t_flush(&t);
		g_close(&g, 1);
	}
}

static uint64_t parse_u64(const char *s, const char *what)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *end || v == 0)
		die(what, "needs a positive number");
	return v;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--live") && i + 1 < argc)
			live_blocks = parse_u64(argv[++i], "--live");
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			many_threads = (uint32_t)parse_u64(argv[++i], "--threads");
		else if (argv[i][0] != '-' && !outdir)
			outdir = argv[i];
		else {
			fprintf(stderr, "usage: gen_hostile DIR [--live N] [--threads N]\n");
			return 1;
		}
	}
	if (!outdir) {
		fprintf(stderr, "usage: gen_hostile DIR [--live N] [--threads N]\n");
		return 1;
	}
	absurd_sizes();
	unknown_pointers();
	sequences();
	threads_and_stacks();
	time_and_lifecycle();
	return 0;
}
