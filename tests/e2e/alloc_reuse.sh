#!/usr/bin/env bash
# alloc_reuse.sh — the reuse rules of issue 19 under each of our allocators
# (tests/allocators/alloc_reuse.c): blocks made while the process had one
# thread (the cores' plain, non-atomic paths) freed and reused by threads
# started later, every block's pattern checked; and arena's bump pointer
# moving back over dead blocks on top of the chunk it fills.
set -u
. "$(dirname "$0")/../allocators/lib.sh"
need "$list" "$build/tests/alloc_reuse"

failed=0
for name in $ours; do
	preload=$(preload_of "$name") || { failed=$((failed + 1)); continue; }
	run_logged "$name" 0 LD_PRELOAD="$preload" "$build/tests/alloc_reuse" "$name"
done
[ $failed -eq 0 ]
