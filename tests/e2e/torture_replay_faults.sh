#!/usr/bin/env bash
# torture_replay_faults.sh — allocators that fail, run as "pool" through
# ALLOCRR_LIBDIR beside a real glibc run on one database:
#   libnull.so  returns NULL from a random call on, always or with a random
#               probability: the worker must not crash; the run is ok, its
#               failed_allocs equals the NULLs the library handed out, the
#               frees and reallocs of the missing blocks are skipped (ops +
#               skipped = the trace's calls) and the reason says so; with NULL
#               from the very first call the run is ok or an error, never a
#               crash;
#   libhang.so  never returns from a random call: --timeout kills the worker,
#               status timeout;
#   libcrash.so dies at a random call (SIGSEGV raised, a wild store, abort,
#               or _exit(0) mid-call): status crashed, with the signal or the
#               missing report in the reason; or floods the report pipe:
#               allocreplay stops at its cap, status error, its memory bounded.
# The glibc run after each must be ok, and the database whole (db_partial,
# db_integrity). Prints "tally" lines (make torture).
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"
t0=$SECONDS
libs="$B/tests/replay"
for l in libnull libhang libcrash; do
	[ -f "$libs/$l.so" ] || { echo "missing $libs/$l.so: build first"; exit 77; }
	mkdir -p "$l" && cp "$libs/$l.so" "$l/liballocrr-pool.so"
done
"$B/bin/alloctrace" gen X --ops 20000 -q -o x.zst || { fail "alloctrace gen X"; finish; }
"$B/bin/alloctrace" gen D --ops 20000 -q -o d.zst || { fail "alloctrace gen D"; finish; }
# one thread; two with cross-thread frees; one with reallocs
TRACES=("$ROOT/traces/samples/s1-3k.zst" x.zst d.zst)

# last_run: "status|failed_allocs|ops|reason" of the newest run of an allocator
last_run() {
	q f.db "SELECT status || '|' || coalesce(failed_allocs, 'NULL') || '|' || coalesce(ops, 'NULL') || '|' || coalesce(reason, '')
		FROM runs WHERE allocator = '$1' ORDER BY run_id DESC LIMIT 1"
}
trace_calls() { q f.db "SELECT calls FROM traces WHERE name = '$(basename "$1")'"; }
glibc_bad=0
check_glibc() { # iteration label
	local g
	g=$(last_run glibc)
	[ "${g%%|*}" = ok ] || { glibc_bad=$((glibc_bad + 1)); fail "$1: glibc after it: $g"; }
}

# Heap calls a worker makes outside the replay, per trace: libnull counting
# without failing (PERMILLE=0). NULLs start after them, so they all land in
# the replay.
declare -A outside
for tr in "${TRACES[@]}"; do
	ALLOCRR_LIBDIR=$T/libnull ALLOCRR_TEST_NULL_PERMILLE=0 ALLOCRR_TEST_NULL_COUNT=$T/count \
		"$AR" "$tr" -a pool --repeat 1 --db f.db >/dev/null 2>&1 || fail "counting run on $tr"
	read -r calls _ <count
	outside[$tr]=$((calls - $(trace_calls "$tr")))
	[ "${outside[$tr]}" -ge 0 ] && ok "$(basename "$tr"): ${outside[$tr]} heap calls outside the replay" ||
		fail "$(basename "$tr"): $calls calls counted, fewer than the trace's"
done

