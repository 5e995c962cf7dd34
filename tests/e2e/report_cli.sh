#!/usr/bin/env bash
# allocreport on the command line: the comparison in its four formats with
# figures equal to the database's (medians over ok runs, ratios to the
# baseline — glibc here, where no trace says what its program ran on — and
# to --baseline jemalloc, ranges), the failed run with its reason, --trace
# by name and SHA prefix, --recommend with evidence, verdicts and the
# cautions the traces call for, exit codes for bad usage and bad input
# (--baseline naming an allocator without a successful run anywhere); and
# `allocreport merge`, which
# must give exactly what results/sql/merge.sql gives, add nothing when repeated,
# and refuse a database of another schema version.
. "$(dirname "$0")/report_lib.inc"
make_report_db r.db

# ---- the comparison ------------------------------------------------------------
"$AREP" --db r.db >table.txt || fail "table: exit $?"
for name in s2_t1.zst s2_t2.zst s2_t4.zst d.zst; do
	grep -q "^trace $name " table.txt && ok "table has $name" || fail "table lacks $name"
done
expect_eq "table: allocator rows" "$(grep -cE '^(glibc|jemalloc|pool|freelist|arena|tlscache) ' table.txt)" 21
expect_eq "table: the baseline row marked on every trace" "$(grep -cE '^glibc \(baseline\) ' table.txt)" 4
grep -qE "failed: tlscache repetition 1 \(run [0-9]+\): crashed: killed by signal 11" table.txt &&
	ok "table: failed run with reason" || fail "table: failed run missing"
grep -q "counters: not measured (perf_event_open\|counters (median per run)" table.txt &&
	ok "table: counters or why not" || fail "table: no counters line"
"$AREP" --db r.db --format markdown >md.txt || fail "markdown"
grep -q '^| allocator | runs | ops/s ' md.txt && grep -q '^|---|---:' md.txt && ok "markdown table" || fail "markdown"
"$AREP" --db r.db --format csv >r.csv || fail "csv"
"$AREP" --db r.db --format json >r.json || fail "json"
"$AREP" --db r.db --format csv --baseline jemalloc >rj.csv 2>rj.err || fail "csv --baseline jemalloc"
"$AREP" --db r.db --baseline tlscache >/dev/null 2>bt.err
expect_eq "--baseline tlscache (no successful run anywhere): exit" $? 1
grep -q "no trace in r.db has a successful run of tlscache" bt.err && ok "--baseline tlscache: says why" ||
	fail "--baseline tlscache: $(cat bt.err)"
python3 - r.db <<'PY' || fail "csv/json figures (see above)"
import csv, json, sqlite3, statistics, sys
con = sqlite3.connect(sys.argv[1])
bad = 0
def check(what, cond, detail=""):
    global bad
    print(("ok   " if cond else "FAIL ") + what + ("" if cond else ": " + str(detail)))
    bad += not cond
rows = list(csv.DictReader(open("r.csv")))
js = json.load(open("r.json"))
pairs = con.execute("SELECT count(*) FROM (SELECT DISTINCT trace_sha256, allocator FROM runs)").fetchone()[0]
check("csv: a row per trace x allocator", len(rows) == pairs, (len(rows), pairs))
check("json: a row per trace x allocator", sum(len(t["allocators"]) for t in js["traces"]) == pairs)
def med(sha, alloc, col):
    v = [r[0] for r in con.execute(f"SELECT {col} FROM run_summary WHERE trace_sha256 = ? AND allocator = ? AND status = 'ok' AND {col} IS NOT NULL", (sha, alloc))]
    return statistics.median(v) if v else None
near = lambda a, b: (a is None and b in ("", None)) or (a is not None and b not in ("", None) and abs(float(b) - a) <= 1e-9 * max(1, abs(a)))
for r in rows:
    sha, a = r["trace_sha256"], r["allocator"]
    for col, key in (("ops_per_sec", "ops_per_sec"), ("p99_ns", "p99_ns"), ("peak_heap_rss_bytes", "peak_heap_rss_bytes"),
                     ("fragmentation", "fragmentation"), ("minor_faults", "minor_faults")):
        check(f"csv {r['trace_name']} {a} {key} = median of the runs", near(med(sha, a, col), r[key]), (med(sha, a, col), r[key]))
    g = med(sha, "glibc", "ops_per_sec"); m = med(sha, a, "ops_per_sec")
    check(f"csv {r['trace_name']} {a} speed_vs_baseline (glibc)", r["baseline"] == "glibc" and
          near(m / g if m and g else None, r["speed_vs_baseline"]))
    lo = con.execute("SELECT min(ops_per_sec), max(ops_per_sec) FROM runs WHERE trace_sha256 = ? AND allocator = ? AND status = 'ok'", (sha, a)).fetchone()
    check(f"csv {r['trace_name']} {a} min/max", near(lo[0], r["ops_per_sec_min"]) and near(lo[1], r["ops_per_sec_max"]))
