#!/usr/bin/env bash
# make bench-attach: allocrec -p on a real server under load (issue 16 item
# 1). Debian's redis-server (linked against jemalloc, several threads) on
# 127.0.0.1 at a free port, no persistence, under redis-benchmark (SET and
# GET): CYCLES times, the throughput is measured unrecorded for WINDOW
# seconds, then allocrec -p PID --duration WINDOW records while the same load
# runs, and the throughput measured again, then once more after the detach.
# Per cycle: the three figures, recording/before, and after/before (the same
# load twice unrecorded: how much the machine's noise alone moves the
# figure), the window's events and whether its trace verifies, and its
# replay on every allocator (runs ok, replayed peak live bytes against the
# trace's, the pre-existing blocks and the heap at the start); at the end
# the median ratios, and whether the server still answers and stayed on
# jemalloc. Throughput is what redis-benchmark reports for chunks of
# CHUNK requests, summed over the chunks that ran entirely inside the
# period (the requests done / their wall time). The server's CPU time per
# request (utime + stime of the whole process, the recorder's writer thread
# included) is less sensitive to a busy machine than throughput and is
# printed beside it.
#   ALLOCRR_BUILD=build CYCLES=5 WINDOW=10 CHUNK=20000 bash bench/rec/attach_redis.sh
set -u
B=$(cd "${ALLOCRR_BUILD:-build}" && pwd)
CYCLES=${CYCLES:-5}
WINDOW=${WINDOW:-10}
CHUNK=${CHUNK:-20000}
REC=$B/bin/allocrec
AT=$B/bin/alloctrace
REP=$B/bin/allocreplay
PY=/usr/bin/python3
need() {
	command -v "$1" >/dev/null && return 0
	[ "$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null 2>&1
	command -v "$1" >/dev/null || { echo "bench-attach: $1 is not installed (apt-get install $2): skipped"; exit 0; }
}
need redis-server redis-server
need redis-benchmark redis-tools
need redis-cli redis-tools
need gdb gdb
need sqlite3 sqlite3
T=$(mktemp -d /tmp/allocrr-bench-attach.XXXXXX)
srv=
trap '[ -n "$srv" ] && kill $srv 2>/dev/null; rm -rf "$T"' EXIT
cd "$T"

port=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no --logfile "$T/redis.log" &
srv=$!
for _ in $(seq 100); do redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
redis-cli -p "$port" ping | grep -q PONG || { echo "bench-attach: redis-server did not start"; cat "$T/redis.log"; exit 1; }
echo "redis-server $(redis-server --version | grep -o 'v=[^ ]*') pid $srv port $port, $(ls /proc/$srv/task | wc -l) threads," \
	"$(grep -o 'libjemalloc[^ ]*' /proc/$srv/maps | sort -u | head -1)"

# load SECONDS OUT: redis-benchmark chunks for SECONDS; OUT gets one line per
# chunk: "start end requests" (epoch seconds).
load() {
	local until=$(($(date +%s%N) + $1 * 1000000000)) t0 t1
	: >"$2"
	while [ "$(date +%s%N)" -lt $until ]; do
		t0=$EPOCHREALTIME
		redis-benchmark -p "$port" -t set,get -n "$CHUNK" -c 20 -d 64 -r 100000 -q >/dev/null 2>&1 || return 1
		t1=$EPOCHREALTIME
		echo "$t0 $t1 $((2 * CHUNK))" >>"$2"
	done
}
# rate FILE [FROM TO]: requests per second of the chunks inside [FROM, TO]
rate() {
	awk -v a="${2:-0}" -v b="${3:-1e20}" '$1 >= a && $2 <= b {n += $3; t += $2 - $1}
		END {if (t > 0) printf "%.0f\n", n / t; else print 0}' "$1"
}

ratios=() noises=() cpuratios=()
ticks() { awk '{print $14 + $15}' /proc/$srv/stat; }
HZ=$(getconf CLK_TCK)
# us_per_req TICKS SECONDS RATE: server CPU microseconds per request
us_per_req() { awk -v t="$1" -v s="$2" -v r="$3" -v hz=$HZ 'BEGIN {printf "%.1f", (r * s > 0) ? t / hz * 1e6 / (r * s) : 0}'; }
for c in $(seq "$CYCLES"); do
	c0=$(ticks) t0=$EPOCHREALTIME
	load "$WINDOW" before.txt || { echo "cycle $c: redis-benchmark failed before attaching"; exit 1; }
	before=$(rate before.txt)
	cpu_before=$(us_per_req $(($(ticks) - c0)) "$(awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN{print b-a}')" "$before")
	rm -f w.zst w*.zst
	"$REC" -p $srv -o "$T/w.zst" --duration "$WINDOW" 2>attach.err &
	rec=$!
	# the window starts when allocrec says it records
	for _ in $(seq 600); do grep -q "recording process" attach.err && break; kill -0 $rec 2>/dev/null || break; sleep 0.05; done
	from=$EPOCHREALTIME c1=$(ticks)
	load $((WINDOW + 2)) during.txt &
	ld=$!
	wait $rec; rrc=$?
	to=$EPOCHREALTIME c2=$(ticks)
	wait $ld
	during=$(rate during.txt "$from" "$to")
	cpu_during=$(us_per_req $((c2 - c1)) "$(awk -v a=$from -v b=$to 'BEGIN{print b-a}')" "$during")
	load "$WINDOW" after.txt || { echo "cycle $c: redis-benchmark failed after the detach"; exit 1; }
	after=$(rate after.txt)
	trace=$(ls "$T"/w*.zst 2>/dev/null | head -1)
	if [ "$rrc" != 0 ] || [ -z "$trace" ]; then
		echo "cycle $c: allocrec -p failed ($rrc):"; cat attach.err; exit 1
	fi
	v=$("$AT" verify "$trace" 2>&1); vrc=$?
	events=$(echo "$v" | grep -o '[0-9]* events' | head -1)
	ratio=$(awk -v a="$during" -v b="$before" 'BEGIN {printf "%.3f", b ? a / b : 0}')
	noise=$(awk -v a="$after" -v b="$before" 'BEGIN {printf "%.3f", b ? a / b : 0}')
	ratios+=("$ratio")
	cpuratios+=("$(awk -v a="$cpu_during" -v b="$cpu_before" 'BEGIN {printf "%.2f", b ? a / b : 0}')")
	noises+=("$noise")
	printf "cycle %d: before %s req/s, recording %s, after %s; recording/before %s (after/before %s);" \
		"$c" "$before" "$during" "$after" "$ratio" "$noise"
	printf " server CPU %s us/request before, %s recording;" "$cpu_before" "$cpu_during"
	printf " window %s, %s bytes, verify %s; load average %s\n" "${events:-? events}" "$(stat -c %s "$trace")" \
		"$([ $vrc = 0 ] && echo ok || echo "FAILED: $v")" "$(cut -d' ' -f1 /proc/loadavg)"
	[ "$during" = 0 ] && echo "  (no benchmark chunk ran entirely inside the window: raise WINDOW or lower CHUNK)"
	# The window replays on every allocator, its pre-existing blocks
	# allocated before it: the replayed peak live bytes are the trace's.
	rm -f "$T/w.db"
	"$REP" "$trace" --all --repeat 1 --db "$T/w.db" >/dev/null 2>replay.err; prc=$?
	tpeak=$("$AT" stats "$trace" --json | grep -o '"peak_live_bytes":[0-9]*' | cut -d: -f2)
	read -r dpeak pre_n pre_b heap <<<"$(sqlite3 -separator ' ' "$T/w.db" \
		'SELECT peak_live_bytes, preexisting_blocks, preexisting_bytes, ifnull(heap_at_start_bytes, "unknown") FROM traces')"
	okruns=$(sqlite3 "$T/w.db" "SELECT count(*) || '/' || (SELECT count(*) FROM runs) FROM runs WHERE status = 'ok'")
	printf "  replay --all: status %s, runs ok %s, peak live %s (trace %s: %s), %s pre-existing blocks (%s bytes), heap at start %s\n" \
		"$prc" "$okruns" "$dpeak" "$tpeak" "$([ "$dpeak" = "$tpeak" ] && echo equal || echo DIFFERENT)" "$pre_n" "$pre_b" "$heap"
	rm -f "$T"/w*.zst
	redis-cli -p "$port" ping | grep -q PONG || { echo "cycle $c: the server stopped answering"; exit 1; }
done
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
echo "throughput while recording / before: median $(printf "%s\n" "${ratios[@]}" | median) over $CYCLES windows" \
	"of ${WINDOW} s (${ratios[*]}); unrecorded after / before: median $(printf "%s\n" "${noises[@]}" | median)" \
	"(${noises[*]})"
echo "server CPU per request while recording / before: median $(printf "%s\n" "${cpuratios[@]}" | median) (${cpuratios[*]})"
echo "after $CYCLES attach/detach cycles: server answers $(redis-cli -p "$port" ping), $(redis-cli -p "$port" dbsize) keys," \
	"malloc still $(grep -c 'libjemalloc' /proc/$srv/maps) jemalloc mappings, recorder loaded: $(grep -c liballocrr-rec /proc/$srv/maps) mappings (never unloaded)"
