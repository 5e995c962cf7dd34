#!/usr/bin/env bash
# allocreport --html in a real browser: the page is self-contained (no
# script, no external URL), headless Chromium loads it without a single
# console message (checked to be seen: a probe page's console.error must
# show up), and the DOM Chromium built holds every chart with its data:
# a throughput bar per allocator with ok runs, latency CDF and tail lines,
# heap-overhead lines, and the thread-scaling chart of S2 at
# 1, 2 and 4 threads; the baseline row marked and named, a verdict on every
# recommendation. Installs the Debian chromium package when root and
# missing; skips (77) otherwise. The screenshot is kept in test-logs/.
#
# The charts a performance engineer reads (issue 15 item 5), each checked
# present and not empty in the DOM Chromium built, against the database:
# one latency panel per operation the runs made (malloc, free, realloc...)
# with a line per allocator, every latency axis starting at the timer's
# resolution ("<=N ns", no "1 ns" tick, every line starting on it); heap
# overhead = heap RSS minus live bytes over all ok repetitions (its peak
# recomputed from rss_samples), labelled at the line ends; box plots for D
# (replayed 5 times) and none for S2 (2 times), their quartiles from the
# runs; distinct colours for the lines of a chart. Sites (inserted into the
# table sites for D, one stack a script tag, one absurd negative value):
# flame charts by bytes and live-at-peak whose root is the sum of the
# sites, escaped stacks, a top-sites table, and allocreport's table output
# listing them; S2 (no sites) has no sites section.
. "$(dirname "$0")/report_lib.inc"
if ! command -v chromium >/dev/null; then
	[ "$(id -u)" = 0 ] || { echo "chromium not installed (apt-get install chromium) and not root"; exit 77; }
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq chromium >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1; } ||
		{ echo "apt-get install chromium failed"; exit 77; }
fi
make_report_db r.db
# D replayed 3 more times: 5 repetitions, so it gets box plots (S2 keeps 2).
"$AR" d.zst -a $REPORT_ALLOCS --repeat 3 --db r.db >/dev/null 2>&1 || fail "allocreplay d.zst --repeat 3"
# Sites of D as another team's database might hold them (the table of
# results/sql/0008-sites.sql; created here when the schema predates it).
dsha=$(q r.db "SELECT sha256 FROM traces WHERE name = 'd.zst'")
q r.db "CREATE TABLE IF NOT EXISTS sites (trace_sha256 TEXT NOT NULL, stack TEXT NOT NULL, calls INTEGER,
	bytes INTEGER, live_at_peak_bytes INTEGER, live_at_peak_blocks INTEGER, temporary_calls INTEGER,
	leaked_bytes INTEGER, leaked_blocks INTEGER, PRIMARY KEY (trace_sha256, stack));
INSERT INTO sites VALUES
 ('$dsha', '_start;main;server_loop;handle_request;parse_headers;xmalloc', 5000, 1600000, 120000, 300, 4800, 0, 0),
 ('$dsha', '_start;main;server_loop;handle_request;build_response;std::string::_M_create', 3000, 900000, 50000, 120, 2900, 0, 0),
 ('$dsha', '_start;main;server_loop;cache_insert;xmalloc', 800, 2400000, 2300000, 780, 0, 4096, 2),
 ('$dsha', '_start;main;load_config;yaml_parse;<script>alert(1)</script>', 40, 12000, 12000, 40, 0, 12000, 40),
 ('$dsha', '_start;main;init_pool;mmap_arena', 1, 1048576, 1048576, 1, 0, 0, 0),
 ('$dsha', 'absurd;negative', 1, -50, -9000000000, 0, 0, 0, 0)" || fail "inserting sites"
"$AREP" --db r.db >table.txt 2>&1 || fail "allocreport (table)"
grep -q "^top sites of d.zst (6 of 6, by live bytes at the peak):" table.txt && ok "table output lists D's top sites" ||
	{ fail "no top sites of d.zst in the table output"; tail -12 table.txt; }
