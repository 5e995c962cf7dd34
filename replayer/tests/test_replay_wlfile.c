/*
 * test_replay_wlfile.c — the workload file (wl_file.c, workload.h, layout
 * of version 8) as compiled from two traces whose streams span several
 * segments: one with cross-thread frees (dependencies), one window trace
 * whose preludes span segments too (written last, listed first).
 *   - the layout: header | segments | index | thread table, segments
 *     packed in the data, inside it, each within seg_ops and max_seg_bytes;
 *     the content digest (ar_wl_digest) is the header's;
 *   - the two ways to read a stream agree: ar_wl_load's ops are the
 *     concatenation of the cursor's segments, for every stream;
 *   - a damaged copy: a header offset or size out of range, an index entry
 *     pointing past the data, segments whose nops do not add up, a thread
 *     table that disagrees — ar_wl_open refuses it (EINVAL, a message that
 *     names the file and, for an index entry, the segment); damage inside a
 *     segment that breaks its encoding — ar_wl_open passes, ar_wl_load and
 *     the cursor fail with a message naming the segment and its offset;
 *     any bit flipped inside the segments either fails that way or decodes,
 *     the cursor agrees with ar_wl_load, and the digest no longer matches.
 * `test_replay_wlfile FILE` only writes the window trace to FILE, for
 * tests/e2e/replay_stream.sh (a prelude that spans segments, streamed).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testing.h"
#include "wl_test.h"

static char dir[] = "/tmp/allocrr-test-wlfile-XXXXXX";
static ar_event_t *evs;
static size_t nev, evcap;

static ar_event_t *ev(uint32_t thread, uint64_t seq, unsigned op, uint64_t ptr, uint64_t size, uint64_t result)
{
	if (nev == evcap) {
		evcap = evcap ? evcap * 2 : 4096;
		evs = realloc(evs, evcap * sizeof *evs);
		if (!evs) {
			perror("realloc");
			exit(1);
		}
	}
	ar_event_t *e = &evs[nev++];
	wlt_event(e, thread, seq, op, ptr, size, result);
	return e;
}

static void path_of(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/%s", dir, name);
}

/* Thread 0 keeps a window of 256 blocks (free the oldest, allocate into
 * its address); every 4th oldest block is freed by thread 1 instead, and
 * thread 2 allocates now and then: streams of several segments, with
 * dependencies. */
static void make_xthread(const char *trace)
{
	uint64_t seq = 1;
	for (uint64_t i = 0; i < 30000; i++) {
		uint64_t addr = 0x100000 + (i % 256) * 0x1000;
		if (i >= 256)
			ev(i % 4 == 0 ? 1 : 0, seq++, AR_OP_FREE, addr, 0, 0);
		ev(0, seq++, AR_OP_MALLOC, 0, 16 + i % 200, addr);
		if (i % 50 == 0) {
			ev(2, seq++, AR_OP_MALLOC, 0, 4096, 0x900000);
			ev(2, seq++, AR_OP_FREE, 0x900000, 0, 0);
		}
	}
	wlt_write_trace(trace, evs, nev, 0);
	nev = 0;
}

/* A window trace (SPEC 6.11): thread 0 frees 20000 blocks it never saw
 * allocated (each a MALLOC of its old_size in its prelude: two segments)
 * amid blocks of its own; thread 1 allocates and frees its own. The i-th
 * block freed has address rank (i * PRE_STRIDE) % PRE_BLOCKS, so the
 * release order is not the address order. */
#define PRE_BLOCKS 20000u
#define PRE_STRIDE 7919u /* prime to PRE_BLOCKS: a permutation */
static void make_window(const char *trace)
{
	uint64_t seq = 1;
	for (uint64_t i = 0; i < PRE_BLOCKS; i++) {
		uint64_t rank = i * PRE_STRIDE % PRE_BLOCKS;
		ev(0, seq++, AR_OP_FREE, 0x10000000 + rank * 0x100, 0, 0)->old_size = 32 + i % 64;
		if (i % 2 == 0) {
			ev(0, seq++, AR_OP_MALLOC, 0, 48, 0x900000);
			ev(0, seq++, AR_OP_FREE, 0x900000, 0, 0)->old_size = 48;
		}
		if (i % 8 == 0) {
			ev(1, seq++, AR_OP_MALLOC, 0, 100, 0xa00000);
			ev(1, seq++, AR_OP_FREE, 0xa00000, 0, 0)->old_size = 100;
		}
	}
	wlt_write_trace(trace, evs, nev, AR_HDR_WINDOW);
	nev = 0;
}

