#!/usr/bin/env bash
# One comparison, one answer (issue 14): on the same database, the SQL view
# allocator_comparison, allocreport's CSV, JSON and table, and allocreplay's
# own table and --json give every allocator the same median ops/s, ratio to
# the trace's baseline and median peak heap RSS, for every trace — and those
# are the true medians over the ok repetitions (recomputed here from
# run_summary). Three databases: one written by an allocreplay printing its
# table (3 repetitions: an odd count; plus an allocator that crashes every
# run, the replayer's test libcrash.so standing in for tlscache: no figures
# anywhere, and no effect on the others), one by an allocreplay printing
# --json (4: the median is the mean of the middle two), and a copy of the
# latter where the programs ran on jemalloc (traces.recorded_allocator, and
# the per-run prediction, timer resolution and fidelity columns, written
# here by hand as the recorder and replayer will): jemalloc is then the
# baseline of every ratio, the table says "(recorded)", shows the predicted
# time first, latencies below the resolution as "< N ns", and the fidelity
# line; --baseline glibc brings glibc back. Printed tables are compared
# within their rounding; everything else exactly (1e-9 relative).
# A fourth, m.db (issue 18: machines never silently mixed): j.db merged by
# allocreport merge with a copy of its d.zst runs as if replayed on another
# machine (another cpu_model, ops/s x3 and peak heap x2, so a comparison
# mixing the two would be caught): the view has two rows per allocator for
# d.zst and one for the other traces, each machine's medians and ratios its
# own in the view, CSV, JSON and table, and every output (view, CSV, JSON,
# table, HTML, --recommend CSV) names both machines with the text built
# here from the runs' five fields; allocreplay --json names the machine
# allocreport reads back from the runs it stored.
. "$(dirname "$0")/report_lib.inc"
ALLOCS=glibc,jemalloc,pool,arena
S1="$ROOT/traces/samples/s1-3k.zst"
"$ATR" gen D --ops 6000 -q -o d.zst || { echo "alloctrace gen D failed"; exit 1; }
CRASHED=
if [ -f "$B/tests/replay/libcrash.so" ]; then
	mkdir -p crashlib && cp "$B/tests/replay/libcrash.so" crashlib/liballocrr-tlscache.so && CRASHED=tlscache
fi
ALLOCRR_LIBDIR="$T/crashlib" "$AR" "$SAMPLE" "$S1" d.zst -a $ALLOCS${CRASHED:+,$CRASHED} --repeat 3 --db t.db -q \
	>replay_table.txt 2>err1.txt
expect_eq "allocreplay (table) exit" $? "$([ -n "$CRASHED" ] && echo 2 || echo 0)"
"$AR" "$SAMPLE" "$S1" d.zst -a $ALLOCS --repeat 4 --db j.db -q --json >replay.json 2>err2.txt ||
	{ cat err2.txt; fail "allocreplay --json"; }
# r.db: j.db recorded on jemalloc, with predictions (wall time + 1 s: a
# program whose own work took a second), the timer's resolution set to each
# run's p99 (so its p50 is below it) and jemalloc's fidelity.
cp j.db r.db
q r.db "UPDATE traces SET recorded_allocator = 'jemalloc', recorded_allocator_library = '/usr/lib/libjemalloc.so.2';
	UPDATE runs SET predicted_time_ns = wall_ns + 1e9,
	 timer_resolution_ns = (SELECT s.p99_ns FROM run_summary s WHERE s.run_id = runs.run_id) WHERE status = 'ok';
	UPDATE runs SET fidelity_rss_error = -0.04, fidelity_reason = 'the trace holds no duration'
	 WHERE allocator = 'jemalloc' AND status = 'ok'" || fail "r.db: setting the recorded allocator"
