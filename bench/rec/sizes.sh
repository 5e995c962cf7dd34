#!/usr/bin/env bash
# make bench-rec-size: trace size against heaptrack's on the real programs of
# make bench-fidelity (bench/fidelity/programs.sh: the same commands, the
# same inputs and sizes), each recorded by allocrec (default settings), by
# allocrec --time-every=1 (every call reads the clock), by allocrec
# --time-unit=16 (times in 16 ns units, the default before 64) and by
# heaptrack.
# Bytes per event = file bytes / the heap calls allocrec recorded (heaptrack
# records the same calls but keeps no per-event time, thread, order or block
# identity). gcc: cc1 alone (the command gcc -### gives), since heaptrack does
# not follow the driver's children; redis: the server under redis_load.sh.
# "as 1.3": the same allocrec trace with its chained blocks (format 2.0,
# SPEC 3.4) compressed alone, as the 1.3 writer wrote them (unchain.py;
# needs python3-zstandard, else "-"): the size the chains save.
#   ALLOCRR_BUILD=build SIZE_PROGRAMS="sqlite python python-mt gcc redis" bash bench/rec/sizes.sh
# The sizes are bench-fidelity's (FIDELITY_SQLITE_ROWS etc., same defaults).
set -u
B=$(cd "${ALLOCRR_BUILD:-build}" && pwd)
HERE=$(cd "$(dirname "$0")/../fidelity" && pwd)
PROGRAMS=${SIZE_PROGRAMS:-sqlite python python-mt gcc redis}
PY=/usr/bin/python3
REC=$B/bin/allocrec
AT=$B/bin/alloctrace
T=$(mktemp -d /tmp/allocrr-bench-size.XXXXXX)
trap 'rm -rf "$T"' EXIT
IN=$T/inputs
mkdir -p "$IN"
. "$HERE/programs.sh"
make_inputs || { echo "bench-rec-size: cannot write the inputs" >&2; exit 2; }
command -v heaptrack >/dev/null || { echo "bench-rec-size: heaptrack not installed (Debian: heaptrack)" >&2; exit 2; }

# run_one P HOW OUT: record program P with HOW (allocrec, allocrec1,
# heaptrack) into OUT (a file for allocrec, a directory for heaptrack).
run_one() {
	local p=$1 how=$2 out=$3 pre
	case $how in
	allocrec) pre=("$REC" -q -o "$out") ;;
	allocrec1) pre=("$REC" -q --time-every=1 -o "$out") ;;
	allocrec16) pre=("$REC" -q --time-unit=16 -o "$out") ;;
	heaptrack) mkdir -p "$out"; pre=(heaptrack -o "$out/ht") ;;
	esac
	case $p in
	redis)
		redis_up "${pre[@]}" 2>/dev/null || return 1
		sh "$HERE/redis_load.sh" "$RPORT" "$REDIS_REQ" >/dev/null 2>&1
		redis_down 2>/dev/null
		# heaptrack's process writes its file once the server is gone
		for _ in $(seq 100); do [ -n "$(ls "$out"/ht* 2>/dev/null)" ] && break; sleep 0.1; done ;;
	gcc) (cd "$T" && prog_cc1 "${pre[@]}") >/dev/null 2>&1 ;;
	*) (cd "$T" && prog_$p "${pre[@]}") >/dev/null 2>&1 ;;
	esac
}

events_of() { "$AT" info "$1" --json | sed 's/.*"events":\([0-9]*\).*/\1/'; }
echo "bench-rec-size: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); heaptrack $(heaptrack --version 2>/dev/null | head -1 | awk '{print $NF}')"
UNCHAIN=$(cd "$(dirname "$0")" && pwd)/unchain.py
printf '%-10s %10s %14s %10s %14s %14s %14s %9s\n' program events "allocrec B/ev" "as 1.3" "every=1 B/ev" "16 ns B/ev" \
	"heaptrack B/ev" "x heaptr"
for p in $PROGRAMS; do
	run_one $p allocrec "$T/$p.zst" && run_one $p allocrec1 "$T/$p-1.zst" && run_one $p allocrec16 "$T/$p-16.zst" &&
		run_one $p heaptrack "$T/ht-$p" ||
		{ echo "$p: a recording failed"; continue; }
	ev=$(events_of "$T/$p.zst")
	ht=$(ls "$T/ht-$p"/ht* 2>/dev/null | head -1)
	[ -n "$ht" ] && [ "$ev" -gt 0 ] || { echo "$p: no heaptrack output or no events"; continue; }
	u=$("$PY" "$UNCHAIN" "$T/$p.zst" "$T/$p-13.zst" 2>/dev/null) || u=
	awk -v p=$p -v e=$ev -v a=$(stat -c %s "$T/$p.zst") -v u="$u" -v e1=$(events_of "$T/$p-1.zst") \
		-v a1=$(stat -c %s "$T/$p-1.zst") -v e16=$(events_of "$T/$p-16.zst") -v a16=$(stat -c %s "$T/$p-16.zst") \
		-v h=$(stat -c %s "$ht") \
		'BEGIN { printf "%-10s %10d %14.3f %10s %14.3f %14.3f %14.3f %8.2fx\n", p, e, a / e,
			 u == "" ? "-" : sprintf("%.3f", u / e), a1 / e1, a16 / e16, h / e, (a / e) / (h / e) }'
done
