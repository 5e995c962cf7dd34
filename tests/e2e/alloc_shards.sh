#!/usr/bin/env bash
# alloc_shards.sh — pool's sharded free lists and free's look-up without the
# chunk header (issue 19), under each of our allocators:
#   - tests/allocators/alloc_shards.c: a producer whose blocks another
#     thread frees keeps a bounded heap (it takes the blocks back from the
#     consumer's shard), and the statistics count the program's allocations,
#     not pool's moves between shards;
#   - pool and tlscache with the reserved address range refused (ulimit -v
#     below its 7 GiB): every chunk is then found through its header, the
#     path a class past its slice takes; the conformance suite, the stress
#     test and alloc_shards must pass there too.
set -u
. "$(dirname "$0")/../allocators/lib.sh"
need "$list" "$build/tests/alloc_shards" "$build/tests/alloc_api" "$build/tests/alloc_stress"

failed=0
for name in $ours; do
	preload=$(preload_of "$name") || { failed=$((failed + 1)); continue; }
	run_logged "$name" 0 LD_PRELOAD="$preload" "$build/tests/alloc_shards" "$name"
done

# 4 GiB of address space: the tests' own needs fit, the 7 GiB range does not.
limit_kb=4194304
for name in pool tlscache; do
	preload=$(preload_of "$name") || { failed=$((failed + 1)); continue; }
	for t in "alloc_shards $name" "alloc_api $name" alloc_stress; do
		run_logged "$name, no reserved range: $t" 0 bash -c \
			'ulimit -v '$limit_kb' && LD_PRELOAD="$1" exec "$2"/$3' _ "$preload" "$build/tests" "$t"
	done
done
[ $failed -eq 0 ]