"$AREP" --db r.db --baseline glibc --format csv >rg.csv || fail "r: allocreport --baseline glibc"
# m.db: j.db plus d.zst's runs from another machine, through allocreport merge.
cp j.db elsewhere.db
dsha=$(q j.db "SELECT sha256 FROM traces WHERE name = 'd.zst'")
q elsewhere.db "PRAGMA foreign_keys = ON; DELETE FROM runs WHERE trace_sha256 != '$dsha';
	UPDATE runs SET cpu_model = 'Elsewhere CPU 9000 (fabricated)', run_uuid = run_uuid || '-elsewhere',
	 ops_per_sec = ops_per_sec * 3, peak_heap_rss_bytes = peak_heap_rss_bytes * 2" ||
	fail "elsewhere.db: fabricating another machine's runs"
"$AREP" merge m.db j.db elsewhere.db >/dev/null 2>merge.err || fail "allocreport merge m.db: $(cat merge.err)"
expect_eq "m.db: merged runs (j's, and d.zst's again from elsewhere)" "$(q m.db 'SELECT count(*) FROM runs')" \
	"$(( $(q j.db 'SELECT count(*) FROM runs') + $(q elsewhere.db 'SELECT count(*) FROM runs') ))"
"$AREP" --db m.db --format csv >m.csv 2>m.err || fail "m: allocreport csv"
grep -q "d.zst: runs from 2 machines, compared per machine" m.err && ok "m: two machines said on stderr" ||
	fail "m: no note about two machines: $(cat m.err)"
"$AREP" --db m.db --format json >m.json 2>/dev/null || fail "m: allocreport json"
"$AREP" --db m.db >m.txt 2>/dev/null || fail "m: allocreport table"
"$AREP" --db m.db --html m.html 2>/dev/null || fail "m: allocreport --html"
"$AREP" --db m.db --recommend --format csv >mrec.csv 2>/dev/null || fail "m: allocreport --recommend csv"
"$AREP" --db r.db --baseline nosuch >/dev/null 2>nosuch.err
expect_eq "--baseline with no runs anywhere: usage error" $? 1
for db in t j r; do
	"$AREP" --db $db.db --format csv >$db.csv || fail "$db: allocreport csv"
	"$AREP" --db $db.db --format json >$db.json || fail "$db: allocreport json"
	"$AREP" --db $db.db >$db.txt || fail "$db: allocreport table"
	"$AREP" --db $db.db --format markdown >$db.md || fail "$db: allocreport markdown"
done
CRASHED=$CRASHED python3 - <<'PY' || fail "the outputs disagree (see above)"
import csv, json, os, re, sqlite3, statistics, sys
CRASHED = os.environ.get("CRASHED", "")

bad = 0
def check(what, cond, detail=""):
    global bad
    if not cond:
        print("FAIL " + what + ": " + str(detail))
    bad += not cond
    return cond

def close(x, y, rel=1e-9):
    if x is None or y is None:
        return x is None and y is None
    return abs(float(x) - float(y)) <= rel * max(1.0, abs(float(y)))

FIGS = ("ops", "ratio", "heap")

