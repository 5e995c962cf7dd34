#!/usr/bin/env bash
# make bench-fidelity: does replay tell what each allocator does to a real
# program? (issue 14 item 7; method and figures: docs/FIDELITY.md)
#
# Six Debian programs nobody on this project wrote, each
#   1. run for real under every allocator (LD_PRELOAD of the registry's
#      library, glibc's own libc.so.6 included: a no-op for programs on glibc,
#      and what puts glibc's malloc ahead of a linked jemalloc), interleaved —
#      repetition by repetition, each round in its own order (programs.sh's
#      round_order: no allocator always first or after the same one) — measuring the
#      time and the peak RSS of every run; the output of every run must equal
#      the first run's (redis: the server still answers after the load); a
#      run that fails or answers differently is no figure but a line in
#      failures.csv, and the benchmark goes on;
#   2. recorded once with allocrec under its default allocator, the trace
#      replayed with allocreplay under the same allocators;
#   3. compared by analyze.py (real-run CSV against the results database).
#
# Programs (FIDELITY_PROGRAMS, any subset, in this order):
#   sqlite     sqlite3 CLI, in-memory database, sqlite.sh's script with
#              FIDELITY_SQLITE_ROWS rows
#   python     /usr/bin/python3 py_single.py FIDELITY_PY_N
#   python-mt  /usr/bin/python3 py_threads.py FIDELITY_PYMT_N (4 threads
#              under the GIL)
#   perl       perl perl_churn.pl FIDELITY_PERL_N (an interpreter whose every
#              object is a malloc: the allocator shows in its time)
#   gcc        gcc -O2 -c on gen_c.py's file of FIDELITY_GCC_FUNCS functions
#              (driver, cc1, as: LD_PRELOAD reaches them all; peak RSS is the
#              largest of them, cc1's); the replayed trace is cc1's
#   clang      clang++ -O2 -c stl_unit.cpp (a C++ unit of standard-library
#              containers; compiler and assembler in one process, LLVM's
#              operator new) — not in the default set: run it with
#              FIDELITY_PROGRAMS
#   jq         jq parsing, filtering and mapping a JSON array of
#              FIDELITY_JQ_N records (gen_inputs.py json) — not in the
#              default set
#   perl-grow  perl perl_grow.pl on FIDELITY_PERLGROW_LINES lines of text
#              (gen_inputs.py text): long-lived strings grown by appends
#              among live neighbours — not in the default set
#   node       node node_churn.js FIDELITY_NODE_N: a JavaScript engine, its
#              own heap for objects, malloc from V8's threads — not in the
#              default set
#   redis      redis-server (linked against jemalloc: its baseline) on a free
#              port of 127.0.0.1, no persistence, loaded by redis_load.sh with
#              FIDELITY_REDIS_REQ requests: time = the server's CPU time
#              (utime + stime from /proc/PID/stat) between ready and the end
#              of the load, peak RSS = its VmHWM before shutdown
#   redis-window  the same server recorded *as it runs* (allocrec -p, not from
#              its start) — not in the default set: run it with
#              FIDELITY_PROGRAMS. Started plainly, a warm-up load
#              (redis_load.sh, FIDELITY_REDIS_REQ requests), then a measured
#              load (the same again): time = the server's CPU time over the
#              measured load only, peak RSS = its VmHWM at the end (the whole
#              process's, warm-up included). The recording: the server
#              started without allocrec, the warm-up load, allocrec -p PID
#              attached (gdb), the measured load, allocrec --detach PID; the
#              window's trace is the one replayed (docs/FIDELITY.md, "Recording
#              a running server"). Needs gdb.
# Time of the others: FIDELITY_TIME=cpu (the default) is the CPU time of the
# process tree, user + system (GNU time's %U + %S): on a machine shared with
# other work the wall time of the same run spread up to 3.9x where its CPU time
# spread 1.5x (docs/FIDELITY.md); FIDELITY_TIME=wall takes the
# wall time (%e) instead. Both go to real.csv either way. Peak RSS: GNU
# time's %M (the largest RSS of the process tree).
#
# Environment: ALLOCRR_BUILD (build dir), FIDELITY_REPS (real runs per
# allocator, default 5), FIDELITY_REPLAY_REPS (allocreplay --repeat, default
# 5), FIDELITY_ALLOCATORS (comma-separated names, default every installed
# one), FIDELITY_TIME (cpu or wall, above), FIDELITY_REPLAY_OPTS (more
# allocreplay options), the sizes FIDELITY_SQLITE_ROWS, FIDELITY_PY_N,
# FIDELITY_PYMT_N, FIDELITY_PERL_N, FIDELITY_GCC_FUNCS, FIDELITY_REDIS_REQ,
# FIDELITY_JQ_N, FIDELITY_PERLGROW_LINES, FIDELITY_NODE_N (defaults in programs.sh:
# about a second of CPU per run here), FIDELITY_OUT (the results directory,
# default $ALLOCRR_BUILD/fidelity; emptied first).
# Writes there: real.csv (one line per real run), failures.csv (program,
# allocator, repetition, what went wrong), traces.csv (program, trace
# SHA-256, baseline, time measure), fidelity.db (allocreplay's database),
# PROGRAM/ (trace, replay table, recommend.json), report.txt and report.md.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
B=$(cd "${ALLOCRR_BUILD:-build}" && pwd)
REPS=${FIDELITY_REPS:-5}
REPLAY_REPS=${FIDELITY_REPLAY_REPS:-5}
PROGRAMS=${FIDELITY_PROGRAMS:-sqlite python python-mt perl gcc redis}
OUT=${FIDELITY_OUT:-$B/fidelity}
TIME=${FIDELITY_TIME:-cpu}
case $TIME in cpu | wall) ;; *) echo "bench-fidelity: FIDELITY_TIME must be cpu or wall" >&2; exit 2 ;; esac
AR=$B/bin/allocreplay
PY=/usr/bin/python3 # Debian's, never a pyenv shim: it is what gets preloaded

