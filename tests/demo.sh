#!/usr/bin/env bash
# make demo: record a bundled multi-threaded program (traces/programs/
# demo_server.c) with allocrec, show what the trace holds, replay it against
# every installed allocator (allocreplay, results in SQLite) and print the
# comparison and the recommendation (allocreport).
set -euo pipefail
build=${ALLOCRR_BUILD:-build}
bin=$build/bin
out=${ALLOCRR_DEMO_DIR:-$build/demo}
mkdir -p "$out"
trace=$out/demo_server.zst

echo "== allocrec --stacks -o $trace $build/traces/demo_server 40000 2"
"$bin/allocrec" --stacks -o "$trace" "$build/traces/demo_server" 40000 2
echo
echo "== alloctrace info $trace"
"$bin/alloctrace" info "$trace"
echo
echo "== alloctrace dump $trace --extra (first 8 events)"
"$bin/alloctrace" dump "$trace" --extra | sed -n '1,8p'
echo
echo "== alloctrace stats $trace (excerpt)"
"$bin/alloctrace" stats "$trace" --top 3 | sed -n '/^what simpler/,/^$/p;/^top allocation sites by bytes live/,$p'
echo
echo "== alloctrace stacks $trace (the first 3)"
"$bin/alloctrace" stacks "$trace" 2>/dev/null | awk '/^stack /{n++} n<=3{print}' # reads it all: no SIGPIPE under pipefail
echo
echo "== alloctrace verify $trace"
"$bin/alloctrace" verify "$trace"
echo
rm -f "$out/allocrr.db"
echo "== allocreplay $trace --all --db $out/allocrr.db"
"$bin/allocreplay" "$trace" --all --db "$out/allocrr.db"
echo
echo "== allocreport --db $out/allocrr.db --recommend"
"$bin/allocreport" --db "$out/allocrr.db" --recommend
echo
echo "(the runs are in $out/allocrr.db: try  sqlite3 $out/allocrr.db 'SELECT * FROM run_summary')"