def truth(db, baseline=None):
    """True medians over ok repetitions, from run_summary, per (trace, allocator);
    ratios against the recorded allocator when it has ok runs, else glibc
    (or against baseline when given)."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT s.trace_name, s.allocator, s.ops_per_sec, s.peak_heap_rss_bytes, r.predicted_time_ns,"
                       " t.recorded_allocator FROM run_summary s JOIN runs r ON r.run_id = s.run_id"
                       " JOIN traces t ON t.sha256 = s.trace_sha256 WHERE s.status = 'ok'").fetchall()
    by, rec = {}, {}
    for t, a, ops, heap, pred, recorded in rows:
        d = by.setdefault((t, a), {"ops": [], "heap": [], "pred": []})
        rec[t] = recorded
        if ops is not None: d["ops"].append(ops)
        if heap is not None: d["heap"].append(heap)
        if pred is not None: d["pred"].append(pred)
    out = {k: {"ops": statistics.median(v["ops"]), "heap": statistics.median(v["heap"]), "n": len(v["ops"]),
               "pred": statistics.median(v["pred"]) if v["pred"] else None}
           for k, v in by.items()}
    for (t, a), v in out.items():
        base = baseline or (rec[t] if (t, rec[t]) in out else "glibc")
        v["ratio"] = v["ops"] / out[(t, base)]["ops"]
        v["base"] = base
    return out

def from_view(db):
    con = sqlite3.connect(db)
    return {(t, a): {"ops": o, "ratio": r, "heap": h} for t, a, o, r, h in con.execute(
        "SELECT trace_name, allocator, ops_per_sec, speed_vs_baseline, peak_heap_rss_bytes FROM allocator_comparison")}

def from_csv(path):
    num = lambda v: float(v) if v != "" else None
    return {(r["trace_name"], r["allocator"]): {"ops": num(r["ops_per_sec"]), "ratio": num(r["speed_vs_baseline"]),
            "heap": num(r["peak_heap_rss_bytes"]), "pred": num(r["predicted_time_ns"]), "base": r["baseline"]}
            for r in csv.DictReader(open(path))}

def from_json(path, who):
    d = json.load(open(path))
    check(f"{who}: format_version 2", isinstance(d, dict) and d.get("format_version") == 2,
          str(d)[:200])
    if not isinstance(d, dict) or "traces" not in d:
        return {}
    return {(t["name"], a["name"]): {"ops": a["ops_per_sec"]["median"], "ratio": a["speed_vs_baseline"],
            "heap": a["peak_heap_rss_bytes"]["median"], "pred": a["predicted_time_ns"]["median"],
            "base": t["baseline"], "below": a["p50_ns_below_resolution"]}
            for t in d["traces"] for a in t["allocators"]}

UNITS = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "B": 1, "KiB": 1024.0, "MiB": 1024.0 ** 2, "GiB": 1024.0 ** 3,
         "ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
def printed(cell):
    """A printed number and half a unit of its last digit."""
    m = re.fullmatch(r"(-?\d+(?:\.(\d+))?)(?: (\w+))?", cell.strip())
    if not m:
        return None, None
    u = UNITS[m.group(3) or ""]
    return float(m.group(1)) * u, 0.5 * 10 ** -len(m.group(2) or "") * u * (1 + 1e-9)

LABELS = {}  # (path, trace, allocator) -> the row's label after the name, e.g. "(recorded)"
CELLS = {}   # (path, trace, allocator) -> {column: cell}

def from_table(path, md=False):
    """Rows of every trace's table, columns found by their header (the
    predicted ones come first when there are predictions)."""
    out, trace, head = {}, None, None
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"(?:trace |### )(\S+)", line)
        if m:
            trace, head = m.group(1), None
            continue
        cells = [c.strip() for c in line.strip("|").split("|")] if md else re.split(r"\s{2,}", line.strip())
        if trace and cells and cells[0] == "allocator":
            head = cells
            continue
        if not head or len(cells) != len(head) or cells[0].startswith("---"):
            if not line.strip() or line.startswith("  "):
                head = None if not md or not line.strip().startswith("|") else head
            continue
        name, _, label = cells[0].partition(" ")
        LABELS[(path, trace, name)] = label
        CELLS[(path, trace, name)] = dict(zip(head, cells))
        ops = head.index("ops/s")
        row = {"ops": printed(cells[ops]), "ratio": printed(cells[ops + 2]), "heap": printed(cells[head.index("peak heap")])}
        if "pred time" in head:
            row["pred"] = printed(cells[head.index("pred time")])
        out[(trace, name)] = row
    return out

def measured(v, exact):
    return (v["ops"] if exact else v["ops"][0]) is not None

def compare(who, got, ref, exact=True, crashed="", pred=True):
    """got must hold ref's pairs with ref's figures, and for the crashed
    allocator (no ok run) a row on every trace with no figure at all."""
    failed = {k: v for k, v in got.items() if not measured(v, exact)}
    got = {k: v for k, v in got.items() if measured(v, exact)}
    if not check(f"{who}: same (trace, allocator) pairs", set(got) == set(ref),
                 sorted(set(got) ^ set(ref))):
        return
    want_failed = {(t, crashed) for t, _ in ref} if crashed else set()
    check(f"{who}: the crashed allocator's rows, without figures", set(failed) == want_failed and
          all((v[f] if exact else v[f][0]) is None for v in failed.values() for f in FIGS + ("pred",) if f in v),
          (sorted(failed), sorted(want_failed)))
    for k in sorted(ref):
        for f in FIGS + (("pred",) if pred and ref[k].get("pred") is not None else ()):
            if f not in got[k]:
                check(f"{who} {k[0]} {k[1]} {f}: present", False, sorted(got[k]))
                continue
            g, want = got[k][f], ref[k][f]
            if exact:
                check(f"{who} {k[0]} {k[1]} {f}", close(g, want), (g, want))
            else:
                v, tol = g
                check(f"{who} {k[0]} {k[1]} {f} (printed)", v is not None and abs(v - want) <= tol,
                      (v, tol, want))

for db, replay, exact in (("t", "replay_table.txt", False), ("j", "replay.json", True), ("r", None, True)):
    ref = truth(f"{db}.db")
    check(f"{db}.db: several allocators x repetitions x traces",
          len(ref) == 12 and all(v["n"] == (3 if db == "t" else 4) for v in ref.values()), ref)
    want_base = "jemalloc" if db == "r" else "glibc"
    check(f"{db}.db: the baseline of every trace is {want_base}", all(v["base"] == want_base for v in ref.values()))
    check(f"{db}: csv names the baseline", all(v["base"] == want_base for v in from_csv(f"{db}.csv").values()))
    check(f"{db}: json names the baseline", all(v["base"] == want_base for v in
                                               from_json(f"{db}.json", f"{db}: json").values()))
    tbl = from_table(f"{db}.txt")
    labels = {a: LABELS[(f"{db}.txt", t, a)] for t, a in tbl}
    check(f"{db}: the table marks the baseline row",
          labels.get(want_base) == ("(recorded)" if db == "r" else "(baseline)") and
          all(v == "" for a, v in labels.items() if a != want_base), labels)
    crashed = CRASHED if db == "t" else ""
    compare(f"{db}: SQL view allocator_comparison", from_view(f"{db}.db"), ref, pred=False)  # ok runs only: no row
    compare(f"{db}: allocreport csv", from_csv(f"{db}.csv"), ref, crashed=crashed)
    compare(f"{db}: allocreport json", from_json(f"{db}.json", f"{db}: allocreport json"), ref, crashed=crashed)
    compare(f"{db}: allocreport table", from_table(f"{db}.txt"), ref, exact=False, crashed=crashed)
    compare(f"{db}: allocreport markdown", from_table(f"{db}.md", md=True), ref, exact=False, crashed=crashed)
    if replay and exact:
        compare("allocreplay --json", from_json(replay, "allocreplay --json"), ref)
    elif replay:
        compare("allocreplay table", from_table(replay), ref, exact=False, crashed=crashed)
# r.db: below the timer's resolution, the fidelity line, the predictions' place
js = from_json("r.json", "r: json")
check("r: json p50_ns_below_resolution true (resolution = p99)", all(v["below"] is True for v in js.values()),
      {k: v["below"] for k, v in js.items()})
def below_agrees(path):
    """p50_ns_below_resolution is the median p50 <= the median resolution,
    null when either is unknown (the replayer may or may not store it)."""
    d = json.load(open(path))
    for t in d["traces"]:
        for a in t["allocators"]:
            p50, res = a["p50_ns"]["median"], a["timer_resolution_ns"]["median"]
            want = None if p50 is None or not res else p50 <= res
            if a["p50_ns_below_resolution"] != want:
                return (t["name"], a["name"], p50, res, a["p50_ns_below_resolution"])
    return None
for path in ("t.json", "j.json", "r.json"):
    check(f"{path}: p50_ns_below_resolution = median p50 <= median timer_resolution_ns", below_agrees(path) is None,
          below_agrees(path))
p50 = {k: c["p50"] for k, c in CELLS.items() if k[0] == "r.txt"}
check("r: table prints p50 as '< N ns'", p50 and all(re.fullmatch(r"< \d+ ns", v) for v in p50.values()), p50)
heads = [c for k, c in CELLS.items() if k[0] == "r.txt"]
check("r: the predicted columns come first", heads and all(list(c)[2] == "pred time" for c in heads),
      [list(c)[:4] for c in heads[:1]])
rtxt = open("r.txt").read()
check("r: fidelity line per trace", rtxt.count("replay vs recorded program (jemalloc): peak RSS -4 %, duration n/a "
                                               "(the trace holds no duration)") == 3, rtxt[:600])
check("r: baseline line per trace", rtxt.count("baseline: jemalloc, the allocator the recorded program ran on "
                                               "(/usr/lib/libjemalloc.so.2)") == 3)
# --baseline glibc on r.db: the ratios against glibc again
compare("r: allocreport --baseline glibc csv", from_csv("rg.csv"), truth("r.db", "glibc"))
check("r: --baseline glibc names glibc", all(v["base"] == "glibc" for v in from_csv("rg.csv").values()))
# m.db: one comparison per trace x machine, everywhere.
def machine_text(host, cpu, cpus, kernel, glibc):
    """docs/RESULTS.md: HOST (CPU, N CPUs, KERNEL, glibc V), NULLs shown as load.c shows them."""
    n = lambda v, d: d if v is None else str(v)
    return (f"{n(host, '(unknown host)')} ({n(cpu, 'unknown CPU')}, {n(cpus, '?')} CPUs, "
            f"{n(kernel, 'unknown kernel')}, glibc {n(glibc, '?')})")

def truth_m(db):
    """truth() per (trace, machine, allocator), the baseline per trace x machine."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT s.trace_name, r.host, r.cpu_model, r.cpus, r.kernel, r.glibc_version, s.allocator,"
                       " s.ops_per_sec, s.peak_heap_rss_bytes, t.recorded_allocator FROM run_summary s"
                       " JOIN runs r ON r.run_id = s.run_id JOIN traces t ON t.sha256 = s.trace_sha256"
                       " WHERE s.status = 'ok'").fetchall()
    by, rec = {}, {}
    for t, h, c, n, k, g, a, ops, heap, recorded in rows:
        d = by.setdefault((t, machine_text(h, c, n, k, g), a), {"ops": [], "heap": []})
        rec[t] = recorded
        if ops is not None: d["ops"].append(ops)
        if heap is not None: d["heap"].append(heap)
    out = {k: {"ops": statistics.median(v["ops"]), "heap": statistics.median(v["heap"])} for k, v in by.items()}
    for (t, m, a), v in out.items():
        base = rec[t] if (t, m, rec[t]) in out else "glibc"
        v["ratio"] = v["ops"] / out[(t, m, base)]["ops"]
    return out

