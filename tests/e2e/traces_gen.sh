#!/usr/bin/env bash
# `alloctrace gen`: every scenario is deterministic (same seed -> same
# SHA-256, another seed -> another), verifies, and has its definition's
# shape (traces/gen/check_scenario.sh: sizes, op mix, threads, structure,
# cross-thread frees for X); thread counts other than the default work;
# default sizes stay within a few hundred thousand to 2 M events; bad
# arguments are usage errors that leave no file behind.
set -u
cd "$(dirname "$0")/../.."
B=${ALLOCRR_BUILD:-build}
AT=$B/bin/alloctrace
[ -x "$AT" ] || { echo "missing $AT: run make first"; exit 77; }
export ALLOCRR_BUILD=$B
T=$(mktemp -d /tmp/traces_gen.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
sha() { sha256sum "$1" | cut -d' ' -f1; }

n=$("$AT" gen --list | wc -l)
[ "$n" = 10 ] && ok "gen --list: 10 scenarios" || fail "gen --list printed $n lines"
for s in S1 S2 S3 S4 S5 A B D M X; do
	"$AT" gen --list | grep -q "^$s " || fail "gen --list lacks $s"
done

for s in S1 S2 S3 S4 S5 A B D M X; do
	case $s in S4) ops=2000 ;; M) ops=20000 ;; *) ops=40000 ;; esac
	"$AT" gen $s --ops $ops --seed 7 -q -o "$T/$s.a.zst" && "$AT" gen $s --ops $ops --seed 7 -q -o "$T/$s.b.zst" &&
		"$AT" gen $s --ops $ops --seed 8 -q -o "$T/$s.c.zst" || { fail "$s: gen failed"; continue; }
	[ "$(sha "$T/$s.a.zst")" = "$(sha "$T/$s.b.zst")" ] && ok "$s: seed 7 twice, same sha256" ||
		fail "$s: seed 7 twice gives different files"
	[ "$(sha "$T/$s.a.zst")" != "$(sha "$T/$s.c.zst")" ] && ok "$s: seed 8 gives another trace" ||
		fail "$s: seeds 7 and 8 give the same file"
	info_sha=$("$AT" info "$T/$s.a.zst" --json | grep -o '"sha256":"[0-9a-f]*"' | cut -d'"' -f4)
	[ "$info_sha" = "$(sha "$T/$s.a.zst")" ] || fail "$s: info's sha256 is not the file's"
	"$AT" verify "$T/$s.a.zst" >/dev/null && ok "$s: verifies" || fail "$s: verify exit $?"
	"$AT" info "$T/$s.a.zst" --json | grep -q "\"command\":\"alloctrace gen $s --threads [0-9]* --ops $ops --seed 7\"" ||
		fail "$s: header command line is not the canonical gen command"
	out=$(bash traces/gen/check_scenario.sh $s "$T/$s.a.zst") && ok "$s: shape: $(echo "$out" | grep -c '^ok') checks" ||
		{ fail "$s: shape"; echo "$out" | sed 's/^/    /'; }
	rm -f "$T/$s".?.zst
done

# Other thread counts: each thread runs the scenario; X keeps every free cross-thread.
for st in S1:4 A:4 D:3 X:6; do
	s=${st%:*} n=${st#*:}
	"$AT" gen $s --threads $n --ops 30000 -q -o "$T/t.zst" || { fail "$s --threads $n: gen failed"; continue; }
	out=$(EXPECT_THREADS=$n bash traces/gen/check_scenario.sh $s "$T/t.zst") && ok "$s --threads $n: shape" ||
		{ fail "$s --threads $n"; echo "$out" | sed 's/^/    /'; }
done
# X: consumers free only what their producer allocated, all after it (SPEC 4 order in the dump).
"$AT" gen X --threads 4 --ops 20000 -q -o "$T/x.zst"
"$AT" dump "$T/x.zst" | awk '
	$3 == "malloc" { owner[$6] = $2; when[$6] = $1; if ($2 % 2) bad++ }
	$3 == "free" { if (!($4 in owner) || owner[$4] + 1 != $2 || when[$4] >= $1) bad++; delete owner[$4]; n++ }
	END { exit !(n > 0 && bad == 0) }' && ok "X --threads 4: each consumer frees its producer's messages, after their malloc" ||
	fail "X --threads 4: a free is not its pair's consumer's, or comes before the malloc"

# Default sizes.
t0=$EPOCHREALTIME
for s in S1 S2 S3 S4 S5 A B D M X; do
	"$AT" gen $s -q -o "$T/d.zst" || { fail "$s: default gen failed"; continue; }
	ev=$("$AT" verify "$T/d.zst" | sed -n 's/.*ok, \([0-9]*\) events.*/\1/p')
	lo=100000; [ $s = S4 ] && lo=5000
	[ -n "$ev" ] && [ "$ev" -ge $lo ] && [ "$ev" -le 2000000 ] && ok "$s default: $ev events, $(stat -c %s "$T/d.zst") bytes" ||
		fail "$s default: ${ev:-?} events"
done
echo "default traces generated and verified in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"

# Usage errors leave nothing behind.
"$AT" gen NOPE -o "$T/e.zst" 2>/dev/null; [ $? = 1 ] && [ ! -e "$T/e.zst" ] && ok "unknown scenario: exit 1" || fail "unknown scenario"
"$AT" gen X --threads 3 -o "$T/e.zst" 2>/dev/null; [ $? = 1 ] && [ ! -e "$T/e.zst" ] && ok "X --threads 3: exit 1, no file" ||
	fail "X --threads 3"
"$AT" gen S1 --ops -5 -o "$T/e.zst" 2>/dev/null; [ $? = 1 ] && ok "--ops -5: exit 1" || fail "--ops -5"
"$AT" gen S1 2>/dev/null; [ $? = 1 ] && ok "no -o: exit 1" || fail "no -o"

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all passed"
