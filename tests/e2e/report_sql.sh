#!/usr/bin/env bash
# docs/RESULTS.md "Questions and their SQL": every ```sql block of that
# section runs with the sqlite3 CLI against a database this test builds,
# returns exactly the columns its "-- columns:" line names, and rows whose
# figures agree with the database (recomputed here) and with allocreport's
# JSON/CSV output for the same database. There must be ten.
. "$(dirname "$0")/report_lib.inc"
make_report_db r.db
"$AREP" --db r.db --format json >report.json || fail "allocreport json"
"$AREP" --db r.db --recommend --format json >advice.json || fail "allocreport recommend json"
"$AREP" --db r.db --format csv >report.csv || fail "allocreport csv"
python3 - "$ROOT/docs/RESULTS.md" r.db <<'PY' || fail "queries (see above)"
import csv, io, json, re, sqlite3, subprocess, sys

doc, db = sys.argv[1], sys.argv[2]
text = open(doc).read()
start = text.index("\n## Questions and their SQL")
end = text.find("\n## ", start + 5)
section = text[start:end if end > 0 else len(text)]
blocks = re.findall(r"^### (\d+)\. (.*?)\n.*?```sql\n(.*?)```", section, re.S | re.M)
bad = 0
def check(what, cond, detail=""):
    global bad
    print(("ok   " if cond else "FAIL ") + what + ("" if cond else ": " + str(detail)))
    bad += not cond
check("ten questions", len(blocks) == 10, len(blocks))

con = sqlite3.connect(db)
one = lambda sql, *a: con.execute(sql, a).fetchone()[0]
report = json.load(open("report.json"))
advice = json.load(open("advice.json"))["recommendations"]
rep_csv = list(csv.DictReader(open("report.csv")))
allocs = {(t["name"], a["name"]): a for t in report["traces"] for a in t["allocators"]}
picks = {(t["name"], p["goal"]): p for t in advice for p in t["picks"]}
ntraces = one("SELECT count(*) FROM traces")
close = lambda x, y: x is not None and y is not None and abs(float(x) - float(y)) <= 1e-6 * max(1.0, abs(float(y)))

results = {}
for num, title, sql in blocks:
    m = re.match(r"-- columns: (.*)\n", sql)
    check(f"Q{num} declares its columns", m is not None)
    if not m:
        continue
    want = [c.strip() for c in m.group(1).split(",")]
    r = subprocess.run(["sqlite3", "-batch", "-header", "-csv", db], input=sql, capture_output=True, text=True)
    check(f"Q{num} runs", r.returncode == 0 and not r.stderr, r.stderr)
    rows = list(csv.reader(io.StringIO(r.stdout)))
    head, body = (rows[0], rows[1:]) if rows else ([], [])
    # sqlite3 prints no header for an empty result: take the columns from a prepare.
    if not rows:
        head = [d[0] for d in con.execute(sql.rstrip().rstrip(";")).description] if True else []
    check(f"Q{num} columns {want}", head == want, head)
    results[int(num)] = [dict(zip(head, row)) for row in body]

def rows(n, at_least=1):
    got = results.get(n, [])
    check(f"Q{n} returns rows ({len(got)})", len(got) >= at_least, len(got))
    return got

# 1: one row per trace; the p99 is the lowest median: allocreport's leader (its pick
# unless the lead over the baseline is not meaningful).
q = rows(1)
check("Q1 one row per trace", len(q) == ntraces, len(q))
for r in q:
    p = picks[(r["trace_name"], "tail latency")]
    lead = allocs[(r["trace_name"], p["leader"])]["p99_ns"]["median"]
    check(f"Q1 {r['trace_name']}: {r['allocator']} p99 = allocreport's tail-latency leader {p['leader']}",
          close(r["median_p99_ns"], lead), (r["median_p99_ns"], lead))
# 2: ratios as allocreport's CSV; glibc is 1.
q = rows(2)
for r in q:
    a = allocs[(r["trace_name"], r["allocator"])]
    check(f"Q2 {r['trace_name']} {r['allocator']} heap median = allocreport's",
          close(r["median_peak_heap_rss_bytes"], a["peak_heap_rss_bytes"]["median"]))
    # SQL's round() and Python's disagree on a ratio that ends in 5 in binary
    # (1.0025 -> '1.003' vs 1.002): the query's 3 decimals must hold the ratio.
    # no trace here says what its program ran on: allocreport's baseline is glibc
    check(f"Q2 {r['trace_name']} {r['allocator']} ratio", abs(float(r["heap_rss_vs_glibc"]) - a["heap_rss_vs_baseline"]) <= 0.0005 + 1e-9,
          (r["heap_rss_vs_glibc"], a["heap_rss_vs_baseline"]))