for r in csv.DictReader(open("rj.csv")):
    sha, a = r["trace_sha256"], r["allocator"]
    j = med(sha, "jemalloc", "ops_per_sec"); m = med(sha, a, "ops_per_sec")
    check(f"csv --baseline jemalloc {r['trace_name']} {a}", r["baseline"] == "jemalloc" and
          near(m / j if m and j else None, r["speed_vs_baseline"]), (r["baseline"], r["speed_vs_baseline"]))
tl = [a for t in js["traces"] if t["name"] == "d.zst" for a in t["allocators"] if a["name"] == "tlscache"]
check("json: tlscache 0/1 with the crash", len(tl) == 1 and tl[0]["runs_ok"] == 0 and tl[0]["failures"][0]["status"] == "crashed"
      and tl[0]["ops_per_sec"]["median"] is None, tl)
check("json: unmeasured counters are null with a reason", all(c["median"] is not None or c["reason"] for t in js["traces"] for a in t["allocators"] for c in a["counters"].values()))
sys.exit(1 if bad else 0)
PY

# ---- --trace and errors -------------------------------------------------------------
sha=$(q r.db "SELECT sha256 FROM traces WHERE name = 'd.zst'")
expect_eq "--trace NAME" "$("$AREP" --db r.db --trace s2_t2.zst | grep -c '^trace ')" 1
expect_eq "--trace SHA prefix" "$("$AREP" --db r.db --trace "${sha:0:8}" | grep '^trace ' | cut -d' ' -f2)" d.zst
"$AREP" --db r.db --trace nosuch >/dev/null 2>err.txt; expect_eq "unknown trace: exit" $? 1
grep -q "^allocreport: r.db: no trace matches 'nosuch'" err.txt && ok "unknown trace: message" || fail "unknown trace message: $(cat err.txt)"
"$AREP" --db missing.db >/dev/null 2>err.txt; expect_eq "missing db: exit" $? 2
grep -q "missing.db: cannot open" err.txt && ok "missing db: message" || fail "missing db message: $(cat err.txt)"
[ ! -e missing.db ] && ok "missing db not created" || fail "missing.db was created"
"$AREP" --db r.db --format xml >/dev/null 2>&1; expect_eq "bad format: exit" $? 1
"$AREP" --db r.db --bogus >/dev/null 2>&1; expect_eq "bad option: exit" $? 1
echo "not sqlite" >junk.db
"$AREP" --db junk.db >/dev/null 2>&1; expect_eq "not a database: exit" $? 2
"$AREP" --help | grep -q "^Usage: allocreport" && ok "--help" || fail "--help"

# ---- --recommend ------------------------------------------------------------------
"$AREP" --db r.db --recommend >rec.txt || fail "recommend: exit $?"
expect_eq "recommend: 4 goals x 4 traces" "$(grep -cE '^  (speed|memory|tail latency|balance) ' rec.txt)" 16
"$AREP" --db r.db --recommend --format json >rec.json || fail "recommend json"
python3 - <<'PY' || fail "recommendation checks (see above)"
import json, re
bad = 0
def check(what, cond, detail=""):
    global bad
    print(("ok   " if cond else "FAIL ") + what + ("" if cond else ": " + str(detail)))
    bad += not cond
rec = {t["name"]: t for t in json.load(open("rec.json"))["recommendations"]}
for name, t in rec.items():
    for p in t["picks"]:
        check(f"{name} {p['goal']}: picked with evidence and a runner-up", p["allocator"] and p["runner_up"] and
              ("runner-up" in p["evidence"] or "best median" in p["evidence"]), p)
        check(f"{name} {p['goal']}: a verdict against the baseline glibc", p["baseline"] == "glibc" and
              p["verdict"] in ("meaningful", "no meaningful difference", "undecided"), p)
        check(f"{name} {p['goal']}: no meaningful difference => the pick is the baseline or the leader was",
              p["verdict"] != "no meaningful difference" or p["allocator"] == "glibc" or p["leader"] == "glibc" or
              p["leader"] == p["allocator"], p)
        check(f"{name} {p['goal']}: evidence gives the range over runs", re.search(r"over 2 runs", p["evidence"]) is not None, p["evidence"])
        check(f"{name} {p['goal']}: not meaningful => a warning says why",
              p["significant"] or any(w.startswith(("no meaningful difference", "undecided")) for w in p["warnings"]), p)
        check(f"{name} {p['goal']}: tlscache (crashed) never picked", p["allocator"] != "tlscache")
    if name != "d.zst":
        sp = [p for p in t["picks"] if p["goal"] == "speed"][0]
        check(f"{name}: speed evidence has the ratio to glibc", sp["allocator"] == "glibc" or "x glibc's" in sp["evidence"], sp["evidence"])
