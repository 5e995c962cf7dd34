#!/usr/bin/env bash
# torture_replay_workers.sh — replay workers killed at random. Each
# iteration runs allocreplay with three allocators on one database and
# sends one of them (chosen at random) SIGKILL, SIGSEGV or SIGTERM after a
# random delay. The victim's run must be stored as failed with the signal
# in its reason and no child rows (crashed; or oom for a SIGKILL when the
# cgroup cannot rule the OOM killer out), or as ok when the kill came after
# the worker had finished; the other allocators' runs must be ok; every
# run allocreplay reported (--json run_uuid) must be in the database once;
# and the database must stay whole (db_partial, db_integrity). First, a
# worker that dies in the middle of its report: nothing of the cut report
# may be stored as a number. Prints "tally" lines (make torture).
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"
t0=$SECONDS
ALLOCS=(glibc jemalloc pool)
need_allocators "${ALLOCS[@]}"
"$B/bin/alloctrace" gen D --ops 100000 -q -o d.zst || { fail "alloctrace gen D"; finish; }
"$B/bin/alloctrace" gen X --ops 60000 -q -o x.zst || { fail "alloctrace gen X"; finish; }
TRACES=(d.zst x.zst)
for tr in "${TRACES[@]}"; do # compile once, outside the kills
	"$AR" "$tr" -a glibc --repeat 1 --db warm.db >/dev/null 2>&1 || fail "warm-up replay of $tr"
done

