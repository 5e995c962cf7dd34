/*
 * test_replay_route.c — allocreplay --route's parent side (replayer/route.h):
 * the rule grammar accepts what docs/RESULTS.md promises and refuses the
 * rest with the rule in the message; the route map gives each allocation
 * of each stream the owner of the first rule that holds, in the worker's
 * order (route_map.h), counts what it routed, and refuses a workload that
 * is not the trace's.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "route.h"
#include "route_map.h"
#include "testing.h"
#include "wl_test.h"

static char dir[] = "/tmp/allocrr-test-route-XXXXXX";
static ar_event_t evs[64];
static size_t nev;

static void ev(uint32_t thread, uint64_t seq, unsigned op, uint64_t ptr, uint64_t count, uint64_t size,
	       uint32_t stack, uint64_t result)
{
	ar_event_t *e = &evs[nev++];
	wlt_event(e, thread, seq, op, ptr, size, result);
	e->count = count;
	e->align = op == AR_OP_POSIX_MEMALIGN ? 64 : 0;
	e->stack = stack;
}

/* Write evs[] as the trace NAME.zst (with stacks) and compile it into
 * NAME.wl, opened and decoded into *w (wl_test.h). Nothing below can go
 * on without it. */
static void build(const char *name, ar_workload_t *w, char *trace, size_t cap)
{
	char out[128];
	snprintf(trace, cap, "%s/%s.zst", dir, name);
	snprintf(out, sizeof out, "%s/%s.wl", dir, name);
	wlt_write_trace(trace, evs, nev, AR_HDR_STACKS);
	if (wlt_compile_load(trace, out, "", NULL, w) != 0)
		exit(TEST_END());
	nev = 0;
}

static void test_grammar(void)
{
	ar_route_set_t rs;
	char err[512];
	memset(&rs, 0, sizeof rs);
	EXPECT(ar_route_add(&rs, "pool:size=64", err, sizeof err) == 0);
	EXPECT(ar_route_add(&rs, "arena:size=1-256,thread=3", err, sizeof err) == 0);
	EXPECT(ar_route_add(&rs, "pool:stack=17", err, sizeof err) == 0);
	EXPECT_U64(rs.nrules, 3);
	EXPECT_U64(rs.nnames, 2); /* pool named twice: one library */
	EXPECT_U64(rs.rules[2].lib, 1);
	EXPECT_U64(rs.rules[1].lib, 2);
	EXPECT_U64(rs.rules[1].size_min, 1);
	EXPECT_U64(rs.rules[1].size_max, 256);
	EXPECT(rs.rules[1].has_thread && rs.rules[1].thread == 3 && !rs.rules[1].has_stack);
	EXPECT_STR(rs.label, "+pool[size=64]+arena[size=1-256,thread=3]+pool[stack=17]");
	EXPECT_STR(rs.option, "pool:size=64;arena:size=1-256,thread=3;pool:stack=17");
	static const char *const bad[] = { "pool", "pool:", "jemalloc:size=64", "pool:size=9-3",
					   "pool:size=", "pool:size=1-", "pool:stack=0", "pool:thread=x",
					   "pool:size=64,colour=red", ":size=64", "poolx:size=1",
					   "pool:size=-1", "pool:size=99999999999999999999" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		memset(&rs, 0, sizeof rs);
		err[0] = '\0';
		EXPECT(ar_route_add(&rs, bad[i], err, sizeof err) == -1);
		EXPECT(strstr(err, bad[i]) != NULL); /* the message names the rule */
		EXPECT_U64(rs.nrules, 0);
	}
}

/* The map's owner bytes of the stream of trace thread t, and their number. */
static const uint8_t *owners_of(const uint8_t *m, uint32_t t, uint64_t *n)
{
	const ar_route_map_header_t *h = (const void *)m;
	const ar_route_map_stream_t *s = (const void *)(m + sizeof *h);
	for (uint32_t i = 0; i < h->nstreams; i++)
		if (s[i].trace_index == t) {
			*n = s[i].nallocs;
			return m + s[i].offset;
		}
	*n = 0;
	return NULL;
}

