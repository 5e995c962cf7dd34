/*
 * bench_stamp_sim IN OUT [EVERY] — the fidelity check of the recorder's
 * clock sampling (recorder/rec_stamp.h): read a trace recorded with
 * ALLOCRR_TIME_EVERY=1 (every event read the clock) and write the same
 * events, in the same blocks per thread, with the times the recorder would
 * have given them with ALLOCRR_TIME_EVERY=EVERY (default 8): each thread's
 * events are taken in sequence order and the rule is applied with the
 * recorded time as the clock's reading. Both traces then go through the
 * replay compiler (bench_replay_compile) or allocreplay: what the schedule
 * and the pacing make of them is what sampling changes. Metadata (thread
 * names, samples, stacks) is not copied: the compiler does not read it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ar_trace.h"
#include "rec_stamp.h"

#define MAX_THREADS 4096

typedef struct sim_thread {
	ar_evbuf_t b;
	uint8_t *mem;
	rec_stamp_t stamp;
} sim_thread_t;

static int fail(const char *what, const ar_error_t *err)
{
	fprintf(stderr, "bench_stamp_sim: %s: %s\n", what, err->msg);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: bench_stamp_sim IN OUT [EVERY]\n");
		return 2;
	}
	unsigned every = argc > 3 ? (unsigned)atoi(argv[3]) : 8;
	if (every < 1 || every > 1024) {
		fprintf(stderr, "bench_stamp_sim: EVERY must be 1-1024\n");
		return 2;
	}
	ar_error_t err;
	ar_reader_t *r;
	if (ar_reader_open(&r, argv[1], &err) != 0)
		return fail(argv[1], &err);
	int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(argv[2]);
		return 2;
	}
	ar_header_t h = *ar_reader_header(r);
	ar_writer_t *w;
	if (ar_writer_open(&w, fd, &h, 3, NULL, &err) != 0)
		return fail(argv[2], &err);
	sim_thread_t *th = calloc(MAX_THREADS, sizeof *th);
	uint64_t events = 0, reused = 0, moved_ns = 0;
	ar_event_t e;
	int rc;
	while ((rc = ar_reader_next_merged(r, &e)) == 1) {
		if (e.thread >= MAX_THREADS) {
			fprintf(stderr, "bench_stamp_sim: more than %u threads\n", MAX_THREADS);
			return 2;
		}
		sim_thread_t *t = &th[e.thread];
		if (!t->mem) {
			t->mem = malloc(AR_EVBUF_MAX_BYTES);
			ar_evbuf_reset(&t->b, t->mem, AR_EVBUF_MAX_BYTES, e.thread, e.thread);
		}
		uint64_t ns;
		if (rec_stamp_reuse(&t->stamp, e.seq, &ns))
			reused++;
		else
			ns = rec_stamp_read(&t->stamp, e.seq, e.time_ns, every);
		moved_ns += e.time_ns - ns; /* a reused reading is never later */
		rec_stamp_done(&t->stamp, e.seq2 ? e.seq2 : e.seq);
		e.time_ns = ns;
		int a = ar_evbuf_append(&t->b, &e);
		if (a == AR_EFULL) {
			if (ar_writer_write_events(w, &t->b, &err) != 0)
				return fail(argv[2], &err);
			ar_evbuf_reset(&t->b, t->mem, AR_EVBUF_MAX_BYTES, e.thread, e.thread);
			a = ar_evbuf_append(&t->b, &e);
		}
		if (a != 0) {
			fprintf(stderr, "bench_stamp_sim: event seq %llu refused (%s)\n", (unsigned long long)e.seq,
				ar_strerror(a));
			return 2;
		}
		events++;
	}
	if (rc < 0)
		return fail(argv[1], ar_reader_error(r));
	for (unsigned i = 0; i < MAX_THREADS; i++)
		if (th[i].mem && ar_writer_write_events(w, &th[i].b, &err) != 0)
			return fail(argv[2], &err);
	const ar_footer_t *f = ar_reader_footer(r);
	if (ar_writer_close(w, f ? f->end_time_ns : 0, 1, &err) != 0)
		return fail(argv[2], &err);
	close(fd);
	printf("%llu events, %llu (%.1f%%) took an earlier event's reading, early by %.1f ns on average\n",
	       (unsigned long long)events, (unsigned long long)reused, events ? 100.0 * (double)reused / (double)events : 0.0,
	       reused ? (double)moved_ns / (double)reused : 0.0);
	ar_reader_close(r);
	return 0;
}