die() { echo "bench-fidelity: $*" >&2; exit 2; }
for f in "$AR" "$B/bin/allocrec" "$B/bin/allocreport"; do
	[ -x "$f" ] || die "missing $f (run make BUILD=$B all)"
done
[ -x /usr/bin/time ] && [ -x $PY ] || die "needs /usr/bin/time and /usr/bin/python3 (Debian: time python3)"

# ---- plan: programs, allocators ---------------------------------------------------
declare -A NEED=([sqlite]=sqlite3 [python]=$PY [python-mt]=$PY [perl]=perl [gcc]=gcc [redis]=redis-server
	[clang]=clang++ [redis-window]=redis-server [jq]=jq [perl-grow]=perl [node]=node)
declare -A BASE=([sqlite]=glibc [python]=glibc [python-mt]=glibc [perl]=glibc [gcc]=glibc [redis]=jemalloc
	[clang]=glibc [redis-window]=jemalloc [jq]=glibc [perl-grow]=glibc [node]=glibc)
declare -A MEASURE=([sqlite]=$TIME [python]=$TIME [python-mt]=$TIME [perl]=$TIME [gcc]=$TIME [redis]=server-cpu
	[clang]=$TIME [redis-window]=server-cpu [jq]=$TIME [perl-grow]=$TIME [node]=$TIME)
for p in $PROGRAMS; do
	[ -n "${NEED[$p]:-}" ] || die "unknown program '$p' (known: ${!NEED[*]})"
	command -v "${NEED[$p]}" >/dev/null || die "$p needs ${NEED[$p]} (make bench-deps installs BENCH_DEBS)"
done
[[ " $PROGRAMS " != *" redis "* && " $PROGRAMS " != *" redis-window "* ]] ||
	command -v redis-benchmark >/dev/null || die "redis needs redis-benchmark (Debian: redis-tools)"
[[ " $PROGRAMS " != *" redis-window "* ]] || command -v gdb >/dev/null ||
	die "redis-window needs gdb (allocrec -p drives it; Debian: gdb)"

declare -A LIB
ALLOCS=""
while read -r name lib; do
	if [ -z "${FIDELITY_ALLOCATORS:-}" ] || [[ ",$FIDELITY_ALLOCATORS," == *",$name,"* ]]; then
		LIB[$name]=$lib
		ALLOCS="$ALLOCS $name"
	fi
