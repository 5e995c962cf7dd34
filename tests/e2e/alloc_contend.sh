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
	log=$(mktemp)
	if LD_PRELOAD=$preload timeout 300 "$build/tests/alloc_contend" 8 200000 >"$log" 2>&1; then
		echo "ok   $name: $(tr '\n' ';' <"$log")"
	else
		echo "FAIL $name:"
		sed 's/^/    /' "$log" | tail -n 30
		failed=$((failed + 1))
	fi
	rm -f "$log"
done
[ $failed -eq 0 ]
