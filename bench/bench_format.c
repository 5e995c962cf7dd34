/*
 * bench_format.c — encode and decode rates of the trace format on a
 * synthetic malloc-heavy stream (traces/gen/synth.c).
 *
 *   bench_format [EVENTS] [THREADS] [LEVEL] [KEEP]  (default 10000000 1 1)
 *   KEEP: write the trace there and keep it, instead of a removed temp file
 *   bench_format --phases [EVENTS]  where the time of one thread's blocks goes
 *   bench_format --rewrite IN OUT [MAJOR] [LEVEL]  the events of trace IN
 *       (a real recording) written again into OUT as format MAJOR (2: chained
 *       blocks, SPEC 3.4; 1: every block alone), zstd LEVEL (default 2, 3),
 *       then read back: bytes per event and the rates on real events
 *   BENCH_FORMAT_CHAIN=0|1|2 in the environment: ar_writer_set_chaining's
 *       AR_CHAIN_OFF, _WHEN_IT_PAYS (the default), _ALWAYS
 *
 * Events are generated in chunks outside the timed window; the encode time
 * covers ar_evbuf_append, zstd compression and write(2) to a file in
 * $TMPDIR; decode covers ar_reader_open plus iterating every event, in file
 * order and in merged (sequence) order. One core: all on the calling thread.
 *
 * Each rate is given twice: by wall time, and by the process's CPU time
 * (user + system, so write(2), read(2) and page faults count), which a busy
 * shared machine inflates far less than it inflates wall time.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "format.h" /* --phases times the codec's internals one by one */
#include "synth.h"

typedef struct {
	double wall, cpu;
} stamp_t;

static double clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static stamp_t now(void) { return (stamp_t){clock_s(CLOCK_MONOTONIC), clock_s(CLOCK_PROCESS_CPUTIME_ID)}; }

/* Add the time since t0 to *acc. */
static void since(stamp_t *acc, stamp_t t0)
{
	stamp_t t = now();
	acc->wall += t.wall - t0.wall;
	acc->cpu += t.cpu - t0.cpu;
}

static void rate(const char *what, size_t n, stamp_t t)
{
	printf("  %-23s %8.1f M events/s  (%.1f by CPU time)\n", what, (double)n / t.wall / 1e6,
	       (double)n / t.cpu / 1e6);
}

static void *std_alloc(void *opaque, size_t n)
{
	(void)opaque;
	return malloc(n);
}

static void std_free(void *opaque, void *p)
{
	(void)opaque;
	free(p);
}

static double thread_cpu(void) { return clock_s(CLOCK_THREAD_CPUTIME_ID); }

/* BENCH_FORMAT_CHAIN, when set, for ar_writer_set_chaining. */
static void set_chaining(ar_writer_t *w)
{
	const char *v = getenv("BENCH_FORMAT_CHAIN");
	if (v && *v)
		ar_writer_set_chaining(w, atoi(v));
}

/* --phases: the same stream on one thread, block by block, each step timed
 * alone by CPU time: ar_evbuf_append, ar_enc_events, zstd level 1 (the
 * writer's parameters), then zstd decompression and ar_evdec_next over the
 * block. No file, no reader: what each part of the codec costs. */
