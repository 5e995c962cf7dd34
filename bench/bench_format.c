/*
 * bench_format.c — encode and decode rates of the trace format on a
 * synthetic malloc-heavy stream (traces/gen/synth.c).
 *
 *   bench_format [EVENTS] [THREADS] [LEVEL] [KEEP]  (default 10000000 1 1)
 *   KEEP: write the trace there and keep it, instead of a removed temp file
 *
 * Events are generated in chunks outside the timed window; the encode time
 * covers ar_evbuf_append, zstd compression and write(2) to a file in
 * $TMPDIR; decode covers ar_reader_open plus iterating every event, in file
 * order and in merged (sequence) order. One core: all on the calling thread.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ar_trace.h"
#include "synth.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
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
	ar_synth_t s;
	ar_synth_init(&s, nthreads, 42);
	ar_event_t *evs = malloc(chunk * sizeof *evs);
	ar_evbuf_t *bufs = calloc(nthreads, sizeof *bufs);
	uint8_t *mem = malloc((size_t)nthreads * AR_EVBUF_MAX_BYTES);
	for (uint32_t t = 0; t < nthreads; t++)
		ar_evbuf_reset(&bufs[t], mem + (size_t)t * AR_EVBUF_MAX_BYTES, AR_EVBUF_MAX_BYTES, t, 100 + t);

	double enc = 0;
	for (size_t done = 0; done < total;) {
		size_t n = total - done < chunk ? total - done : chunk;
		for (size_t i = 0; i < n; i++)
			ar_synth_next(&s, (uint32_t)(ar_synth_rand(&s) % nthreads), &evs[i]);
		double t0 = now();
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
		enc += now() - t0;
		done += n;
	}
	double t0 = now();
	for (uint32_t t = 0; t < nthreads; t++)
		ar_writer_write_events(w, &bufs[t], &err);
	uint64_t bytes = ar_writer_bytes(w);
	ar_writer_close(w, s.time_ns, 1, &err);
	enc += now() - t0;
	close(fd);

	double dec[2];
	for (int merged = 0; merged < 2; merged++) {
		t0 = now();
		ar_reader_t *r;
		if (ar_reader_open(&r, path, &err) != 0) {
			fprintf(stderr, "bench_format: %s\n", err.msg);
			return 2;
		}
		ar_event_t e;
		size_t n = 0;
		int rc;
		while ((rc = merged ? ar_reader_next_merged(r, &e) : ar_reader_next(r, &e)) == 1)
			n++;
		dec[merged] = now() - t0;
		if (rc != 0 || n != total || ar_reader_status(r) != AR_STATUS_COMPLETE) {
			fprintf(stderr, "bench_format: read back %zu of %zu events: %s\n", n, total,
				ar_reader_error(r)->msg);
			return 2;
		}
		ar_reader_close(r);
	}
	if (argc <= 4)
		unlink(path);
	printf("format: %zu events, %u thread(s), zstd level %d\n", total, nthreads, level);
	printf("  encode+compress+write   %8.1f M events/s\n", (double)total / enc / 1e6);
	printf("  decode (file order)     %8.1f M events/s\n", (double)total / dec[0] / 1e6);
	printf("  decode (merged order)   %8.1f M events/s\n", (double)total / dec[1] / 1e6);
	printf("  size                    %8.2f bytes/event (%llu bytes)\n", (double)bytes / (double)total,
	       (unsigned long long)bytes);
	free(evs);
	free(bufs);
	free(mem);
	ar_synth_free(&s);
	return 0;
}