static void test_map(void)
{
	ar_workload_t w, w2;
	char trace[128], trace2[128];
	/* thread 0: malloc 64 (stack 5), malloc 100 (stack 6), calloc 8 x 8,
	 * realloc(NULL) (never routed, not counted), frees; thread 1: malloc
	 * 64, posix_memalign 100, malloc 300 with stack 6. */
	ev(0, 1, AR_OP_MALLOC, 0, 0, 64, 5, 0x1000);
	ev(1, 2, AR_OP_MALLOC, 0, 0, 64, 7, 0x9000);
	ev(0, 3, AR_OP_MALLOC, 0, 0, 100, 6, 0x2000);
	ev(1, 4, AR_OP_POSIX_MEMALIGN, 0, 0, 100, 7, 0xa000);
	ev(0, 5, AR_OP_CALLOC, 0, 8, 8, 5, 0x3000);
	ev(0, 6, AR_OP_REALLOC, 0, 0, 64, 5, 0x4000);
	evs[nev - 1].seq2 = 7;
	ev(1, 8, AR_OP_MALLOC, 0, 0, 300, 6, 0xb000);
	ev(0, 9, AR_OP_FREE, 0x1000, 0, 0, 0, 0);
	ev(1, 10, AR_OP_FREE, 0x9000, 0, 0, 0, 0);
	build("a", &w, trace, sizeof trace);
	/* The map's count of a stream's allocations comes from its counts by
	 * kind (route_map.h): the ops the worker numbers them by agree. */
	for (uint32_t i = 0; i < w.hdr->nthreads; i++) {
		uint64_t n = 0;
		for (uint64_t k = w.threads[i].prelude_ops; k < w.threads[i].nops; k++)
			n += ar_route_map_counts(ar_wl_ops(&w, i)[k].kind);
		EXPECT_U64(ar_route_map_allocs(&w.threads[i]), n);
		EXPECT(n > 0);
	}
	ar_route_set_t rs;
	char err[512], map[4096];
	memset(&rs, 0, sizeof rs);
	EXPECT(ar_route_add(&rs, "pool:size=64", err, sizeof err) == 0);
	EXPECT(ar_route_add(&rs, "arena:thread=1", err, sizeof err) == 0);
	EXPECT(ar_route_add(&rs, "pool:stack=6", err, sizeof err) == 0);
	uint64_t routed[AR_ROUTE_MAX + 1];
	int rc = ar_route_write_map(&rs, trace, &w, map, sizeof map, routed, err, sizeof err);
	if (rc)
		fprintf(stderr, "map: %s\n", err);
	EXPECT(rc == 0);
	EXPECT_U64(routed[0], 0);
	EXPECT_U64(routed[1], 4); /* 3 of 64 bytes (calloc 8 x 8 too), thread 0's stack 6 */
	EXPECT_U64(routed[2], 2); /* thread 1's others: the first rule that holds wins */
	int fd = open(map, O_RDONLY);
	static uint8_t m[4096];
	ssize_t n = read(fd, m, sizeof m);
	close(fd);
	unlink(map);
	EXPECT(n > (ssize_t)sizeof(ar_route_map_header_t));
	const ar_route_map_header_t *h = (const void *)m;
	EXPECT_U64(h->magic, AR_ROUTE_MAP_MAGIC);
	EXPECT_U64(h->file_bytes, (uint64_t)n);
	EXPECT_U64(h->nroutes, 2);
	uint64_t k;
	const uint8_t *o = owners_of(m, 0, &k);
	EXPECT_U64(k, 3);
	EXPECT(o && o[0] == 1 && o[1] == 1 && o[2] == 1);
	o = owners_of(m, 1, &k);
	EXPECT_U64(k, 3);
	EXPECT(o && o[0] == 1 && o[1] == 2 && o[2] == 2);

	/* Another trace's workload: refused, naming the trace. */
	ev(0, 1, AR_OP_MALLOC, 0, 0, 64, 5, 0x1000);
	ev(1, 2, AR_OP_MALLOC, 0, 0, 64, 5, 0x2000);
	build("b", &w2, trace2, sizeof trace2);
	err[0] = '\0';
	EXPECT(ar_route_write_map(&rs, trace, &w2, map, sizeof map, routed, err, sizeof err) == -1);
	EXPECT(strstr(err, trace) != NULL);
	wlt_close(&w);
	wlt_close(&w2);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_grammar);
	RUN(test_map);
	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return TEST_END();
}
