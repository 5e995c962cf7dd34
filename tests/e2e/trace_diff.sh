#!/usr/bin/env bash
# alloctrace diff (analysis/cmd_diff.c): two traces of the same program.
#   - a trace against itself: every figure equal, every delta 0 (text and
#     JSON), "no difference", exit 0; two recordings of the deterministic
#     test program (rec_diffleak) likewise, whatever their times;
#   - against a recording with one extra leak (rec_diffleak --leak): the
#     whole-trace rows move by exactly that block (one malloc, 4000 bytes
#     requested, leaked and live at the peak, one size bucket), and of the
#     per-site rows exactly one changes: the caller chain ending in
#     main;leak_site, with 1 call, 4000 bytes, 4000 leaked;
#   - --fail-if: rules that hold exit 0, rules that trip exit 4 with one
#     line per violation naming metric, traces, old, new and change (the
#     per-site rule names the site); a bad expression is a usage error
#     (exit 1) naming it; bad arguments and unreadable traces exit 1 / 2;
#   - without stacks on a side the sites are not compared, and it says why;
#     a truncated trace gives its readable part and exit 3.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/progs/rec_testlib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "python3 not installed"; exit 77; }
PROG=$P/rec_diffleak
[ -x "$PROG" ] || { echo "missing $PROG: run make first"; exit 77; }

"$REC" --stacks -o a.zst "$PROG" 2>/dev/null || fail "record a.zst"
"$REC" --stacks -o a2.zst "$PROG" 2>/dev/null || fail "record a2.zst"
"$REC" --stacks -o b.zst "$PROG" --leak 2>/dev/null || fail "record b.zst"
"$REC" -o nostacks.zst "$PROG" --leak 2>/dev/null || fail "record nostacks.zst"

# ---- against itself ------------------------------------------------------------------
"$AT" diff a.zst a.zst >self.txt 2>self.err
expect_eq "self: exit" $? 0
expect_eq "self: verdict" "$(tail -n 1 self.txt)" "no difference"
# every row of the tables: B - A is +0 and the change 0%
expect_eq "self: rows with a non-zero delta" "$(grep -E '^  [a-z].* [+-][0-9]+ +[^ ]+$' self.txt | grep -vcE ' \+0 +0%$')" 0
grep -q "0 changed, 3 the same" self.txt && ok "self: 3 sites, none changed" || fail "self: sites: $(grep -A1 '^allocation sites' self.txt)"
"$AT" diff --format json a.zst a.zst >self.json || fail "self: json exit"
"$PY" - self.json <<'PY' || fail "self: json (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
def zero(where, c):
    if c["delta"] != 0 or c["change_pct"] != 0 or c["a"] != c["b"]:
        bad.append(where)
for k, c in d["metrics"].items(): zero(k, c)
for k, c in d["calls"].items(): zero("calls " + k, c)
for h in ("size_log2", "lifetime_events_log2", "lifetime_ns_log2"):
    for b in d[h]:
        if b["delta"] != 0: bad.append(h)
zero("duration", d["times"]["duration_ns"])
if not d["identical"]: bad.append("identical")
if d["sites"]["changed"] or d["sites"]["same"] != 3: bad.append("sites")
if d["violations"] != 0: bad.append("violations")
print("json self:", "ok" if not bad else bad)
sys.exit(1 if bad else 0)
PY

# two runs of a deterministic program: the same heap, other times
"$AT" diff a.zst a2.zst >two.txt 2>/dev/null
expect_eq "two runs: exit" $? 0
expect_eq "two runs: verdict" "$(tail -n 1 two.txt)" "no difference"

# ---- one extra leak ------------------------------------------------------------------
"$AT" diff a.zst b.zst >leak.txt 2>leak.err
expect_eq "leak: exit (no --fail-if)" $? 0
expect_eq "leak: verdict" "$(tail -n 1 leak.txt)" "the traces differ"
grep -q "1 changed, 3 the same" leak.txt && ok "leak: one site changed" || fail "leak: $(grep -A1 '^allocation sites' leak.txt)"
"$AT" diff --json a.zst b.zst >leak.json 2>/dev/null || fail "leak: json exit"
"$PY" - leak.json <<'PY' || fail "leak: json (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
want = {"events": 1, "allocs": 1, "frees": 0, "bytes": 4000, "peak_live": 4000, "peak_blocks": 1,
        "leaked": 4000, "leaked_blocks": 1, "failed": 0, "threads": 0, "cross_frees": 0}
for k, v in want.items():
    if d["metrics"][k]["delta"] != v: bad.append((k, d["metrics"][k]["delta"], v))
if d["metrics"]["leaked"]["a"] != 0 or d["metrics"]["leaked"]["change_pct"] is not None:
    bad.append("leaked from 0: change_pct null")
