/*
 * tunables.h — reading ALLOCRR_<NAME>_* environment variables at
 * initialisation, without malloc (getenv and a hand-written number parser).
 *
 * A value is a decimal or 0x-hex integer with an optional K, M or G suffix
 * (powers of 1024). An unparsable or out-of-range value is reported once on
 * stderr ("allocrr: ignoring ...") and the default is used: a typo must not
 * silently change what is measured, and must not abort the host program.
 */
#ifndef AR_ALLOC_TUNABLES_H
#define AR_ALLOC_TUNABLES_H

#include <stddef.h>

/* The value of environment variable name, or def when unset or invalid;
 * valid values lie in [min, max]. */
size_t ar_tunable_size(const char *name, size_t def, size_t min, size_t max);

/* Like ar_tunable_size(), rounded up to a power of two. */
size_t ar_tunable_pow2(const char *name, size_t def, size_t min, size_t max);

#endif
