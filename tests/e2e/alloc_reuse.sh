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
	log=$(mktemp)
	if LD_PRELOAD=$preload timeout 300 "$build/tests/alloc_reuse" "$name" >"$log" 2>&1; then
		echo "ok   $name"
	else
		echo "FAIL $name:"
		sed 's/^/    /' "$log" | tail -n 30
		failed=$((failed + 1))
	fi
	rm -f "$log"
done
[ $failed -eq 0 ]