con = sqlite3.connect("m.db")
view_m = {(t, m, a): {"ops": o, "ratio": r, "heap": h} for t, m, a, o, r, h in con.execute(
    "SELECT trace_name, machine, allocator, ops_per_sec, speed_vs_baseline, peak_heap_rss_bytes"
    " FROM allocator_comparison")}
rows_per = {}
for t, a in con.execute("SELECT trace_name, allocator FROM allocator_comparison"):
    rows_per[(t, a)] = rows_per.get((t, a), 0) + 1
check("m: the view has two rows per allocator for d.zst, one elsewhere",
      rows_per and all(n == (2 if t == "d.zst" else 1) for (t, a), n in rows_per.items()), rows_per)
cols = [r[1] for r in con.execute("PRAGMA table_info(allocator_comparison)")]
check("m: the view's columns: 0006's in order, then machine",
      cols == ["trace_sha256", "trace_name", "host", "allocator", "runs", "ops_per_sec", "min_ops_per_sec",
               "max_ops_per_sec", "p99_ns", "peak_heap_rss_bytes", "fragmentation", "speed_vs_glibc",
               "heap_rss_vs_glibc", "ops_per_sec_spread", "baseline", "speed_vs_baseline",
               "heap_rss_vs_baseline", "machine"], cols)
