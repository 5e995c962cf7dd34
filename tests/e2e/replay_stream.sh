#!/usr/bin/env bash
# A workload streamed a segment at a time replays exactly what the same
# workload decoded whole replays (workload.h, version 8; worker_main.c,
# --workload-memory). Three traces: `alloctrace gen X --threads 4` (cross-
# thread frees: its dependency SYNCs span several segments per stream),
# `alloctrace gen S2` (8 threads), the window trace of tests/unit/test_window
# (preludes of pre-existing blocks) and that of test_replay_wlfile (a
# prelude of 20000 blocks: two segments, streamed across), each replayed
# under glibc and pool with the default --workload-memory (all three fit:
# decoded before the baselines) and with --workload-memory 0 (always
# streamed). Per trace and allocator the figures that do not depend on
# timing — status, op_checksum, ops, failed_allocs, dep_waits,
# peak_live_bytes — must be identical between the two; no timing is
# compared. That the streamed workers really streamed is seen in their
# baseline RSS: X's decoded ops (~19 MB) are in the resident workers'
# baseline and not in the streamed ones' (a segment per thread, ~2 MB).
# allocreplay notes the traces it will stream. A bad --workload-memory is
# a usage error (exit 1, one line and the hint, as tests/e2e/replay_cli.sh).
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"
need_allocators glibc pool
AT=$B/bin/alloctrace
WINGEN=$B/tests/test_window BIGWIN=$B/tests/test_replay_wlfile
for f in "$WINGEN" "$BIGWIN"; do
	[ -x "$f" ] || { echo "missing $f: make test-build first"; exit 77; }
done

"$AT" gen X --threads 4 --ops 400000 -q -o x.zst || { fail "alloctrace gen X"; finish; }
"$AT" gen S2 --ops 200000 -q -o s2.zst || { fail "alloctrace gen S2"; finish; }
"$WINGEN" win.zst >/dev/null 2>&1 || { fail "test_window win.zst"; finish; }
"$BIGWIN" bigwin.zst >/dev/null 2>&1 || { fail "test_replay_wlfile bigwin.zst"; finish; }
traces=(x.zst s2.zst win.zst bigwin.zst)

# replay DB [options]: replay the traces under glibc and pool once.
replay() {
	local db=$1
	shift
	"$AR" "${traces[@]}" -a glibc,pool --no-baseline --repeat 1 --db "$db" "$@" >"$db.out" 2>"$db.err"
}
replay resident.db
expect_eq "default --workload-memory: exit" $? 0
replay streamed.db --workload-memory 0
expect_eq "--workload-memory 0: exit" $? 0

# ---- the same replay, resident or streamed --------------------------------------
FIGS="trace_sha256, allocator, status, op_checksum, ops, failed_allocs, dep_waits, peak_live_bytes"
for db in resident.db streamed.db; do
	expect_eq "$db: runs" "$(q $db 'SELECT count(*) FROM runs')" 8
	expect_eq "$db: runs not ok" "$(q $db "SELECT count(*) FROM runs WHERE status <> 'ok'")" 0
	expect_eq "$db: runs without the figures" \
		"$(q $db 'SELECT count(*) FROM runs WHERE op_checksum IS NULL OR ops IS NULL
		          OR dep_waits IS NULL OR failed_allocs IS NULL OR peak_live_bytes IS NULL')" 0
done
for tr in "${traces[@]}"; do
	sha=$(sha256sum "$tr" | cut -d' ' -f1)
	for a in glibc pool; do
		sel="SELECT $FIGS FROM runs WHERE trace_sha256 = '$sha' AND allocator = '$a'"
		r=$(q resident.db "$sel")
		s=$(q streamed.db "$sel")
		if [ -n "$r" ] && [ "$r" = "$s" ]; then
			ok "$tr $a: resident and streamed agree ($(echo "$r" | cut -d'|' -f4-))"
		else
			fail "$tr $a: resident '$r', streamed '$s'"
		fi
	done
	# one checksum per trace: the allocator does not change the ops either
	expect_eq "$tr: one op checksum over both modes and allocators" \
		"$( (q resident.db "SELECT op_checksum FROM runs WHERE trace_sha256 = '$sha'"
		     q streamed.db "SELECT op_checksum FROM runs WHERE trace_sha256 = '$sha'") | sort -u | wc -l)" 1