grep -q "top sites of s2" table.txt && fail "top sites for S2, which has none" || ok "no top sites for S2"
grep -q "  2.2 MiB .* xmalloc <- cache_insert <- server_loop <- main <- _start$" table.txt &&
	ok "top site first, innermost frame first" || fail "top site line: $(grep -m1 -A2 'top sites of d' table.txt)"
"$AREP" --db r.db --html report.html 2>err.txt || { fail "allocreport --html"; cat err.txt; }
grep -q "wrote report.html" err.txt && ok "says where it wrote" || fail "no 'wrote' message"
"$AREP" --db r.db --html again.html 2>/dev/null && cmp -s report.html again.html &&
	ok "same database, same page" || fail "the page differs between two runs"

# Self-contained: no script, no resource or link outside the page.
grep -qi "<script" report.html && fail "page has a script" || ok "no script"
ext=$(grep -oiE '(src|href)="[a-z]+:[^"]*"' report.html | grep -v 'href="data:,"' | head -3)
[ -z "$ext" ] && ok "no external src/href" || fail "external references: $ext"

chrome() { # URL, extra args...: headless Chromium, console messages on stderr
	local url=$1; shift
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$T/chrome.XXXXXX")" --enable-logging=stderr --v=0 "$@" "$url"
}
console() { grep -E 'CONSOLE|Uncaught|Refused to|Failed to load resource|net::ERR_' "$1"; }

# The console check sees messages: a probe page that logs one must show it.
printf '<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body><script>console.error("allocrr-probe")</script></body></html>\n' >probe.html
chrome "file://$T/probe.html" --dump-dom >probe.dom 2>probe.err
console probe.err | grep -q allocrr-probe && ok "console capture works (probe seen)" ||
	{ fail "console capture: probe message not seen"; tail -5 probe.err; }

chrome "file://$T/report.html" --dump-dom >dom.html 2>chrome.err || fail "chromium --dump-dom exit $?"
msgs=$(console chrome.err)
[ -z "$msgs" ] && ok "no console messages" || fail "console: $msgs"
chrome "file://$T/report.html" --window-size=1240,12000 --hide-scrollbars --screenshot="$T/report.png" \
	>/dev/null 2>shot.err
[ -s report.png ] && ok "screenshot ($(stat -c %s report.png) bytes)" || fail "no screenshot"
mkdir -p "$B/test-logs" && cp report.png "$B/test-logs/report_html.png" 2>/dev/null

# The DOM Chromium parsed, against the database.
python3 - dom.html r.db <<'PY' || fail "DOM checks (see above)"
import math, re, sqlite3, sys
dom = open(sys.argv[1]).read()
con = sqlite3.connect(sys.argv[2])
bad = 0
def check(what, cond, detail=""):
    global bad
    print(("ok   " if cond else "FAIL ") + what + ("" if cond else ": " + str(detail)))
    bad += not cond
svgs = re.findall(r'<svg[^>]*id="([a-z-]+)-(\d+)"[^>]*>(.*?)</svg>', dom, re.S)
kinds = {}
for kind, idx, body in svgs:
    kinds.setdefault(kind, []).append(body)
traces = con.execute("SELECT t.sha256, t.name, count(DISTINCT CASE WHEN r.status = 'ok' THEN r.allocator END) FROM traces t JOIN runs r ON r.trace_sha256 = t.sha256 GROUP BY t.sha256 ORDER BY min(r.run_id)").fetchall()
for kind in ("throughput", "latency-cdf", "latency-tail", "rss"):
    check(f"{len(traces)} {kind} charts", len(kinds.get(kind, [])) == len(traces), len(kinds.get(kind, [])))
