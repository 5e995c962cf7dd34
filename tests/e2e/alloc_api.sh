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
	log=$(mktemp)
	if LD_PRELOAD=$preload timeout 300 "$build/tests/alloc_api" "$name" >"$log" 2>&1; then
		echo "ok   $name $version ($library)"
	else
		echo "FAIL $name $version:"
		sed 's/^/    /' "$log" | tail -n 30
		failed=$((failed + 1))
	fi
	rm -f "$log"
	ran=$((ran + 1))
done < <("$list")
echo "alloc_api: $ran allocators, $failed failed"
[ $failed -eq 0 ] && [ $ran -ge 5 ]
