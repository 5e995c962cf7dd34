#!/usr/bin/env bash
# The scenario programs (traces/programs/scen_*.c) do what their generators
# write: each runs (exit 0, a result line), and recorded by allocrec its
# trace verifies and has the scenario's shape within 1 % of the program's
# own calls (traces/gen/check_scenario.sh --recorded: sizes, op mix, thread
# count, batches, cross-thread frees for X). Run under LD_PRELOAD of one of
# our allocators, each prints the same result line as under glibc.
set -u
cd "$(dirname "$0")/../.."
B=${ALLOCRR_BUILD:-build}
AT=$B/bin/alloctrace REC=$B/bin/allocrec
for t in "$AT" "$REC" "$B/traces/scen_window"; do [ -x "$t" ] || { echo "missing $t: run make first"; exit 77; }; done
export ALLOCRR_BUILD=$B
T=$(mktemp -d /tmp/traces_programs.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# scenario program ops [threads]
cases=("S1 scen_window 40000" "S2 scen_window 40000" "S3 scen_hashmap 40000" "S4 scen_window 200"
	"S5 scen_batch 40000" "A scen_window 40000" "B scen_batch 40000" "D scen_cache 40000"
	"M scen_window 6000" "X scen_xthread 40000" "X scen_xthread 40000 4" "A scen_window 40000 4")
preload=$B/lib/liballocrr-tlscache.so
for c in "${cases[@]}"; do
	set -- $c
	s=$1 prog=$B/traces/$2 ops=$3 th=${4:-}
	args=($s --ops $ops --seed 5); [ -n "$th" ] && args+=(--threads $th)
	label="$s${th:+ --threads $th}"
	bare=$("$prog" "${args[@]}") && [[ $bare == "$s: "*" heap calls, checksum "* ]] ||
		{ fail "$label: $2 exit $? or output '$bare'"; continue; }
	rm -f "$T"/*.zst
	"$REC" -q -o "$T/r.zst" "$prog" "${args[@]}" >"$T/out" || { fail "$label: recorded run failed"; continue; }
	[ "$(cat "$T/out")" = "$bare" ] || fail "$label: output differs when recorded"
	"$AT" verify "$T/r.zst" >/dev/null || { fail "$label: trace does not verify"; continue; }
	out=$(EXPECT_THREADS=${th:-} bash traces/gen/check_scenario.sh $s "$T/r.zst" --recorded) &&
		ok "$label: recorded $2 has the scenario's shape ($(echo "$out" | grep -c '^ok') checks)" ||
		{ fail "$label: recorded $2"; echo "$out" | sed 's/^/    /'; }
	if [ -f "$preload" ]; then
		pre=$(LD_PRELOAD=$preload "$prog" "${args[@]}") && [ "$pre" = "$bare" ] ||
			fail "$label: under LD_PRELOAD=$(basename "$preload") the result differs: '$pre'"
	fi
done
# Usage errors.
"$B/traces/scen_window" NOPE 2>/dev/null; [ $? = 1 ] && ok "unknown scenario: exit 1" || fail "scen_window NOPE"
"$B/traces/scen_xthread" X --threads 3 2>/dev/null; [ $? = 1 ] && ok "X --threads 3: exit 1" || fail "scen_xthread --threads 3"
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all passed"
