#!/usr/bin/env bash
# allocreport --html in a real browser: the page is self-contained (no
# script, no external URL), headless Chromium loads it without a single
# console message (checked to be seen: a probe page's console.error must
# show up), and the DOM Chromium built holds every chart with its data:
# a throughput bar per allocator with ok runs, latency CDF and tail lines,
# RSS lines plus the live-bytes line, and the thread-scaling chart of S2 at
# 1, 2 and 4 threads; the baseline row marked and named, a verdict on every
# recommendation. Installs the Debian chromium package when root and
# missing; skips (77) otherwise. The screenshot is kept in test-logs/.
. "$(dirname "$0")/report_lib.inc"
if ! command -v chromium >/dev/null; then
	[ "$(id -u)" = 0 ] || { echo "chromium not installed (apt-get install chromium) and not root"; exit 77; }
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq chromium >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1; } ||
		{ echo "apt-get install chromium failed"; exit 77; }
fi
make_report_db r.db
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
chrome "file://$T/report.html" --window-size=1240,2400 --hide-scrollbars --screenshot="$T/report.png" \
	>/dev/null 2>shot.err
[ -s report.png ] && ok "screenshot ($(stat -c %s report.png) bytes)" || fail "no screenshot"
mkdir -p "$B/test-logs" && cp report.png "$B/test-logs/report_html.png" 2>/dev/null

# The DOM Chromium parsed, against the database.
python3 - dom.html r.db <<'PY' || fail "DOM checks (see above)"
import re, sqlite3, sys
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
    rss = re.findall(r'class="mark rss" data-allocator="([^"]+)" data-run="(\d+)" data-points="(\d+)"', kinds["rss"][i])
    check(f"{name}: rss line per allocator", len(rss) == nok, rss)
    for a, run, n in rss:
        check(f"{name} {a}: rss points = samples of run {run}", int(n) == con.execute("SELECT count(*) FROM rss_samples WHERE run_id = ?", (int(run),)).fetchone()[0])
    check(f"{name}: live-bytes line", 'class="mark live"' in kinds["rss"][i])
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
sys.exit(1 if bad else 0)
PY
finish
