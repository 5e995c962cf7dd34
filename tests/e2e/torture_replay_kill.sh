#!/usr/bin/env bash
# torture_replay_kill.sh — allocreplay itself killed (SIGKILL, SIGTERM,
# SIGINT) at random moments, again and again on one database: while it
# compiles a trace (a cold workload cache), while a worker replays, while
# it stores a run, and while a worker hangs (ALLOCRR_WORKER_TEST_HANG). After
# every kill: PRAGMA integrity_check is ok, no run is partial (db_partial:
# an ok run has all its child rows, a failed one none), the runs stored by
# the killed process are exactly a prefix of the runs it had to do (none
# lost before the kill, the one in progress absent), no worker outlives
# allocreplay, and no half-written workload is left in the cache. At the
# end an ordinary allocreplay on the same database works. Prints "tally"
# lines (make torture).
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"
t0=$SECONDS
ALLOCS=(glibc jemalloc pool)
need_allocators "${ALLOCS[@]}"
alist=$(IFS=,; echo "${ALLOCS[*]}")
REPEAT=2
"$B/bin/alloctrace" gen D --ops 100000 -q -o d.zst || { fail "alloctrace gen D"; finish; }
"$AR" d.zst -a glibc --repeat 1 --db warm.db >/dev/null 2>&1 || fail "warm-up replay"
# The runs one allocreplay does, in order (repetition-major).
planned=()
for ((r = 1; r <= REPEAT; r++)); do for a in "${ALLOCS[@]}"; do planned+=("$a|$r"); done; done
SIGS=(KILL TERM)
if env --default-signal=INT true 2>/dev/null; then
	SIGS+=(INT)
	# A background job of a non-interactive shell ignores SIGINT; env puts
	# the default action back, as a terminal's Ctrl-C would find it.
	START=(env --default-signal=INT)
else
	START=()
	echo "note: env --default-signal unsupported here: no SIGINT iterations"
fi

