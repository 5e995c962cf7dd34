/*
 * test_process_info.c — the records of format 1.1 that say what the recorded
 * process ran on and how much memory it used (SPEC 6.8-6.10): written by
 * ar_meta_allocator / ar_meta_rss_sample / ar_meta_process, read back right
 * after ar_reader_open; a 1.0 trace gives NULL and 0; a later record
 * replaces an earlier one; fields a later minor version appends are
 * skipped; strings past their limits are cut by the writer and refused by
 * the reader; a truncated or hostile new record makes the trace corrupt
 * with a message naming the record and the offset of its block; more RSS
 * samples than SPEC 7.1 allows are refused without memory sized by them.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "format.h"
#include "testing.h"
#include "trace_fixture.h"

static int memfd(void)
{
	int fd = memfd_create("process-info", 0);
	if (fd < 0) {
		perror("memfd_create");
		exit(2);
	}
	return fd;
}

static ar_reader_t *reopen(int fd)
{
	ar_reader_t *r = NULL;
	ar_error_t err;
	if (ar_reader_open_fd(&r, fd, "mem", &err) != 0) {
		fprintf(stderr, "open: %s\n", err.msg);
		test_failures++;
	}
	return r;
}

/* A trace of version major.minor with one event and the metadata blocks
 * fill() writes; returns the fd. */
static int make(uint16_t major, uint16_t minor, void (*fill)(ar_writer_t *w))
{
	int fd = memfd();
	ar_header_t h;
	ar_header_init(&h);
	h.version_major = major;
	h.version_minor = minor;
	ar_writer_t *w;
	ar_error_t err;
	if (ar_writer_open(&w, fd, &h, 1, NULL, &err) != 0)
		exit(2);
	if (fill)
		fill(w);
	fixture_one_event_and_close(w, 1000);
	return fd;
}

static void fill_all(ar_writer_t *w)
{
	static uint8_t data[4096];
	ar_metabuf_t m;
	ar_error_t err;
	ar_metabuf_reset(&m, data, sizeof data);
	EXPECT(ar_meta_allocator(&m, "/usr/lib/libjemalloc.so.2", "libjemalloc.so.2", "5.3.0-0-g54eaed1") == 0);
	ar_rss_sample_t s0 = {1000, 0, 2u << 20};
	EXPECT(ar_meta_rss_sample(&m, &s0) == 0);
	EXPECT(ar_writer_write_meta(w, &m, &err) == 0);
	ar_metabuf_reset(&m, data, sizeof data);
	for (uint64_t i = 1; i <= 100; i++) {
		ar_rss_sample_t s = {i * 10000000u, i * 7, (2u << 20) + i * 4096 * (i < 60 ? i : 120 - i)};
		EXPECT(ar_meta_rss_sample(&m, &s) == 0);
	}
	ar_process_info_t p = {.start_rss_bytes = 2u << 20,
			       .start_time_ns = 1000,
			       .peak_rss_bytes = 1ull << 40, /* big values survive: varints */
			       .end_rss_bytes = 3u << 20,
			       .end_time_ns = UINT64_MAX,
			       .sample_interval_ns = 10000000,
			       .cpu_user_ns = 123456789,
			       .cpu_sys_ns = 42,
			       .recorder_rss_bytes = 5u << 20,
			       .recorder_writer_cpu_ns = 40000000,
			       .recorder_calls_cpu_ns = 1ull << 35,
			       .cpu_user_start_ns = 1000000,
			       .cpu_sys_start_ns = 7,
			       .peak_source = AR_PEAK_SAMPLED,
			       .machine_busy_ns = 3ull << 33,
			       .machine_cpus = 256};
	EXPECT(ar_meta_process(&m, &p) == 0);
	EXPECT(ar_writer_write_meta(w, &m, &err) == 0);
}