# ---- 1. NULL from a random call on, with a random probability ------------------------
n_iter=$((8 * SCALE)) n_ok=0 n_injected=0 n_counted=0 n_skipped=0 n_bad=0 n_mismatch=0
PERMILLES=(1 10 100 500 1000)
for ((i = 1; i <= n_iter; i++)); do
	tr=${TRACES[$(rnd ${#TRACES[@]})]}
	calls=$(trace_calls "$tr")
	pm=${PERMILLES[$(rnd ${#PERMILLES[@]})]}
	after=$((outside[$tr] + $(rnd "$calls")))
	rm -f count
	ALLOCRR_LIBDIR=$T/libnull ALLOCRR_TEST_NULL_AFTER=$after ALLOCRR_TEST_NULL_PERMILLE=$pm \
		ALLOCRR_TEST_NULL_SEED=$i ALLOCRR_TEST_NULL_COUNT=$T/count \
		"$AR" "$tr" -a pool,glibc --repeat 1 --db f.db >out.txt 2>err.txt
	rc=$?
	check_glibc "null $i"
	IFS='|' read -r st fa ops reason <<<"$(last_run pool)"
	nulls=NONE
	[ -f count ] && read -r _ nulls <count
	label="null $i ($(basename "$tr"), after $after, $pm/1000)"
	if [ "$st" != ok ] || [ "$rc" != 0 ]; then
		n_bad=$((n_bad + 1)); fail "$label: exit $rc, $st: $reason"; continue
	fi
	n_ok=$((n_ok + 1))
	skipped=0
	[[ $reason =~ ([0-9]+)\ free/realloc ]] && skipped=${BASH_REMATCH[1]}
	n_injected=$((n_injected + nulls)) n_counted=$((n_counted + fa)) n_skipped=$((n_skipped + skipped))
	good=1
	[ "$fa" = "$nulls" ] || { good=0; fail "$label: failed_allocs $fa, library returned $nulls NULLs"; }
	[ $((ops + skipped)) = "$calls" ] || { good=0; fail "$label: ops $ops + skipped $skipped != calls $calls"; }
	if [ "$fa" -gt 0 ]; then
		[[ $reason == "$fa allocation(s) returned NULL"* ]] || { good=0; fail "$label: reason '$reason'"; }
		grep -q "warning: pool on" err.txt || { good=0; fail "$label: no warning on stderr"; }
	else
		[ -z "$reason" ] || { good=0; fail "$label: reason '$reason' without a NULL"; }
	fi
	[ $good = 1 ] || n_mismatch=$((n_mismatch + 1))
done
[ "$n_injected" -gt 0 ] && ok "null: $n_injected NULLs injected" || fail "null: no NULL injected"
echo "tally replay_null_allocator seed=$SEED iterations=$n_iter runs_ok=$n_ok runs_not_ok=$n_bad" \
	"nulls_injected=$n_injected failed_allocs_counted=$n_counted ops_skipped=$n_skipped mismatches=$n_mismatch"

# ---- 2. NULL from the first call (start-up included) ---------------------------
a_ok=0 a_error=0 a_bad=0
for tr in "${TRACES[@]}"; do
	ALLOCRR_LIBDIR=$T/libnull "$AR" "$tr" -a pool,glibc --repeat 1 --db f.db >out.txt 2>err.txt
	rc=$?
	check_glibc "always-null $(basename "$tr")"
	IFS='|' read -r st fa ops reason <<<"$(last_run pool)"
	case "$st:$rc" in
	ok:0) a_ok=$((a_ok + 1)) ;;
	error:2) a_error=$((a_error + 1)) ;;
	*) a_bad=$((a_bad + 1)); fail "always-null $(basename "$tr"): exit $rc, $st: $reason" ;;
	esac
done
expect_eq "always-null: runs neither ok nor error" "$a_bad" 0
echo "tally replay_null_from_start runs=${#TRACES[@]} ok=$a_ok error=$a_error other=$a_bad"

# ---- 3. an allocator that hangs inside a call --------------------------------------
h_iter=$((2 * SCALE)) h_timeout=0 h_bad=0
for ((i = 1; i <= h_iter; i++)); do
	tr=${TRACES[$(rnd ${#TRACES[@]})]}
	after=$(($(rnd $((outside[$tr] + $(trace_calls "$tr")))) + 1))
	ALLOCRR_LIBDIR=$T/libhang ALLOCRR_TEST_HANG_AFTER=$after \
		"$AR" "$tr" -a pool,glibc --repeat 1 --timeout 1 --db f.db >out.txt 2>err.txt
	rc=$?
	check_glibc "hang $i"
	IFS='|' read -r st fa ops reason <<<"$(last_run pool)"
	if [ "$st" = timeout ] && [ "$rc" = 2 ] && [ "$ops" = NULL ]; then
		h_timeout=$((h_timeout + 1))
	else
		h_bad=$((h_bad + 1)); fail "hang $i (call $after): exit $rc, $st, ops $ops: $reason"
	fi
done
expect_eq "hang: no worker left" "$(live_workers)" 0
echo "tally replay_hanging_allocator seed=$SEED iterations=$h_iter timeouts=$h_timeout wrong=$h_bad"

# ---- 4. an allocator that crashes at a random call ------------------------------------
c_iter=$((8 * SCALE)) c_crashed=0 c_bad=0
HOWS=(segv deref abort exit)
declare -A c_by
for ((i = 1; i <= c_iter; i++)); do
	tr=${TRACES[$(rnd ${#TRACES[@]})]}
	how=${HOWS[$(rnd ${#HOWS[@]})]}
	after=$(($(rnd $((outside[$tr] + $(trace_calls "$tr")))) + 1))
	ALLOCRR_LIBDIR=$T/libcrash ALLOCRR_TEST_CRASH_AFTER=$after ALLOCRR_TEST_CRASH_HOW=$how \
		"$AR" "$tr" -a pool,glibc --repeat 1 --db f.db >out.txt 2>err.txt
	rc=$?
	check_glibc "crash $i"
	IFS='|' read -r st fa ops reason <<<"$(last_run pool)"
	case $how in
	segv | deref) want="killed by signal 11 " ;;
	abort) want="killed by signal 6 " ;;
	exit) want="worker exited with status 0 without a complete report" ;;
	esac
	if [ "$st" = crashed ] && [ "$rc" = 2 ] && [ "$ops" = NULL ] && [[ $reason == *"$want"* ]]; then
		c_crashed=$((c_crashed + 1)) c_by[$how]=$((${c_by[$how]:-0} + 1))
	else
		c_bad=$((c_bad + 1)); fail "crash $i ($how at call $after): exit $rc, $st, ops $ops: $reason"
	fi
done
echo "tally replay_crashing_allocator seed=$SEED iterations=$c_iter crashed=$c_crashed" \
	"segv=${c_by[segv]:-0} wild_store=${c_by[deref]:-0} abort=${c_by[abort]:-0} exit_mid_call=${c_by[exit]:-0} wrong=$c_bad"

# ---- 5. something writing to the worker's report pipe without end ---------------------
# allocreplay reads at most AR_REPORT_MAX (64 MiB) of report: then it kills
# the worker and stores an "error" run with no numbers; its own peak RSS
# stays near that cap (measured by GNU time's %M, in KiB), however long the
# flood would go on.
f_iter=$((2 * SCALE)) f_ok=0 f_bad=0 f_peak=0
for ((i = 1; i <= f_iter; i++)); do
	tr=${TRACES[$(rnd ${#TRACES[@]})]}
	ALLOCRR_LIBDIR=$T/libcrash ALLOCRR_TEST_CRASH_AFTER=$(($(rnd 500) + 1)) ALLOCRR_TEST_CRASH_HOW=flood \
		/usr/bin/time -f %M -o rss.txt "$AR" "$tr" -a pool,glibc --repeat 1 --timeout 0 --db f.db >out.txt 2>err.txt
	rc=$?
	check_glibc "flood $i"
	IFS='|' read -r st fa ops reason <<<"$(last_run pool)"
	kb=$(tail -n 1 rss.txt)
	[ "$kb" -gt "$f_peak" ] && f_peak=$kb
	if [ "$st" = error ] && [ "$rc" = 2 ] && [ "$ops" = NULL ] && [[ $reason == *"report outgrew 64 MiB"* ]] &&
		[ "$kb" -lt $((3 * 65536)) ]; then
		f_ok=$((f_ok + 1))
	else
		f_bad=$((f_bad + 1)); fail "flood $i: exit $rc, $st, ops $ops, allocreplay peak ${kb} KiB: $reason"
	fi
done
echo "tally replay_flooded_report seed=$SEED iterations=$f_iter stopped=$f_ok wrong=$f_bad max_allocreplay_rss_kib=$f_peak"

partial=$(db_partial f.db)
integ=$(db_integrity f.db)
expect_eq "faults: glibc runs beside them not ok" "$glibc_bad" 0
expect_eq "faults: null runs wrong" "$((n_bad + n_mismatch))" 0
expect_eq "faults: hang runs wrong" "$h_bad" 0
expect_eq "faults: crash runs wrong" "$c_bad" 0
expect_eq "faults: flooded report runs wrong" "$f_bad" 0
expect_eq "faults: partial runs" "$partial" 0
expect_eq "faults: integrity" "$integ" ok
echo "tally replay_faults_db runs=$(q f.db "SELECT count(*) FROM runs") glibc_not_ok=$glibc_bad partial_runs=$partial" \
	"integrity_failures=$([ "$integ" = ok ] && echo 0 || echo 1) seconds=$((SECONDS - t0))"
finish
