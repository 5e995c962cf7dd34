#!/usr/bin/env bash
# make bench-rec: the recorder's cost on a malloc-heavy program of our own
# (bench_rec_workload: EVENTS heap calls over 1024 slots per thread), run
# bare, under allocrec --paused (the shim loaded, no window open: the cost
# a program pays between windows), allocrec, allocrec -o - (streamed
# through a pipe to `cat >FILE`), allocrec --stacks, allocrec -p PID (an
# attached window: the program started unrecorded, held until the attach
# is done, then timed), heaptrack and glibc's memusage,
# with 1 and 2 threads and three size distributions (any byte count / a set
# of 40 program-like sizes / `tight`: 80 % of calls 16-256 B, all from
# glibc's thread cache, ~30 ns a call bare). The modes run interleaved — one run of each, RUNS
# times — so a noisy neighbour hits them alike; the median wall time gives
# the slowdown against the bare run, and each recorder's output gives its
# bytes per recorded event (and, streamed, the events dropped because the
# reader fell behind: none expected from cat). The workload also reports the
# CPU time of its own threads per call: the recorder's cost on the program's
# threads, apart from its writer thread's, which a busy machine moves less
# than wall time (the "thread ns/call" and "+ns/event" columns).
# REC_OLD=PATH adds a row "allocrec (old)" run with another build's allocrec
# (e.g. the previous commit's), interleaved with the others: before and
# after in one run.
# SAMPLING=1 (the default) ends with the fidelity check of the recorder's
# clock sampling: traces recorded with --time-every=1 (every call reads the
# clock) of the 2-thread workload, demo_server and a 4-thread Python, their
# times resampled by bench_stamp_sim with the recorder's own rule, both
# compiled by bench_replay_compile: the schedules are compared.
#   ALLOCRR_BUILD=build EVENTS=4000000 RUNS=5 SIZES="any set tight" SAMPLING=1 bash bench/rec/run.sh
set -u
B=$(cd "${ALLOCRR_BUILD:-build}" && pwd)
EVENTS=${EVENTS:-4000000}
RUNS=${RUNS:-5}
SIZES=${SIZES:-any set tight}
SAMPLING=${SAMPLING:-1}
WL=$B/bin/bench_rec_workload
REC=$B/bin/allocrec
AT=$B/bin/alloctrace
T=$(mktemp -d /tmp/allocrr-bench-rec.XXXXXX)
trap 'rm -rf "$T"' EXIT
if ! command -v heaptrack >/dev/null && [ "$(id -u)" = 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq heaptrack >/dev/null 2>&1
fi
modes="bare paused allocrec stream stacks"
REC_OLD=${REC_OLD:-}
[ -n "$REC_OLD" ] && modes="bare old allocrec paused stream stacks"
command -v gdb >/dev/null && modes="$modes attach" || echo "gdb not installed: the allocrec -p row is skipped"
command -v heaptrack >/dev/null && modes="$modes heaptrack" || echo "heaptrack not installed: skipped"
command -v memusage >/dev/null && modes="$modes memusage" || echo "memusage not installed: skipped"

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
stream_to() { local f=$1; shift; "$REC" -q -o - "$@" | cat >"$f"; }
# wall CMD...: its wall time; its standard output is kept in $T/last.out
wall() { local t0=$EPOCHREALTIME; "$@" >"$T/last.out" 2>/dev/null; awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN{printf "%.4f\n", b-a}'; }

# attached OUT ARGS...: the workload started unrecorded and held at its gate,
# allocrec -p attached to it (a window, GOT rebinding), then the gate
# opened: the wall time from the gate to the program's exit (the same calls
# as the other rows; gdb's attach time is not in it — see make bench-attach).
attached() {
	local out=$1 pid rec t0; shift
	rm -f "$T/gate"
	BENCH_REC_GATE=$T/gate "$WL" "$@" >"$T/last.out" 2>/dev/null &
	pid=$!
	# the shell's child runs the workload once it has exec'ed it
	for _ in $(seq 1000); do [ "$(readlink /proc/$pid/exe)" = "$WL" ] && break; sleep 0.01; done
	"$REC" -p $pid -o "$out/t.zst" 2>"$out/attach.err" &
	rec=$!
	for _ in $(seq 1200); do
		grep -q "recording process" "$out/attach.err" && break
		kill -0 $rec 2>/dev/null || break
		sleep 0.05
	done
	grep -q "recording process" "$out/attach.err" || { echo "attach failed: $(cat "$out/attach.err")" >&2; touch "$T/gate"; wait; echo nan; return; }
	t0=$EPOCHREALTIME
	touch "$T/gate"
	wait $pid
	awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN{printf "%.4f\n", b-a}'
	wait $rec
}

# one_run MODE THREADS SIZES: append its wall time to $T/MODE.times and
# keep its output for the size measurement.
one_run() {
	local mode=$1 th=$2 sz=$3 out=$T/out-$1
	rm -rf "$out" "$T/last.out"; mkdir -p "$out"
	case $mode in
	bare) wall "$WL" $th $EVENTS $sz ;;
	paused) wall "$REC" -q --paused -o "$out/t.zst" "$WL" $th $EVENTS $sz ;; # loaded, no window
	allocrec) wall "$REC" -q -o "$out/t.zst" "$WL" $th $EVENTS $sz ;;
	old) wall "$REC_OLD" -q -o "$out/t.zst" "$WL" $th $EVENTS $sz ;;
	stream) wall stream_to "$out/t.zst" "$WL" $th $EVENTS $sz ;;
	stacks) wall "$REC" -q --stacks -o "$out/t.zst" "$WL" $th $EVENTS $sz ;;
	attach) attached "$out" $th $EVENTS $sz ;;
	heaptrack) (cd "$out" && wall heaptrack -o "$out/ht" "$WL" $th $EVENTS $sz) ;;
	memusage) wall memusage "$WL" $th $EVENTS $sz ;;
	esac >>"$T/$mode.times"
	# the workload's own line: "N heap calls, X ns of thread CPU per call"
	# (none when streamed: PROG's output is not on allocrec's standard output then)
	sed -n 's/.* calls, \([0-9.]*\) ns of thread CPU per call.*/\1/p' "$T/last.out" 2>/dev/null | tail -1 | grep . >>"$T/$mode.cpu"
}

