/*
 * libhang.so — an allocator that hangs, for tests/e2e/torture_replay_faults.sh:
 * the whole malloc API forwarded to glibc's own entry points, except that
 * heap call number ALLOCRR_TEST_HANG_AFTER (default 1000) and every later
 * one never return (the calling thread sleeps forever inside the call, as
 * a deadlocked allocator would). allocreplay's --timeout must kill the
 * worker and store the run as "timeout" while other allocators succeed.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "libc_forward.h"

static _Atomic unsigned long calls;

static void tick(void)
{
	static unsigned long limit;
	if (!limit) {
		const char *e = getenv("ALLOCRR_TEST_HANG_AFTER");
		limit = e && *e ? strtoul(e, NULL, 10) : 1000;
		if (!limit)
			limit = 1;
	}
	if (atomic_fetch_add(&calls, 1) + 1 >= limit)
		for (;;)
			pause();
}

LIBC_FORWARD_ALL(tick)
