/*
 * test_gen.c — the scenario generators (traces/gen): the address simulator's
 * classes and reuse; and for every scenario, a small trace that is byte for
 * byte the same for a seed, different for another seed, and legal by SPEC 4
 * and 5.5 as read back by an independent check here: seqs strictly increase
 * in merged order, seq2 > seq, event times never decrease, no address is
 * handed out while it is live, every free is of a live pointer, nothing is
 * live at the end, and the footer's count matches.
 */
#include <stdlib.h>
#include <unistd.h>

#include "addr_sim.h"
#include "gen.h"
#include "testing.h"

static void test_classes(void)
{
	EXPECT_U64(ar_addr_class_bytes(ar_addr_class(0)), 16);
	EXPECT_U64(ar_addr_class_bytes(ar_addr_class(1)), 16);
	EXPECT_U64(ar_addr_class_bytes(ar_addr_class(64)), 64);
	EXPECT_U64(ar_addr_class_bytes(ar_addr_class(129)), 160);
	EXPECT_U64(ar_addr_class_bytes(ar_addr_class(256)), 256);
	EXPECT_U64(ar_addr_class_bytes(ar_addr_class(257)), 320);
	for (uint64_t s = 1; s < (1ULL << 30); s = s * 3 / 2 + 1) {
		uint64_t b = ar_addr_class_bytes(ar_addr_class(s));
		EXPECT(b >= s && b <= s + s / 4 + 16); /* at most 25 % waste above 128 B */
	}
}

static void test_addr_reuse(void)
{
	ar_addr_sim_t s;
	EXPECT(ar_addr_sim_init(&s, 2) == 0);
	uint64_t a = ar_addr_sim_alloc(&s, 0, 64), b = ar_addr_sim_alloc(&s, 0, 64);
	uint64_t c = ar_addr_sim_alloc(&s, 1, 64), big = ar_addr_sim_alloc(&s, 0, 5000000);
	EXPECT(a && b && c && big && a != b && a % 16 == 0 && b % 16 == 0);
	EXPECT(b >= a + 64);                    /* blocks do not overlap */
	EXPECT((big - 16) % 4096 == 0);         /* large blocks are page + header */
	EXPECT(ar_addr_sim_free(&s, a, 64) == 0);
	EXPECT_U64(ar_addr_sim_alloc(&s, 0, 60), a); /* same class: reused, LIFO */
	EXPECT(ar_addr_sim_free(&s, c, 64) == 0); /* freed by thread 0: back to arena 1 */
	EXPECT(ar_addr_sim_alloc(&s, 0, 64) != c);
	EXPECT_U64(ar_addr_sim_alloc(&s, 1, 64), c);
	EXPECT(ar_addr_sim_free(&s, 0x1000, 64) != 0); /* nobody's address */
	EXPECT_U64(ar_addr_sim_alloc(&s, 0, 1ULL << 50), 0); /* beyond the arena */
	ar_addr_sim_free_all(&s);
}

/* Generate into an anonymous file; returns its bytes (malloc'd) and size. */
static uint8_t *generate(const ar_gen_scenario_t *sc, uint32_t threads, uint64_t ops, uint64_t seed, size_t *len,
			 char *path)
{
	int fd = mkstemp(path);
	EXPECT(fd >= 0);
	ar_gen_result_t res;
	ar_error_t err;
	int rc = ar_gen_write(fd, sc, threads, ops, seed, &res, &err);
	EXPECT(rc == 0);
	if (rc)
		fprintf(stderr, "  %s: %s\n", sc->name, err.msg);
	off_t n = lseek(fd, 0, SEEK_END);
	uint8_t *buf = malloc((size_t)n);
	EXPECT(buf && pread(fd, buf, (size_t)n, 0) == n);
	close(fd);
	*len = (size_t)n;
	return buf;
}

/* Open-addressing set of live pointers (key 0 = empty, 1 = deleted). */
typedef struct set {
	uint64_t *k;
	size_t cap, n;
} set_t;

static size_t slot(const set_t *s, uint64_t p, int for_insert)
{
	size_t i = (size_t)((p >> 4) * 0x9e3779b97f4a7c15ULL) & (s->cap - 1);
	for (;; i = (i + 1) & (s->cap - 1)) {
		if (s->k[i] == p || s->k[i] == 0 || (for_insert && s->k[i] == 1))
			return i;
	}
}

