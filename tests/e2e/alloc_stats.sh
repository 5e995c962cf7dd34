#!/usr/bin/env bash
# alloc_stats.sh — checks that each of our allocators' exported statistics
# are true (tests/allocators/alloc_stats.c). tlscache runs with a small batch
# and cap so the test can predict hits, misses and cached blocks exactly.
set -u
. "$(dirname "$0")/../allocators/lib.sh"
need "$list" "$build/tests/alloc_stats"

failed=0
for name in $ours; do
	preload=$(preload_of "$name") || { failed=$((failed + 1)); continue; }
	run_logged "$name" 0 ALLOCRR_TLSCACHE_BATCH=8 ALLOCRR_TLSCACHE_MAX_BYTES=262144 LD_PRELOAD="$preload" \
		"$build/tests/alloc_stats" "$name"
done
[ $failed -eq 0 ]