static int cmp_seg(const void *a, const void *b)
{
	const ar_wl_seg_t *x = a, *y = b;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The layout of version 8 (workload.h), the digest, and the index. */
static void check_layout(const ar_workload_t *w)
{
	const ar_wl_header_t *h = w->hdr;
	EXPECT(h->index_offset >= sizeof *h && h->index_offset % 8 == 0);
	EXPECT_U64(h->threads_offset, h->index_offset + h->nsegs * sizeof(ar_wl_seg_t));
	EXPECT_U64(h->file_bytes, h->threads_offset + h->nthreads * sizeof(ar_wl_thread_t));
	uint8_t d[32];
	EXPECT(ar_wl_digest(w, d) == 0 && memcmp(d, h->content_sha256, 32) == 0);
	/* the segments fill the data from the header to the index, in no
	 * particular order, without gap or overlap (but the index's padding) */
	ar_wl_seg_t *s = malloc(h->nsegs * sizeof *s);
	memcpy(s, w->segs, h->nsegs * sizeof *s);
	qsort(s, h->nsegs, sizeof *s, cmp_seg);
	uint64_t at = sizeof *h, ops = 0, maxb = 0;
	for (uint64_t k = 0; k < h->nsegs; k++) {
		EXPECT_U64(s[k].offset, at);
		EXPECT(s[k].nops >= 1 && s[k].nops <= h->seg_ops && s[k].bytes <= h->max_seg_bytes);
		at = s[k].offset + s[k].bytes;
		ops += s[k].nops;
		maxb = s[k].bytes > maxb ? s[k].bytes : maxb;
	}
	EXPECT(h->index_offset >= at && h->index_offset - at < 8);
	EXPECT_U64(maxb, h->max_seg_bytes);
	EXPECT_U64(ops, h->total_ops);
	free(s);
	/* the streams' segments in order, all but the last of each full */
	for (uint32_t i = 0; i < h->nthreads; i++) {
		const ar_wl_thread_t *t = &w->threads[i];
		if (i + 1 < h->nthreads)
			EXPECT_U64(w->threads[i + 1].seg_first, t->seg_first + t->nsegs);
		for (uint64_t k = t->seg_first; k + 1 < t->seg_first + t->nsegs; k++)
			if (t->prelude_ops == 0)
				EXPECT_U64(w->segs[k].nops, h->seg_ops);
	}
}

/* Every stream read with a cursor (readahead as given) is the
 * concatenation of ar_wl_load's ops; returns the segments read. */
static uint64_t check_cursor_equals_load(const ar_workload_t *w, int readahead)
{
	const ar_wl_header_t *h = w->hdr;
	ar_wl_op_t *ops = malloc((size_t)h->seg_ops * sizeof *ops);
	void *raw = malloc(h->max_seg_bytes);
	char err[512];
	uint64_t segs = 0;
	for (uint32_t i = 0; i < h->nthreads; i++) {
		ar_wl_cursor_t c = { .w = w, .thread = i, .ops = ops, .raw = raw };
		uint64_t at = 0;
		int r;
		while ((r = ar_wl_cursor_next(&c, readahead, err, sizeof err)) == 1) {
			EXPECT_U64(c.first, at);
			EXPECT(c.n >= 1 && c.n <= h->seg_ops && at + c.n <= w->threads[i].nops);
			if (at + c.n > w->threads[i].nops)
				break;
			EXPECT(memcmp(ops, ar_wl_ops(w, i) + at, c.n * sizeof *ops) == 0);
			at += c.n;
			segs++;
		}
		EXPECT_U64(r, 0);
		EXPECT_U64(at, w->threads[i].nops);
		EXPECT_U64(c.seg, w->threads[i].nsegs);
		EXPECT(ar_wl_cursor_next(&c, readahead, err, sizeof err) == 0); /* and stays at the end */
	}
	free(ops);
	free(raw);
	return segs;
}

static void test_xthread(void)
{
	char trace[160], out[160];
	path_of(trace, sizeof trace, "x.zst");
	path_of(out, sizeof out, "x.wl");
	make_xthread(trace);
	ar_workload_t w;
	if (wlt_compile_load(trace, out, "x", NULL, &w) != 0)
		return;
	const ar_wl_header_t *h = w.hdr;
	EXPECT_U64(h->nthreads, 3);
	EXPECT(h->nsegs >= 5); /* thread 0: ~52000 ops, 4 segments */
	EXPECT(h->cross_thread_deps > 1000);
	uint32_t s0 = wlt_stream(&w, 0);
	EXPECT(w.threads[s0].nsegs >= 3);
	check_layout(&w);
	EXPECT_U64(check_cursor_equals_load(&w, 0), h->nsegs);
	EXPECT_U64(check_cursor_equals_load(&w, 1), h->nsegs);
	/* the decoded bytes are what ar_wl_decoded_bytes says, 24 per op */
	EXPECT_U64(ar_wl_decoded_bytes(&w), h->total_ops * sizeof(ar_wl_op_t));
	fprintf(stderr, "xthread: %llu ops in %llu segments, %llu bytes of segments (%.2f per op)\n",
		(unsigned long long)h->total_ops, (unsigned long long)h->nsegs,
		(unsigned long long)(h->index_offset - sizeof *h),
		(double)(h->index_offset - sizeof *h) / (double)h->total_ops);
	wlt_close(&w);
}

static void test_window(void)
{
	char trace[160], out[160];
	path_of(trace, sizeof trace, "win.zst");
	path_of(out, sizeof out, "win.wl");
	make_window(trace);
	ar_workload_t w;
	if (wlt_compile_load(trace, out, "w", NULL, &w) != 0)
		return;
	const ar_wl_header_t *h = w.hdr;
	EXPECT_U64(h->window, 1);
	EXPECT_U64(h->preexisting_blocks, 20000);
	uint32_t s0 = wlt_stream(&w, 0);
	const ar_wl_thread_t *t = &w.threads[s0];
	EXPECT_U64(t->prelude_ops, 20000);
	EXPECT(t->nsegs >= 4); /* two of prelude, two or more of the rest */
	check_layout(&w);
	EXPECT_U64(check_cursor_equals_load(&w, 1), h->nsegs);
	/* the prelude comes first: MALLOCs of the old sizes in the order of the
	 * blocks' recorded addresses (prelude op `rank` is the block of that
	 * address rank, the window's free number i), each into the slot its
	 * free names */
	const ar_wl_op_t *o = ar_wl_ops(&w, s0);
	uint8_t *pre = calloc(h->nslots, 1);
	uint64_t *freed_as = calloc(PRE_BLOCKS, sizeof *freed_as), j = 0, bad = 0;
	for (uint64_t i = 0; i < PRE_BLOCKS; i++)
		freed_as[i * PRE_STRIDE % PRE_BLOCKS] = i;
	for (uint64_t k = 0; k < t->prelude_ops; k++) {
		bad += o[k].kind != AR_WL_MALLOC || o[k].size != 32 + freed_as[k] % 64 || o[k].slot >= h->nslots ||
		       o[k].arg != 0;
		if (o[k].slot < h->nslots)
			pre[o[k].slot] = 1;
	}
	for (uint64_t k = t->prelude_ops; k < t->nops; k++) {
		if (o[k].kind == AR_WL_MALLOC && o[k].slot < h->nslots)
			bad += pre[o[k].slot]; /* its slot is its own until its free */
		if (o[k].kind != AR_WL_FREE || o[k].slot >= h->nslots || !pre[o[k].slot])
			continue;
		bad += j >= t->prelude_ops || o[k].slot != o[j * PRE_STRIDE % PRE_BLOCKS].slot;
		pre[o[k].slot] = 0; /* free for reuse from here on */
		j++;
	}
	free(freed_as);
	free(pre);
	EXPECT_U64(bad, 0);
	EXPECT_U64(j, t->prelude_ops);
	wlt_close(&w);
}

/* ---- damaged copies ------------------------------------------------------ */

static uint8_t *good;     /* the x.wl workload's bytes */
static size_t good_len;
static uint8_t *bad_buf;  /* a copy to damage */

static ar_wl_header_t *bad_hdr(void) { return (ar_wl_header_t *)bad_buf; }
static ar_wl_seg_t *bad_segs(void) { return (ar_wl_seg_t *)(bad_buf + ((ar_wl_header_t *)good)->index_offset); }
static ar_wl_thread_t *bad_threads(void)
{
	return (ar_wl_thread_t *)(bad_buf + ((ar_wl_header_t *)good)->threads_offset);
}

static void fresh_copy(void)
{
	memcpy(bad_buf, good, good_len);
}

/* Write len bytes of the damaged copy as bad.wl and open it: ar_wl_open
 * must refuse it with EINVAL and a message holding the file's name and
 * `want`. */
static void expect_refused(const char *what, size_t len, const char *want)
{
	char path[160], err[512] = "";
	path_of(path, sizeof path, "bad.wl");
	FILE *f = fopen(path, "w");
	EXPECT(f && fwrite(bad_buf, 1, len, f) == len);
	if (f)
		fclose(f);
	ar_workload_t w;
	errno = 0;
	int rc = ar_wl_open(&w, path, err, sizeof err);
	if (rc == 0) {
		fprintf(stderr, "%s: opened\n", what);
		ar_wl_close(&w);
	}
	EXPECT(rc == -1 && errno == EINVAL);
	if (!strstr(err, path) || !strstr(err, want))
		fprintf(stderr, "%s: message '%s' lacks '%s'\n", what, err, want);
	EXPECT(strstr(err, path) && strstr(err, want));
}

static void test_open_refuses(void)
{
	const ar_wl_header_t *g = (const ar_wl_header_t *)good;
	const char *sizes = "header sizes disagree with the file";
	uint64_t k = g->nsegs / 2;
	char want[160];

	fresh_copy();
	bad_hdr()->index_offset = g->file_bytes + 8;
	expect_refused("index past the end", good_len, sizes);
	fresh_copy();
	bad_hdr()->index_offset = 8;
	expect_refused("index inside the header", good_len, sizes);
	fresh_copy();
	bad_hdr()->index_offset += 4;
	expect_refused("index not aligned", good_len, sizes);
	fresh_copy();
	bad_hdr()->threads_offset += sizeof(ar_wl_seg_t);
	expect_refused("thread table moved", good_len, sizes);
	fresh_copy();
	bad_hdr()->threads_offset = UINT64_MAX - 8;
	expect_refused("thread table at 2^64", good_len, sizes);
	fresh_copy();
	bad_hdr()->nsegs = UINT64_MAX / sizeof(ar_wl_seg_t) + 2; /* its size wraps */
	expect_refused("nsegs huge", good_len, sizes);
	fresh_copy();
	bad_hdr()->nsegs += 1;
	expect_refused("nsegs one more", good_len, sizes);
	fresh_copy();
	bad_hdr()->file_bytes += 1;
	expect_refused("file_bytes", good_len, sizes);
	fresh_copy();
	expect_refused("the file cut by a byte", good_len - 1, sizes);
	expect_refused("the file cut inside the header", sizeof(ar_wl_header_t) - 1, "too short");
	fresh_copy();
	bad_hdr()->seg_ops = 0;
	expect_refused("seg_ops 0", good_len, sizes);
	fresh_copy();
	bad_hdr()->seg_ops = AR_WL_SEG_OPS + 1;
	expect_refused("seg_ops too big", good_len, sizes);
	fresh_copy();
	bad_hdr()->max_seg_bytes = 0;
	expect_refused("max_seg_bytes 0", good_len, sizes);
	fresh_copy();
	bad_hdr()->nthreads = 0;
	expect_refused("no threads", good_len, sizes);
	fresh_copy();
	bad_hdr()->version = AR_WL_VERSION - 1;
	expect_refused("version 7", good_len, "not a workload of this version");
	fresh_copy();
	bad_hdr()->magic ^= 1;
	expect_refused("magic", good_len, "not a workload of this version");

	/* index entries pointing out of the data, or out of bounds */
	snprintf(want, sizeof want, "segment %llu (index entry at offset %llu) lies outside the data",
		 (unsigned long long)k, (unsigned long long)(g->index_offset + k * sizeof(ar_wl_seg_t)));
	fresh_copy();
	bad_segs()[k].offset = g->index_offset;
	expect_refused("segment past the data", good_len, want);
	fresh_copy();
	bad_segs()[k].offset = g->index_offset - bad_segs()[k].bytes + 1;
	expect_refused("segment overlapping the index", good_len, want);
	fresh_copy();
	bad_segs()[k].offset = UINT64_MAX - 2;
	expect_refused("segment at 2^64", good_len, want);
	fresh_copy();
	bad_segs()[k].offset = 0;
	expect_refused("segment in the header", good_len, want);
	fresh_copy();
	bad_segs()[k].bytes = g->max_seg_bytes + 1;
	expect_refused("segment above max_seg_bytes", good_len, want);
	fresh_copy();
	bad_segs()[k].nops = 0;
	expect_refused("empty segment", good_len, want);
	fresh_copy();
	bad_segs()[k].nops = g->seg_ops + 1;
	expect_refused("segment above seg_ops", good_len, want);

	/* segments whose nops do not add up to their stream's */
	fresh_copy();
	bad_segs()[k].nops -= 1;
	expect_refused("a segment one op short", good_len, "segments do not add up to its ops");
	fresh_copy();
	bad_threads()[0].nops += 1;
	bad_hdr()->total_ops += 1;
	expect_refused("a stream one op long", good_len, "segments do not add up to its ops");
	fresh_copy();
	bad_hdr()->total_ops += 1;
	expect_refused("total_ops", good_len, "do not add up to the header's");

	/* the thread table */
	const char *outside = "a stream's segments lie outside the index";
	const char *counts = "a stream's op counts disagree with the streams before it";
	fresh_copy();
	bad_threads()[1].op_base += 1;
	expect_refused("op_base", good_len, counts);
	fresh_copy();
	bad_threads()[g->nthreads - 1].nsegs += 1;
	expect_refused("a stream's segments past the index", good_len, outside);
	fresh_copy();
	bad_threads()[0].seg_first = UINT64_MAX;
	expect_refused("seg_first at 2^64", good_len, outside);
	fresh_copy();
	bad_threads()[0].prelude_ops = bad_threads()[0].nops + 1;
	expect_refused("prelude longer than the stream", good_len, counts);

	char path[160], err[512];
	path_of(path, sizeof path, "missing.wl");
	ar_workload_t w;
	errno = 0;
	EXPECT(ar_wl_open(&w, path, err, sizeof err) == -1 && errno == ENOENT && strstr(err, path));
}

/* The damaged copy passes ar_wl_open; returns 0 when ar_wl_load and a
 * cursor over every stream both decode it (and agree), or -1 when both
 * fail with the same message, which names segment *k and its offset
 * (*k is then set to the segment they name). */
static int load_damaged(uint64_t *k)
{
	char path[160], err[512] = "", cerr[512] = "";
	path_of(path, sizeof path, "bad.wl");
	FILE *f = fopen(path, "w");
	EXPECT(f && fwrite(bad_buf, 1, good_len, f) == good_len);
	if (f)
		fclose(f);
	ar_workload_t w;
	if (ar_wl_open(&w, path, err, sizeof err) != 0) {
		fprintf(stderr, "damage in a segment: ar_wl_open refused it: %s\n", err);
		EXPECT(!"ar_wl_open passes damage inside a segment");
		return -2;
	}
	int lrc = wlt_load(&w, err, sizeof err);
	/* the cursor, stream by stream, until a segment fails */
	const ar_wl_header_t *h = w.hdr;
	ar_wl_op_t *ops = malloc((size_t)h->seg_ops * sizeof *ops);
	void *raw = malloc(h->max_seg_bytes);
	int crc = 0;
	uint64_t failed_seg = UINT64_MAX;
	for (uint32_t i = 0; i < h->nthreads && crc == 0; i++) {
		ar_wl_cursor_t c = { .w = &w, .thread = i, .ops = ops, .raw = raw };
		int r;
		while ((r = ar_wl_cursor_next(&c, 0, cerr, sizeof cerr)) == 1)
			if (lrc == 0)
				EXPECT(memcmp(ops, ar_wl_ops(&w, i) + c.first, c.n * sizeof *ops) == 0);
		if (r < 0) {
			crc = -1;
			failed_seg = w.threads[i].seg_first + c.seg - 1;
		}
	}
	EXPECT_U64(crc, lrc);
	if (lrc != 0) {
		EXPECT_STR(cerr, err);
		char want[160];
		snprintf(want, sizeof want, "segment %llu at offset %llu", (unsigned long long)failed_seg,
			 (unsigned long long)(failed_seg < h->nsegs ? w.segs[failed_seg].offset : 0));
		if (!strstr(err, want))
			fprintf(stderr, "message '%s' lacks '%s'\n", err, want);
		EXPECT(strstr(err, want) != NULL);
		*k = failed_seg;
	}
	free(ops);
	free(raw);
	uint8_t d[32];
	EXPECT(ar_wl_digest(&w, d) == 0);
	if (memcmp(d, h->content_sha256, 32) == 0)
		EXPECT(!"the digest sees the damage");
	wlt_close(&w);
	return lrc;
}

static void test_segment_damage(void)
{
	const ar_wl_header_t *g = (const ar_wl_header_t *)good;
	const ar_wl_seg_t *gs = (const ar_wl_seg_t *)(good + g->index_offset);
	const ar_wl_thread_t *gt = (const ar_wl_thread_t *)(good + g->threads_offset);
	uint32_t s = 0; /* a stream of several segments */
	for (uint32_t i = 0; i < g->nthreads; i++)
		if (gt[i].nsegs > gt[s].nsegs)
			s = i;
	EXPECT(gt[s].nsegs >= 2);
	/* k + 1: the stream's last segment, not full (so it can take an op) */
	uint64_t k = gt[s].seg_first + gt[s].nsegs - 2, got;
	EXPECT(gs[k + 1].nops < g->seg_ops);

	/* an op moved from one segment to the next: the sums hold, the bytes
	 * of segment k decode to more ops than it claims */
	fresh_copy();
	bad_segs()[k].nops -= 1;
	bad_segs()[k + 1].nops += 1;
	got = UINT64_MAX;
	EXPECT(load_damaged(&got) == -1);
	EXPECT_U64(got, k);
	/* an unknown kind in the first op of segment k + 1 */
	fresh_copy();
	bad_buf[gs[k + 1].offset] = 0x0f;
	got = UINT64_MAX;
	EXPECT(load_damaged(&got) == -1);
	EXPECT_U64(got, k + 1);
	/* segment k one byte short (cut), or one byte long (left over) */
	fresh_copy();
	bad_segs()[k].bytes -= 1;
	got = UINT64_MAX;
	EXPECT(load_damaged(&got) == -1);
	EXPECT_U64(got, k);
	fresh_copy();
	bad_segs()[k].bytes += 1;
	bad_hdr()->max_seg_bytes += 1; /* in case k is the largest */
	got = UINT64_MAX;
	EXPECT(load_damaged(&got) == -1);
	EXPECT_U64(got, k);

	/* a bit flipped anywhere in the segments (a stride through the data):
	 * refused naming the segment that holds it, or decoded; never both
	 * ways at once, and the digest always sees it */
	uint64_t data = g->index_offset - sizeof *g, tried = 0, refused = 0;
	for (uint64_t off = sizeof *g; off < g->index_offset; off += data / 97 + 1, tried++) {
		fresh_copy();
		bad_buf[off] ^= (uint8_t)(1u << (off % 8));
		uint64_t holder = UINT64_MAX;
		for (uint64_t j = 0; j < g->nsegs; j++)
			if (off >= gs[j].offset && off < gs[j].offset + gs[j].bytes)
				holder = j;
		got = UINT64_MAX;
		if (load_damaged(&got) == -1) {
			refused++;
			EXPECT_U64(got, holder);
		}
	}
	fprintf(stderr, "bits flipped in segments: %llu refused by decoding, %llu decoded (all seen by the digest)\n",
		(unsigned long long)refused, (unsigned long long)(tried - refused));
}

static void load_good(void)
{
	char path[160];
	path_of(path, sizeof path, "x.wl");
	FILE *f = fopen(path, "r");
	struct stat st;
	EXPECT(f && fstat(fileno(f), &st) == 0);
	if (!f)
		exit(TEST_END());
	good_len = (size_t)st.st_size;
	good = malloc(good_len);
	bad_buf = malloc(good_len);
	EXPECT(good && bad_buf && fread(good, 1, good_len, f) == good_len);
	fclose(f);
}

int main(int argc, char **argv)
{
	if (argc == 2) { /* the window trace alone, for tests/e2e/replay_stream.sh */
		make_window(argv[1]);
		free(evs);
		return TEST_END();
	}
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_xthread);
	RUN(test_window);
	if (test_failures == 0) {
		load_good();
		RUN(test_open_refuses);
		RUN(test_segment_damage);
	}
	free(good);
	free(bad_buf);
	free(evs);
	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return TEST_END();
}
