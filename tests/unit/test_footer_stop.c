/*
 * test_footer_stop.c — the footer of a bounded recording (SPEC 6.7, since
 * 1.2): ar_writer_write_footer writes it and keeps the writer; the trace is
 * complete then, with the stop reason and 0 calls after the stop;
 * ar_writer_rewrite_footer replaces it in place with a later count (a
 * longer varint, then a shorter one: the file is cut after it), the trace
 * staying complete with the same events; a footer without a stop has no
 * stop fields; a rewrite on a descriptor that cannot seek fails and leaves
 * the old footer.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ar_trace.h"
#include "testing.h"

#define NEV 1000

/* A trace of NEV mallocs in path, its writer left open (footer not written). */
static ar_writer_t *start(const char *path, int *fdp)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	EXPECT(fd >= 0);
	ar_header_t h;
	ar_header_init(&h);
	h.pid = 42;
	ar_writer_t *w = NULL;
	ar_error_t err;
	EXPECT(ar_writer_open(&w, fd, &h, 1, NULL, &err) == 0);
	static uint8_t mem[AR_EVBUF_MAX_BYTES];
	ar_evbuf_t b;
	ar_evbuf_reset(&b, mem, sizeof mem, 0, 4242);
	for (uint64_t i = 1; i <= NEV; i++) {
		ar_event_t e = {.op = AR_OP_MALLOC, .seq = i, .size = i, .result = 0x10000 + 16 * i, .time_ns = i};
		EXPECT(ar_evbuf_append(&b, &e) == 0);
	}
	EXPECT(ar_writer_write_events(w, &b, &err) == 0);
	*fdp = fd;
	return w;
}

/* Read path whole: complete, NEV events, and the footer's stop fields. */
static void check(const char *path, uint64_t want_reason, uint64_t want_after)
{
	ar_reader_t *r = NULL;
	ar_error_t err;
	EXPECT(ar_reader_open(&r, path, &err) == 0);
	if (!r)
		return;
	ar_event_t e;
	uint64_t n = 0;
	while (ar_reader_next(r, &e) == 1)
		n++;
	EXPECT_U64(n, NEV);
	EXPECT(ar_reader_status(r) == AR_STATUS_COMPLETE);
	const ar_footer_t *f = ar_reader_footer(r);
	EXPECT(f != NULL);
	if (f) {
		EXPECT_U64(f->events, NEV);
		EXPECT_U64(f->stop_reason, want_reason);
		EXPECT_U64(f->after_stop, want_after);
	}
	ar_reader_close(r);
}

static off_t size_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : -1;
}

int main(void)
{
	char path[] = "/tmp/allocrr-footer-stop-XXXXXX";
	int tmp = mkstemp(path);
	EXPECT(tmp >= 0);
	close(tmp);
	ar_error_t err;
	int fd;

	/* Stopped: complete at once, then rewritten with later counts. */
	ar_writer_t *w = start(path, &fd);
	ar_writer_note_stop(w, AR_STOP_MAX_SIZE, 0);
	EXPECT(ar_writer_write_footer(w, 5000, &err) == 0);
	check(path, AR_STOP_MAX_SIZE, 0);
	off_t first = size_of(path);
	ar_writer_note_stop(w, AR_STOP_MAX_SIZE, 123456789012ull);
	EXPECT(ar_writer_rewrite_footer(w, &err) == 0);
	check(path, AR_STOP_MAX_SIZE, 123456789012ull);
	EXPECT(size_of(path) > first);
	ar_writer_note_stop(w, AR_STOP_DURATION, 7);
	EXPECT(ar_writer_rewrite_footer(w, &err) == 0);
	check(path, AR_STOP_DURATION, 7); /* shorter: cut after it, no stray bytes */
	EXPECT(size_of(path) <= first + 8);
	EXPECT(ar_writer_close(w, 0, 0, &err) == 0);
	check(path, AR_STOP_DURATION, 7);
	close(fd);

	/* Not stopped: no stop fields, as before 1.2's addition. */
	w = start(path, &fd);
	EXPECT(ar_writer_close(w, 5000, 1, &err) == 0);
	check(path, AR_STOP_NONE, 0);
	close(fd);

	/* A descriptor that cannot seek: the rewrite fails, the writer says so. */
	int p[2];
	EXPECT(pipe(p) == 0);
	ar_header_t h;
	ar_header_init(&h);
	EXPECT(fcntl(p[1], F_SETPIPE_SZ, 1 << 20) >= 0);
	EXPECT(ar_writer_open(&w, p[1], &h, 1, NULL, &err) == 0);
	ar_writer_note_stop(w, AR_STOP_DURATION, 0);
	EXPECT(ar_writer_write_footer(w, 1, &err) == 0);
	ar_writer_note_stop(w, AR_STOP_DURATION, 99);
	EXPECT(ar_writer_rewrite_footer(w, &err) != 0);
	EXPECT(ar_writer_close(w, 0, 0, &err) == 0);
	close(p[0]);
	close(p[1]);

	unlink(path);
	return TEST_END();
}