bytes_per_event() { # mode
	local f
	case $1 in
	allocrec|old|stacks|stream|attach)
		f=$T/out-$1/t.zst
		awk -v b=$(stat -c %s "$f") -v e=$("$AT" info "$f" --json | sed 's/.*"events":\([0-9]*\).*/\1/') \
			-v d=$("$AT" info "$f" --json | grep -o '"dropped_events":[0-9]*' | cut -d: -f2) \
			'BEGIN{printf "%.2f", b/e; if (d > 0) printf " (%d dropped)", d}' ;;
	heaptrack)
		f=$(ls "$T"/out-heaptrack/ht* 2>/dev/null | head -1)
		[ -n "$f" ] && awk -v b=$(stat -c %s "$f") -v e=$EVENTS 'BEGIN{printf "%.2f", b/e}' || echo - ;;
	*) echo - ;;
	esac
}

echo "bench-rec: $EVENTS heap calls, median of $RUNS interleaved runs, $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
printf '%-18s %-5s %7s %10s %9s %12s %16s %10s\n' mode sizes threads "median s" slowdown bytes/event "thread ns/call" "+ns/event"
for sz in $SIZES; do
	for th in 1 2; do
		rm -f "$T"/*.times "$T"/*.cpu
		for ((i = 0; i < RUNS; i++)); do
			for mode in $modes; do one_run $mode $th $sz; done
		done
		base=$(median <"$T/bare.times")
		cbase=$(median <"$T/bare.cpu")
		for mode in $modes; do
			med=$(median <"$T/$mode.times")
			label=$mode; [ $mode = stacks ] && label="allocrec --stacks"; [ $mode = stream ] && label="allocrec -o - |cat"
			[ $mode = paused ] && label="allocrec --paused"; [ $mode = attach ] && label="allocrec -p PID"
			[ $mode = old ] && label="allocrec (old)"
			cpu=$( [ -s "$T/$mode.cpu" ] && median <"$T/$mode.cpu")
			[ -n "$cpu" ] && extra=$(awk -v a=$cpu -v b=$cbase 'BEGIN{printf "%+.1f", a-b}') || { cpu=-; extra=-; }
			printf '%-18s %-5s %7d %10.3f %8.2fx %12s %16s %10s\n' "$label" $sz $th $med \
				"$(awk -v a=$med -v b=$base 'BEGIN{print a/b}')" "$(bytes_per_event $mode)" "$cpu" "$extra"
		done
	done
done

# ---- the fidelity check of the clock sampling (recorder/rec_stamp.h) ----
[ "$SAMPLING" = 1 ] || exit 0
SIM=$B/bin/bench_stamp_sim
COMPILE=$B/bin/bench_replay_compile
echo
echo "clock sampling: traces recorded with --time-every=1, resampled with the recorder's rule (--time-every=8),"
echo "both compiled; the schedule the replay gets from each (hand-offs: one thread waits for another's run)"
printf '%-12s %9s %14s %14s %22s %22s\n' trace events "bytes every=1" "bytes every=8" "hand-offs every=1" "hand-offs every=8"
sampling_row() { # NAME CMD...
	local name=$1; shift
	"$REC" -q --time-every=1 -o "$T/s1.zst" "$@" >/dev/null 2>&1 || { echo "$name: recording failed"; return; }
	local line ev
	line=$("$SIM" "$T/s1.zst" "$T/s8.zst" 8) || { echo "$name: bench_stamp_sim failed"; return; }
	ev=${line%% events*}
	h1=$("$COMPILE" "$T/s1.zst" | sed -n 's/.*switches: \([0-9]*\) hand-offs.*/\1/p')
	h8=$("$COMPILE" "$T/s8.zst" | sed -n 's/.*switches: \([0-9]*\) hand-offs.*/\1/p')
	sw=$("$COMPILE" "$T/s1.zst" | sed -n 's/.*schedule: \([0-9]*\) thread switches.*/\1/p')
	printf '%-12s %9s %14s %14s %22s %22s\n' "$name" "$ev" "$(stat -c %s "$T/s1.zst")" "$(stat -c %s "$T/s8.zst")" \
		"$h1 of $sw switches" "$h8 of $sw switches"
	echo "             ${line#* events, }"
}
sampling_row "workload x2" "$WL" 2 1000000 set
[ -x "$B/traces/demo_server" ] && sampling_row demo_server "$B/traces/demo_server"
[ -x /usr/bin/python3 ] && [ -f bench/fidelity/py_threads.py ] && sampling_row python-mt /usr/bin/python3 bench/fidelity/py_threads.py 100000