ref_m = truth_m("m.db")
machines = sorted({m for t, m, a in ref_m if t == "d.zst"})
check("m: d.zst ran on two machines, one of them fabricated", len(machines) == 2 and
      sum("Elsewhere CPU 9000 (fabricated)" in m for m in machines) == 1, machines)
check("m: the other traces on one machine", all(len({m for t2, m, a in ref_m if t2 == t}) == 1
                                                for t, m, a in ref_m if t != "d.zst"))
check("m: the machines' medians differ (mixing them would show)",
      len({round(ref_m[("d.zst", m, "glibc")]["ops"]) for m in machines}) == 2)
compare("m: SQL view allocator_comparison", view_m, ref_m, pred=False)
num = lambda v: float(v) if v != "" else None
csv_m = {(r["trace_name"], r["machine"], r["allocator"]): {
            "ops": num(r["ops_per_sec"]), "ratio": num(r["speed_vs_baseline"]),
            "heap": num(r["peak_heap_rss_bytes"])} for r in csv.DictReader(open("m.csv"))}
check("m: csv's last column is machine", open("m.csv").readline().rstrip("\n").split(",")[-1] == "machine")
compare("m: allocreport csv", csv_m, ref_m)
json_m = {(t["name"], t["machine"], a["name"]): {"ops": a["ops_per_sec"]["median"], "ratio": a["speed_vs_baseline"],
          "heap": a["peak_heap_rss_bytes"]["median"]} for t in json.load(open("m.json"))["traces"] for a in t["allocators"]}