static int set_add(set_t *s, uint64_t p) /* 0 if already present */
{
	size_t i = slot(s, p, 0);
	if (s->k[i] == p)
		return 0;
	s->k[slot(s, p, 1)] = p;
	s->n++;
	return 1;
}

static int set_del(set_t *s, uint64_t p) /* 0 if absent */
{
	size_t i = slot(s, p, 0);
	if (s->k[i] != p)
		return 0;
	s->k[i] = 1;
	s->n--;
	return 1;
}

static void check_legal(const ar_gen_scenario_t *sc, const char *path, uint32_t threads)
{
	ar_reader_t *r;
	ar_error_t err;
	EXPECT(ar_reader_open(&r, path, &err) == 0);
	EXPECT(ar_reader_status(r) == AR_STATUS_COMPLETE);
	EXPECT_U64(ar_reader_thread_count(r), threads);
	EXPECT((ar_reader_header(r)->flags & AR_HDR_SYNTHETIC) != 0);
	EXPECT_U64(ar_reader_header(r)->start_wall_ns, 0);
	set_t live = {calloc(1u << 20, sizeof(uint64_t)), 1u << 20, 0};
	ar_event_t e;
	uint64_t prev_seq = 0, prev_time = 0, n = 0, bad_addr = 0, bad_free = 0, bad_order = 0;
	int rc;
	while ((rc = ar_reader_next_merged(r, &e)) == 1) {
		n++;
		if (e.seq <= prev_seq || e.time_ns < prev_time)
			bad_order++;
		prev_seq = e.seq;
		prev_time = e.time_ns;
		if (e.op == AR_OP_FREE || e.op == AR_OP_REALLOC)
			bad_free += !set_del(&live, e.ptr);
		if (e.op == AR_OP_REALLOC && e.seq2 <= e.seq)
			bad_order++;
		if (e.op != AR_OP_FREE)
			bad_addr += !e.result || !set_add(&live, e.result);
	}
	EXPECT(rc == 0);
	EXPECT_U64(bad_order, 0);
	EXPECT_U64(bad_addr, 0);
	EXPECT_U64(bad_free, 0);
	EXPECT_U64(live.n, 0);
	EXPECT(ar_reader_footer(r) && ar_reader_footer(r)->events == n);
	if (bad_order || bad_addr || bad_free || live.n)
		fprintf(stderr, "  scenario %s\n", sc->name);
	free(live.k);
	ar_reader_close(r);
}

static void test_scenarios(void)
{
	EXPECT_U64(ar_gen_count(), 10);
	EXPECT(ar_gen_find("s1") == ar_gen_find("S1") && ar_gen_find("nope") == NULL);
	for (unsigned i = 0; i < ar_gen_count(); i++) {
		const ar_gen_scenario_t *sc = ar_gen_at(i);
		uint64_t ops = sc->default_ops < 20000 ? 1000 : 20000;
		char p1[] = "/tmp/test_gen.XXXXXX", p2[] = "/tmp/test_gen.XXXXXX", p3[] = "/tmp/test_gen.XXXXXX";
		size_t n1, n2, n3;
		uint8_t *a = generate(sc, 0, ops, 7, &n1, p1), *b = generate(sc, 0, ops, 7, &n2, p2);
		uint8_t *c = generate(sc, 0, ops, 8, &n3, p3);
		EXPECT(n1 == n2 && memcmp(a, b, n1) == 0);      /* same seed, same bytes */
		EXPECT(n1 != n3 || memcmp(a, c, n1) != 0);      /* another seed, another trace */
		check_legal(sc, p1, sc->default_threads);
		free(a), free(b), free(c);
		unlink(p1), unlink(p2), unlink(p3);
		char p4[] = "/tmp/test_gen.XXXXXX";
		uint8_t *d = generate(sc, 4, ops, 3, &n1, p4); /* every scenario runs on 4 threads */
		check_legal(sc, p4, 4);
		free(d);
		unlink(p4);
	}
}

static void test_bad_threads(void)
{
	ar_error_t err;
	EXPECT(ar_gen_write(-1, ar_gen_find("X"), 3, 100, 1, NULL, &err) == AR_EINVAL);
	EXPECT(strstr(err.msg, "even") != NULL);
	EXPECT(ar_gen_write(-1, ar_gen_find("S1"), AR_GEN_MAX_THREADS + 1, 100, 1, NULL, &err) == AR_EINVAL);
}

int main(void)
{
	RUN(test_classes);
	RUN(test_addr_reuse);
	RUN(test_scenarios);
	RUN(test_bad_threads);
	return TEST_END();
}
