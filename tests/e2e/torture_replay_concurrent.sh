#!/usr/bin/env bash
# torture_replay_concurrent.sh — several allocreplay processes writing one
# database at once (WAL, a 10 s busy timeout, one transaction per run), the
# first round creating it from nothing, while allocreport reads it in a
# loop and, now and then, another client holds the write lock for about a
# second. Every run each process reported (--json run_uuid) must be in the
# database exactly once, nothing else may appear, every process and every
# read must succeed, and the database must stay whole (db_partial,
# db_integrity). Prints "tally" lines (make torture).
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"
t0=$SECONDS
REPORT="$B/bin/allocreport"
[ -x "$REPORT" ] || { echo "missing $REPORT: build first"; exit 77; }
ALLOCS=(glibc jemalloc pool)
need_allocators "${ALLOCS[@]}"
alist=$(IFS=,; echo "${ALLOCS[*]}")
REPEAT=2 PROCS=4
"$B/bin/alloctrace" gen D --ops 30000 -q -o d.zst || { fail "alloctrace gen D"; finish; }
"$B/bin/alloctrace" gen X --ops 30000 -q -o x.zst || { fail "alloctrace gen X"; finish; }
TRACES=(d.zst x.zst "$ROOT/traces/samples/s1-3k.zst")

# allocreport in a loop until the file "stop" appears; counts in reads.N
reader() { # id
	local n=0 bad=0
	while [ ! -e stop ]; do
		if "$REPORT" --db c.db --format csv >/dev/null 2>"reader$1.err"; then n=$((n + 1))
		else bad=$((bad + 1)); cat "reader$1.err" >>readers.err; fi
	done
	echo "$n $bad" >"reads.$1"
}

rounds=$((4 * SCALE))
procs_total=0 procs_failed=0 reported=0 not_once=0 reads=0 read_fail=0 lock_holds=0
for ((rd = 1; rd <= rounds; rd++)); do
	before=$(q c.db "SELECT count(*) FROM runs" 2>/dev/null || echo 0)
	pids=()
	for ((k = 0; k < PROCS; k++)); do
		tr=${TRACES[$(rnd ${#TRACES[@]})]}
		"$AR" "$tr" -a "$alist" --repeat $REPEAT --db c.db --json >"out.$k" 2>"err.$k" &
		pids+=($!)
	done
	# Readers once a run is stored (the first round creates the database;
	# allocreport refuses one without runs).
	for _ in $(seq 1000); do
		[ "$(q c.db "SELECT count(*) FROM runs" 2>/dev/null)" -gt 0 ] 2>/dev/null && break
		snooze 0.01
	done
	rm -f stop
	reader 1 & r1=$!
	reader 2 & r2=$!
	if [ $((rd % 2)) = 0 ]; then # a client holding the write lock for about a second
		sqlite3 c.db "PRAGMA busy_timeout = 10000; BEGIN IMMEDIATE;
			WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000)
			SELECT count(*) FROM c; COMMIT;" >/dev/null 2>lock.err &&
			lock_holds=$((lock_holds + 1)) || fail "round $rd: the lock holder failed: $(cat lock.err)"
	fi
	for ((k = 0; k < PROCS; k++)); do
		wait "${pids[$k]}"
		rc=$?
		procs_total=$((procs_total + 1))
		[ $rc = 0 ] || { procs_failed=$((procs_failed + 1)); fail "round $rd: allocreplay $k exit $rc: $(cat "err.$k")"; }
	done
	touch stop
	wait $r1 $r2
	for f in reads.1 reads.2; do
		read -r n bad <"$f"
		reads=$((reads + n)) read_fail=$((read_fail + bad))
	done
	# Every reported run exactly once; nothing but them added.
	mine=0
	for k in $(seq 0 $((PROCS - 1))); do
		for u in $(grep -o '"run_uuid":[^,]*' "out.$k" | cut -d: -f2 | tr -d '"'); do
			mine=$((mine + 1))
			c=$(q c.db "SELECT count(*) FROM runs WHERE run_uuid = '$u'")
			[ "$u" != null ] && [ "$c" = 1 ] || { not_once=$((not_once + 1)); fail "round $rd: run $u stored $c times"; }
		done
	done
	reported=$((reported + mine))
	after=$(q c.db "SELECT count(*) FROM runs")
	expect_eq "round $rd: runs added = runs reported" $((after - before)) $mine
done
[ -s readers.err ] && { echo "allocreport errors:"; sort readers.err | uniq -c | head; }
runs_expected=$((procs_total * REPEAT * ${#ALLOCS[@]}))
runs_found=$(q c.db "SELECT count(*) FROM runs")
partial=$(db_partial c.db)
integ=$(db_integrity c.db)
expect_eq "concurrent: allocreplay processes that failed" "$procs_failed" 0
expect_eq "concurrent: runs reported" "$reported" "$runs_expected"
expect_eq "concurrent: runs in the database" "$runs_found" "$runs_expected"
expect_eq "concurrent: reported runs not stored exactly once" "$not_once" 0
expect_eq "concurrent: distinct run_uuids" "$(q c.db "SELECT count(DISTINCT run_uuid) FROM runs")" "$runs_found"
expect_eq "concurrent: runs not ok" "$(q c.db "SELECT count(*) FROM runs WHERE status <> 'ok'")" 0
expect_eq "concurrent: allocreport reads that failed" "$read_fail" 0
expect_eq "concurrent: partial runs" "$partial" 0
expect_eq "concurrent: integrity" "$integ" ok
[ "$reads" -gt 0 ] && ok "concurrent: $reads allocreport reads" || fail "no allocreport read happened"
echo "tally replay_concurrent seed=$SEED rounds=$rounds processes=$procs_total processes_failed=$procs_failed" \
	"runs_expected=$runs_expected runs_reported=$reported runs_found=$runs_found not_stored_once=$not_once" \
	"report_reads=$reads report_reads_failed=$read_fail write_lock_holds=$lock_holds partial_runs=$partial" \
	"integrity_failures=$([ "$integ" = ok ] && echo 0 || echo 1) seconds=$((SECONDS - t0))"
finish