c = lambda n: " ".join(rec[n]["cautions"])
check("d.zst: arena long-lived caution with measured fragmentation", re.search(r"arena: long-lived objects.*fragmentation [0-9.]+ against", c("d.zst")) is not None, c("d.zst"))
check("d.zst: the crashed tlscache is named", "tlscache: 1 of 1 runs failed (crashed: killed by signal 11" in c("d.zst"), c("d.zst"))
check("s2_t4.zst: freelist with many threads", re.search(r"freelist: many threads \(4\) on one global lock.*at 1 thread\(s\): [0-9.]+x glibc", c("s2_t4.zst")) is not None, c("s2_t4.zst"))
check("s2_t1.zst: no freelist thread caution at 1 thread", "freelist:" not in c("s2_t1.zst"))
check("2 repetitions: caution to repeat more", "allocreplay --repeat 5" in c("d.zst"))
exit(1 if bad else 0)
PY
# A single repetition leaves every pick undecided.
"$AR" s2_t1.zst -a glibc,pool --repeat 1 --db one.db >/dev/null 2>&1 || fail "replay one.db"
"$AREP" --db one.db --recommend >one.txt
expect_eq "1 repetition: every pick flagged" "$(grep -c 'has a single successful repetition' one.txt)" 4
"$AREP" --db r.db --recommend --format csv | head -1 | grep -q '^trace_sha256,trace_name,host,goal,metric,allocator,value,' &&
	ok "recommend csv header" || fail "recommend csv header"

# ---- merge --------------------------------------------------------------------------
"$AR" d.zst -a glibc,pool --repeat 1 --db b.db >/dev/null 2>&1 || fail "replay b.db"
cp r.db ref.db
q ref.db "ATTACH 'one.db' AS src" ".read $ROOT/results/sql/merge.sql" || fail "merge.sql one"
q ref.db "ATTACH 'b.db' AS src" ".read $ROOT/results/sql/merge.sql" || fail "merge.sql b"
cp r.db m.db
"$AREP" merge m.db one.db b.db >merge.txt 2>&1 || { fail "allocreport merge: exit $?"; cat merge.txt; }
grep -q "m.db: merged b.db: 2 new runs, 0 already present, 0 new traces" merge.txt && ok "merge reports counts" ||
	fail "merge output: $(cat merge.txt)"
dump() { q "$1" "SELECT run_uuid, run_id, allocator, status, ops_per_sec FROM runs ORDER BY run_id;
	SELECT run_id, op, count, p99_ns FROM latency ORDER BY run_id, op;
	SELECT run_id, op, lo_ns, count FROM histogram ORDER BY run_id, op, lo_ns;
	SELECT run_id, sample, heap_rss_bytes FROM rss_samples ORDER BY run_id, sample;
	SELECT run_id, name, value, reason FROM counters ORDER BY run_id, name;
	SELECT run_id, name, value FROM allocator_stats ORDER BY run_id, name;
	SELECT sha256, name FROM traces ORDER BY sha256; SELECT name, version FROM allocators ORDER BY name" | md5sum; }
expect_eq "merge = results/sql/merge.sql" "$(dump m.db)" "$(dump ref.db)"
"$AREP" merge m.db one.db b.db >merge2.txt 2>&1 || fail "merge again: exit $?"
expect_eq "merging again adds nothing" "$(dump m.db)" "$(dump ref.db)"
grep -q "0 new runs, 2 already present" merge2.txt && ok "merge again says so" || fail "$(cat merge2.txt)"
expect_eq "merged integrity" "$(q m.db 'PRAGMA integrity_check')" ok
expect_eq "merged foreign keys" "$(q m.db 'PRAGMA foreign_key_check' | wc -l)" 0
# A new OUT.db is created from allocrr's schema and gets every input's runs.
"$AREP" merge new.db one.db b.db >merge3.txt 2>&1 || fail "merge into new: exit $?"
expect_eq "new OUT: runs" "$(q new.db 'SELECT count(*) FROM runs')" $(($(q one.db 'SELECT count(*) FROM runs') + $(q b.db 'SELECT count(*) FROM runs')))
expect_eq "new OUT: traces" "$(q new.db 'SELECT count(*) FROM traces')" 2
"$AREP" --db new.db --format csv | awk -F, '$5 == "glibc"' | grep -c . | grep -q '^2$' && ok "report on the merged db" ||
	fail "report on new.db"
# Another schema version is refused and OUT is left as it was.
cp b.db old.db && q old.db "PRAGMA user_version = 1"
before=$(dump m.db)
"$AREP" merge m.db old.db >/dev/null 2>err.txt; expect_eq "version mismatch: exit" $? 2
grep -q "^allocreport: old.db: has schema version 1, m.db has" err.txt && ok "version mismatch: message" || fail "$(cat err.txt)"
expect_eq "version mismatch: OUT unchanged" "$(dump m.db)" "$before"
"$AREP" merge m.db >/dev/null 2>&1; expect_eq "merge usage: exit" $? 1
"$AREP" merge m.db m.db >/dev/null 2>&1; expect_eq "merge into itself: exit" $? 1
finish
