/*
 * cli_size.c — sizes and durations on a command line or in the environment
 * (ar_cli.h): "4G", "512MiB", "1048576" (ar_size.h's parser, which the
 * allocators' tunables share; decimal only, "T" and a bare "B" allowed
 * here); "2.5" seconds.
 */
#include <errno.h>
#include <stdlib.h>

#include "ar_cli.h"
#include "ar_size.h"

int ar_cli_parse_size(const char *s, unsigned long long *out)
{
	return ar_parse_size(s, AR_SIZE_TERA | AR_SIZE_BARE_B, out);
}

int ar_cli_parse_seconds(const char *s, unsigned long long *ns)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > 366.0 * 86400.0 || s[0] == ' ')
		return -1;
	*ns = (unsigned long long)(v * 1e9);
	return *ns ? 0 : -1;
}

int ar_cli_parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}
