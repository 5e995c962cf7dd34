/*
 * test_replay_hist.c — the latency histogram keeps its promise: every value
 * from 0 to 2^44 is reported (bucket midpoint) within 1 % of itself, buckets
 * tile the value range without gaps or overlaps, and quantiles of known
 * distributions come out right.
 */
#include <math.h>
#include <stdlib.h>

#include "hist.h"
#include "testing.h"

static void test_bucket_error(void)
{
	double worst = 0;
	uint64_t worst_v = 0;
	/* Every value below 2^16, then a geometric sweep with jitter above. */
	for (uint64_t v = 1; v < (1u << 16); v++) {
		double err = fabs(ar_hist_bucket_mid(ar_hist_bucket(v)) - (double)v) / (double)v;
		if (err > worst) {
			worst = err;
			worst_v = v;
		}
	}
	uint64_t x = 88172645463325252ull;
	for (double f = 65536; f < 1.7e13; f *= 1.0007) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t v = (uint64_t)f + x % 997;
		double err = fabs(ar_hist_bucket_mid(ar_hist_bucket(v)) - (double)v) / (double)v;
		if (err > worst) {
			worst = err;
			worst_v = v;
		}
	}
	if (worst > 0.01)
		fprintf(stderr, "worst bucket error %.4f%% at %llu\n", worst * 100,
			(unsigned long long)worst_v);
	EXPECT(worst <= 0.01);
	EXPECT(worst <= 1.0 / 128 + 1e-12); /* the design bound */
	EXPECT_U64(ar_hist_bucket(0), 0);
	EXPECT(ar_hist_bucket_mid(0) == 0);
}

static void test_buckets_tile(void)
{
	for (unsigned b = 0; b + 1 < AR_HIST_BUCKETS; b++) {
		EXPECT_U64(ar_hist_bucket_lo(b) + ar_hist_bucket_width(b), ar_hist_bucket_lo(b + 1));
		EXPECT_U64(ar_hist_bucket(ar_hist_bucket_lo(b)), b);
		EXPECT_U64(ar_hist_bucket(ar_hist_bucket_lo(b) + ar_hist_bucket_width(b) - 1), b);
	}
	EXPECT_U64(ar_hist_bucket(UINT64_MAX), AR_HIST_BUCKETS - 1);
}

static void test_quantiles(void)
{
	static ar_hist_t h, g;
	ar_hist_reset(&h);
	for (uint64_t v = 1; v <= 100000; v++)
		ar_hist_add(&h, v);
	EXPECT_U64(h.count, 100000);
	EXPECT_U64(h.min, 1);
	EXPECT_U64(h.max, 100000);
	const double q[] = { 0.5, 0.9, 0.99, 0.999 };
	for (int i = 0; i < 4; i++) {
		double want = q[i] * 100000, got = ar_hist_quantile(&h, q[i]);
		EXPECT(fabs(got - want) / want <= 0.01);
	}
	EXPECT(ar_hist_quantile(&h, 1.0) == 100000);
	/* Merge: two halves give the same quantiles as the whole. */
	ar_hist_reset(&g);
	static ar_hist_t a, b;
	ar_hist_reset(&a);
	ar_hist_reset(&b);
	for (uint64_t v = 1; v <= 100000; v++)
		ar_hist_add(v % 2 ? &a : &b, v);
	ar_hist_merge(&g, &a);
	ar_hist_merge(&g, &b);
	for (int i = 0; i < 4; i++)
		EXPECT(ar_hist_quantile(&g, q[i]) == ar_hist_quantile(&h, q[i]));
	EXPECT_U64(g.sum, h.sum);
	/* One value: every quantile is that value exactly (clamped to min/max). */
	ar_hist_reset(&g);
	ar_hist_add(&g, 12345);
	EXPECT(ar_hist_quantile(&g, 0.5) == 12345);
	ar_hist_reset(&g);
	EXPECT(ar_hist_quantile(&g, 0.5) == 0);
}

int main(void)
{
	RUN(test_bucket_error);
	RUN(test_buckets_tile);
	RUN(test_quantiles);
	return TEST_END();
}
