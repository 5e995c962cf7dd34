#!/usr/bin/env bash
# Two results databases (as from two machines) merge with results/sql/merge.sql:
# the shared trace stays one row, every run and its child rows arrive with
# shifted ids, and merging twice adds nothing. allocreport merge into a new
# file gives the same rows, in a schema that is allocrr's own (the same
# objects as a database allocreplay created), not a copy of its first input.
# Hostile inputs: tests/e2e/db_untrusted.sh.
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
"$AR" "$SAMPLE" -a glibc --repeat 2 --db a2.db >/dev/null 2>&1 || fail "run a2"
q a2.db "CREATE TABLE notes (text TEXT)"
"$B/bin/allocreport" merge n.db a2.db b.db >/dev/null 2>&1 || fail "allocreport merge"
schema() { q "$1" "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name; PRAGMA user_version" | md5sum; }
expect_eq "allocreport merge: OUT has allocrr's schema, not its first input's" "$(schema n.db)" "$(schema b.db)"
expect_eq "allocreport merge: runs" "$(q n.db 'SELECT count(*) FROM runs')" 3
expect_eq "allocreport merge: histogram rows" "$(q n.db 'SELECT count(*) FROM histogram')" \
	$(($(q a2.db 'SELECT count(*) FROM histogram') + lat_b))
expect_eq "allocreport merge: integrity" "$(db_integrity n.db)" ok
finish
