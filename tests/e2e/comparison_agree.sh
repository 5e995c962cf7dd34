#!/usr/bin/env bash
# One comparison, one answer (issue 14): on the same database, the SQL view
# allocator_comparison, allocreport's CSV, JSON and table, and allocreplay's
# own table and --json give every allocator the same median ops/s, ratio to
# glibc and median peak heap RSS, for every trace — and those are the true
# medians over the ok repetitions (recomputed here from run_summary). Two
# databases: one written by an allocreplay printing its table (3 repetitions:
# an odd count; plus an allocator that crashes every run, the replayer's
# test libcrash.so standing in for tlscache: no figures anywhere, and no
# effect on the others), one by an allocreplay printing --json (4: the
# median is the mean of the middle two). Printed tables are compared within
# their rounding; everything else exactly (1e-9 relative).
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
for db in t j; do
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

def truth(db):
    """True medians over ok repetitions, from run_summary, per (trace, allocator)."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT trace_name, allocator, ops_per_sec, peak_heap_rss_bytes FROM run_summary"
                       " WHERE status = 'ok'").fetchall()
    by = {}
    for t, a, ops, heap in rows:
        d = by.setdefault((t, a), {"ops": [], "heap": []})
        if ops is not None: d["ops"].append(ops)
        if heap is not None: d["heap"].append(heap)
    out = {k: {"ops": statistics.median(v["ops"]), "heap": statistics.median(v["heap"]), "n": len(v["ops"])}
           for k, v in by.items()}
    for (t, a), v in out.items():
        v["ratio"] = v["ops"] / out[(t, "glibc")]["ops"]
    return out

def from_view(db):
    con = sqlite3.connect(db)
    return {(t, a): {"ops": o, "ratio": r, "heap": h} for t, a, o, r, h in con.execute(
        "SELECT trace_name, allocator, ops_per_sec, speed_vs_glibc, peak_heap_rss_bytes FROM allocator_comparison")}

def from_csv(path):
    num = lambda v: float(v) if v != "" else None
    return {(r["trace_name"], r["allocator"]): {"ops": num(r["ops_per_sec"]), "ratio": num(r["speed_vs_glibc"]),
            "heap": num(r["peak_heap_rss_bytes"])} for r in csv.DictReader(open(path))}

def from_json(path, who):
    d = json.load(open(path))
    check(f"{who}: format_version 1", isinstance(d, dict) and d.get("format_version") == 1,
          str(d)[:200])
    if not isinstance(d, dict) or "traces" not in d:
        return {}
    return {(t["name"], a["name"]): {"ops": a["ops_per_sec"]["median"], "ratio": a["speed_vs_glibc"],
            "heap": a["peak_heap_rss_bytes"]["median"]} for t in d["traces"] for a in t["allocators"]}

UNITS = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "B": 1, "KiB": 1024.0, "MiB": 1024.0 ** 2, "GiB": 1024.0 ** 3}
def printed(cell):
    """A printed number and half a unit of its last digit."""
    m = re.fullmatch(r"(-?\d+(?:\.(\d+))?)(?: (\w+))?", cell.strip())
    if not m:
        return None, None
    u = UNITS[m.group(3) or ""]
    return float(m.group(1)) * u, 0.5 * 10 ** -len(m.group(2) or "") * u * (1 + 1e-9)

def from_table(path, md=False):
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
        out[(trace, cells[0])] = {"ops": printed(cells[2]), "ratio": printed(cells[4]), "heap": printed(cells[9])}
    return out

def measured(v, exact):
    return (v["ops"] if exact else v["ops"][0]) is not None

def compare(who, got, ref, exact=True, crashed=""):
    """got must hold ref's pairs with ref's figures, and for the crashed
    allocator (no ok run) a row on every trace with no figure at all."""
    failed = {k: v for k, v in got.items() if not measured(v, exact)}
    got = {k: v for k, v in got.items() if measured(v, exact)}
    if not check(f"{who}: same (trace, allocator) pairs", set(got) == set(ref),
                 sorted(set(got) ^ set(ref))):
        return
    want_failed = {(t, crashed) for t, _ in ref} if crashed else set()
    check(f"{who}: the crashed allocator's rows, without figures", set(failed) == want_failed and
          all((x if exact else x[0]) is None for v in failed.values() for x in v.values()),
          (sorted(failed), sorted(want_failed)))
    for k in sorted(ref):
        for f in FIGS:
            g, want = got[k][f], ref[k][f]
            if exact:
                check(f"{who} {k[0]} {k[1]} {f}", close(g, want), (g, want))
            else:
                v, tol = g
                check(f"{who} {k[0]} {k[1]} {f} (printed)", v is not None and abs(v - want) <= tol,
                      (v, tol, want))

for db, replay, exact in (("t", "replay_table.txt", False), ("j", "replay.json", True)):
    ref = truth(f"{db}.db")
    check(f"{db}.db: several allocators x repetitions x traces",
          len(ref) == 12 and all(v["n"] == (3 if db == "t" else 4) for v in ref.values()), ref)
    crashed = CRASHED if db == "t" else ""
    compare(f"{db}: SQL view allocator_comparison", from_view(f"{db}.db"), ref)  # ok runs only: no row
    compare(f"{db}: allocreport csv", from_csv(f"{db}.csv"), ref, crashed=crashed)
    compare(f"{db}: allocreport json", from_json(f"{db}.json", f"{db}: allocreport json"), ref, crashed=crashed)
    compare(f"{db}: allocreport table", from_table(f"{db}.txt"), ref, exact=False, crashed=crashed)
    compare(f"{db}: allocreport markdown", from_table(f"{db}.md", md=True), ref, exact=False, crashed=crashed)
    if exact:
        compare("allocreplay --json", from_json(replay, "allocreplay --json"), ref)
    else:
        compare("allocreplay table", from_table(replay), ref, exact=False, crashed=crashed)
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
