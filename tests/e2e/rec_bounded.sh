#!/usr/bin/env bash
# Bounded recordings (issue 16 item 3): allocrec --max-size BYTES and
# --duration S stop recording through the ordinary close, so the trace is
# complete (verify exits 0), and the program runs on unharmed. The footer
# says why the trace stopped and how many heap calls came after (SPEC 6.7):
# recorded events + calls after the stop + dropped = the calls the
# independent counting shim (librec_count.so) saw in the same process, less
# the calls glibc makes for the recorder's writer thread (1 calloc and 2
# frees, rec_testlib.sh's run_case explains them; how many of them reach
# the counting shim before it writes its line at exit depends on timing):
# the difference must be 1, 2 or 3. The file passes BYTES by at most what the
# threads held when it reached BYTES: 4 events blocks per recording thread
# (docs/RECORDER.md), checked block by block. Bad values are usage errors.
ROOT_DIR=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/../progs/rec_testlib.sh"

# The events blocks in FILE that start at or after the first block ending
# at or past BYTES ends, one per line: "offset" (SPEC 2, 3.2: descriptors
# are skippable frames holding varints; comp_size is the eighth).
blocks_after() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
limit = int(sys.argv[2])
def varints(b):
    out, v, s = [], 0, 0
    for x in b:
        v |= (x & 0x7f) << s
        s += 7
        if not x & 0x80:
            out.append(v); v, s = 0, 0
    return out
pos = 8 + struct.unpack_from("<I", data, 4)[0]  # after the header frame
crossed = None
after = 0
while pos < len(data):
    magic, size = struct.unpack_from("<II", data, pos)
    d = varints(data[pos + 8:pos + 8 + size])
    end = pos + 8 + size + d[7]
    if crossed is not None and d[0] == 1:
        after += 1
    if crossed is None and end >= limit:
        crossed = pos
    pos = end
print(after)
PY
}

# Each run: the program with the counting shim riding behind the recorder.
# Prints "events calls_after_stop dropped counted" for the one trace.
run_bounded() {
	local name=$1; shift
	rm -f "$name.counts"
	env LD_PRELOAD=$P/librec_count.so REC_COUNT_OUT=$W/$name.counts \
		"$REC" "$@" >"$name.out" 2>"$name.err"
	echo $? >"$name.rc"
}
counted() { # calls the counting shim saw in the traced process (pid of trace $2)
	local pid; pid=$("$AT" info "$2" --json | sed 's/.*"pid":\([0-9]*\),.*/\1/')
	awk -v p="$pid" '$1 == p {for (i = 3; i <= NF; i += 2) s += $i} END {print s + 0}' "$1"
}
# same_calls WHAT RECORDED_SUM COUNTED: the counting shim saw the program's
# calls plus 1-3 of the writer thread's own.
same_calls() {
	local d=$(($3 - $2))
	[ $d -ge 1 ] && [ $d -le 3 ] && ok "$1: $2 = counted $3 less $d of the writer thread's" ||
		fail "$1: recorded + after the stop + dropped = $2, the counting shim saw $3 (want 1-3 more)"
}
json_num() { "$AT" info "$1" --json | grep -o "\"$2\":[0-9]*" | cut -d: -f2; }

PROG=("$P/rec_paced" 3 20 5000 0)
"${PROG[@]}" >bare.out 2>bare.err
bare_rc=$?

# --- --max-size: three sizes, the smallest well below one second's trace ---
# (the whole trace is about 135 000 bytes with 64 ns times, 285 000 with
# 16 ns: the largest limit stays well below it)
for lim in 32K 48K 72000; do
	case $lim in *K) bytes=$(( ${lim%K} * 1024 )) ;; *) bytes=$lim ;; esac
	run_bounded ms$lim --max-size "$lim" -o "$W/ms$lim.zst" "${PROG[@]}"
	f=ms$lim.zst
	expect_eq "max-size $lim: exit status" "$(cat ms$lim.rc)" $bare_rc
	cmp -s bare.out ms$lim.out && ok "max-size $lim: same stdout" || fail "max-size $lim: stdout differs"
	expect_eq "max-size $lim: verify (complete)" "$(verify_rc "$f")" 0
	expect_eq "max-size $lim: stopped" "$("$AT" info "$f" --json | grep -o '"stopped":"[a-z-]*"')" '"stopped":"max-size"'
	ev=$(json_num "$f" events); after=$(json_num "$f" calls_after_stop); dr=$(json_num "$f" dropped_events)
	cnt=$(counted ms$lim.counts "$f")
	same_calls "max-size $lim: $ev recorded + $after after the stop + $dr dropped" $((ev + after + dr)) "$cnt"
	[ "$after" -gt 0 ] && ok "max-size $lim: calls after the stop counted ($after)" || fail "max-size $lim: no calls after the stop"
	size=$(stat -c %s "$f")
	[ "$size" -ge "$bytes" ] && ok "max-size $lim: the file reached the limit ($size >= $bytes)" ||
		fail "max-size $lim: stopped early at $size < $bytes"
	threads=$("$CHECK" info "$f" 2>/dev/null | awk '$1 == "threads" {print $2}')
	[ -n "$threads" ] || threads=$(json_num "$f" threads)
	n=$(blocks_after "$f" "$bytes")
	[ "$n" -le $((4 * threads)) ] && ok "max-size $lim: $n events blocks after the limit (<= 4 x $threads threads)" ||
		fail "max-size $lim: $n events blocks written after the limit, more than 4 x $threads threads"
	grep -q "allocrec: .*$f: stopped at its --max-size limit; $after heap calls after that were not recorded" ms$lim.err &&
		ok "max-size $lim: allocrec says it" || fail "max-size $lim: summary: $(cat ms$lim.err)"