static int phases(size_t total)
{
	ar_synth_t s;
	ar_synth_init(&s, 1, 42);
	ar_mem_t mem = {std_alloc, std_free, NULL};
	ar_enc_t enc;
	size_t bound = ar_enc_bound(AR_EVBUF_MAX_EVENTS), cbound = ZSTD_compressBound(bound);
	uint8_t *slots = malloc(AR_EVBUF_MAX_BYTES), *raw = malloc(bound), *comp = malloc(cbound),
		*back = malloc(bound);
	ar_event_t *evs = malloc(AR_EVBUF_MAX_EVENTS * sizeof *evs);
	uint64_t *hist = malloc(2 * AR_EVBUF_MAX_EVENTS * sizeof *hist);
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	if (!slots || !raw || !comp || !back || !evs || !hist || !cc || !dc || ar_enc_init(&enc, &mem)) {
		fprintf(stderr, "bench_format: out of memory\n");
		return 2;
	}
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 1);
	ar_header_t h;
	ar_header_init(&h);
	h.time_unit_ns = AR_TIME_UNIT_NS;
	double t[5] = {0};
	uint64_t raw_bytes = 0, comp_bytes = 0;
	for (size_t done = 0; done < total;) {
		size_t n = 0;
		while (n < AR_EVBUF_MAX_EVENTS - 1 && done + n < total)
			ar_synth_next(&s, 0, &evs[n++]);
		ar_evbuf_t b;
		ar_evbuf_reset(&b, slots, AR_EVBUF_MAX_BYTES, 0, 100);
		double t0 = thread_cpu();
		for (size_t i = 0; i < n; i++)
			ar_evbuf_append(&b, &evs[i]);
		double t1 = thread_cpu();
		size_t len = ar_enc_events(&enc, &b, raw);
		double t2 = thread_cpu();
		size_t c = ZSTD_compress2(cc, comp, cbound, raw, len);
		double t3 = thread_cpu();
		size_t got = ZSTD_isError(c) ? c : ZSTD_decompressDCtx(dc, back, bound, comp, c);
		double t4 = thread_cpu();
		const uint8_t *p = back, *end = back + len;
		uint64_t type, rec_len;
		ar_evdec_t d;
		char why[200] = "";
		size_t k = 0;
		ar_event_t e;
		if (got == len && !ar_get_varint(&p, end, &type) && !ar_get_varint(&p, end, &rec_len) &&
		    !ar_evdec_open(&d, p, end, &h, why, sizeof why)) {
			d.ins = hist;
			d.outs = hist + d.count;
			while (ar_evdec_next(&d, &e, why, sizeof why) == 1)
				k++;
		}
		double t5 = thread_cpu();
		if (k != n) {
			fprintf(stderr, "bench_format: block decoded to %zu of %zu events: %s\n", k, n, why);
			return 2;
		}
		t[0] += t1 - t0, t[1] += t2 - t1, t[2] += t3 - t2, t[3] += t4 - t3, t[4] += t5 - t4;
		raw_bytes += len, comp_bytes += c;
		done += n;
	}
	double ns = 1e9 / (double)total;
	printf("format phases: %zu events, 1 thread, zstd level 1; ns per event, thread CPU time\n", total);
	printf("  append %.1f, encode %.1f, zstd compress %.1f | zstd decompress %.1f, decode %.1f\n", t[0] * ns,
	       t[1] * ns, t[2] * ns, t[3] * ns, t[4] * ns);
	printf("  raw %.2f bytes/event, compressed %.2f\n", (double)raw_bytes / (double)total,
	       (double)comp_bytes / (double)total);
	ZSTD_freeCCtx(cc);
	ZSTD_freeDCtx(dc);
	ar_enc_free(&enc, &mem);
	free(slots), free(raw), free(comp), free(back), free(evs), free(hist);
	ar_synth_free(&s);
	return 0;
}

/* Read OUT back in file and merged order: 0, or 2 when it does not give
 * `total` events. */
static int read_back(const char *path, size_t total, stamp_t dec[2])
{
	for (int merged = 0; merged < 2; merged++) {
		stamp_t t0 = now();
		ar_reader_t *r;
		ar_error_t err;
		if (ar_reader_open(&r, path, &err) != 0) {
			fprintf(stderr, "bench_format: %s\n", err.msg);
			return 2;
		}
		ar_event_t e;
		size_t n = 0;
		int rc;
		while ((rc = merged ? ar_reader_next_merged(r, &e) : ar_reader_next(r, &e)) == 1)
			n++;
		since(&dec[merged], t0);
		if (rc != 0 || n != total || ar_reader_status(r) != AR_STATUS_COMPLETE) {
			fprintf(stderr, "bench_format: read back %zu of %zu events: %s\n", n, total,
				ar_reader_error(r)->msg);
			return 2;
		}
		ar_reader_close(r);
	}
	return 0;
}

