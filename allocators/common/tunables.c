/*
 * tunables.c — environment parsing for the ALLOCRR_<NAME>_* tunables.
 * See tunables.h for the accepted syntax; docs/ALLOCATORS.md lists them.
 */
#include "tunables.h"

#include <stdlib.h>
#include <string.h>

#include "ar_size.h"
#include "util.h"

/* Parse s into *out (ar_size.h: decimal or 0x hex, k/m/g units); 0 on
 * success, -1 when s is not a valid number. */
static int parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	if (ar_parse_size(s, AR_SIZE_HEX, &v) != 0 || v > SIZE_MAX)
		return -1;
	*out = (size_t)v;
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