calls = {k: c["delta"] for k, c in d["calls"].items()}
if calls != {"malloc": 1, "calloc": 0, "realloc": 0, "free": 0}: bad.append(("calls", calls))
sizes = {b["from"]: b["delta"] for b in d["size_log2"] if b["delta"]}
if sizes != {2048: 1}: bad.append(("size_log2", sizes))
if any(b["delta"] for b in d["lifetime_events_log2"]): bad.append("lifetime_events_log2 moved")
ch = d["sites"]["changed"]
if d["sites"]["same"] != 3 or len(ch) != 1: bad.append(("sites", d["sites"]["same"], len(ch)))
else:
    s = ch[0]
    if not s["site"].endswith(";main;leak_site"): bad.append(("label", s["site"]))
    got = {k: (s[k]["a"], s[k]["b"]) for k in ("calls", "bytes", "live_at_peak", "temporary", "leaked")}
    if got != {"calls": (0, 1), "bytes": (0, 4000), "live_at_peak": (0, 4000), "temporary": (0, 0),
               "leaked": (0, 4000)}:
        bad.append(("site figures", got))
if d["identical"]: bad.append("identical")
print("json leak:", "ok" if not bad else bad)
sys.exit(1 if bad else 0)
PY

# ---- --fail-if -----------------------------------------------------------------------
"$AT" diff --fail-if 'peak_live>+5%' --fail-if 'calls_free>0%' --fail-if 'frees<0%' a.zst b.zst >/dev/null 2>pass.err
expect_eq "fail-if holding (peak_live +3.4% < 5%): exit" $? 0
expect_eq "fail-if holding: no violation line" "$(grep -c regression pass.err)" 0
"$AT" diff --fail-if 'leaked>0%' --fail-if 'peak_live>=+3%' --fail-if 'site_leaked>0%' \
	--fail-if 'allocs<-1%' a.zst b.zst >/dev/null 2>trip.err
expect_eq "fail-if tripped: exit" $? 4
expect_eq "fail-if tripped: violation lines" "$(grep -c ': regression: ' trip.err)" 3
grep -qF "regression: leaked in b.zst against a.zst: 0 -> 4000 (new) breaks --fail-if 'leaked>0%'" trip.err &&
	ok "violation line: leaked" || fail "violation line leaked: $(cat trip.err)"
grep -qF "regression: peak_live in b.zst against a.zst: 118336 -> 122336 (+3.4%) breaks --fail-if 'peak_live>=+3%'" trip.err &&
	ok "violation line: peak_live" || fail "violation line peak_live: $(cat trip.err)"
grep -qE "regression: site_leaked of site .*;main;leak_site in b.zst against a.zst: 0 -> 4000 \(new\)" trip.err &&
	ok "violation line: the leaking site" || fail "violation line site: $(cat trip.err)"
"$AT" diff --json --fail-if 'leaked>0%' a.zst b.zst >trip.json 2>/dev/null
expect_eq "fail-if with --json: exit" $? 4
expect_eq "fail-if with --json: violations" "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["violations"])' trip.json)" 1
"$AT" diff --fail-if 'leaked>0%' --fail-if 'site_leaked>0%' a.zst a2.zst >/dev/null 2>&1
expect_eq "fail-if on two identical runs: exit" $? 0

for bad in 'p99>+10%' 'leaked>10' 'leaked=5%' 'leaked>+inf%' ''; do
	"$AT" diff --fail-if "$bad" a.zst b.zst >/dev/null 2>bad.err
	expect_eq "bad --fail-if '$bad': exit" $? 1
	grep -qF -- "--fail-if '$bad'" bad.err && ok "bad --fail-if '$bad': named" || fail "bad --fail-if '$bad': $(cat bad.err)"
done
grep -q "unknown metric 'p99' (events, allocs" <("$AT" diff --fail-if 'p99>1%' a.zst b.zst 2>&1) &&
	ok "unknown metric: the names listed" || fail "unknown metric message"

# ---- other inputs and arguments -------------------------------------------------------
"$AT" diff a.zst >/dev/null 2>&1
expect_eq "one trace: exit" $? 1
"$AT" diff a.zst b.zst a2.zst >/dev/null 2>&1
expect_eq "three traces: exit" $? 1
"$AT" diff --format xml a.zst b.zst >/dev/null 2>&1
expect_eq "--format xml: exit" $? 1
"$AT" diff a.zst missing.zst >/dev/null 2>miss.err
expect_eq "missing trace: exit" $? 2
grep -q "missing.zst" miss.err && ok "missing trace named" || fail "missing: $(cat miss.err)"
"$AT" diff a.zst nostacks.zst >ns.txt 2>/dev/null
expect_eq "no stacks on B: exit" $? 0
grep -q "not compared: nostacks.zst recorded without stacks" ns.txt && ok "no stacks: says why" ||
	fail "no stacks: $(grep -A1 '^allocation sites' ns.txt)"
grep -qE '^  leaked bytes \(never freed\) +0 +4000 +\+4000 +new$' ns.txt && ok "no stacks: whole-trace rows still there" ||
	fail "no stacks: leaked row"
size=$(stat -c %s b.zst)
head -c $((size * 2 / 3)) b.zst >cut.zst
"$AT" diff a.zst cut.zst >cut.txt 2>cut.err
expect_eq "truncated B: exit" $? 3
grep -q "cut.zst: .*the diff covers the events before it" cut.err && ok "truncated: says so" || fail "truncated: $(cat cut.err)"
"$AT" diff --help | grep -q "^Usage: alloctrace diff" && ok "diff --help" || fail "diff --help"
"$AT" --help | grep -q "alloctrace diff \[OPTION\]... A B" && ok "alloctrace --help lists diff" || fail "alloctrace --help"
finish
