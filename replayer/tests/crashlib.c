/*
 * libcrash.so — a crashing allocator for tests/e2e/replay_failures.sh and
 * torture_replay_faults.sh: the whole malloc API, forwarded to glibc's own
 * entry points, except that call number ALLOCRR_TEST_CRASH_AFTER (default
 * 2000) dies. ALLOCRR_TEST_CRASH_HOW says how: "segv" (default, raise
 * SIGSEGV), "deref" (a real store through a wild pointer), "abort"
 * (SIGABRT, as a failed heap consistency check would), or "exit" (_exit(0)
 * in the middle of the call: the worker vanishes with a success status but
 * no report), or "flood" (write report-like lines to the worker's report
 * pipe, fd 3, without end: allocreplay must stop reading at its cap, kill
 * the worker and store an "error" run, its own memory bounded). Otherwise
 * the worker must come back as a "crashed" run while other allocators
 * succeed.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libc_forward.h"

static _Atomic unsigned long calls;

static void die(void)
{
	const char *how = getenv("ALLOCRR_TEST_CRASH_HOW");
	if (how && !strcmp(how, "abort"))
		abort();
	if (how && !strcmp(how, "exit"))
		_exit(0);
	if (how && !strcmp(how, "flood")) {
		static const char line[] = "S calls 1234567890123456789\n";
		for (;;)
			if (write(3, line, sizeof line - 1) < 0)
				_exit(1);
	}
	if (how && !strcmp(how, "deref")) {
		volatile char *wild = (volatile char *)(uintptr_t)16;
		*wild = 1;
	}
	raise(SIGSEGV);
}

static void tick(void)
{
	static unsigned long limit;
	if (!limit) {
		const char *e = getenv("ALLOCRR_TEST_CRASH_AFTER");
		limit = e ? strtoul(e, NULL, 10) : 2000;
	}
	if (atomic_fetch_add(&calls, 1) + 1 >= limit)
		die();
}

LIBC_FORWARD_ALL(tick)
