#!/usr/bin/env bash
# allocreplay-worker --timing none (what make bench-replay uses to measure
# the harness): it replays the same ops as a timed run (same calls, same
# checksum), reports no timed_ns and no latency histograms; a bad value is a
# usage error. Also under bench-replay's null allocator libbump.so, which the
# worker must accept as the library serving malloc when named by --library.
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"
W=$B/bin/allocreplay-worker
LIBC=$("$AR" --list | awk '$1=="glibc"{print $5}')

"$AR" "$SAMPLE" -a glibc --repeat 1 --db r.db >/dev/null 2>&1
expect_eq "allocreplay compiles the sample" $? 0
sha=$(sha256sum "$SAMPLE" | cut -d' ' -f1)
WL=$(ls "$ALLOCRR_CACHE_DIR/$sha".v*.wl 2>/dev/null | head -1)
[ -f "$WL" ] || { fail "no cached workload for $sha"; finish; }

scalar() { awk -v n="$2" '$1 == "S" && $2 == n {print $3}' "$1"; }
# run OUT LIB TIMING: one worker with --touch none, report in OUT
run() {
	local out=$1 lib=$2 timing=$3 pre="-u LD_PRELOAD"
	[ "$lib" != "$LIBC" ] && pre="LD_PRELOAD=$lib"
	env $pre "$W" --workload "$WL" --allocator test --library "$lib" --touch none --timing "$timing" \
		--fd 1 >"$out" 2>"$out.err"
}

run timed.txt "$LIBC" calls
expect_eq "timed: exit" $? 0
run untimed.txt "$LIBC" none
expect_eq "untimed: exit" $? 0
for f in timed.txt untimed.txt; do
	grep -q '^Z' $f && ! grep -q '^E' $f && ok "$f: complete report, no error" || fail "$f: $(cat $f.err)"
done
calls=$(scalar timed.txt calls)
[ "${calls:-0}" -gt 0 ] && ok "timed: $calls calls" || fail "timed: no calls"
expect_eq "untimed: same calls" "$(scalar untimed.txt calls)" "$calls"
expect_eq "untimed: same op checksum" "$(scalar untimed.txt op_checksum)" "$(scalar timed.txt op_checksum)"
[ -n "$(scalar untimed.txt wall_ns)" ] && ok "untimed: reports wall_ns" || fail "untimed: no wall_ns"
[ -n "$(scalar timed.txt timed_ns)" ] && ok "timed: reports timed_ns" || fail "timed: no timed_ns"
expect_eq "untimed: no timed_ns" "$(scalar untimed.txt timed_ns)" ""
expect_eq "untimed: no latency histograms" "$(grep -c '^[HB] ' untimed.txt)" 0

"$W" --workload "$WL" --allocator glibc --library "$LIBC" --timing sometimes --fd 1 >/dev/null 2>bad.err
expect_eq "bad --timing: usage exit" $? 64
grep -q -- "--timing calls|none" bad.err && ok "bad --timing: usage names the values" || fail "usage: $(cat bad.err)"

BUMP=$B/bench/libbump.so
if [ -f "$BUMP" ]; then
	BUMP=$(realpath "$BUMP")
	run bump.txt "$BUMP" none
	expect_eq "bump: exit" $? 0
	expect_eq "bump: proven as the library serving malloc" "$(awk '$1 == "V" {print $2, $3}' bump.txt)" "0 $BUMP"
	grep -q '^Z' bump.txt && ! grep -q '^E' bump.txt && ok "bump: complete report" || fail "bump: $(cat bump.txt.err)"
	expect_eq "bump: same calls" "$(scalar bump.txt calls)" "$calls"
	expect_eq "bump: no failed allocations" "$(scalar bump.txt failed_allocs)" 0
else
	echo "skip bump: $BUMP not built"
fi
finish
