/*
 * tunables.c — environment parsing for the ALLOCRR_<NAME>_* tunables.
 * See tunables.h for the accepted syntax; docs/ALLOCATORS.md lists them.
 */
#include "tunables.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Parse s into *out; 0 on success, -1 when s is not a valid number. */
static int parse_size(const char *s, size_t *out)
{
	unsigned base = 10;
	size_t v = 0;
	int digits = 0;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (;; s++) {
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
		digits++;
	}
	if (!digits)
		return -1;
	unsigned shift = 0;
	switch (*s) {
	case 'k': case 'K': shift = 10; s++; break;
	case 'm': case 'M': shift = 20; s++; break;
	case 'g': case 'G': shift = 30; s++; break;
	default: break;
	}
	if (*s == 'i' && shift) /* accept "KiB"-style spellings too */
		s++;
	if ((*s == 'b' || *s == 'B') && shift)
		s++;
	if (*s != '\0')
		return -1;
	if (shift && v > (SIZE_MAX >> shift))
		return -1;
	*out = v << shift;
	return 0;
}

static void complain(const char *name, const char *value, const char *why)
{
	char msg[256];
	size_t n = 0;
	const char *parts[] = { "ignoring ", name, "=", value, ": ", why, " (using the default)" };
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		size_t l = strlen(parts[i]);
		if (l > sizeof msg - 1 - n)
			l = sizeof msg - 1 - n;
		memcpy(msg + n, parts[i], l);
		n += l;
	}
	msg[n] = '\0';
	ar_warn(msg);
}

size_t ar_tunable_size(const char *name, size_t def, size_t min, size_t max)
{
	const char *s = getenv(name);
	size_t v;
	if (!s || !*s)
		return def;
	if (parse_size(s, &v) != 0) {
		complain(name, s, "not a number");
		return def;
	}
	if (v < min || v > max) {
		complain(name, s, "out of range");
		return def;
	}
	return v;
}

size_t ar_tunable_pow2(const char *name, size_t def, size_t min, size_t max)
{
	return ar_next_pow2(ar_tunable_size(name, def, min, max));
}