check("one scaling chart", len(kinds.get("scaling", [])) == 1, list(kinds))
for i, (sha, name, nok) in enumerate(traces):
    body = kinds["throughput"][i]
    bars = re.findall(r'class="mark bar" data-allocator="([^"]+)" data-median="([^"]+)" data-min="([^"]+)" data-max="([^"]+)"', body)
    check(f"{name}: {nok} bars", len(bars) == nok, bars)
    for a, med, mn, mx in bars:
        lo, hi = con.execute("SELECT min(ops_per_sec), max(ops_per_sec) FROM runs WHERE trace_sha256 = ? AND allocator = ? AND status = 'ok'", (sha, a)).fetchone()
        check(f"{name} {a}: whisker = min..max of the runs", abs(float(mn) - lo) <= 1e-5 * lo and abs(float(mx) - hi) <= 1e-5 * hi and float(mn) <= float(med) <= float(mx))
    for kind in ("latency-cdf", "latency-tail"):
        lines = re.findall(r'class="mark cdf" data-allocator="([^"]+)" data-points="(\d+)"[^>]*points="([^"]*)"', kinds[kind][i])
        check(f"{name}: {kind} line per allocator with points", len(lines) == nok and all(int(n) > 2 and len(p.split()) >= 2 for _, n, p in lines), [(a, n) for a, n, _ in lines])
    rss = re.findall(r'class="mark rss" data-allocator="([^"]+)" data-runs="(\d+)" data-run-ids="(\d+)[^"]*" data-points="(\d+)"', kinds["rss"][i])
    check(f"{name}: rss line per allocator", len(rss) == nok, rss)
    for a, nruns, run, n in rss:
        check(f"{name} {a}: rss points = samples of run {run}", int(n) == con.execute("SELECT count(*) FROM rss_samples WHERE run_id = ?", (int(run),)).fetchone()[0])
if kinds.get("scaling"):
    ser = re.findall(r'class="mark series" data-allocator="([^"]+)" data-values="([^"]*)"', kinds["scaling"][0])
    check("scaling: a line per allocator", len(ser) == 5, ser)
    check("scaling: 1, 2 and 4 threads each", all([v.split(":")[0] for v in vals.split()] == ["1", "2", "4"] for _, vals in ser), ser)
check("failed run shown with its reason", re.search(r'failed: tlscache repetition 1 \(run \d+\): <b>crashed</b> — killed by signal', dom) is not None)
check("recommendations: 4 goals per trace", dom.count('<li data-goal=') == 4 * len(traces))
check("recommendations: a verdict on each", len(re.findall(r'<li data-goal="[^"]+" data-verdict="(meaningful|no meaningful difference|undecided)"', dom)) == 4 * len(traces))
check("the baseline row marked on each trace (glibc: no trace says what its program ran on)",
      len(re.findall(r'<tr data-allocator="glibc" class="baseline">', dom)) == len(traces) and "glibc (baseline)" in dom)
check("the baseline named under each heading", dom.count("baseline: glibc (the trace does not say") == len(traces))

# ---- issue 15 item 5: the charts a performance engineer reads ----
import statistics
def attrs(tag):
    return dict(re.findall(r'([a-z0-9-]+)="([^"]*)"', tag))
def points(pts):
    return [tuple(map(float, p.split(","))) for p in pts.split()]
ids = {f"{k}-{i}": b for k, i, b in svgs}
def med(v):
    return statistics.median(v) if v else None
