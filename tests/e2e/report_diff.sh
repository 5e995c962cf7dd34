#!/usr/bin/env bash
# allocreport diff OLD.db NEW.db (results/diff.c, analysis/report_diff.c):
#   - the same trace replayed into two databases is paired by SHA-256; each
#     allocator's OLD and NEW figures are the medians of its ok runs in each
#     database (recomputed here from the runs table), with the change in
#     percent, the repetitions and a verdict from the significance rule;
#     the trace's own figures are "same";
#   - a trace recorded again with one more leaked block (same file name,
#     other SHA-256) is paired by name and its exact figures move (allocs
#     +1, peak_live +4000 bytes);
#   - --fail-if: exact regressions exit 4 with one line naming trace,
#     allocator, metric, old, new and change; --ignore-significance judges
#     every change, without it a change that is not meaningful is a note;
#     a bad expression is a usage error naming it;
#   - --old-runs/--new-runs: two run ranges of one database, each side's
#     medians over its own runs;
#   - a pair from different hosts is said so (stderr, table, JSON); traces
#     on one side only are listed; --fail-if with nothing in common exits 2.
. "$(dirname "$0")/report_lib.inc"
REC=$B/bin/allocrec
PROG=$B/tests/progs/rec_diffleak
PY=/usr/bin/python3
for f in "$REC" "$PROG" "$PY"; do [ -x "$f" ] || { echo "missing $f"; exit 77; }; done

mkdir -p old new
"$REC" --stacks -o old/t.zst "$PROG" 2>/dev/null || fail "record old/t.zst"
"$REC" --stacks -o new/t.zst "$PROG" --leak 2>/dev/null || fail "record new/t.zst"
"$ATR" gen S1 --ops 3000 -q -o s1.zst || fail "gen S1"
"$AR" old/t.zst -a glibc,pool --repeat 3 --db old.db >/dev/null 2>&1 || fail "replay old.db"
"$AR" old/t.zst -a glibc,pool --repeat 3 --db same.db >/dev/null 2>&1 || fail "replay same.db"
"$AR" new/t.zst -a glibc,pool --repeat 2 --db leak.db >/dev/null 2>&1 || fail "replay leak.db"
"$AR" s1.zst -a glibc --repeat 1 --db other.db >/dev/null 2>&1 || fail "replay other.db"

# ---- the same trace twice: paired by SHA-256, medians from the runs --------------------
"$AREP" diff old.db same.db >same.txt 2>same.err
expect_eq "same trace: exit" $? 0
grep -q '^trace t.zst ' same.txt && ok "same trace: its heading" || fail "same trace: $(head -5 same.txt)"
grep -q 'matched by name' same.txt && fail "same trace: matched by name" || ok "same trace: matched by SHA-256"
expect_eq "same trace: trace rows" "$(grep -cE '^  \(trace\) .* 0% +same$' same.txt)" 3
"$AREP" diff --format json old.db same.db >same.json || fail "same: json exit"
"$PY" - old.db same.db same.json <<'PY' || fail "same: json against the databases (see above)"
import json, sqlite3, statistics, sys
old, new, doc = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
col = {"ops_s": "ops_per_sec", "p50": "p50_ns", "p99": "p99_ns", "p999": "p999_ns", "max": "max_ns",
       "heap_rss": "peak_heap_rss_bytes", "frag": "fragmentation"}
def med(db, alloc, c):
    con = sqlite3.connect(db)
    v = [r[0] for r in con.execute(f"SELECT {c} FROM run_summary WHERE allocator = ? AND status = 'ok'"
                                   f" AND {c} IS NOT NULL", (alloc,))]
    return statistics.median(v) if v else None
bad = []
[t] = doc["traces"]
if t["matched_by"] != "sha256" or t["old_sha256"] != t["new_sha256"] or not t["same_host"]:
    bad.append(("pairing", t["matched_by"], t["same_host"]))
seen = set()
for c in t["cells"]:
    if c["allocator"] is None:
        if c["significance"] != "same" or c["old"] != c["new"]: bad.append(("trace cell", c))
        continue
    if c["metric"] not in col: continue
    seen.add((c["allocator"], c["metric"]))
    for side, db in (("old", old), ("new", new)):
        want = med(db, c["allocator"], col[c["metric"]])
        if want is None or abs(c[side] - want) > 1e-9 * max(1, abs(want)):
            bad.append((c["allocator"], c["metric"], side, c[side], want))
    if c["repetitions"] != [3, 3]: bad.append(("repetitions", c["allocator"], c["metric"], c["repetitions"]))
    if c["significance"] not in ("meaningful", "noise", "within 5%"): bad.append(("verdict", c))
    if c["old"] and abs(c["change_pct"] - 100 * (c["new"] - c["old"]) / c["old"]) > 1e-6: bad.append(("change", c))