compare("m: allocreport json", json_m, ref_m)
def table_m(path):
    """The table's rows keyed (trace, machine from its heading, allocator)."""
    out, trace, mach, head = {}, None, None, None
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"trace (\S+)", line)
        if m:
            trace, mach, head = m.group(1), None, None
            continue
        m = re.match(r"  \d+ events, .*, machine (.*)$", line)
        if m:
            mach = m.group(1)
            continue
        cells = re.split(r"\s{2,}", line.strip())
        if trace and cells and cells[0] == "allocator":
            head = cells
            continue
        if not head or len(cells) != len(head):
            continue
        ops = head.index("ops/s")
        out[(trace, mach, cells[0].partition(" ")[0])] = {"ops": printed(cells[ops]), "ratio": printed(cells[ops + 2]),
                                                          "heap": printed(cells[head.index("peak heap")])}
    return out
compare("m: allocreport table", table_m("m.txt"), ref_m, exact=False)
import html
page = open("m.html").read()
check("m: the HTML page names both machines", all(page.count(html.escape(m)) >= 2 for m in machines),
      [(m, page.count(html.escape(m))) for m in machines])
rec_m = {(r["trace_name"], r["machine"]) for r in csv.DictReader(open("mrec.csv"))}
check("m: --recommend csv: one set of picks per machine of d.zst",
      {m for t, m in rec_m if t == "d.zst"} == set(machines), sorted(rec_m))
# allocreplay --json names its machine: the one allocreport reads back from the runs it stored.
con = sqlite3.connect("j.db")
stored = {machine_text(*r) for r in con.execute("SELECT DISTINCT host, cpu_model, cpus, kernel, glibc_version FROM runs")}
rj = {t["name"]: t["machine"] for t in json.load(open("replay.json"))["traces"]}
jj = {t["name"]: t["machine"] for t in json.load(open("j.json"))["traces"]}
check("allocreplay --json: the machine of every trace, as allocreport's and as stored",
      len(stored) == 1 and rj == jj and set(rj.values()) == stored, (rj, jj, stored))
check("j: csv's machine column = json's", {r["trace_name"]: r["machine"] for r in csv.DictReader(open("j.csv"))} == jj)
# One JSON shape: the same keys at every level in allocreplay's and allocreport's.
def shape(path):
    try:
        d = json.load(open(path))
        t = d["traces"][0]; a = t["allocators"][0]
        return (sorted(d), sorted(t), sorted(a), sorted(a["ops_per_sec"]), sorted(a["runs"][0]))
    except (KeyError, IndexError, TypeError):
        return None
check("one JSON shape: allocreplay --json = allocreport --format json",
      shape("replay.json") is not None and shape("replay.json") == shape("j.json"),
      (shape("replay.json"), shape("j.json")))
print(("ok   " if not bad else "FAIL ") + f"every output agrees with the medians ({bad} disagreement(s))")
sys.exit(1 if bad else 0)
PY
finish
