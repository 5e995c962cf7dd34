# rec_testlib.sh — sourced by tests/e2e/rec_*.sh (not a test itself).
# Sets B (build dir), P (test programs), REC (allocrec), AT (alloctrace),
# CHECK (rec_tracecheck), a scratch directory W (removed at exit), and a
# few helpers. Every helper prints what it compared when it fails.
set -u
B=${ALLOCRR_BUILD:-build}
B=$(cd "$B" && pwd)
P=$B/tests/progs
REC=$B/bin/allocrec
AT=$B/bin/alloctrace
CHECK=$P/rec_tracecheck
for f in "$REC" "$B/lib/liballocrr-rec.so" "$CHECK" "$AT"; do
	[ -e "$f" ] || { echo "missing $f: run make first"; exit 77; }
done
W=$(mktemp -d /tmp/allocrr-rec-test.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W"
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
# expect_eq WHAT GOT WANT
expect_eq() { if [ "$2" = "$3" ]; then ok "$1 = $3"; else fail "$1: got '$2', want '$3'"; fi; }
# The one trace matching a glob (fails if not exactly one).
one_trace() {
	local n
	n=$(ls $1 2>/dev/null | wc -l)
	[ "$n" = 1 ] || { fail "expected one trace matching $1, found $n: $(ls "$W")"; echo /nonexistent; return; }
	ls $1
}
# Dump lines without the SEQ and TID columns.
dump3() { "$AT" dump "$1" | cut -d' ' -f3-; }
# verify exit status of alloctrace verify (0 complete, 1 truncated, 2 corrupt)
verify_rc() { "$AT" verify "$1" >/dev/null 2>&1; echo $?; }
finish() {
	if [ $fails -gt 0 ]; then echo "$fails check(s) failed"; exit 1; fi
	echo "all checks passed"; exit 0
}