# ---- 1. a report cut off in the middle -----------------------------------------
# A stand-in worker (ALLOCRR_WORKER) writes the start of a report, with its
# last line cut ("S calls 12" of "S calls 1234567"), and dies.
LIBC=$("$AR" --list | awk '$1 == "glibc" { print $5 }')
cut_cases=0 cut_numbers=0 cut_children=0 cut_status=0
for how in SEGV KILL exit; do
	cat >cutworker.sh <<-EOF
	#!/bin/sh
	printf 'A allocrr-worker 1\nV 0 %s\nS threads 1\nH malloc 5 50 1 20\nB malloc 3 5\nR 0 1 2 3 4\nC cycles - refused\nT arena_bytes 7\nS calls 12' '$LIBC' >&3
	if [ $how = exit ]; then exit 0; fi
	kill -$how \$\$
	EOF
	chmod +x cutworker.sh
	ALLOCRR_WORKER=$T/cutworker.sh "$AR" d.zst -a glibc --repeat 1 --db cut.db >/dev/null 2>&1
	cut_cases=$((cut_cases + 1))
	row=$(q cut.db "SELECT status, coalesce(ops, 'NULL'), coalesce(threads, 'NULL'), coalesce(library_path, 'NULL')
		FROM runs ORDER BY run_id DESC LIMIT 1")
	case $how in
	SEGV) want="crashed|NULL|NULL|$LIBC" ;;
	KILL) want="crashed|NULL|NULL|$LIBC"
		[ "${row%%|*}" = oom ] && want="oom|NULL|NULL|$LIBC" ;; # cgroup count unreadable
	exit) want="crashed|NULL|NULL|$LIBC" ;;
	esac
	[ "$row" = "$want" ] || { cut_status=$((cut_status + 1)); fail "cut report ($how): row '$row', want '$want'"; }
	case $row in *"|12|"* | *"|1|"*) cut_numbers=$((cut_numbers + 1)) ;; esac
	id=$(q cut.db "SELECT max(run_id) FROM runs")
	n=$(q cut.db "SELECT (SELECT count(*) FROM latency WHERE run_id = $id) + (SELECT count(*) FROM histogram WHERE run_id = $id)
		+ (SELECT count(*) FROM rss_samples WHERE run_id = $id) + (SELECT count(*) FROM counters WHERE run_id = $id)
		+ (SELECT count(*) FROM allocator_stats WHERE run_id = $id)")
	[ "$n" = 0 ] || { cut_children=$((cut_children + 1)); fail "cut report ($how): $n child rows stored"; }
done
expect_eq "cut reports: numbers stored from them" "$cut_numbers" 0
expect_eq "cut reports: child rows stored" "$cut_children" 0
expect_eq "cut reports: integrity" "$(db_integrity cut.db)" ok
echo "tally replay_cut_report cases=$cut_cases wrong_status=$cut_status numbers_stored=$cut_numbers child_rows_stored=$cut_children"

# ---- 2. workers killed at random -----------------------------------------------
SIGS=(KILL SEGV TERM)
alist=$(IFS=,; echo "${ALLOCS[*]}")
iters=$((20 * SCALE))
sent=0 landed=0 missed=0 undetected=0 wrong=0 others_bad=0 lost=0 dup=0 bad_rc=0
runs_expected=0 runs_found=0 reported=0
declare -A landed_by
for ((i = 1; i <= iters; i++)); do
	tr=${TRACES[$(rnd ${#TRACES[@]})]}
	victim=$(rnd ${#ALLOCS[@]})
	sig=${SIGS[$(rnd ${#SIGS[@]})]}
	delay=$(printf '0.%03d' "$(rnd 80)")
	before=$(q w.db "SELECT coalesce(max(run_id), 0) FROM runs" 2>/dev/null || echo 0)
	# (no command substitution on this line: the background job would run it
	# in a child of its own before it becomes allocreplay, a "worker" to us)
	"$AR" "$tr" -a "$alist" --repeat 1 --db w.db --json >out.json 2>err.txt &
	p=$!
	# The victim is the (victim+1)-th worker allocreplay starts (one at a time).
	seen=0 last='' wpid=''
	while :; do
		read -r _ _ state _ 2>/dev/null <"/proc/$p/stat" || break
		[ "$state" = Z ] && break
		kid=''
		read -r kid _ 2>/dev/null <"/proc/$p/task/$p/children"
		if [ -n "$kid" ] && [ "$kid" != "$last" ]; then
			seen=$((seen + 1)) last=$kid
			if [ $seen -eq $((victim + 1)) ]; then wpid=$kid; break; fi
		fi
		snooze 0.002
	done
	if [ -n "$wpid" ]; then
		snooze "$delay"
		kill -"$sig" "$wpid" 2>/dev/null && sent=$((sent + 1))
	else
		undetected=$((undetected + 1)) # allocreplay was done before we saw that worker
	fi
	wait "$p"
	rc=$?
	runs_expected=$((runs_expected + ${#ALLOCS[@]}))
	rows=$(q w.db "SELECT allocator || '|' || status || '|' || coalesce(reason, '') FROM runs WHERE run_id > $before ORDER BY run_id")
	n=$(printf '%s\n' "$rows" | grep -c .)
	runs_found=$((runs_found + n))
	[ "$n" = ${#ALLOCS[@]} ] || { lost=$((lost + 1)); fail "iteration $i: $n runs stored, want ${#ALLOCS[@]}"; }
	k=0 failed_here=0
	while IFS='|' read -r alloc status reason; do
		if [ $k -eq "$victim" ] && [ -n "$wpid" ]; then
			num=$(kill -l "$sig")
			if [ "$status" = ok ]; then
				missed=$((missed + 1)) # the worker had finished: nothing to kill
			elif { [ "$status" = crashed ] && [[ $reason == *"signal $num "* ]]; } ||
				{ [ "$sig" = KILL ] && [ "$status" = oom ] && [[ $reason == *SIGKILL* ]]; }; then
				landed=$((landed + 1)) failed_here=1
				landed_by[$sig]=$((${landed_by[$sig]:-0} + 1))
			else
				wrong=$((wrong + 1)); fail "iteration $i: $alloc got SIG$sig: $status: $reason"
			fi
		elif [ "$status" != ok ]; then
			others_bad=$((others_bad + 1)); fail "iteration $i: $alloc (not the victim): $status: $reason"
		fi
		k=$((k + 1))
	done <<<"$rows"
	want_rc=0
	[ $failed_here = 1 ] && want_rc=2
	[ "$rc" = $want_rc ] || { bad_rc=$((bad_rc + 1)); fail "iteration $i: allocreplay exit $rc, want $want_rc"; cat err.txt; }
	for u in $(grep -o '"run_uuid":"[^"]*"' out.json | cut -d'"' -f4); do
		reported=$((reported + 1))
		c=$(q w.db "SELECT count(*) FROM runs WHERE run_uuid = '$u'")
		[ "$c" = 1 ] || { dup=$((dup + 1)); fail "iteration $i: run $u stored $c times"; }
	done
done
partial=$(db_partial w.db)
integ=$(db_integrity w.db)
expect_eq "killed workers: runs found" "$runs_found" "$runs_expected"
expect_eq "killed workers: reported runs stored once" "$reported" "$runs_expected"
expect_eq "killed workers: uuids not found exactly once" "$dup" 0
expect_eq "killed workers: victims with a wrong status" "$wrong" 0
expect_eq "killed workers: other allocators' runs not ok" "$others_bad" 0
expect_eq "killed workers: partial runs" "$partial" 0
expect_eq "killed workers: integrity" "$integ" ok
expect_eq "killed workers: no worker left" "$(live_workers)" 0
[ "$landed" -gt 0 ] && ok "killed workers: $landed kills landed" || fail "no kill landed in $iters iterations"
echo "tally replay_workers_killed seed=$SEED iterations=$iters kills_sent=$sent kills_landed=$landed" \
	"landed_kill=${landed_by[KILL]:-0} landed_segv=${landed_by[SEGV]:-0} landed_term=${landed_by[TERM]:-0}" \
	"kills_after_worker_done=$missed victim_not_seen=$undetected wrong_status=$wrong other_runs_failed=$others_bad" \
	"runs_expected=$runs_expected runs_found=$runs_found runs_reported=$reported uuid_mismatch=$dup" \
	"partial_runs=$partial integrity_failures=$([ "$integ" = ok ] && echo 0 || echo 1) seconds=$((SECONDS - t0))"
finish
