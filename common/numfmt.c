/*
 * numfmt.c — see ar_numfmt.h. No libm: the tools that link common/ need
 * not link it.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "ar_numfmt.h"

const char *ar_fmt_bytes(char *buf, size_t n, double v, unsigned flags)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	if (isnan(v)) {
		snprintf(buf, n, "-");
		return buf;
	}
	int i = 0;
	double d = v;
	while ((d < 0 ? -d : d) >= 1024 && i < 4) {
		d /= 1024;
		i++;
	}
	/* below 2^53 / 2^40 after the divisions, unless infinite */
	int whole = isinf(d) || d == (double)(int64_t)d;
	int decimal = i && ((flags & AR_FMT_ONE_DECIMAL) || !whole);
	snprintf(buf, n, decimal ? "%.1f %s" : "%.0f %s", d, unit[i]);
	return buf;
}