static void test_roundtrip(void)
{
	int fd = make(AR_TRACE_VERSION_MAJOR, AR_TRACE_VERSION_MINOR, fill_all);
	ar_reader_t *r = reopen(fd);
	if (!r)
		return;
	EXPECT_U64(ar_reader_status(r), AR_STATUS_COMPLETE);
	EXPECT_U64(ar_reader_header(r)->version_minor, AR_TRACE_VERSION_MINOR);
	const ar_process_info_t *p = ar_reader_process(r);
	EXPECT(p != NULL);
	if (p) {
		EXPECT(p->has_allocator && p->has_process);
		EXPECT_STR(p->alloc_path, "/usr/lib/libjemalloc.so.2");
		EXPECT_STR(p->alloc_soname, "libjemalloc.so.2");
		EXPECT_STR(p->alloc_version, "5.3.0-0-g54eaed1");
		EXPECT_U64(p->start_rss_bytes, 2u << 20);
		EXPECT_U64(p->start_time_ns, 1000);
		EXPECT_U64(p->peak_rss_bytes, 1ull << 40);
		EXPECT_U64(p->end_rss_bytes, 3u << 20);
		EXPECT_U64(p->end_time_ns, UINT64_MAX);
		EXPECT_U64(p->sample_interval_ns, 10000000);
		EXPECT(p->has_cpu && p->cpu_user_ns == 123456789 && p->cpu_sys_ns == 42);
		EXPECT_U64(p->recorder_rss_bytes, 5u << 20);
		EXPECT(p->has_recorder_cpu && p->recorder_writer_cpu_ns == 40000000 &&
		       p->recorder_calls_cpu_ns == 1ull << 35);
		EXPECT(p->has_cpu_start && p->cpu_user_start_ns == 1000000 && p->cpu_sys_start_ns == 7);
		EXPECT_U64(p->peak_source, AR_PEAK_SAMPLED);
		EXPECT(p->machine_busy_ns == 3ull << 33 && p->machine_cpus == 256);
	}
	EXPECT_U64(ar_reader_rss_count(r), 101);
	const ar_rss_sample_t *s = ar_reader_rss_at(r, 0);
	EXPECT(s && s->time_ns == 1000 && s->seq == 0 && s->rss_bytes == 2u << 20);
	s = ar_reader_rss_at(r, 100);
	EXPECT(s && s->time_ns == 1000000000u && s->seq == 700 && s->rss_bytes == (2u << 20) + 100 * 4096 * 20);
	EXPECT(ar_reader_rss_at(r, 101) == NULL);
	/* the events are untouched by the records around them */
	ar_event_t e;
	EXPECT(ar_reader_next_merged(r, &e) == 1 && e.size == 10);
	ar_reader_close(r);
	close(fd);
}

/* A 1.0 trace has none of it: NULL and 0, never a zero allocator. */
static void test_old_trace(void)
{
	int fd = make(1, 0, NULL);
	ar_reader_t *r = reopen(fd);
	if (!r)
		return;
	EXPECT_U64(ar_reader_status(r), AR_STATUS_COMPLETE);
	EXPECT_U64(ar_reader_header(r)->version_minor, 0);
	EXPECT(ar_reader_process(r) == NULL);
	EXPECT_U64(ar_reader_rss_count(r), 0);
	EXPECT(ar_reader_rss_at(r, 0) == NULL);
	ar_reader_close(r);
	close(fd);
}

/* A trace that was not closed: the allocator and samples, no PROCESS. */
static void fill_start_only(ar_writer_t *w)
{
	static uint8_t data[1024];
	ar_metabuf_t m;
	ar_error_t err;
	ar_metabuf_reset(&m, data, sizeof data);
	EXPECT(ar_meta_allocator(&m, "/lib/libc.so.6", "libc.so.6", "") == 0);
	/* a second one replaces the first (SPEC 6.8) */
	EXPECT(ar_meta_allocator(&m, "/usr/lib/x86_64-linux-gnu/libc.so.6", "libc.so.6", "2.36") == 0);
	ar_rss_sample_t s0 = {5, 0, 4096};
	EXPECT(ar_meta_rss_sample(&m, &s0) == 0);
	EXPECT(ar_writer_write_meta(w, &m, &err) == 0);
}

