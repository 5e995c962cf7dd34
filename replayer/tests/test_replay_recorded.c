/*
 * test_replay_recorded.c — what replay takes as the recorded process's peak
 * RSS (replayer/recorded.c, SPEC 6.10): a whole program's VmHWM as written;
 * a window's trace of 2.1 as its recorder says (VmHWM reached in the window,
 * or the window's highest sample, with a note); a window's trace from before
 * 2.1, whose peak is the process's lifetime high-water mark, gets its own
 * highest sample instead when that is lower, and says so. A trace whose
 * machine was kept busy by other work while it was recorded says that too.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format.h"
#include "replay.h"
#include "testing.h"
#include "trace_fixture.h"

#define MIB (1u << 20)

/* A trace with one event, three RSS samples (10, 40 and 25 MiB), and a
 * PROCESS record with the given peak and source (6 ms of CPU in 20 ms);
 * `fields` 13 leaves the source and the machine out, as a 2.0 recorder did;
 * `others` is the other work's CPU time on the machine's 2 CPUs over those
 * 20 ms. Returns it open. */
static ar_reader_t *trace_busy(int window, uint64_t peak, unsigned source, int fields, uint64_t others)
{
	int fd = memfd_create("recorded", 0);
	if (fd < 0)
		exit(2);
	ar_header_t h;
	ar_header_init(&h);
	if (window)
		h.flags |= AR_HDR_WINDOW;
	ar_writer_t *w;
	ar_error_t err;
	if (ar_writer_open(&w, fd, &h, 1, NULL, &err) != 0)
		exit(2);
	static uint8_t data[4096];
	ar_metabuf_t m;
	ar_metabuf_reset(&m, data, sizeof data);
	EXPECT(ar_meta_allocator(&m, "/usr/lib/x86_64-linux-gnu/libc.so.6", "libc.so.6", "2.36") == 0);
	const uint64_t rss[] = {10 * MIB, 40 * MIB, 25 * MIB};
	for (int i = 0; i < 3; i++) {
		ar_rss_sample_t s = {(uint64_t)i * 10000000u, (uint64_t)i, rss[i]};
		EXPECT(ar_meta_rss_sample(&m, &s) == 0);
	}
	ar_process_info_t p = {.start_rss_bytes = 10 * MIB, .start_time_ns = 0, .peak_rss_bytes = peak,
			       .end_rss_bytes = 25 * MIB, .end_time_ns = 20000000, .sample_interval_ns = 10000000,
			       .cpu_user_ns = 5000000, .cpu_sys_ns = 1000000, .peak_source = source,
			       .machine_busy_ns = fields > 13 ? 6000000 + others : 0, .machine_cpus = fields > 13 ? 2 : 0};
	size_t before = m.len;
	EXPECT(ar_meta_process(&m, &p) == 0);
	if (fields == 13) {
		/* the record is type, length (one byte each here), body: drop the
		 * body's last three varints, the source and the machine (0: one
		 * byte each) */
		EXPECT(source == AR_PEAK_UNSAID && data[before + 1] < 0x80);
		data[before + 1] -= 3;
		m.len -= 3;
	}
	EXPECT(ar_writer_write_meta(w, &m, &err) == 0);
	fixture_one_event_and_close(w, 20000000);
	ar_reader_t *r = NULL;
	if (ar_reader_open_fd(&r, fd, "mem", &err) != 0) {
		fprintf(stderr, "open: %s\n", err.msg);
		exit(1);
	}
	return r;
}

static ar_reader_t *trace(int window, uint64_t peak, unsigned source, int fields)
{
	return trace_busy(window, peak, source, fields, 0);
}

static void expect_peak(const char *what, ar_reader_t *r, double want, const char *note)
{
	ar_recorded_t rec;
	ar_recorded_read(r, &rec);
	if (rec.peak_rss_bytes != want || (note ? !strstr(rec.reason, note) : rec.reason[0] != 0)) {
		fprintf(stderr, "%s: peak %.0f (want %.0f), reason \"%s\" (want %s%s)\n", what, rec.peak_rss_bytes,
			want, rec.reason, note ? "one with " : "none", note ? note : "");
		test_failures++;
	}
	ar_reader_close(r);
}

int main(void)
{
	/* a whole program: VmHWM, whether or not the source is said */
	expect_peak("whole program, 2.0", trace(0, 200 * MIB, AR_PEAK_UNSAID, 13), 200.0 * MIB, NULL);
	expect_peak("whole program, 2.1", trace(0, 200 * MIB, AR_PEAK_HWM, 14), 200.0 * MIB, NULL);
	/* a 2.1 window: as its recorder says */
	expect_peak("window, VmHWM rose in it", trace(1, 60 * MIB, AR_PEAK_HWM, 14), 60.0 * MIB, NULL);
	expect_peak("window, sampled", trace(1, 40 * MIB, AR_PEAK_SAMPLED, 14), 40.0 * MIB, "highest RSS sample");
	/* a 2.0 window: the lifetime mark is above every sample, so the
	 * highest sample stands in, said so */
	expect_peak("window, 2.0, old mark", trace(1, 200 * MIB, AR_PEAK_UNSAID, 13), 40.0 * MIB,
		    "before format 2.1");
	/* a 2.0 window whose mark is no higher than its samples: kept */
	expect_peak("window, 2.0, mark in it", trace(1, 40 * MIB, AR_PEAK_UNSAID, 13), 40.0 * MIB, NULL);
	/* other work kept 1.5 of 2 CPUs busy over the 20 ms: said; 0.2: not */
	expect_peak("busy machine", trace_busy(0, 200 * MIB, AR_PEAK_HWM, 16, 30000000), 200.0 * MIB,
		    "other work kept 1.5 of the machine's 2 CPUs busy");
	expect_peak("quiet machine", trace_busy(0, 200 * MIB, AR_PEAK_HWM, 16, 4000000), 200.0 * MIB, NULL);
	return TEST_END();
}