# 3: timing noise decides how many rows; they must be exactly allocreport's spreads over 10 %.
noisy = {(c["trace_name"], c["allocator"]) for c in rep_csv if c["ops_per_sec_spread"] and float(c["ops_per_sec_spread"]) > 0.10}
check("Q3 rows = allocreport's spreads over 10 %", {(r["trace_name"], r["allocator"]) for r in results.get(3, [])} == noisy)
# 4: the fastest median, as allocreport's speed pick.
q = rows(4)
check("Q4 one row per trace", len(q) == ntraces, len(q))
for r in q:
    # the leader: allocreport picks the baseline instead when the lead is not meaningful
    p = picks[(r["trace_name"], "speed")]
    lead = allocs[(r["trace_name"], p["leader"])]["ops_per_sec"]["median"]
    check(f"Q4 {r['trace_name']}: fastest median = allocreport's speed leader",
          r["fastest"] == p["leader"] and abs(float(r["median_ops_per_sec"]) - round(lead)) <= 1,
          (r["fastest"], r["median_ops_per_sec"], p["leader"], lead))
    check(f"Q4 {r['trace_name']}: margin > 1", float(r["margin"]) >= 1)
# 5: arena on the mixed-lifetime trace D fragments (pinned chunks).
q = rows(5)
check("Q5 includes arena on d.zst", any(r["trace_name"] == "d.zst" and r["allocator"] == "arena" for r in q), q)
for r in q:
    check(f"Q5 {r['trace_name']} {r['allocator']} x_best >= 1.5", float(r["x_best"]) >= 1.5)
# 6: S2 at 1, 2, 4 threads for every allocator, equal to allocreport's scaling series.
q = rows(6)
series = report["scaling"]
check("allocreport found one scaling series", len(series) == 1, series)
if series:
    pts = {(p["threads"], a): v for p in series[0]["points"] for a, v in p["ops_per_sec"].items()}
    check("Q6 rows = series points", len(q) == len(pts), (len(q), len(pts)))
    for r in q:
        v = pts.get((int(r["threads"]), r["allocator"]))
        check(f"Q6 {r['allocator']} at {r['threads']} threads", v is not None and abs(float(r["median_ops_per_sec"]) - round(v)) <= 1, (r, v))
        if r["threads"] == "1":
            check(f"Q6 {r['allocator']} at 1 thread is the base", float(r["vs_fewest_threads"]) == 1.0)
# 7: every timed call of the ok runs is in their histograms: all of a run's
# calls when it timed every one (timing_every 1, or NULL before schema 5),
# 1 in timing_every when it sampled, none when untimed (0).
q = rows(7)
for r in q:
    runs = con.execute("SELECT r.ops, r.timing_every FROM runs r JOIN traces t ON t.sha256 = r.trace_sha256"
                       " WHERE t.name = ? AND r.allocator = ? AND r.status = 'ok'", (r["trace_name"], r["allocator"])).fetchall()
    # a sampled run times about ops / timing_every calls (the replayer's sampling rule
    # decides the last few): within 1 % of that
    lo = sum(0 if e == 0 else ops if e in (None, 1) else 0.99 * ops / e for ops, e in runs)
    hi = sum(0 if e == 0 else ops if e in (None, 1) else 1.01 * ops / e + 1 for ops, e in runs)
    check(f"Q7 {r['trace_name']} {r['allocator']} timed_calls = the timed calls of its runs",
          lo <= int(r["timed_calls"]) <= hi, (r["timed_calls"], lo, hi, runs))
    check(f"Q7 share in [0,1]", 0 <= float(r["share_over_1us"]) <= 1)
# 8: one row per ok run, overshoot = heap - live.
q = rows(8)
check("Q8 one row per ok run", len(q) == one("SELECT count(DISTINCT run_id) FROM rss_samples JOIN runs USING (run_id) WHERE status = 'ok'"))
check("Q8 overshoot = heap - live", all(int(r["overshoot_bytes"]) == int(r["heap_rss_bytes"]) - int(r["live_bytes"]) for r in q))
# 9: NULL per call exactly when no run measured it, then with a reason.
q = rows(9)
for r in q:
    unmeasured = r["runs_measured"] == "0"
    check(f"Q9 {r['allocator']} {r['counter']}: NULL iff unmeasured, with reason",
          (r["per_call"] == "") == unmeasured and (r["unavailable_reason"] != "") == unmeasured, r)
# 10: the crashed tlscache run, with its signal; nothing else.
q = rows(10)
crashed = [r for r in q if r["allocator"] == "tlscache"]
check("Q10 lists the crashed run with its reason", len(crashed) == 1 and crashed[0]["status"] == "crashed" and "signal" in crashed[0]["reason"], q)
check("Q10 every listed run failed or was unproven", all(r["status"] != "ok" or r["library_path"] != r["expected_library"] for r in q))
sys.exit(1 if bad else 0)
PY
finish
