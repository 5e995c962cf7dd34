#!/usr/bin/env bash
# alloc_stress.sh — the multi-threaded stress test (tests/allocators/alloc_stress.c:
# cross-thread frees, random sizes and alignments, patterns checked before
# every free, thread turnover, fork from a threaded process) under each of
# our allocators, and under glibc as the reference the test itself must pass.
set -u
. "$(dirname "$0")/../allocators/lib.sh"
need "$list" "$build/tests/alloc_stress"

failed=0
for name in glibc $ours; do
	preload=$(preload_of "$name") || { failed=$((failed + 1)); continue; }
	run_logged "$name" 1 LD_PRELOAD="$preload" "$build/tests/alloc_stress"
done
[ $failed -eq 0 ]