want_version=$(q warm.db 'PRAGMA user_version')
iters=$((12 * SCALE))
killed=0 finished=0 hang_kills=0 cold_kills=0 orphans=0 not_prefix=0 partial_total=0 integ_fail=0
runs_found=0 runs_expected_done=0 in_progress_absent=0 tmp_left=0 swept=0 bad_rc=0 older=0
declare -A by_sig
for ((i = 1; i <= iters; i++)); do
	sig=${SIGS[$(rnd ${#SIGS[@]})]}
	mode=normal
	case $(rnd 4) in 0) mode=hang ;; 1) mode=cold ;; esac
	cache=$T/cache
	[ $mode = cold ] && cache=$T/cache-cold-$i
	before=$(q k.db "SELECT coalesce(max(run_id), 0) FROM runs" 2>/dev/null || echo 0)
	if [ $mode = hang ]; then
		ALLOCRR_WORKER_TEST_HANG=1 ALLOCRR_CACHE_DIR=$cache "${START[@]}" "$AR" d.zst -a "$alist" \
			--repeat $REPEAT --timeout 60 --db k.db --json >out.json 2>err.txt &
		p=$!
		# Wait until a worker exists (it then hangs), then a little more.
		for _ in $(seq 500); do
			kid=''
			read -r kid _ 2>/dev/null <"/proc/$p/task/$p/children"
			[ -n "$kid" ] && break
			snooze 0.01
		done
		snooze "0.0$(rnd 10)"
	else
		ALLOCRR_CACHE_DIR=$cache "${START[@]}" "$AR" d.zst -a "$alist" --repeat $REPEAT \
			--db k.db --json >out.json 2>err.txt &
		p=$!
		# cold cache: early, to land in the compile; else anywhere in the run
		snooze "$(printf '0.%03d' "$(rnd $([ $mode = cold ] && echo 80 || echo 450))")"
	fi
	kill -"$sig" "$p" 2>/dev/null
	{ wait "$p"; } 2>/dev/null # (bash's "Killed" notice)
	rc=$?
	rows=$(q k.db "SELECT allocator || '|' || repetition || '|' || status FROM runs WHERE run_id > $before ORDER BY run_id")
	n=$(printf '%s\n' "$rows" | grep -c .)
	runs_found=$((runs_found + n))
	if [ "$rc" = 0 ]; then
		finished=$((finished + 1)) # done before the signal came
		runs_expected_done=$((runs_expected_done + ${#planned[@]}))
		[ "$n" = ${#planned[@]} ] || { fail "iteration $i: finished with $n runs stored"; not_prefix=$((not_prefix + 1)); }
		[ "$(grep -o '"run_uuid":"[^"]*"' out.json | wc -l)" = ${#planned[@]} ] ||
			fail "iteration $i: finished, but reported $(grep -o '"run_uuid":"' out.json | wc -l) runs"
	elif [ "$rc" = $((128 + $(kill -l "$sig"))) ]; then
		killed=$((killed + 1))
		by_sig[$sig]=$((${by_sig[$sig]:-0} + 1))
		[ $mode = hang ] && hang_kills=$((hang_kills + 1))
		[ $mode = cold ] && cold_kills=$((cold_kills + 1))
		[ "$n" -lt ${#planned[@]} ] && in_progress_absent=$((in_progress_absent + 1))
	else
		bad_rc=$((bad_rc + 1)); fail "iteration $i: allocreplay exit $rc after SIG$sig"; cat err.txt
	fi
	# Stored runs: exactly the first n planned ones, each ok (none lost
	# before the kill; the one in progress is absent, not half there).
	k=0
	while IFS='|' read -r a r st; do
		[ -z "$a" ] && continue
		if [ "$a|$r" != "${planned[$k]}" ] || [ "$st" != ok ]; then
			not_prefix=$((not_prefix + 1)); fail "iteration $i: run $((k + 1)) is $a|$r|$st, want ${planned[$k]}|ok"
			break
		fi
		k=$((k + 1))
	done <<<"$rows"
	# No worker may outlive its allocreplay (a hanging one would never end).
	for _ in $(seq 100); do [ "$(live_workers)" = 0 ] && break; snooze 0.05; done
	left=$(pgrep -f "allocreplay-worker --workload $T/")
	if [ -n "$left" ]; then
		orphans=$((orphans + $(echo "$left" | wc -l))); fail "iteration $i: workers left after SIG$sig: $left"
		kill -9 $left 2>/dev/null
	fi
	v=$(q k.db 'PRAGMA user_version')
	[ "$v" -lt "$want_version" ] && older=$((older + 1)) # killed between two migrations
	p_n=$(db_partial k.db)
	partial_total=$((partial_total + p_n))
	[ "$p_n" = 0 ] || fail "iteration $i: $p_n partial runs"
	integ=$(db_integrity k.db)
	[ "$integ" = ok ] || { integ_fail=$((integ_fail + 1)); fail "iteration $i: $integ"; }
	# A killed process's half-written workload must not stay in the cache.
	if [ $mode = cold ]; then
		tmps=$(find "$cache" -name '*.tmp.*' 2>/dev/null | wc -l)
		if [ "$tmps" != 0 ]; then
			swept=$((swept + tmps))
			# the next allocreplay sweeps the dead process's file away
			ALLOCRR_CACHE_DIR=$cache "$AR" d.zst -a glibc --repeat 1 --db sweep.db >/dev/null 2>&1
			tmps=$(find "$cache" -name '*.tmp.*' | wc -l)
			[ "$tmps" = 0 ] || { tmp_left=$((tmp_left + tmps)); fail "iteration $i: $tmps temporary workloads left"; }
		fi
	fi
done
# After all that, an ordinary run on the same database.
before=$(q k.db "SELECT coalesce(max(run_id), 0) FROM runs")
"$AR" d.zst -a "$alist" --repeat 1 --db k.db >/dev/null 2>err.txt
expect_eq "killed allocreplay: a normal run afterwards" "$?" 0
expect_eq "killed allocreplay: its runs" "$(q k.db "SELECT count(*) FROM runs WHERE run_id > $before AND status = 'ok'")" ${#ALLOCS[@]}
expect_eq "killed allocreplay: partial runs" "$partial_total" 0
expect_eq "killed allocreplay: integrity failures" "$integ_fail" 0
expect_eq "killed allocreplay: stored runs not a prefix of the plan" "$not_prefix" 0
expect_eq "killed allocreplay: orphaned workers" "$orphans" 0
expect_eq "killed allocreplay: temporary workloads left" "$tmp_left" 0
expect_eq "killed allocreplay: unexpected exit codes" "$bad_rc" 0
expect_eq "killed allocreplay: final partial runs" "$(db_partial k.db)" 0
expect_eq "killed allocreplay: schema version at the end" "$(q k.db 'PRAGMA user_version')" "$want_version"
[ "$killed" -gt 0 ] && ok "killed allocreplay: $killed kills" || fail "allocreplay never killed in $iters iterations"
echo "tally replay_allocreplay_killed seed=$SEED iterations=$iters kills=$killed kill_sigkill=${by_sig[KILL]:-0}" \
	"kill_sigterm=${by_sig[TERM]:-0} kill_sigint=${by_sig[INT]:-0} kills_during_hang=$hang_kills" \
	"kills_cold_cache=$cold_kills kills_between_migrations=$older finished_before_kill=$finished runs_found=$runs_found" \
	"runs_expected_from_finished=$runs_expected_done killed_before_last_run=$in_progress_absent" \
	"runs_not_prefix=$not_prefix partial_runs=$partial_total integrity_failures=$integ_fail" \
	"orphaned_workers=$orphans temp_workloads_of_killed=$swept temp_workloads_left=$tmp_left seconds=$((SECONDS - t0))"
finish