done

# --- --duration: a program that runs ~2 s (20 rounds, 100 ms apart) ---
DPROG=("$P/rec_paced" 2 20 2000 100)
"${DPROG[@]}" >dbare.out 2>&1
run_bounded dur -q --duration 0.5 -o "$W/dur.zst" "${DPROG[@]}"
f=dur.zst
expect_eq "duration: exit status" "$(cat dur.rc)" 0
cmp -s dbare.out dur.out && ok "duration: same stdout" || fail "duration: stdout differs"
expect_eq "duration: nothing on stderr with -q" "$(cat dur.err)" ""
expect_eq "duration: verify (complete)" "$(verify_rc "$f")" 0
expect_eq "duration: stopped" "$("$AT" info "$f" --json | grep -o '"stopped":"[a-z-]*"')" '"stopped":"duration"'
ev=$(json_num "$f" events); after=$(json_num "$f" calls_after_stop); dr=$(json_num "$f" dropped_events)
cnt=$(counted dur.counts "$f")
same_calls "duration: $ev recorded + $after after the stop + $dr dropped" $((ev + after + dr)) "$cnt"
[ "$after" -gt 0 ] && [ "$ev" -gt 0 ] && ok "duration: a window, calls on both sides of the stop" ||
	fail "duration: $ev recorded, $after after the stop"
"$AT" info "$f" | grep -q '^stopped  *at its duration limit' && ok "duration: info shows the stop" ||
	fail "duration: info: $("$AT" info "$f")"

# --- the second reader (SPEC alone) reads the same stop from the footer ---
ROOT=$(cd "$(dirname "$0")/../.." 2>/dev/null && pwd)
[ -d "$ROOT/tests" ] || ROOT=$(cd "$B/.." && pwd)
if /usr/bin/python3 -c 'import zstandard' 2>/dev/null; then
	for f in ms64K.zst dur.zst; do
		py=$(/usr/bin/python3 "$ROOT_DIR/tests/spec_reader.py" process "$f" | grep -o '"calls_after_stop": [0-9]*, \|"stopped": "[a-z-]*"' | tr -d ' ,' | tr '\n' ' ')
		c=$("$AT" info "$f" --json | grep -o '"calls_after_stop":[0-9]*\|"stopped":"[a-z-]*"' | sort | tr '\n' ' ')
		expect_eq "$f: tests/spec_reader.py reads the same stop" "$py" "$c"
	done
else
	echo "skip: no python3-zstandard: the second reader's check"
fi

# --- no limit reached: no stop in the footer ---
run_bounded big -q --max-size 1G --duration 100 -o "$W/big.zst" "${PROG[@]}"
expect_eq "limits not reached: verify" "$(verify_rc big.zst)" 0
expect_eq "limits not reached: no stop" "$("$AT" info big.zst --json | grep -c '"stopped"')" 0
same_calls "limits not reached: every call recorded" "$(json_num big.zst events)" "$(counted big.counts big.zst)"

# --- fork children: each image's trace has its own limit ---
"$REC" -q --max-size 24K -o "$W/fk.zst" /bin/sh -c "\"$P/rec_paced\" 1 20 5000 0 >/dev/null; \"$P/rec_paced\" 1 20 5000 0 >/dev/null" 2>fk.err
expect_eq "children: exit status" $? 0
n=0
for t in rec_paced.*.zst; do
	[ -e "$t" ] || continue
	n=$((n + 1))
	expect_eq "children: $t verifies" "$(verify_rc "$t")" 0
	expect_eq "children: $t stopped at its own limit" "$("$AT" info "$t" --json | grep -o '"stopped":"[a-z-]*"')" '"stopped":"max-size"'
