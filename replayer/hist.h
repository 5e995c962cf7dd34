/*
 * hist.h — a log-linear latency histogram (HdrHistogram's layout, fixed
 * size): values below 2^(AR_HIST_SUB_BITS+1) get one bucket each; above,
 * every power of two is split into 2^AR_HIST_SUB_BITS equal buckets. With 64
 * sub-buckets a bucket is 1/64 of its octave wide, so reporting a bucket's
 * midpoint is off by at most 1/128 (0.78 %) of any value in it: the <= 1 %
 * bucket error the replayer promises. Values are in clock ticks; conversion
 * to ns happens once, on the quantiles, so the relative error is unchanged.
 *
 * Adding is branch-light and touches one counter: it runs after every timed
 * heap call in the replay worker. Histograms never allocate: the caller
 * provides the memory (the worker maps it).
 */
#ifndef AR_HIST_H
#define AR_HIST_H

#include <stdint.h>

#define AR_HIST_SUB_BITS 6
#define AR_HIST_SUB (1u << AR_HIST_SUB_BITS)
#define AR_HIST_LINEAR (2u * AR_HIST_SUB) /* values below this are exact */
#define AR_HIST_MAX_EXP 44                /* values >= 2^44 ticks share the last bucket */
#define AR_HIST_BUCKETS (AR_HIST_LINEAR + (AR_HIST_MAX_EXP - AR_HIST_SUB_BITS - 1) * AR_HIST_SUB)

typedef struct ar_hist {
	uint64_t count, sum, min, max; /* exact, in ticks */
	uint64_t b[AR_HIST_BUCKETS];
} ar_hist_t;

static inline unsigned ar_hist_bucket(uint64_t v)
{
	if (v < AR_HIST_LINEAR)
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v); /* >= SUB_BITS + 1 */
	if (e >= AR_HIST_MAX_EXP)
		return AR_HIST_BUCKETS - 1;
	return AR_HIST_LINEAR + (e - AR_HIST_SUB_BITS - 1) * AR_HIST_SUB +
	       (unsigned)((v >> (e - AR_HIST_SUB_BITS)) & (AR_HIST_SUB - 1));
}

static inline void ar_hist_add(ar_hist_t *h, uint64_t v)
{
	h->b[ar_hist_bucket(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

/* Empty h (min starts at UINT64_MAX). */
void ar_hist_reset(ar_hist_t *h);
/* Smallest value of bucket b, and the number of integer values it holds. */
uint64_t ar_hist_bucket_lo(unsigned b);
uint64_t ar_hist_bucket_width(unsigned b);
/* The value reported for bucket b: the midpoint of its values. */
double ar_hist_bucket_mid(unsigned b);
/* dst += src. */
void ar_hist_merge(ar_hist_t *dst, const ar_hist_t *src);
/* The q-quantile (0 < q <= 1) in ticks: the midpoint of the bucket holding
 * the ceil(q * count)-th smallest value, clamped to [min, max]; q = 1 gives
 * max exactly. 0 when empty. */
double ar_hist_quantile(const ar_hist_t *h, double q);

#endif
