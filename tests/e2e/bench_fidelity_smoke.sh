#!/usr/bin/env bash
# make bench-fidelity's harness end to end, tiny: two real programs (sqlite3
# and /usr/bin/python3) with small inputs, two allocators (glibc and our
# pool), two real runs and two replays each; then the structure of what it
# leaves (every allocator has its real runs, the database its replays, the
# report its fields) and the analysis on doctored real runs whose answer is
# known. Nothing here depends on a timing.
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"
need_allocators glibc pool
for c in /usr/bin/python3 /usr/bin/time; do [ -x $c ] || { echo "$c not installed"; exit 77; }; done
FID=$ROOT/bench/fidelity
O=$T/fid

ALLOCRR_BUILD=$B FIDELITY_OUT=$O FIDELITY_PROGRAMS="sqlite python" FIDELITY_REPS=2 FIDELITY_REPLAY_REPS=2 \
	FIDELITY_ALLOCATORS=glibc,pool FIDELITY_SQLITE_ROWS=20000 FIDELITY_PY_N=5000 \
	bash "$FID/run.sh" >out.txt 2>&1
expect_eq "run.sh exit status" $? 0
cat out.txt

# real runs: 2 per program x allocator, each with a time and a peak RSS
expect_eq "real runs that failed" "$(tail -n +2 "$O/failures.csv" | wc -l)" 0
for p in sqlite python; do
	for a in glibc pool; do
		expect_eq "$p $a: real runs" "$(grep -c "^$p,$a," "$O/real.csv")" 2
		# a tiny run may take 0.00 s of CPU at GNU time's 10 ms resolution:
		# a time is a number >= 0, a peak RSS is > 0
		expect_eq "$p $a: real runs with a time and RSS > 0" \
			"$(awk -F, -v p=$p -v a=$a '$1 == p && $2 == a && $4 ~ /^[0-9.]+$/ && $7 > 0' "$O/real.csv" | wc -l)" 2
	done
	sha=$(awk -F, -v p=$p '$1 == p { print $2 }' "$O/traces.csv")
	trace=$(awk -F, -v p=$p '$1 == p { print $5 }' "$O/traces.csv")
	expect_eq "$p: traces.csv names the trace's SHA-256" "$(sha256sum "$trace" | cut -d' ' -f1)" "$sha"
	for a in glibc pool; do
		expect_eq "$p $a: ok replays in the database" \
			"$(q "$O/fidelity.db" "SELECT count(*) FROM runs WHERE trace_sha256 = '$sha' AND allocator = '$a' AND status = 'ok'")" 2
	done
	expect_eq "$p: recommend.json has a speed pick" \
		"$(/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1]));
print(sum(p["goal"] == "speed" for r in d["recommendations"] for p in r["picks"]))' "$O/$p/recommend.json")" 1
	grep -q "^$p: baseline glibc, time = CPU s (user + sys), 2 real runs per allocator" "$O/report.txt" &&
		ok "$p: report section" || fail "$p: no report section"
done
for field in "allocator the trace says the program ran on: " "Spearman time" "pairs disjoint and > 25% apart ordered right: time" "--recommend speed: " \
	"--recommend memory: " "real runs that failed (no figure)" "time pairs ordered right (target: all)" "memory pairs ordered right (target: all)" \
	"predicted time ratio vs real ratio (target ±15 %)" "predicted peak RSS vs real peak RSS (target ±10 %)" \
	"--recommend speed within 10 % of the real best, by the real ratios alone (target ≥ 90 %)" \
	"--recommend speed: no allocator the real runs resolve as > 10 % better (paired rounds, 95 % interval)"; do
	grep -qF -- "$field" "$O/report.txt" && ok "report has '$field'" || fail "report lacks '$field'"
done
grep -Eq '^  programs +2 compared$' "$O/report.txt" && ok "summary: 2 programs compared" ||
	fail "summary: not '2 compared': $(grep '^  programs' "$O/report.txt")"
grep -q '^| allocator | real time s' "$O/report.md" && grep -q '^### Summary' "$O/report.md" &&
	ok "report.md has the tables" || fail "report.md lacks the tables"

# Doctored real runs with a known answer: pool 3x glibc's time with disjoint
# ranges is a pair replay must order; whichever way replay ordered it, the
# analysis must count it and, when wrong, name it.
cp -r "$O" doc
awk -F, -v OFS=, 'NR > 1 && $1 == "sqlite" { $4 = ($2 == "pool" ? 3 : 1) + ($3 - 1) / 10 } { print }' \
	"$O/real.csv" >doc/real.csv
/usr/bin/python3 "$FID/analyze.py" doc >doc.txt
expect_eq "analyze.py on doctored runs" $? 0
pairs=$(sed -n '/^sqlite:/,/^python:/p' doc.txt |
	sed -n 's/.*ordered right: time \([0-9]*\/[0-9]*\),.*/\1/p')
case $pairs in
1/1) ok "the 3x pair counted and ordered right" ;;
0/1) # the real ratio is the rounds' median: 3.0 / 1.0 and 3.1 / 1.1, 2.91x
	grep -q 'time order wrong: glibc < pool (real 2.91x' doc.txt && ok "the 3x pair counted, named as wrong" ||
	fail "pair 0/1 without the disagreement named" ;;
*) fail "the 3x pair: got '$pairs', want 1/1 or 0/1" ;;
esac
grep -q '^glibc (base) *1\.05 (1\.00-1\.10) *1\.00 ' doc.txt && ok "medians and ranges of the doctored runs" ||
	fail "doctored glibc row: $(grep '^glibc (base)' doc.txt | head -1)"

