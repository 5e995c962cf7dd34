/*
 * cli_size.c — sizes on a command line or in the environment (ar_cli.h,
 * ar_cli_parse_size): "4G", "512MiB", "1048576". The same spellings as the
 * allocators' tunables (allocators/common/tunables.c, which cannot link this
 * library: it lives inside traced programs), decimal only.
 */
#include <limits.h>

#include "ar_cli.h"

int ar_cli_parse_size(const char *s, unsigned long long *out)
{
	unsigned long long v = 0;
	int digits = 0;
	for (; *s >= '0' && *s <= '9'; s++, digits++)
		if (__builtin_mul_overflow(v, 10ull, &v) || __builtin_add_overflow(v, (unsigned)(*s - '0'), &v))
			return -1;
	if (!digits)
		return -1;
	unsigned shift = 0;
	switch (*s) {
	case 'k': case 'K': shift = 10; s++; break;
	case 'm': case 'M': shift = 20; s++; break;
	case 'g': case 'G': shift = 30; s++; break;
	case 't': case 'T': shift = 40; s++; break;
	default: break;
	}
	if (shift && *s == 'i')
		s++;
	if (*s == 'b' || *s == 'B')
		s++;
	if (*s || (shift && v > (ULLONG_MAX >> shift)))
		return -1;
	*out = v << shift;
	return 0;
}
