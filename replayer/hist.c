/*
 * hist.c — the cold half of the log-linear histogram (see hist.h): bucket
 * bounds, merging and quantiles. Nothing here allocates, so the replay
 * worker may call it after start-up.
 */
#include <string.h>

#include "hist.h"

void ar_hist_reset(ar_hist_t *h)
{
	memset(h, 0, sizeof *h);
	h->min = UINT64_MAX;
}

uint64_t ar_hist_bucket_lo(unsigned b)
{
	if (b < AR_HIST_LINEAR)
		return b;
	unsigned e = (b - AR_HIST_LINEAR) / AR_HIST_SUB + AR_HIST_SUB_BITS + 1;
	uint64_t m = (b - AR_HIST_LINEAR) % AR_HIST_SUB + AR_HIST_SUB;
	return m << (e - AR_HIST_SUB_BITS);
}

uint64_t ar_hist_bucket_width(unsigned b)
{
	if (b < AR_HIST_LINEAR)
		return 1;
	unsigned e = (b - AR_HIST_LINEAR) / AR_HIST_SUB + AR_HIST_SUB_BITS + 1;
	return (uint64_t)1 << (e - AR_HIST_SUB_BITS);
}

double ar_hist_bucket_mid(unsigned b)
{
	return (double)ar_hist_bucket_lo(b) + (double)(ar_hist_bucket_width(b) - 1) / 2.0;
}

void ar_hist_merge(ar_hist_t *dst, const ar_hist_t *src)
{
	if (!src->count)
		return;
	for (unsigned i = 0; i < AR_HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

double ar_hist_quantile(const ar_hist_t *h, double q)
{
	if (!h->count)
		return 0;
	if (q >= 1.0)
		return (double)h->max;
	double want = q * (double)h->count;
	uint64_t rank = (uint64_t)want;
	if ((double)rank < want || rank == 0)
		rank++;
	uint64_t seen = 0;
	for (unsigned i = 0; i < AR_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			double v = ar_hist_bucket_mid(i);
			if (v < (double)h->min)
				v = (double)h->min;
			if (v > (double)h->max)
				v = (double)h->max;
			return v;
		}
	}
	return (double)h->max;
}
