#!/usr/bin/env bash
# alloc_contend.sh — more threads than cores on one size class, with
# cross-thread frees (tests/allocators/alloc_contend.c), under each of our
# allocators and under glibc as the reference the test itself must pass:
# the lock-free free lists of pool's heap (allocators/pool/pool_list.h)
# must never hand a block out twice or lose one, whatever the preemption.
set -u
. "$(dirname "$0")/../allocators/lib.sh"
need "$list" "$build/tests/alloc_contend"

failed=0
for name in glibc $ours; do
	preload=$(preload_of "$name") || { failed=$((failed + 1)); continue; }
	run_logged "$name" 1 LD_PRELOAD="$preload" "$build/tests/alloc_contend" 8 200000
done
[ $failed -eq 0 ]