# Doctored again: one allocator other than sqlite's speed pick at half the
# others' time in every round is resolved as better than the pick; the
# pick's own median being off the best by noise alone is not.
pick=$(/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print([p["allocator"] for r in d["recommendations"] for p in r["picks"] if p["goal"] == "speed"][0])' "$O/sqlite/recommend.json")
fast=$( [ "$pick" = pool ] && echo glibc || echo pool)
awk -F, -v OFS=, -v f=$fast 'NR > 1 && $1 == "sqlite" { $4 = ($2 == f ? 0.5 : 1) + ($3 - 1) / 10 } { print }' \
	"$O/real.csv" >doc/real.csv
/usr/bin/python3 "$FID/analyze.py" doc >doc2.txt
sed -n '/^sqlite:/,/^python:/p' doc2.txt | grep -q "speed: real runs resolve $fast as > 10% better than the pick" &&
	ok "an allocator at half the pick's time (disjoint) resolved as better than pick $pick" ||
	fail "$fast at half the time not resolved: $(grep 'real runs resolve' doc2.txt | head -2)"
awk -F, -v OFS=, 'NR > 1 && $1 == "sqlite" { $4 = 1 + ($3 - 1) / 10 + ($2 == "pool" ? 0.08 : 0) } { print }' \
	"$O/real.csv" >doc/real.csv
/usr/bin/python3 "$FID/analyze.py" doc >doc3.txt
sed -n '/^sqlite:/,/^python:/p' doc3.txt | grep -q "speed: real runs resolve no allocator as > 10% better than the pick" &&
	ok "overlapping ranges: no allocator resolved as better than the pick" ||
	fail "overlapping ranges resolved: $(grep 'real runs resolve' doc3.txt | head -2)"

/usr/bin/python3 "$FID/analyze.py" >/dev/null 2>&1
[ $? -ne 0 ] && ok "analyze.py without a directory: usage error" || fail "analyze.py without a directory exits 0"

# The real time ratio pairs each allocator's run with the baseline's in the
# same round (the median of the rounds' ratios, not the ratio of medians),
# and falls back to the ratio of medians when no round pairs.
/usr/bin/python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import analyze as A
r = {"glibc": {"time": [1.0, 1.0, 3.0], "round": {"1": 1.0, "2": 1.0, "3": 3.0}},
     "pool": {"time": [1.5, 3.3, 3.3], "round": {"1": 1.5, "2": 3.3, "3": 3.3}},
     "arena": {"time": [2.0], "round": {"9": 2.0}}}
assert A.paired_ratio(r, "pool", "glibc")[0] == 1.5, A.paired_ratio(r, "pool", "glibc")
assert A.paired_ratio(r, "arena", "glibc")[0] == 2.0' "$FID" &&
	ok "paired_ratio: median of per-round ratios (1.5, not 3.3), ratio of medians without a common round" ||
	fail "paired_ratio"

# make bench-alloc-real (bench/alloc/real.sh), tiny: the same programs run
# for real, our libraries once more as NAME-old; one row per allocator, the
# baseline's ratio exactly 1, every ratio inside its own interval.
OLD_LIBDIR=$B/lib ALLOCRR_BUILD=$B REAL_PROGRAMS=sqlite REAL_ALLOCATORS=glibc,pool REPEAT=2 \
	FIDELITY_SQLITE_ROWS=20000 bash "$ROOT/bench/alloc/real.sh" >real.txt 2>&1
expect_eq "real.sh exit status" $? 0
cat real.txt
for a in glibc pool pool-old; do
	awk -v a=$a '$1 == a && $6 <= $5 && $5 <= $7 { n++ } END { exit n != 1 }' real.txt &&
		ok "real.sh: a row for $a, its ratio inside its interval" || fail "real.sh: no proper row for $a"
done
awk '$1 == "glibc" && $5 == "1.000" { n++ } END { exit n != 1 }' real.txt && ok "real.sh: glibc's ratio is 1.000" ||
	fail "real.sh: glibc's row $(grep '^  glibc' real.txt)"
/usr/bin/python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from rank_stats import median_ratio
r = median_ratio([2.0, 2.0, 3.0], [1.0, 1.0, 1.0]); assert r[0] == 2.0 and 2.0 <= r[1] <= r[2] <= 3.0, r' \
	"$ROOT/bench/lib" && ok "median_ratio: 2x with an interval within the runs' ratios" || fail "median_ratio"
# Paired by round: a slow round slows both sides and cancels; the verdict
# needs the whole interval past allocreport's floor (AR_RES_EFFECT_FLOOR).
/usr/bin/python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import rank_stats as R
base = {"0": 1.0, "1": 2.0, "2": 4.0, "3": 1.0, "4": 3.0}
r = R.paired_ratio({k: 0.8 * t for k, t in base.items()}, base)
assert abs(r[0] - 0.8) < 1e-9 and abs(r[1] - 0.8) < 1e-9 and abs(r[2] - 0.8) < 1e-9, r
assert R.paired_ratio({"9": 1.0}, base) is None
f = R.effect_floor(); assert 0 < f < 0.5, f
assert R.verdict(0.8, 0.8, f) == "faster" and R.verdict(0.9, 1.02, f) == "no meaningful difference"
assert R.verdict(1.1, 1.3, f) == "slower" and R.verdict(1 - f / 2, 1 - f / 2, f) == "no meaningful difference"' \
	"$ROOT/bench/lib" && ok "paired_ratio: 0.8 in every round gives 0.8 with no spread; verdicts against the floor" ||
	fail "paired_ratio / verdict"
finish