done < <("$AR" --list | awk 'NR > 1 && $4 == "yes" { print $1, $5 }')
ALLOCS=${ALLOCS# }
[ -n "$ALLOCS" ] || die "no installed allocator matches FIDELITY_ALLOCATORS='${FIDELITY_ALLOCATORS:-}'"
for p in $PROGRAMS; do
	[ -n "${LIB[${BASE[$p]}]:-}" ] || die "$p's baseline ${BASE[$p]} is not among the allocators ($ALLOCS)"
done

rm -rf "$OUT" && mkdir -p "$OUT/inputs" || die "cannot create $OUT"
export ALLOCRR_CACHE_DIR=$OUT/cache
IN=$OUT/inputs
# the programs: make_inputs, prog_P, redis_up, redis_down, cpu_ticks
. "$HERE/programs.sh"
make_inputs || die "cannot write the programs' inputs in $IN"
echo "program,allocator,repetition,time_s,wall_s,cpu_s,peak_rss_kb" >"$OUT/real.csv"
echo "program,allocator,repetition,reason" >"$OUT/failures.csv"
echo "program,trace_sha256,baseline,time_measure,trace" >"$OUT/traces.csv"

# failed P A R WHY: a real run that gave no figure, kept in failures.csv.
failed() {
	echo "bench-fidelity: $1 under $2, run $3: $4 (no figure; see failures.csv)" >&2
	echo "$1,$2,$3,\"${4//\"/\'}\"" >>"$OUT/failures.csv"
}

# real P A R: one real run of program P under allocator A (repetition R):
# its line in real.csv when it succeeded and printed what the program's first
# run printed, else a line in failures.csv.
real() {
	local p=$1 a=$2 r=$3 o=$OUT/$1/out line
	if [ "$p" = redis ] || [ "$p" = redis-window ]; then
		local c0 c1 t0 t1 hwm tck
		redis_up env LD_PRELOAD="${LIB[$a]}" 2>"$o.err" || { failed $p $a $r "$(cat "$o.err")"; return; }
		# redis-window: a warm-up load first, outside the measured phase
		if [ "$p" = redis-window ] && ! sh "$HERE/redis_load.sh" "$RPORT" "$REDIS_REQ"; then
			kill $RPID 2>/dev/null && wait $RPID 2>/dev/null
			failed $p $a $r "redis-benchmark failed in the warm-up"
			return
		fi
		c0=$(cpu_ticks $RPID)
		t0=$EPOCHREALTIME
		if ! sh "$HERE/redis_load.sh" "$RPORT" "$REDIS_REQ"; then
			kill $RPID 2>/dev/null && wait $RPID 2>/dev/null
			failed $p $a $r "redis-benchmark failed"
			return
		fi
		t1=$EPOCHREALTIME
		c1=$(cpu_ticks $RPID)
		hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$RPID/status")
		redis-cli -p "$RPORT" ping >"$o.new" # alive after the load (its keys differ run to run)
		redis_down 2>"$o.err" || { failed $p $a $r "$(cat "$o.err")"; return; }
		tck=$(getconf CLK_TCK)
		line=$(awk -v p=$p -v a=$a -v r=$r -v c=$((c1 - c0)) -v k="$tck" -v t0=$t0 -v t1=$t1 -v m="$hwm" \
			'BEGIN { printf "%s,%s,%d,%.3f,%.3f,%.3f,%d\n", p, a, r, c / k, t1 - t0, c / k, m }')
	else
		prog_$p /usr/bin/time -f '%e %U %S %M' -o "$o.time" env LD_PRELOAD="${LIB[$a]}" >"$o.new" 2>"$o.err" ||
			{ failed $p $a $r "$(head -1 "$o.time"): $(tail -1 "$o.err")"; return; }
		line=$(awk -v p=$p -v a=$a -v r=$r -v m=$TIME '{ cpu = $2 + $3
			printf "%s,%s,%d,%.2f,%s,%.2f,%d\n", p, a, r, m == "cpu" ? cpu : $1, $1, cpu, $4 }' "$o.time")
	fi
	if [ ! -f "$o.ref" ]; then
		mv "$o.new" "$o.ref"
	elif ! cmp -s "$o.ref" "$o.new"; then
		failed $p $a $r "printed something else than the program's first run"
		return
	fi
	echo "$line" >>"$OUT/real.csv"
}

# record_window D: redis-window's recording, the trace's path on stdout: the
# server started plainly, the warm-up load, allocrec -p attached, the measured
# load, allocrec --detach; says why on stderr and returns 1 when any step fails.
record_window() {
	local d=$1 rec rc k tr=$1/redis-window.zst
	redis_up 2>"$d/attach.err" || { cat "$d/attach.err" >&2; return 1; }
	sh "$HERE/redis_load.sh" "$RPORT" "$REDIS_REQ" || { redis_down; echo "redis-benchmark failed (warm-up)" >&2; return 1; }
	# allocrec -p waits until the window ends; its stdout must not reach
	# record's caller (the trace's path is all it prints)
	"$B/bin/allocrec" -p $RPID -o "$tr" >"$d/attach.out" 2>"$d/attach.err" &
	rec=$!
	# the window is open when allocrec says it records (after gdb's injection)
	for ((k = 0; k < 600; k++)); do
		grep -q "recording process" "$d/attach.err" && break
		kill -0 $rec 2>/dev/null || break
		sleep 0.05
	done
	if ! grep -q "recording process" "$d/attach.err"; then
		kill $rec 2>/dev/null
		wait $rec
		redis_down
		echo "allocrec -p $RPID did not start recording: $(tail -3 "$d/attach.err")" >&2
		return 1
	fi
	sh "$HERE/redis_load.sh" "$RPORT" "$REDIS_REQ" ||
		{ "$B/bin/allocrec" --detach $RPID; wait $rec; redis_down; echo "redis-benchmark failed (window)" >&2; return 1; }
	"$B/bin/allocrec" --detach $RPID >>"$d/attach.out" 2>>"$d/attach.err" ||
		{ wait $rec; redis_down; echo "allocrec --detach $RPID failed: $(tail -3 "$d/attach.err")" >&2; return 1; }
	wait $rec
	rc=$?
	[ $rc = 0 ] || { redis_down; echo "allocrec -p $RPID exited with status $rc: $(tail -3 "$d/attach.err")" >&2; return 1; }
	redis-cli -p "$RPORT" ping >/dev/null || { redis_down; echo "redis-server stopped answering after the detach" >&2; return 1; }
	redis_down || return 1
	[ -f "$tr" ] || { echo "allocrec -p wrote no $tr: $(ls "$d")" >&2; return 1; }
	echo "$tr"
}

# record P: trace P once under its default allocator; prints the trace's path.
record() {
	local p=$1 d=$OUT/$1
	if [ "$p" = redis ]; then
		redis_up "$B/bin/allocrec" -q -o "$d/redis.zst" || die "recording redis failed"
		sh "$HERE/redis_load.sh" "$RPORT" "$REDIS_REQ" || die "redis-benchmark failed while recording"
		redis_down || die "recording redis failed"
	elif [ "$p" = redis-window ]; then
		record_window "$d" && return
		exit 2
	elif [ "$p" = gcc ]; then
		# allocrec follows the driver into cc1 and as, each into its own
		# PROG.PID.zst beside the driver's trace (docs/RECORDER.md)
		prog_gcc "$B/bin/allocrec" -q -o "$d/gcc.zst" >/dev/null || die "recording gcc failed"
		local cc1=("$d"/cc1.*.zst)
		[ ${#cc1[@]} = 1 ] && [ -f "${cc1[0]}" ] || die "expected one cc1 trace in $d, found: ${cc1[*]}"
		mv "${cc1[0]}" "$d/gcc-cc1.zst" && echo "$d/gcc-cc1.zst" && return
	else
		prog_$p "$B/bin/allocrec" -q -o "$d/$p.zst" >/dev/null || die "recording $p failed"
	fi
	echo "$d/$p.zst"
}

echo "bench-fidelity: $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bench-fidelity: programs: $PROGRAMS; allocators: $ALLOCS; $REPS real runs each, allocreplay --repeat $REPLAY_REPS"
set -- $ALLOCS
for p in $PROGRAMS; do
	mkdir -p "$OUT/$p"
	t0=$EPOCHREALTIME
	for ((i = 0; i < REPS; i++)); do
		for a in $(round_order $i "$@"); do real $p $a $((i + 1)); done
	done
	rm -f "$OUT/$p"/out.*
	t1=$EPOCHREALTIME
	trace=$(record $p) || exit 2
	sha=$(sha256sum "$trace" | cut -d' ' -f1)
	# a failed replay run is a row with its reason (the analysis lists it);
	# only a trace without any stored run stops the benchmark
	"$AR" "$trace" -a "${ALLOCS// /,}" --repeat "$REPLAY_REPS" --db "$OUT/fidelity.db" -q \
		${FIDELITY_REPLAY_OPTS:-} >"$OUT/$p/replay.txt" 2>"$OUT/$p/replay.err" ||
		echo "bench-fidelity: allocreplay $trace: $(tail -1 "$OUT/$p/replay.err")" >&2
	[ "$(sqlite3 "$OUT/fidelity.db" "SELECT count(*) FROM runs WHERE trace_sha256 = '$sha'" 2>/dev/null)" -gt 0 ] ||
		die "allocreplay $trace stored no run: $(tail -3 "$OUT/$p/replay.err")"
	"$B/bin/allocreport" --db "$OUT/fidelity.db" --trace "$sha" --recommend --format json \
		>"$OUT/$p/recommend.json" || die "allocreport --recommend failed on $p"
	echo "$p,$sha,${BASE[$p]},${MEASURE[$p]},$trace" >>"$OUT/traces.csv"
	awk -v p=$p -v a=$t0 -v b=$t1 -v c=$EPOCHREALTIME \
		'BEGIN { printf "bench-fidelity: %s: real runs %.0f s, record + replay %.0f s\n", p, b - a, c - b }'
done
rm -rf "$ALLOCRR_CACHE_DIR"

$PY "$HERE/analyze.py" "$OUT" --markdown >"$OUT/report.md" || die "analyze.py failed"
$PY "$HERE/analyze.py" "$OUT" | tee "$OUT/report.txt"
echo "bench-fidelity: raw data and reports in $OUT (report.md: the tables for docs/FIDELITY.md)"
