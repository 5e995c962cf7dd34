#!/usr/bin/env bash
# alloc_api.sh — the malloc API conformance suite (tests/allocators/alloc_api.c)
# run against every installed allocator of the registry, ours and the
# system ones, each under LD_PRELOAD of its library, so ours are held to
# exactly what glibc does (system allocators' documented quirks aside).
# Each run also proves, via dladdr, that the intended library served malloc.
set -u
. "$(dirname "$0")/../allocators/lib.sh"
need "$list" "$build/tests/alloc_api"

failed=0 ran=0
while IFS=$'\t' read -r name kind installed preload version pkgver library; do
	if [ "$installed" != 1 ]; then
		if [ "$kind" = ours ]; then
			echo "FAIL $name: liballocrr-$name.so was not built"
			failed=$((failed + 1))
		else
			echo "skip $name: not installed"
		fi
		continue
	fi
	[ "$preload" = - ] && preload=
	run_logged "$name $version ($library)" 0 LD_PRELOAD="$preload" "$build/tests/alloc_api" "$name"
	ran=$((ran + 1))
done < <("$list")
echo "alloc_api: $ran allocators, $failed failed"
[ $failed -eq 0 ] && [ $ran -ge 5 ]