for i, (sha, name, nok) in enumerate(traces):
    ok_runs = {}
    for a, run in con.execute("SELECT allocator, run_id FROM runs WHERE trace_sha256 = ? AND status = 'ok' ORDER BY repetition, run_id", (sha,)):
        ok_runs.setdefault(a, []).append(run)
    res = max(med([r for (r,) in con.execute("SELECT timer_resolution_ns FROM runs WHERE trace_sha256 = ? AND allocator = ? AND status = 'ok' AND timer_resolution_ns > 0", (sha, a))]) or 0 for a in ok_runs)
    ops = [o for (o,) in con.execute("SELECT DISTINCT h.op FROM histogram h JOIN runs r ON r.run_id = h.run_id WHERE r.trace_sha256 = ? AND r.status = 'ok' AND h.op <> 'all'", (sha,))]
    check(f"{name}: the runs made malloc and free calls", "malloc" in ops and "free" in ops, ops)
    panels = ["latency-cdf", "latency-tail"] + ["latency-op-" + o.replace("_", "-") for o in ops]
    for o in ops:
        body = ids.get(f"latency-op-{o.replace('_', '-')}-{i}")
        check(f"{name}: a {o} latency panel", body is not None)
        if body is None:
            continue
        with_op = {a for (a,) in con.execute("SELECT DISTINCT r.allocator FROM histogram h JOIN runs r ON r.run_id = h.run_id WHERE r.trace_sha256 = ? AND r.status = 'ok' AND h.op = ?", (sha, o))}
        lines = re.findall(r'class="mark cdf" data-allocator="([^"]+)"', body)
        check(f"{name}: {o} panel has a line per allocator that made {o} calls", sorted(lines) == sorted(with_op), (lines, with_op))
    extra = [k for k in ids if k.startswith("latency-op-") and k.endswith(f"-{i}") and k[len("latency-op-"):-len(f"-{i}")] not in [o.replace("_", "-") for o in ops]]
    check(f"{name}: no panel for an op the runs did not make", not extra, extra)
    for kind in panels:
        body = ids.get(f"{kind}-{i}")
        if body is None:
            continue
        tick0 = re.search(r'<text x="[^"]+" y="[^"]+" text-anchor="middle" class="tick">([^<]*)</text>', body)
        check(f"{name} {kind}: axis starts at the timer resolution (\u2264{math.ceil(res)} ns)", tick0 and tick0.group(1) == f"\u2264{math.ceil(res)} ns", tick0 and tick0.group(1))
        check(f"{name} {kind}: no '1 ns' tick", not re.search(r'class="tick">1 ns<', body))
        lines = re.findall(r'<polyline class="mark cdf"([^>]*)>', body)
        check(f"{name} {kind}: lines drawn", len(lines) >= 1)
        for ln in lines:
            at = attrs(ln); pts = points(at["points"])
            xs = [p[0] for p in pts]; ys = [p[1] for p in pts]
            check(f"{name} {kind} {at['data-allocator']}: starts on the axis start and spans the chart",
                  abs(xs[0] - 76) < 0.06 and max(xs) - min(xs) > 20 and max(ys) - min(ys) > 2 and 0 <= float(at["data-below-res"]) <= 1,
                  (xs[:2], max(xs) - min(xs), max(ys) - min(ys)))
        cols = re.findall(r'class="mark cdf" data-allocator="[^"]+"[^>]* stroke="([^"]+)"', body)
        check(f"{name} {kind}: one colour per line", len(set(cols)) == len(cols), cols)
    # heap overhead = heap RSS - live bytes, over every ok repetition
    body = ids[f"rss-{i}"]
    groups = re.findall(r'<g class="mark rss"([^>]*)>(.*?)</g>', body, re.S)
    check(f"{name}: an overhead line per allocator", sorted(attrs(g)["data-allocator"] for g, _ in groups) == sorted(ok_runs), [attrs(g)["data-allocator"] for g, _ in groups])
    for g, inner in groups:
        at = attrs(g); a = at["data-allocator"]; runs = ok_runs[a]
        check(f"{name} {a}: overhead over all {len(runs)} ok runs", int(at["data-runs"]) == len(runs) and sorted(map(int, at["data-run-ids"].split())) == sorted(runs), at)
        per = {}
        for run in runs:
            for k, ev, v in con.execute("SELECT sample, event, heap_rss_bytes - live_bytes FROM rss_samples WHERE run_id = ? ORDER BY sample", (run,)):
                per.setdefault((k, ev), []).append(v)
        first = [(k, ev) for k, ev, in con.execute("SELECT sample, event FROM rss_samples WHERE run_id = ? ORDER BY sample", (runs[0],))]
        peak = max(statistics.median(per[key]) for key in first)
        check(f"{name} {a}: peak overhead = max over samples of the median of heap RSS - live ({peak:.0f})", abs(float(at["data-peak-overhead-bytes"]) - peak) <= 1, at["data-peak-overhead-bytes"])
        pl = re.search(r'<polyline [^>]*points="([^"]*)"', inner)
        check(f"{name} {a}: median line with a point per sample", pl and len(points(pl.group(1))) >= min(2, len(first)), inner[:200])
        check(f"{name} {a}: min-max band drawn (>= 2 runs)", (len(runs) < 2) or '<polygon class="band"' in inner)
    labels = re.findall(r'class="end-label"[^>]*>([^<]*)</text>', body)
    check(f"{name}: every overhead line labelled at its end", sorted(labels) == sorted(ok_runs), labels)
    # box plots once there are >= 5 repetitions
    most = max(len(v) for v in ok_runs.values())
    for kind, col in (("box-ops", "ops_per_sec"), ("box-latency", None), ("box-heap", "peak_heap_rss_bytes")):
        body = ids.get(f"{kind}-{i}")
        if most < 5:
            check(f"{name}: no {kind} with {most} repetitions", body is None)
            continue
        check(f"{name}: {kind} chart ({most} repetitions)", body is not None)
        if body is None:
            continue
        boxes = re.findall(r'<g class="mark box"([^>]*)>(.*?)</g>', body, re.S)
        want = [a for a, r in ok_runs.items() if len(r) >= 5]
        check(f"{name} {kind}: a box per allocator with >= 5 runs", sorted(attrs(b)["data-allocator"] for b, _ in boxes) == sorted(want), boxes and [attrs(b) for b, _ in boxes])
        for b, inner in boxes:
            at = attrs(b)
            check(f"{name} {kind} {at['data-allocator']}: box drawn with a dot per run", '<rect ' in inner and inner.count('<circle') == int(at["data-n"]) and float(at["data-min"]) <= float(at["data-q1"]) <= float(at["data-median"]) <= float(at["data-q3"]) <= float(at["data-max"]), at)
            if col:
                vals = [v for (v,) in con.execute(f"SELECT {col} FROM runs WHERE trace_sha256 = ? AND allocator = ? AND status = 'ok'", (sha, at["data-allocator"]))]
                check(f"{name} {kind} {at['data-allocator']}: median/min/max of the runs", abs(float(at["data-median"]) - statistics.median(vals)) <= 1e-5 * abs(statistics.median(vals)) + 1e-6 and abs(float(at["data-min"]) - min(vals)) <= 1e-5 * abs(min(vals)) + 1e-6, (at, vals))
    # sites
    sites = con.execute("SELECT stack, bytes, live_at_peak_bytes FROM sites WHERE trace_sha256 = ?", (sha,)).fetchall() if con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'sites'").fetchone()[0] else []
    sec = re.search(rf'<section class="sites" id="sites-{i}">(.*?)</section>', dom, re.S)
    if not sites:
        check(f"{name}: no sites, no sites section or flame chart", sec is None and f"flame-bytes-{i}" not in ids and f"flame-live-{i}" not in ids)
        continue
    check(f"{name}: sites section", sec is not None)
    for kind, k in (("flame-bytes", 1), ("flame-live", 2)):
        body = ids.get(f"{kind}-{i}")
        check(f"{name}: {kind} chart", body is not None)
        if body is None:
            continue
        rects = [attrs(r) for r in re.findall(r'<rect class="mark flame"([^>]*)>', body)]
        total = sum(s[k] for s in sites if s[k] > 0)
        root = [r for r in rects if r["data-depth"] == "0"]
        check(f"{name} {kind}: root = sum of the sites' positive values ({total})", len(root) == 1 and float(root[0]["data-value"]) == total, root)
        check(f"{name} {kind}: frames drawn with width, within the chart", len(rects) > 3 and all(0 <= float(r["x"]) and float(r["width"]) > 0 and float(r["x"]) + float(r["width"]) <= 1140.01 for r in rects), len(rects))
        check(f"{name} {kind}: hover titles with value and percent", re.search(r'<title>cache_insert\n[0-9.]+ [KM]iB, [0-9.]+ %</title>', body) is not None)
    check(f"{name}: stack strings escaped (no injected script element)", "<script>alert" not in dom and "&lt;script&gt;alert(1)&lt;/script&gt;" in dom)
    rows = re.findall(r'<tr><td class="stack"', sec.group(1)) if sec else []
    check(f"{name}: top-sites table row per site", len(rows) == min(12, len(sites)), len(rows))
sys.exit(1 if bad else 0)
PY
finish
