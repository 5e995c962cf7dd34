/*
 * ar_size.h — the one parser of sizes as people write them ("4G",
 * "512MiB", "64k", "1048576"), inline so that the allocators' tunables
 * (allocators/common/tunables.c, inside traced programs: they link nothing
 * of ours and must not allocate) and the command lines (common/cli_size.c,
 * ar_cli_parse_size) share it. Each caller keeps its own spellings through
 * flags; nothing here allocates or touches errno.
 */
#ifndef AR_SIZE_H
#define AR_SIZE_H

#include <limits.h>

enum {
	AR_SIZE_HEX = 1u << 0,    /* "0x" then hexadecimal digits */
	AR_SIZE_TERA = 1u << 1,   /* the t/T suffix (2^40) */
	AR_SIZE_BARE_B = 1u << 2, /* "B" without a unit ("4096B") */
};

/* Digits (decimal, or hex after 0x with AR_SIZE_HEX), then optionally a
 * binary unit k/K, m/M, g/G (t/T with AR_SIZE_TERA), an "i" after the unit,
 * a "b"/"B" after the unit (or after the digits with AR_SIZE_BARE_B), and
 * nothing else. 0 and *out, or -1 when s is not such a size or it overflows
 * 64 bits. */
static inline int ar_parse_size(const char *s, unsigned flags, unsigned long long *out)
{
	unsigned base = 10;
	unsigned long long v = 0;
	int digits = 0;
	if ((flags & AR_SIZE_HEX) && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (;; s++, digits++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			break;
		if (__builtin_mul_overflow(v, base, &v) || __builtin_add_overflow(v, d, &v))
			return -1;
	}
	if (!digits)
		return -1;
	unsigned shift = 0;
	switch (*s) {
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	case 't': case 'T': shift = (flags & AR_SIZE_TERA) ? 40 : 0; break;
	default: break;
	}
	if (shift)
		s++;
	if (shift && *s == 'i')
		s++;
	if ((*s == 'b' || *s == 'B') && (shift || (flags & AR_SIZE_BARE_B)))
		s++;
	if (*s || (shift && v > (ULLONG_MAX >> shift)))
		return -1;
	*out = v << shift;
	return 0;
}

#endif
