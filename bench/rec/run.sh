#!/usr/bin/env bash
# make bench-rec: the recorder's cost on a malloc-heavy program of our own
# (bench_rec_workload, EVENTS heap calls over 1024 slots per thread), run
# bare, under allocrec, allocrec --stacks, heaptrack and glibc's memusage,
# with 1 and 2 threads; RUNS runs each, median wall time, slowdown vs bare,
# and the recorder's output bytes per event.
#   ALLOCRR_BUILD=build EVENTS=4000000 RUNS=5 bash bench/rec/run.sh
set -u
B=$(cd "${ALLOCRR_BUILD:-build}" && pwd)
EVENTS=${EVENTS:-4000000}
RUNS=${RUNS:-5}
WL=$B/bin/bench_rec_workload
REC=$B/bin/allocrec
CHECK=$B/tests/progs/rec_tracecheck
T=$(mktemp -d /tmp/allocrr-bench-rec.XXXXXX)
trap 'rm -rf "$T"' EXIT
if ! command -v heaptrack >/dev/null && [ "$(id -u)" = 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq heaptrack >/dev/null 2>&1
fi
have_ht=0; command -v heaptrack >/dev/null && have_ht=1
have_mu=0; command -v memusage >/dev/null && have_mu=1

# median of the numbers on stdin
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# wall seconds of one run of "$@" (output discarded)
wall() { local t0=$EPOCHREALTIME; "$@" >/dev/null 2>&1; awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN{printf "%.4f\n", b-a}'; }

run_mode() { # mode threads -> prints "median bytes"
	local mode=$1 th=$2 i times=() bytes=-
	for ((i = 0; i < RUNS; i++)); do
		rm -rf "$T/out"; mkdir -p "$T/out"
		case $mode in
		bare) times+=($(wall "$WL" $th $EVENTS)) ;;
		allocrec) times+=($(wall "$REC" -q -o "$T/out/t.zst" "$WL" $th $EVENTS)) ;;
		stacks) times+=($(wall "$REC" -q --stacks -o "$T/out/t.zst" "$WL" $th $EVENTS)) ;;
		heaptrack) times+=($(wall heaptrack -o "$T/out/ht" "$WL" $th $EVENTS)) ;;
		memusage) times+=($(wall memusage "$WL" $th $EVENTS)) ;;
		esac
	done
	case $mode in
	allocrec|stacks)
		local ev; ev=$("$CHECK" count "$T/out/t.zst" | awk '{s+=$2} END{print s}')
		bytes=$(awk -v b=$(stat -c %s "$T/out/t.zst") -v e=$ev 'BEGIN{printf "%.2f", b/e}') ;;
	heaptrack)
		local f; f=$(ls "$T"/out/ht* 2>/dev/null | head -1)
		[ -n "$f" ] && bytes=$(awk -v b=$(stat -c %s "$f") -v e=$EVENTS 'BEGIN{printf "%.2f", b/e}') ;;
	esac
	echo "$(printf '%s\n' "${times[@]}" | median) $bytes"
}

echo "bench-rec: $EVENTS heap calls, median of $RUNS runs, $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
printf '%-18s %8s %10s %8s %12s\n' mode threads "median s" slowdown bytes/event
for th in 1 2; do
	base=
	for mode in bare allocrec stacks heaptrack memusage; do
		[ $mode = heaptrack ] && [ $have_ht = 0 ] && { echo "heaptrack not installed: skipped"; continue; }
		[ $mode = memusage ] && [ $have_mu = 0 ] && { echo "memusage not installed: skipped"; continue; }
		read -r med bytes <<<"$(run_mode $mode $th)"
		[ -z "$base" ] && base=$med
		label=$mode; [ $mode = stacks ] && label="allocrec --stacks"
		printf '%-18s %8d %10.3f %7.2fx %12s\n' "$label" $th $med "$(awk -v a=$med -v b=$base 'BEGIN{print a/b}')" "$bytes"
	done
done
