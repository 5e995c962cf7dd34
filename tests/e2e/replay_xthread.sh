#!/usr/bin/env bash
# Cross-thread frees: a producer/consumer program (replayer/tests/xthread.c)
# recorded with allocrec, whose every free runs on another thread than its
# malloc, replays under every installed allocator without deadlock, with
# one dependency per moved block, and the same op checksum everywhere.
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"

prog="$B/tests/replay/xthread"
[ -x "$prog" ] || { echo "missing $prog"; exit 77; }
"$B/bin/allocrec" -q -o x.zst "$prog" >prog.txt
expect_eq "program" "$(cat prog.txt)" "freed 8000 of 8000"
# Independent count of cross-thread frees from the text dump.
cross=$("$B/bin/alloctrace" dump x.zst | awk '$3=="malloc"{own[$6]=$2} $3=="free" && ($4 in own){ if (own[$4]!=$2) c++; delete own[$4]} END{print c+0}')
[ "$cross" -ge 4000 ] && ok "cross-thread frees in the trace: $cross" || fail "cross-thread frees: $cross"

"$AR" x.zst --all --repeat 2 --timeout 60 --db x.db >out.txt 2>err.txt
expect_eq "exit status" $? 0
cat out.txt err.txt
installed=$("$AR" --list | awk 'NR > 1 && $4 == "yes"' | wc -l)
expect_eq "runs ok" "$(q x.db "SELECT count(*) FROM runs WHERE status='ok'")" $((installed * 2))
deps=$(q x.db 'SELECT cross_thread_deps FROM traces')
[ "$deps" -ge "$cross" ] && ok "compiled dependencies: $deps (>= $cross cross-thread frees)" || fail "dependencies $deps < $cross"
expect_eq "threads replayed" "$(q x.db 'SELECT DISTINCT threads FROM runs')" "$(q x.db 'SELECT threads FROM traces')"
expect_eq "every run waited on every dependency" \
	"$(q x.db 'SELECT count(*) FROM runs r JOIN traces t ON t.sha256 = r.trace_sha256 WHERE r.dep_waits <> t.cross_thread_deps + t.reuse_deps')" 0
expect_eq "one op checksum" "$(q x.db 'SELECT count(DISTINCT op_checksum) FROM runs')" 1
expect_eq "ops = calls of the trace" "$(q x.db 'SELECT count(*) FROM runs r JOIN traces t ON t.sha256=r.trace_sha256 WHERE r.ops <> t.calls')" 0
expect_eq "failed allocations" "$(q x.db 'SELECT sum(failed_allocs) FROM runs')" 0
expect_eq "harness-never-mallocs (ours)" \
	"$(q x.db 'SELECT count(*) FROM runs WHERE allocator_allocs_delta IS NOT NULL AND (allocator_allocs_delta <> allocs_expected OR allocator_frees_delta <> frees_expected)')" 0
finish
