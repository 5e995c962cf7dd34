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
	log=$(mktemp)
	if LD_PRELOAD=$preload timeout 300 "$build/tests/alloc_stress" >"$log" 2>&1; then
		echo "ok   $name: $(tr '\n' ';' <"$log")"
	else
		echo "FAIL $name:"
		sed 's/^/    /' "$log" | tail -n 30
		failed=$((failed + 1))
	fi
	rm -f "$log"
done
[ $failed -eq 0 ]