want = {(a, m) for a in ("glibc", "pool") for m in col}
if seen != want: bad.append(("cells", sorted(want - seen)))
print("json against the databases:", "ok" if not bad else bad)
sys.exit(1 if bad else 0)
PY
"$AREP" diff --fail-if 'allocs>0%' --fail-if 'peak_live>0%' --fail-if 'events<0%' old.db same.db >/dev/null 2>gate0.err
expect_eq "same trace, exact rules: exit" $? 0

# ---- a trace recorded again with a leak: paired by name ---------------------------------
"$AREP" diff old.db leak.db >leak.txt 2>/dev/null
expect_eq "leak: exit" $? 0
grep -q 'matched by name: the trace itself changed' leak.txt && ok "leak: paired by name" || fail "leak: $(sed -n 3,5p leak.txt)"
grep -qE '^  \(trace\) +allocations +2212 +2213 +\+0.045% +exact$' leak.txt && ok "leak: allocations row" ||
	fail "leak: $(grep allocations leak.txt)"
"$AREP" diff --fail-if 'allocs>0%' --fail-if 'peak_live>+3%' --fail-if 'peak_live>+5%' old.db leak.db >/dev/null 2>gate.err
expect_eq "leak: --fail-if exit" $? 4
expect_eq "leak: violation lines" "$(grep -c ': regression: ' gate.err)" 2
grep -qF "allocreport: regression: trace t.zst, allocator (any: a figure of the trace): allocs 2212 -> 2213 (+0.045%, exact) breaks --fail-if 'allocs>0%'" gate.err &&
	ok "leak: allocs violation line" || fail "leak: $(cat gate.err)"
grep -qE "regression: trace t.zst, .*: peak_live 115.6 KiB -> 119.5 KiB \(\+3.4%, exact\) breaks --fail-if 'peak_live>\+3%'" gate.err &&
	ok "leak: peak_live violation line" || fail "leak: $(cat gate.err)"
"$AREP" diff --format json --fail-if 'allocs>0%' old.db leak.db >leak.json 2>/dev/null
expect_eq "leak: json --fail-if exit" $? 4
"$PY" - leak.json <<'PY' || fail "leak: json"
import json, sys
[t] = json.load(open(sys.argv[1]))["traces"]
c = [c for c in t["cells"] if c["allocator"] is None and c["metric"] == "allocs"][0]
ok = t["matched_by"] == "name" and c["old"] == 2212 and c["new"] == 2213 and c["failed_rule"] == "allocs>0%"
print("leak json:", "ok" if ok else (t["matched_by"], c))
sys.exit(0 if ok else 1)
PY

# ---- significance: what fails by default, what --ignore-significance adds ---------------
# 'p99>=-100%' passes for every measured p99: each allocator's cell is judged.
"$AREP" diff --ignore-significance --fail-if 'p99>=-100%' old.db same.db >/dev/null 2>ign.err
expect_eq "--ignore-significance: exit" $? 4
expect_eq "--ignore-significance: one line per allocator" "$(grep -cE ': regression: trace t.zst, allocator (glibc|pool): p99 ' ign.err)" 2
"$AREP" diff --fail-if 'p99>=-100%' old.db same.db >/dev/null 2>sig.err
rc=$?
nreg=$(grep -c ': regression: ' sig.err) nnote=$(grep -c ': not failing: .*is not meaningful' sig.err)
expect_eq "default: each allocator judged once, as a regression or a note" $((nreg + nnote)) 2
expect_eq "default: exit 4 exactly when a meaningful change failed" "$rc" "$([ "$nreg" -gt 0 ] && echo 4 || echo 0)"

# ---- bad expressions and arguments ------------------------------------------------------
for bad in 'leaked>0%' 'p99>+10' 'p99 > ten%' 'ops_s<<-5%'; do
	"$AREP" diff --fail-if "$bad" old.db same.db >/dev/null 2>bad.err
	expect_eq "bad --fail-if '$bad': exit" $? 1
	grep -qF -- "--fail-if '$bad'" bad.err && ok "bad --fail-if '$bad': named" || fail "bad '$bad': $(cat bad.err)"
