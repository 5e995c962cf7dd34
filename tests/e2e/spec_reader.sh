#!/usr/bin/env bash
# The second reader: tests/spec_reader.py decodes traces from SPEC.md alone
# (written without reading the C reader). For sample traces, traces generated
# by bench_format and (when the recorder is built) one recorded with stacks,
# `alloctrace dump --extra` and `spec_reader.py dump` must print the same
# lines and both verifiers must return the same exit code. A copy cut at
# ~60% must be "truncated" (exit 1) for both, with the same dump: a prefix of
# the full dump for a one-thread trace, a subset of it otherwise.
# Exit 0 pass, 77 skip (no /usr/bin/python3 or python3-zstandard), 1 fail.
. "$(dirname "$0")/spec_lib.inc"

# compare NAME FILE [WANT_RC]: same verify exit code (and WANT_RC if given),
# same dump; leaves the two dumps in $W/NAME.c and $W/NAME.py.
compare() {
	local name=$1 f=$2 want=${3:-} crc prc
	"$AT" verify "$f" >"$W/$name.cv" 2>&1; crc=$?
	"$PY" "$READER" verify "$f" >"$W/$name.pv" 2>&1; prc=$?
	echo "-- $name: $(basename "$f"), $(stat -c %s "$f") bytes"
	echo "   alloctrace verify: rc $crc: $(head -c 200 "$W/$name.cv" | head -n 1)"
	echo "   spec_reader verify: rc $prc: $(head -c 200 "$W/$name.pv" | head -n 1)"
	[ "$crc" = "$prc" ] && ok "$name: verify exit codes agree ($crc)" ||
		fail "$name: alloctrace verify exit $crc, spec_reader verify exit $prc"
	if [ -n "$want" ]; then
		[ "$crc" = "$want" ] && ok "$name: verify exit $want" || fail "$name: verify exit $crc, want $want"
	fi
	"$AT" dump --extra "$f" >"$W/$name.c" 2>"$W/$name.ce"
	"$PY" "$READER" dump "$f" >"$W/$name.py" 2>"$W/$name.pe"
	if cmp -s "$W/$name.c" "$W/$name.py"; then
		ok "$name: dump --extra identical ($(wc -l <"$W/$name.c") lines)"
	else
		fail "$name: dumps differ (alloctrace $(wc -l <"$W/$name.c") lines, spec_reader $(wc -l <"$W/$name.py"))"
		diff "$W/$name.c" "$W/$name.py" | head -n 10
	fi
}

# truncated NAME FILE MODE: cut FILE to ~60%, expect truncated from both,
# equal dumps, and the cut dump is a prefix (MODE=prefix) or subset of $W/NAME.c.
truncated() {
	local name=$1 f=$2 mode=$3 size cut n
	size=$(stat -c %s "$f"); cut=$((size * 6 / 10))
	head -c "$cut" "$f" >"$W/$name.cut.zst"
	compare "$name.cut" "$W/$name.cut.zst" 1
	n=$(wc -l <"$W/$name.cut.c")
	[ "$n" -gt 0 ] && ok "$name.cut: $n of $(wc -l <"$W/$name.c") events readable" ||
		fail "$name.cut: no events readable from the first $cut of $size bytes"
	if [ "$mode" = prefix ]; then
		head -n "$n" "$W/$name.c" | cmp -s - "$W/$name.cut.c" &&
			ok "$name.cut: dump is a prefix of the full dump" ||
			fail "$name.cut: dump is not a prefix of the full dump"
	else
		[ -z "$(sort "$W/$name.cut.c" | comm -23 - <(sort "$W/$name.c"))" ] &&
			ok "$name.cut: every line is in the full dump" ||
			fail "$name.cut: lines that are not in the full dump"
	fi
}

# 1. checked-in samples
n=0 first_sample=
for f in "$ROOT"/traces/samples/*.zst; do
	[ -e "$f" ] || continue
	n=$((n + 1)); compare "sample$n" "$f" 0
	[ -n "$first_sample" ] || first_sample=$f
done
[ $n -gt 0 ] || fail "no traces in traces/samples"

# 2. generated traces: EVENTS THREADS LEVEL
#    (since 2.0 a thread's blocks are chained, SPEC 3.4; always here, not
#    only when it pays: 200000 events of 3 threads make chains of 4 blocks)
for spec in "5000 1 1" "20000 3 3" "40000 1 19" "200000 3 3"; do
	set -- $spec
	name=bench-$1-$2t-l$3
	BENCH_FORMAT_CHAIN=2 "$BENCH" "$1" "$2" "$3" "$W/$name.zst" >"$W/$name.log" 2>&1 ||
		{ fail "$name: bench_format exit $?"; cat "$W/$name.log"; continue; }
	compare "$name" "$W/$name.zst" 0
done

# 3. a recorded trace with stacks and metadata records (optional: the
#    recorder is not needed for the format)
if [ -x "$B/bin/allocrec" ] && [ -e "$B/lib/liballocrr-rec.so" ] &&
	"$B/bin/allocrec" -q --stacks -o "$W/rec.zst" -- sort /etc/services >/dev/null 2>"$W/rec.log" &&
	[ -s "$W/rec.zst" ]; then
	compare "recorded-stacks" "$W/rec.zst" 0
	grep -q ' stack=' "$W/recorded-stacks.py" && ok "recorded-stacks: events carry stack ids" ||
		fail "recorded-stacks: no stack= field in the dump"
else
	echo "note: allocrec unavailable or failed; no recorded trace compared"
fi

# 4. truncated copies
[ -n "$first_sample" ] && truncated sample1 "$first_sample" subset
truncated bench-20000-3t-l3 "$W/bench-20000-3t-l3.zst" subset
truncated bench-40000-1t-l19 "$W/bench-40000-1t-l19.zst" prefix
truncated bench-200000-3t-l3 "$W/bench-200000-3t-l3.zst" subset # chained

# 5. damaged copies: random bit flips and cuts (fixed seed) must be classified
#    the same way (0 / 1 / 2) by both readers.
#    And 30 of a trace with chained blocks (SPEC 3.4), where a damaged block
#    also stops its chain.
damaged() {
	"$PY" - "$1" "$AT" "$(dirname "$0")/../spec_reader.py" "$W/flip.zst" "$2" <<'PYEOF'
import random, subprocess, sys
src, at, reader, tmp, copies = sys.argv[1:6]
data = open(src, "rb").read()
random.seed(20261130)
differ = 0
for i in range(int(copies)):
    b = bytearray(data)
    for _ in range(random.randint(1, 3)):
        j = random.randrange(len(b))
        b[j] ^= 1 << random.randrange(8)
    if i % 3 == 0:
        b = b[:random.randrange(len(b))]
    open(tmp, "wb").write(b)
    c = subprocess.run([at, "verify", tmp], capture_output=True).returncode
    p = subprocess.run([sys.executable, reader, "verify", tmp], capture_output=True).returncode
    if c != p:
        differ += 1
        print("damaged copy %d: alloctrace verify exit %d, spec reader exit %d" % (i, c, p))
print("damaged copies: %d of %s classified differently" % (differ, copies))
sys.exit(1 if differ else 0)
PYEOF
	[ $? -eq 0 ] && ok "$2 damaged copies of $(basename "$1"): both readers agree on complete/truncated/corrupt" ||
		fail "damaged copies of $(basename "$1"): the readers disagree"
}
damaged "$W/bench-5000-1t-l1.zst" 100
damaged "$W/bench-200000-3t-l3.zst" 30

if [ $fails -gt 0 ]; then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
exit 0
