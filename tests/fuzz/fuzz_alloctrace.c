/*
 * fuzz_alloctrace.c — libFuzzer target for what `alloctrace` does with an
 * untrusted trace: any bytes as a trace file, run through info (text and
 * --json), verify, dump --extra --stacks, stats (text and --json, which
 * drive livemap.c and heapstats.c) and stacks, the very functions the
 * subcommands call after parsing their arguments (alloctrace.h). Their
 * reports go to /dev/null, formatted all the same; symbolisation is off
 * (frames print as addresses), so libdw is not fuzzed and no file the
 * trace's module map names is opened.
 *
 * Beyond "never crash, hang, leak or read out of bounds": info, verify and
 * dump read the events the same way, so they must agree on whether the
 * trace is whole: info and dump exit alike (0 whole, 3 only a readable part,
 * 2 nothing readable), and verify says 0 exactly when they do.
 *
 * The input is handed over as a memfd, named by its /proc/self/fd path
 * because the subcommands take a path (as fuzz_reader.c, one way for all).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_input.h"

#include "alloctrace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* glibc's stdout and stderr are plain variables (glibc manual, "Standard
	 * Streams"): point them at /dev/null for the subcommands only, so the
	 * sanitizers' reports (written to fd 2 directly) and the driver's own
	 * output stay visible. */
	static FILE *devnull;
	if (!devnull && !(devnull = fopen("/dev/null", "w")))
		__builtin_trap();
	int fd = fuzz_input_fd("fuzz", data, size);
	if (fd < 0)
		return 0;
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);

	FILE *out = stdout, *err = stderr;
	fflush(stdout);
	stdout = devnull;
	stderr = devnull;
	int info = ar_info_run(path, 0);
	ar_info_run(path, 1);
	int verify = ar_verify_run(path);
	int dump = ar_dump_run(path, 1, 1, 0);
	ar_stats_run(path, 0, 3, 0);
	ar_stats_run(path, 1, 3, 0);
	ar_stacks_run(path, 0);
	ar_stacks_folded_run(path, 4 /* leaked */, 0);
	fflush(devnull);
	stdout = out;
	stderr = err;
	close(fd);

	if (info != dump || (info == 0) != (verify == 0))
		__builtin_trap(); /* the three disagree on whether the trace is whole */
	return 0;
}
