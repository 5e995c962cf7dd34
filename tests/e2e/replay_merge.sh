#!/usr/bin/env bash
# Two results databases (as from two machines) merge with results/sql/merge.sql:
# the shared trace stays one row, every run and its child rows arrive with
# shifted ids, and merging twice adds nothing.
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"
"$AR" "$SAMPLE" -a glibc --repeat 2 --db a.db >/dev/null 2>&1 || fail "run a"
"$AR" "$SAMPLE" -a glibc --repeat 1 --db b.db >/dev/null 2>&1 || fail "run b"
lat_a=$(q a.db 'SELECT count(*) FROM histogram'); lat_b=$(q b.db 'SELECT count(*) FROM histogram')
q a.db "ATTACH 'b.db' AS src" ".read $ROOT/results/sql/merge.sql" || fail "merge"
expect_eq "runs" "$(q a.db 'SELECT count(*) FROM runs')" 3
expect_eq "traces" "$(q a.db 'SELECT count(*) FROM traces')" 1
expect_eq "histogram rows" "$(q a.db 'SELECT count(*) FROM histogram')" $((lat_a + lat_b))
expect_eq "summary rows with latency" "$(q a.db 'SELECT count(p99_ns) FROM run_summary')" 3
expect_eq "foreign keys" "$(q a.db 'PRAGMA foreign_key_check' | wc -l)" 0
expect_eq "integrity" "$(q a.db 'PRAGMA integrity_check')" ok
q a.db "ATTACH 'b.db' AS src" ".read $ROOT/results/sql/merge.sql" || fail "merge again"
expect_eq "runs after merging twice" "$(q a.db 'SELECT count(*) FROM runs')" 3
finish