static void test_start_only_and_replace(void)
{
	int fd = make(1, 1, fill_start_only);
	ar_reader_t *r = reopen(fd);
	if (!r)
		return;
	const ar_process_info_t *p = ar_reader_process(r);
	EXPECT(p && p->has_allocator && !p->has_process);
	if (p) {
		EXPECT_STR(p->alloc_path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
		EXPECT_STR(p->alloc_version, "2.36");
		EXPECT_U64(p->peak_rss_bytes, 0);
	}
	EXPECT_U64(ar_reader_rss_count(r), 1);
	ar_reader_close(r);
	close(fd);
}

/* Strings past their limits are cut by the writer (SPEC 7.1). */
static void test_writer_cuts(void)
{
	char path[700], soname[200], version[100];
	memset(path, 'p', sizeof path - 1);
	path[sizeof path - 1] = 0;
	memset(soname, 's', sizeof soname - 1);
	soname[sizeof soname - 1] = 0;
	memset(version, 'v', sizeof version - 1);
	version[sizeof version - 1] = 0;
	static uint8_t data[4096];
	ar_metabuf_t m;
	ar_metabuf_reset(&m, data, sizeof data);
	EXPECT(ar_meta_allocator(&m, path, soname, version) == 0);
	EXPECT(ar_meta_allocator(&m, NULL, NULL, NULL) == 0);
	/* type, length (2 bytes), then 2 + 511, 1 + 127, 1 + 63 */
	EXPECT_U64(data[0], AR_REC_ALLOCATOR);
	EXPECT_U64(m.len, (1 + 2 + 2 + 511 + 1 + 127 + 1 + 63) + (1 + 1 + 3));
	/* a full buffer takes nothing */
	uint8_t small[8];
	ar_metabuf_reset(&m, small, sizeof small);
	ar_rss_sample_t s = {1, 2, 3};
	EXPECT(ar_meta_rss_sample(&m, &s) == AR_EFULL);
	EXPECT_U64(m.len, 0);
}

/* ---- hand-made blocks ---------------------------------------------------- */

static uint8_t file[8u << 20];
static size_t flen, header_len;

/* The header of a real 1.1 trace, then the blocks the tests append. */
static void start_file(void)
{
	int fd = make(1, 1, NULL);
	uint8_t h[8];
	if (pread(fd, h, 8, 0) != 8)
		exit(2);
	header_len = 8 + ar_get_u32le(h + 4);
	if (pread(fd, file, header_len, 0) != (ssize_t)header_len)
		exit(2);
	close(fd);
	flen = header_len;
}

/* Append a metadata block of `count` records holding raw[0..n). Returns the
 * offset of its descriptor. */
static uint64_t put_meta(const uint8_t *raw, size_t n, uint64_t count)
{
	uint64_t at = flen;
	size_t cap = ZSTD_compressBound(n);
	uint8_t *z = malloc(cap), d[96], *q = d;
	size_t c = ZSTD_compress(z, cap, raw, n, 1);
	if (!z || ZSTD_isError(c))
		exit(2);
	uint64_t v[8] = {AR_BLOCK_META, 0, 0, count, 0, 0, n, c};
	for (int i = 0; i < 8; i++)
		q = ar_put_varint(q, v[i]);
	ar_put_u32le(file + flen, AR_DESCRIPTOR_MAGIC);
	ar_put_u32le(file + flen + 4, (uint32_t)(q - d));
	memcpy(file + flen + 8, d, (size_t)(q - d));
	flen += 8 + (size_t)(q - d);
	memcpy(file + flen, z, c);
	flen += c;
	free(z);
	return at;
}

static ar_reader_t *open_file(void)
{
	int fd = memfd();
	if (write(fd, file, flen) != (ssize_t)flen)
		exit(2);
	ar_reader_t *r = NULL;
	ar_error_t err;
	if (ar_reader_open_fd(&r, fd, "hostile", &err) != 0) {
		fprintf(stderr, "open: %s\n", err.msg);
		test_failures++;
	}
	return r; /* the fd stays open for the reader's life: a test leak, small */
}

/* One record of `type` with body[0..n) in its own block: the trace must be
 * corrupt at that block, the message naming the record type. */
static void expect_corrupt_record(const char *what, unsigned type, const uint8_t *body, size_t n)
{
	start_file();
	uint8_t raw[1024], *q = raw;
	q = ar_put_varint(q, type);
	q = ar_put_varint(q, n);
	memcpy(q, body, n);
	q += n;
	uint64_t at = put_meta(raw, (size_t)(q - raw), 1);
	ar_reader_t *r = open_file();
	if (!r)
		return;
	const ar_error_t *e = ar_reader_error(r);
	char want[32];
	snprintf(want, sizeof want, "record type %u", type);
	if (ar_reader_status(r) != AR_STATUS_CORRUPT || e->offset != at || !strstr(e->msg, want)) {
		fprintf(stderr, "%s: status %d, offset %" PRIu64 " (want %" PRIu64 "): %s\n", what,
			ar_reader_status(r), e->offset, at, e->msg);
		test_failures++;
	}
	EXPECT(ar_reader_process(r) == NULL);
	EXPECT_U64(ar_reader_rss_count(r), 0);
	ar_reader_close(r);
}

static void test_hostile_records(void)
{
	/* an RSS sample cut after its seq */
	const uint8_t cut_sample[] = {0x80, 0x01, 0x05};
	expect_corrupt_record("RSS sample without its bytes", AR_REC_RSS_SAMPLE, cut_sample, sizeof cut_sample);
	/* a PROCESS record of three fields out of six */
	const uint8_t cut_process[] = {1, 2, 3};
	expect_corrupt_record("PROCESS of 3 fields", AR_REC_PROCESS, cut_process, sizeof cut_process);
	/* an allocator path claiming 2^40 bytes */
	uint8_t huge[16], *q = ar_put_varint(huge, 1ull << 40);
	expect_corrupt_record("allocator path 2^40", AR_REC_ALLOCATOR, huge, (size_t)(q - huge));
	/* a soname of 128 bytes: one past the limit */
	uint8_t longso[200];
	q = longso;
	*q++ = 0; /* empty path */
	q = ar_put_varint(q, 128);
	memset(q, 's', 128);
	q += 128;
	*q++ = 0;
	expect_corrupt_record("soname 128 bytes", AR_REC_ALLOCATOR, longso, (size_t)(q - longso));
	/* a varint of 11 bytes in a sample */
	const uint8_t longvar[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0};
	expect_corrupt_record("11-byte varint", AR_REC_RSS_SAMPLE, longvar, sizeof longvar);
}

/* SPEC 8: fields appended to the new records by a later minor version are
 * skipped. */
static void test_appended_fields(void)
{
	start_file();
	uint8_t raw[256], body[64], *q = raw, *b = body;
	for (int i = 0; i < 6; i++)
		b = ar_put_varint(b, (uint64_t)i + 1);
	b = ar_put_varint(b, 7);   /* user CPU ns (SPEC 6.10, optional) */
	b = ar_put_varint(b, 8);   /* system CPU ns */
	b = ar_put_varint(b, 9);   /* the recorder's peak */
	b = ar_put_varint(b, 10);  /* the recorder's writer CPU ns (since 2.0) */
	b = ar_put_varint(b, 11);  /* its work in the calls, ns */
	b = ar_put_varint(b, 12);  /* user CPU ns at the trace's start (since 2.0) */
	b = ar_put_varint(b, 13);  /* system CPU ns at the trace's start */
	b = ar_put_varint(b, 999); /* the peak source (since 2.1), a value no version defines */
	b = ar_put_varint(b, 15);  /* the machine's busy CPU ns (since 2.1) */
	b = ar_put_varint(b, 16);  /* its CPUs */
	b = ar_put_varint(b, 998); /* a seventeenth field, from a later version */
	q = ar_put_varint(q, AR_REC_PROCESS);
	q = ar_put_varint(q, (uint64_t)(b - body));
	memcpy(q, body, (size_t)(b - body));
	q += b - body;
	const uint8_t sample[] = {AR_REC_RSS_SAMPLE, 5, 1, 2, 3, 4, 5};
	memcpy(q, sample, sizeof sample);
	q += sizeof sample;
	put_meta(raw, (size_t)(q - raw), 2);
	ar_reader_t *r = open_file();
	if (!r)
		return;
	EXPECT_U64(ar_reader_status(r), AR_STATUS_TRUNCATED); /* no footer */
	const ar_process_info_t *p = ar_reader_process(r);
	EXPECT(p && !p->has_allocator && p->has_process && p->start_rss_bytes == 1 && p->sample_interval_ns == 6);
	EXPECT(p && p->has_cpu && p->cpu_user_ns == 7 && p->cpu_sys_ns == 8 && p->recorder_rss_bytes == 9);
	EXPECT(p && p->has_recorder_cpu && p->recorder_writer_cpu_ns == 10 && p->recorder_calls_cpu_ns == 11);
	EXPECT(p && p->has_cpu_start && p->cpu_user_start_ns == 12 && p->cpu_sys_start_ns == 13);
	EXPECT(p && p->peak_source == AR_PEAK_UNSAID);
	EXPECT(p && p->machine_busy_ns == 15 && p->machine_cpus == 16);
	EXPECT_U64(ar_reader_rss_count(r), 1);
	EXPECT(ar_reader_rss_at(r, 0) && ar_reader_rss_at(r, 0)->rss_bytes == 3);
	ar_reader_close(r);
}

/* SPEC 6.10: a recorder before 2.0 wrote nine fields, none of the
 * recorder's CPU times nor the CPU times at the start; a record may end
 * after any of the four 2.0 fields and the three 2.1 ones (here the peak
 * source says "sampled"). None is corrupt, and none claims a figure it
 * lacks. */
static void test_recorder_cpu_optional(void)
{
	for (int nfields = 9; nfields <= 16; nfields++) {
		start_file();
		uint8_t raw[128], body[64], *q = raw, *b = body;
		for (int i = 0; i < nfields; i++)
			b = ar_put_varint(b, i == 13 ? AR_PEAK_SAMPLED : (uint64_t)i + 1);
		q = ar_put_varint(q, AR_REC_PROCESS);
		q = ar_put_varint(q, (uint64_t)(b - body));
		memcpy(q, body, (size_t)(b - body));
		q += b - body;
		put_meta(raw, (size_t)(q - raw), 1);
		ar_reader_t *r = open_file();
		if (!r)
			return;
		EXPECT_U64(ar_reader_status(r), AR_STATUS_TRUNCATED); /* no footer, nothing corrupt */
		const ar_process_info_t *p = ar_reader_process(r);
		EXPECT(p && p->has_cpu && p->recorder_rss_bytes == 9);
		EXPECT(p && p->has_recorder_cpu == (nfields >= 10));
		EXPECT(p && p->recorder_writer_cpu_ns == (nfields >= 10 ? 10u : 0u) &&
		       p->recorder_calls_cpu_ns == (nfields >= 11 ? 11u : 0u));
		EXPECT(p && p->has_cpu_start == (nfields >= 12));
		EXPECT(p && p->cpu_user_start_ns == (nfields >= 12 ? 12u : 0u) &&
		       p->cpu_sys_start_ns == (nfields >= 13 ? 13u : 0u));
		EXPECT(p && p->peak_source == (nfields >= 14 ? AR_PEAK_SAMPLED : AR_PEAK_UNSAID));
		EXPECT(p && p->machine_busy_ns == (nfields >= 15 ? 15u : 0u) &&
		       p->machine_cpus == (nfields >= 16 ? 16u : 0u));
		ar_reader_close(r);
	}
}

/* SPEC 7.1: one sample past 2^21 makes the trace corrupt at its block; the
 * samples before it stay readable. */
static void test_sample_limit(void)
{
	start_file();
	const uint64_t per_block = 700000; /* 5 bytes each: 3.5 MB, under the 4 MiB block limit */
	uint8_t *raw = malloc(per_block * 5);
	if (!raw)
		exit(2);
	for (uint64_t i = 0; i < per_block; i++)
		memcpy(raw + i * 5, (const uint8_t[]){AR_REC_RSS_SAMPLE, 3, 1, 1, 1}, 5);
	uint64_t last = 0;
	uint64_t total = 0;
	while (total <= AR_LIMIT_RSS_SAMPLES) {
		last = put_meta(raw, per_block * 5, per_block);
		total += per_block;
	}
	free(raw);
	ar_reader_t *r = open_file();
	if (!r)
		return;
	const ar_error_t *e = ar_reader_error(r);
	EXPECT_U64(ar_reader_status(r), AR_STATUS_CORRUPT);
	EXPECT_U64(e->offset, last);
	EXPECT(strstr(e->msg, "RSS samples") != NULL);
	EXPECT_U64(ar_reader_rss_count(r), AR_LIMIT_RSS_SAMPLES);
	ar_reader_close(r);
}

int main(void)
{
	RUN(test_roundtrip);
	RUN(test_old_trace);
	RUN(test_start_only_and_replace);
	RUN(test_writer_cuts);
	RUN(test_hostile_records);
	RUN(test_appended_fields);
	RUN(test_recorder_cpu_optional);
	RUN(test_sample_limit);
	return TEST_END();
}
