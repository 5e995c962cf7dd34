#!/usr/bin/env bash
# make demo: show what allocrr does on a bundled sample. It grows with the
# tools: today it reads a checked-in trace with alloctrace.
set -euo pipefail
build=${ALLOCRR_BUILD:-build}
sample=traces/samples/synthetic-2t.zst
echo "== alloctrace info $sample"
"$build/bin/alloctrace" info "$sample"
echo
echo "== alloctrace dump $sample | head"
"$build/bin/alloctrace" dump "$sample" | sed -n "1,10p"
echo
echo "== alloctrace verify $sample"
"$build/bin/alloctrace" verify "$sample"