done
expect_eq "children: two exec'ed images, two bounded traces" $n 2

# --- bad values: usage errors, PROG not run (--time-every is checked here too) ---
for bad in "--max-size 0" "--max-size 12Q" "--max-size -5" "--max-size=" "--duration 0" "--duration -1" \
	"--duration abc" "--duration 1e99" "--duration nan" "--time-every 0" "--time-every 1025" "--time-every x" \
	"--time-unit 0" "--time-unit 8" "--time-unit 48" "--time-unit 2097152" "--time-unit x"; do
	# shellcheck disable=SC2086
	"$REC" $bad -o "$W/bad.zst" "$P/rec_seq" >bad.out 2>bad.err
	rc=$?
	expect_eq "'$bad': usage error" $rc 1
	[ -s bad.out ] && fail "'$bad': PROG ran" || true
	grep -q -- "${bad%%[ =]*}" bad.err || fail "'$bad': message does not name the option: $(cat bad.err)"
done
"$REC" --help | grep -q -- '--max-size=BYTES' && ok "--help names --max-size" || fail "--help lacks --max-size"
"$REC" --help | grep -q -- '--duration=S' && ok "--help names --duration" || fail "--help lacks --duration"
"$REC" --help | grep -q -- '--time-every=N' && ok "--help names --time-every" || fail "--help lacks --time-every"
# allocrec -p takes it too, with the same check (no process is touched)
"$REC" -p $$ --time-every=0 >bad.out 2>bad.err
expect_eq "-p with --time-every=0: usage error" $? 1
grep -q -- "--time-every" bad.err || fail "-p --time-every=0: message does not name the option: $(cat bad.err)"
"$REC" -p $$ --time-unit=100 >bad.out 2>bad.err
expect_eq "-p with --time-unit=100: usage error" $? 1
grep -q -- "--time-unit" bad.err || fail "-p --time-unit=100: message does not name the option: $(cat bad.err)"
"$REC" --help | grep -q -- '--time-unit=NS' && ok "--help names --time-unit" || fail "--help lacks --time-unit"
# a setting's value given as a separate word before -p is not taken for PROG
"$REC" --time-unit 64 --time-every 4 -p 2000000000 >bad.out 2>bad.err
expect_eq "--time-unit 64 --time-every 4 -p BADPID: usage error" $? 1
grep -q -- "-p takes a process id" bad.err && ok "separate-word settings before -p: attach parses them" ||
	fail "separate-word settings before -p: $(cat bad.err)"

# --- the time unit: 64 ns by default, --time-unit's, the shim's default for a
# value it cannot use; every time a multiple of it, both readers agree ---
unit_of() { "$AT" info --json "$1" | sed -n 's/.*"time_unit_ns":\([0-9]*\).*/\1/p'; }
"$REC" -q -o "$W/u_default.zst" "$P/rec_seq" >/dev/null 2>&1
expect_eq "time unit by default" "$(unit_of "$W/u_default.zst")" 64
"$REC" -q --time-unit=1024 -o "$W/u_1024.zst" "$P/rec_seq" >/dev/null 2>&1
expect_eq "time unit --time-unit=1024" "$(unit_of "$W/u_1024.zst")" 1024
expect_eq "--time-unit=1024: every time a multiple of 1024 ns" \
	"$(/usr/bin/python3 "$ROOT_DIR/tests/spec_reader.py" dump "$W/u_1024.zst" | awk '{ for (i = 1; i <= NF; i++)
		if ($i ~ /^t=/) { t = substr($i, 3); n++; if (t % 1024) bad++ } } END { print (n > 0 && !bad) ? "yes" : "no" }')" yes
expect_eq "--time-unit=1024: both readers agree" \
	"$("$AT" dump "$W/u_1024.zst" | wc -l)" "$(/usr/bin/python3 "$ROOT_DIR/tests/spec_reader.py" dump "$W/u_1024.zst" | wc -l)"
ALLOCRR_TIME_UNIT=1000 LD_PRELOAD="$B/lib/liballocrr-rec.so" ALLOCRR_OUTPUT="$W/u_env.zst" "$P/rec_seq" >/dev/null 2>&1
expect_eq "ALLOCRR_TIME_UNIT=1000 (no power of two): the shim keeps its default" "$(unit_of "$W/u_env.zst")" 64
finish