/* --rewrite: the events of a real trace, in file order, through one evbuf
 * per thread (so blocks are full, 16384 events or AR_EVBUF_MAX_BYTES; no
 * metadata blocks but the footer), written as format `major`: the same events and blocks for both formats,
 * so only the block coding differs. Events are read into memory first and
 * only appending, encoding, compressing and writing are timed. */
static int rewrite(const char *in, const char *out, int major, int level)
{
	ar_reader_t *r;
	ar_error_t err;
	if (ar_reader_open(&r, in, &err) != 0) {
		fprintf(stderr, "bench_format: %s\n", err.msg);
		return 2;
	}
	size_t total = (size_t)ar_reader_event_count(r), n = 0;
	ar_event_t *evs = malloc((total ? total : 1) * sizeof *evs);
	uint32_t nthreads = 0;
	while (evs && n < total && ar_reader_next(r, &evs[n]) == 1)
		if (evs[n++].thread >= nthreads)
			nthreads = evs[n - 1].thread + 1;
	ar_header_t h = *ar_reader_header(r);
	uint64_t *tids = calloc(nthreads ? nthreads : 1, sizeof *tids);
	for (uint32_t t = 0; tids && t < nthreads; t++) /* blocks carry the OS tid */
		tids[t] = ar_reader_thread(r, t) ? ar_reader_thread(r, t)->os_tid : 0;
	ar_reader_close(r);
	if (!evs || !tids || n != total || nthreads > 4096) {
		fprintf(stderr, "bench_format: %s: cannot read its %zu events (or more than 4096 threads)\n", in, total);
		return 2;
	}
	h.version_major = (uint16_t)major;
	h.version_minor = major >= 2 ? 0 : 3;
	int fd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ar_writer_t *w;
	if (fd < 0 || ar_writer_open(&w, fd, &h, level, NULL, &err) != 0) {
		fprintf(stderr, "bench_format: %s: cannot write\n", out);
		return 2;
	}
	set_chaining(w);
	ar_evbuf_t *bufs = calloc(nthreads, sizeof *bufs);
	uint8_t *mem = malloc((size_t)nthreads * AR_EVBUF_MAX_BYTES);
	for (uint32_t t = 0; bufs && mem && t < nthreads; t++)
		ar_evbuf_reset(&bufs[t], mem + (size_t)t * AR_EVBUF_MAX_BYTES, AR_EVBUF_MAX_BYTES, t, tids[t]);
	stamp_t enc = {0, 0}, t0 = now();
	int rc = bufs && mem ? 0 : AR_ENOMEM;
	for (size_t i = 0; rc == 0 && i < total; i++) {
		ar_evbuf_t *b = &bufs[evs[i].thread];
		if ((rc = ar_evbuf_append(b, &evs[i])) == AR_EFULL) {
			rc = ar_writer_write_events(w, b, &err);
			ar_evbuf_reset(b, b->data, AR_EVBUF_MAX_BYTES, b->thread, b->os_tid);
			if (rc == 0)
				rc = ar_evbuf_append(b, &evs[i]);
		}
	}
	for (uint32_t t = 0; rc == 0 && t < nthreads; t++)
		rc = ar_writer_write_events(w, &bufs[t], &err);
	uint64_t bytes = ar_writer_bytes(w);
	if (rc == 0)
		rc = ar_writer_close(w, evs[total ? total - 1 : 0].time_ns, 1, &err);
	since(&enc, t0);
	close(fd);
	if (rc != 0) {
		fprintf(stderr, "bench_format: %s: %s\n", out, ar_strerror(rc));
		return 2;
	}
	stamp_t dec[2] = {{0, 0}, {0, 0}};
	if (read_back(out, total, dec))
		return 2;
	printf("rewrite %s: %zu events, %u thread(s), format %d, zstd level %d\n", in, total, nthreads, major, level);
	rate("encode+compress+write", total, enc);
	rate("decode (file order)", total, dec[0]);
	rate("decode (merged order)", total, dec[1]);
	printf("  size                    %8.3f bytes/event (%llu bytes)\n", (double)bytes / (double)total,
	       (unsigned long long)bytes);
	free(evs);
	free(tids);
	free(bufs);
	free(mem);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--phases") == 0)
		return phases(argc > 2 ? strtoull(argv[2], NULL, 10) : 10000000);
	if (argc > 3 && strcmp(argv[1], "--rewrite") == 0)
		return rewrite(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 2, argc > 5 ? atoi(argv[5]) : 3);
	size_t total = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
	uint32_t nthreads = argc > 2 ? (uint32_t)atoi(argv[2]) : 1;
	int level = argc > 3 ? atoi(argv[3]) : 1;
	const size_t chunk = 1 << 20;
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[512];
	snprintf(path, sizeof path, "%s/allocrr-bench-format-XXXXXX", tmp);
	int fd = argc > 4 ? open(argv[4], O_RDWR | O_CREAT | O_TRUNC, 0644) : mkstemp(path);
	if (argc > 4)
		snprintf(path, sizeof path, "%s", argv[4]);
	if (fd < 0 || nthreads == 0) {
		perror(path);
		return 2;
	}

	ar_header_t h;
	ar_header_init(&h);
	h.flags = AR_HDR_SYNTHETIC;
	snprintf(h.cmdline, sizeof h.cmdline, "bench_format %zu %u %d", total, nthreads, level);
	ar_writer_t *w;
	ar_error_t err;
	if (ar_writer_open(&w, fd, &h, level, NULL, &err) != 0) {
		fprintf(stderr, "bench_format: %s\n", err.msg);
		return 2;
	}
	set_chaining(w);
	ar_synth_t s;
	ar_synth_init(&s, nthreads, 42);
	ar_event_t *evs = malloc(chunk * sizeof *evs);
	ar_evbuf_t *bufs = calloc(nthreads, sizeof *bufs);
	uint8_t *mem = malloc((size_t)nthreads * AR_EVBUF_MAX_BYTES);
	for (uint32_t t = 0; t < nthreads; t++)
		ar_evbuf_reset(&bufs[t], mem + (size_t)t * AR_EVBUF_MAX_BYTES, AR_EVBUF_MAX_BYTES, t, 100 + t);

	stamp_t enc = {0, 0};
	for (size_t done = 0; done < total;) {
		size_t n = total - done < chunk ? total - done : chunk;
		for (size_t i = 0; i < n; i++)
			ar_synth_next(&s, (uint32_t)(ar_synth_rand(&s) % nthreads), &evs[i]);
		stamp_t t0 = now();
		for (size_t i = 0; i < n; i++) {
			ar_evbuf_t *b = &bufs[evs[i].thread];
			if (ar_evbuf_append(b, &evs[i]) == AR_EFULL) {
				if (ar_writer_write_events(w, b, &err) != 0) {
					fprintf(stderr, "bench_format: %s\n", err.msg);
					return 2;
				}
				ar_evbuf_reset(b, b->data, AR_EVBUF_MAX_BYTES, b->thread, b->os_tid);
				ar_evbuf_append(b, &evs[i]);
			}
		}
		since(&enc, t0);
		done += n;
	}
	stamp_t t0 = now();
	for (uint32_t t = 0; t < nthreads; t++)
		ar_writer_write_events(w, &bufs[t], &err);
	uint64_t bytes = ar_writer_bytes(w);
	ar_writer_close(w, s.time_ns, 1, &err);
	since(&enc, t0);
	close(fd);

	stamp_t dec[2] = {{0, 0}, {0, 0}};
	if (read_back(path, total, dec) != 0)
		return 2;
	if (argc <= 4)
		unlink(path);
	printf("format: %zu events, %u thread(s), zstd level %d\n", total, nthreads, level);
	rate("encode+compress+write", total, enc);
	rate("decode (file order)", total, dec[0]);
	rate("decode (merged order)", total, dec[1]);
	printf("  size                    %8.2f bytes/event (%llu bytes)\n", (double)bytes / (double)total,
	       (unsigned long long)bytes);
	free(evs);
	free(bufs);
	free(mem);
	ar_synth_free(&s);
	return 0;
}