done
"$AREP" diff old.db >/dev/null 2>&1
expect_eq "one database: exit" $? 1
"$AREP" diff old.db missing.db >/dev/null 2>miss.err
expect_eq "missing database: exit" $? 2
"$AREP" diff --help | grep -q '^Usage: allocreport diff' && ok "diff --help" || fail "diff --help"
"$AREP" --help | grep -q 'or: allocreport diff' && ok "allocreport --help lists diff" || fail "allocreport --help"

# ---- two run sets of one database -------------------------------------------------------
"$AR" old/t.zst -a glibc,pool --repeat 2 --db one.db >/dev/null 2>&1 || fail "replay one.db (1)"
"$AR" old/t.zst -a glibc,pool --repeat 2 --db one.db >/dev/null 2>&1 || fail "replay one.db (2)"
expect_eq "one.db: run ids" "$(q one.db 'SELECT min(run_id), max(run_id), count(*) FROM runs')" "1|8|8"
"$AREP" diff --old-runs 1-4 --new-runs 5- --format json one.db >split.json 2>split.err
expect_eq "run ranges: exit" $? 0
"$PY" - one.db split.json <<'PY' || fail "run ranges: json (see above)"
import json, sqlite3, statistics, sys
con, doc = sqlite3.connect(sys.argv[1]), json.load(open(sys.argv[2]))
bad = []
if doc["old"] != "one.db, runs 1-4" or doc["new"] != "one.db, runs 5-": bad.append((doc["old"], doc["new"]))
[t] = doc["traces"]
if t["matched_by"] != "sha256": bad.append(t["matched_by"])
for c in t["cells"]:
    if c["allocator"] is None or c["metric"] != "p99": continue
    for side, (lo, hi) in (("old", (1, 4)), ("new", (5, 8))):
        v = [r[0] for r in con.execute("SELECT p99_ns FROM run_summary WHERE allocator = ? AND status = 'ok'"
                                       " AND run_id BETWEEN ? AND ?", (c["allocator"], lo, hi))]
        if abs(c[side] - statistics.median(v)) > 1e-9 * c[side]: bad.append((c["allocator"], side, c[side], v))
    if c["repetitions"] != [2, 2]: bad.append(("repetitions", c["repetitions"]))
print("run ranges:", "ok" if not bad else bad)
sys.exit(1 if bad else 0)
PY
"$AREP" diff --old-runs 1-4 one.db >/dev/null 2>&1
expect_eq "--old-runs alone: exit" $? 1
"$AREP" diff --old-runs 4-1 --new-runs 5- one.db >/dev/null 2>&1
expect_eq "--old-runs 4-1: exit" $? 1
"$AREP" diff --old-runs 1-4 --new-runs 50- one.db >/dev/null 2>split.err
expect_eq "--new-runs with no run: exit" $? 1
grep -q "no run of one.db has a run id in --new-runs" split.err && ok "--new-runs with no run: said" || fail "$(cat split.err)"

# ---- hosts, and traces on one side ------------------------------------------------------
cp same.db elsewhere.db
q elsewhere.db "UPDATE runs SET host = 'elsewhere-host'"
"$AREP" diff old.db elsewhere.db >host.txt 2>host.err
expect_eq "other host: exit" $? 0
grep -q "warning: trace t.zst: OLD was measured on host .* and NEW on elsewhere-host" host.err &&
	ok "other host: warned" || fail "other host: $(cat host.err)"
grep -q "DIFFERENT HOSTS: OLD ran on .*, NEW on elsewhere-host" host.txt && ok "other host: in the table" ||
	fail "other host: table"
"$AREP" diff --format json old.db elsewhere.db 2>/dev/null |
	"$PY" -c 'import json,sys; t=json.load(sys.stdin)["traces"][0]; sys.exit(0 if t["same_host"] is False and t["new_host"]=="elsewhere-host" else 1)' &&
	ok "other host: json same_host false" || fail "other host: json"
"$AREP" diff old.db other.db >only.txt 2>only.err
expect_eq "nothing in common: exit" $? 0
grep -q "only in NEW" only.txt && grep -q "only in OLD" only.txt && ok "traces on one side listed" || fail "only: $(cat only.txt)"
"$AREP" diff --fail-if 'p99>+10%' old.db other.db >/dev/null 2>only.err
expect_eq "nothing in common with --fail-if: exit" $? 2
grep -q "nothing for --fail-if to judge" only.err && ok "nothing to judge: said" || fail "$(cat only.err)"
finish