done
xsha=$(sha256sum x.zst | cut -d' ' -f1)
expect_eq "X: dependencies were waited for" \
	"$(q streamed.db "SELECT count(*) FROM runs WHERE trace_sha256 = '$xsha' AND dep_waits > 1000")" 2
wsha=$(sha256sum win.zst | cut -d' ' -f1)
expect_eq "window trace streamed: every block allocated (pre-existing ones too) is freed" \
	"$(q streamed.db "SELECT count(*) FROM runs WHERE trace_sha256 = '$wsha'
	                  AND allocs_expected = frees_expected AND allocs_expected >= 6 AND failed_allocs = 0")" 2
bsha=$(sha256sum bigwin.zst | cut -d' ' -f1)
expect_eq "20000 pre-existing blocks streamed: every one allocated and freed" \
	"$(q streamed.db "SELECT count(*) FROM runs WHERE trace_sha256 = '$bsha'
	                  AND allocs_expected = frees_expected AND allocs_expected >= 20000 AND failed_allocs = 0")" 2

# ---- the streamed workers streamed ------------------------------------------------
rmin=$(q resident.db "SELECT min(baseline_rss_bytes) FROM runs WHERE trace_sha256 = '$xsha'")
smax=$(q streamed.db "SELECT max(baseline_rss_bytes) FROM runs WHERE trace_sha256 = '$xsha'")
if [ -n "$rmin" ] && [ -n "$smax" ] && [ "$smax" -lt $((rmin / 2)) ]; then
	ok "X: streamed baselines at most $smax bytes, resident at least $rmin (its decoded ops)"
else
	fail "X: streamed baseline RSS '$smax' not below half the resident '$rmin': did the worker stream?"
fi

# ---- allocreplay says which traces it streams ---------------------------------------
n=$(grep -c 'note: .*streams it a segment at a time' streamed.db.err)
expect_eq "--workload-memory 0: a note per trace" "$n" 4
expect_eq "default: no trace noted as streamed" "$(grep -c 'streams it a segment' resident.db.err)" 0
"$AR" x.zst win.zst -a glibc --no-baseline --repeat 1 --db mid.db --workload-memory 4M >mid.out 2>mid.err
expect_eq "--workload-memory 4M: exit" $? 0
expect_eq "--workload-memory 4M: X (~19 MB decoded) streamed" \
	"$(grep -c '^allocreplay: note: x.zst: .*streams it' mid.err)" 1
expect_eq "--workload-memory 4M: the window trace decoded whole" "$(grep -c 'win.zst: .*streams it' mid.err)" 0
expect_eq "--workload-memory 4M: the same X checksum" \
	"$(q mid.db "SELECT op_checksum FROM runs WHERE trace_sha256 = '$xsha'")" \
	"$(q resident.db "SELECT op_checksum FROM runs WHERE trace_sha256 = '$xsha' AND allocator = 'glibc'")"

# ---- a bad --workload-memory is a usage error -----------------------------------------
hint="Try 'allocreplay --help' for more information."
for v in abc -1 12X 99999999999999999999999 ''; do
	"$AR" x.zst --workload-memory="$v" --db bad.db >bad.out 2>bad.err
	rc=$?
	expect_eq "--workload-memory='$v': exit" $rc 1
	expect_eq "--workload-memory='$v': names the option" "$(head -1 bad.err | grep -c -- "--workload-memory")" 1
	expect_eq "--workload-memory='$v': the hint" "$(sed -n 2p bad.err)" "$hint"
	expect_eq "--workload-memory='$v': nothing on stdout" "$(wc -c <bad.out)" 0
done
[ -e bad.db ] && fail "a usage error created the database" || ok "no database for a usage error"
finish
