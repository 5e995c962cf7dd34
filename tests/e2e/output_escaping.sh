#!/usr/bin/env bash
# Hostile strings from traces and databases reach every output escaped for
# where it lands (common/ar_escape.h, docs/RELIABILITY.md "Outputs"). A small
# program, copied under a hostile name (the trace's module path), is recorded
# with --stacks and a hostile command line (terminal escapes that
# retitle and clear a terminal, BEL, C1 and bidi-override characters,
# invalid UTF-8, a spreadsheet formula, an HTML tag) under a hostile trace
# file name, replayed into a database, and the database is then edited the
# way a shared one could be: a host with an embedded NUL byte and a
# formula, a failure reason with markup. Then:
#   - CSV: no cell starts with = + @ TAB CR, nor with - unless it is a
#     number we wrote; the formula cells are neutralised with a quote;
#   - JSON (allocreport, alloctrace info and stats): loads in Python's
#     json.load (strict UTF-8) and shows each invalid byte as the text \xNN;
#     an embedded NUL is shown as \x00 with what follows it, not cut;
#   - markdown and HTML: no raw <img, no raw control byte;
#   - every output (text ones included, stderr too): no ESC, BEL, C1 or
#     bidi-override character, strict UTF-8; the strings are still there,
#     shown as \xNN, and valid UTF-8 ("café 日本") passes unchanged.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/progs/rec_testlib.sh"
PY=/usr/bin/python3
[ -x $PY ] || { echo "skip: $PY not installed"; exit 77; }
command -v sqlite3 >/dev/null || { echo "skip: sqlite3 not installed"; exit 77; }
AR=$B/bin/allocreplay
AREP=$B/bin/allocreport
[ -x "$AR" ] && [ -x "$AREP" ] || { echo "missing allocreplay/allocreport: run make first"; exit 77; }
export ALLOCRR_CACHE_DIR="$W/cache"

# ---- the hostile trace ---------------------------------------------------------
# Each argument is one kind of attack; the file name carries a formula, a tag
# and a terminal title sequence.
ESC=$'\e' BEL=$'\a'
args=("=cmd|' -C calc'!A0" "<img src=x onerror=alert(1)>" "${ESC}]0;pwned${BEL}" "${ESC}[2J"
	$'\xc2\x9b31m' $'\xe2\x80\xaeevil' $'\xff\xfe' $'\xc0\x80' $'\xed\xa0\x80' $'\x80lone' $'\xf5\x80\x80\x80'
	'@SUM(1)' '+1' '-2+3' 'caf'$'\xc3\xa9' $'\xe6\x97\xa5\xe6\x9c\xac' $'trunc\xe6\x97')
NAME="=cmd|' -C calc'!A0<img src=x onerror=alert(1)>${ESC}]0;t${BEL}"$'\xff'
# The program itself under a hostile name: its path is the trace's module
# path, shown by stacks, dump --stacks and stats.
PROG="$W/rec${ESC}]0;m${BEL}<b>"$'\xff'
cp "$P/rec_seq" "$PROG"
"$REC" -q --stacks -o "$W/$NAME.zst" "$PROG" "${args[@]}" >/dev/null 2>rec.err || fail "allocrec: exit $?: $(cat rec.err)"
TRACE="$W/$NAME.zst"
[ -s "$TRACE" ] || { fail "no trace written"; finish; }
"$AR" -q -a glibc --repeat 1 --db r.db "$TRACE" >replay.out 2>replay.err || fail "allocreplay: exit $?: $(cat replay.err)"

# A database edited by someone else: an embedded NUL (SQLite text may hold
# one), a formula and a tag in fields every format shows.
sqlite3 r.db "UPDATE runs SET host = '=HYPERLINK(' || CAST(X'00' AS TEXT) || '\"x\")''after-nul';
	UPDATE traces SET program = program || CAST(X'00' AS TEXT) || 'hidden-after-nul';" ||
	fail "could not edit the database"
sqlite3 r.db "CREATE TEMP TABLE x AS SELECT * FROM runs LIMIT 1;
	UPDATE x SET run_id = NULL, run_uuid = run_uuid || '-x', repetition = 2, status = 'crashed',
	 reason = '<img src=x onerror=alert(2)>' || CAST(X'1b5d303b6f776e6564071b5b324a' AS TEXT) || '=1+1';
	INSERT INTO runs SELECT * FROM x;" || fail "could not add a failed run"

# ---- every output --------------------------------------------------------------
out() { # NAME CMD...: stdout to NAME, stderr to NAME.err
	local n=$1; shift
	"$@" >"$n" 2>"$n.err"
	local rc=$?
	[ $rc -le 1 ] || fail "$n: $* exit $rc: $(head -c 300 "$n.err")"
}
out info.txt "$AT" info "$TRACE"
out info.json "$AT" info --json "$TRACE"
out stats.txt "$AT" stats "$TRACE"
out stats.json "$AT" stats --json "$TRACE"
out dump.txt "$AT" dump --stacks "$TRACE"
out stacks.txt "$AT" stacks "$TRACE"
out verify.txt "$AT" verify "$TRACE"
out table.txt "$AREP" --db r.db
out report.csv "$AREP" --db r.db --format csv
out report.json "$AREP" --db r.db --format json
out report.md "$AREP" --db r.db --format markdown
out rec.txt "$AREP" --db r.db --recommend
out rec.json "$AREP" --db r.db --recommend --format json
out rec.md "$AREP" --db r.db --recommend --format markdown
out rec.csv "$AREP" --db r.db --recommend --format csv
out report.html "$AREP" --db r.db --html report.html
cp replay.out replay.txt && cp replay.err replay.txt.err
"$AR" -q -a glibc --repeat 1 --db r2.db --json "$TRACE" >replay.json 2>replay.json.err ||
	fail "allocreplay --json: exit $?"

# No ESC, BEL, C1 control (raw or UTF-8 encoded) or bidi override, strict UTF-8.
if $PY - info.txt info.json stats.txt stats.json dump.txt stacks.txt verify.txt table.txt report.csv report.json report.md \
	rec.txt rec.json rec.md rec.csv report.html replay.txt replay.json \
	*.err <<'PY'; then
import re, sys
bad = 0
for f in sys.argv[1:]:
    b = open(f, 'rb').read()
    try:
        s = b.decode('utf-8')
    except UnicodeDecodeError as e:
        print(f"  {f}: invalid UTF-8 at byte {e.start}: {b[max(0, e.start - 40):e.start + 10]!r}")
        bad += 1
        continue
    m = re.search('[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]', s)
    if m:
        print(f"  {f}: control character {m.group()!r} at {m.start()}: {s[max(0, m.start() - 40):m.start() + 10]!r}")
        bad += 1
sys.exit(1 if bad else 0)
PY
	ok "every output: strict UTF-8, no ESC, BEL, C1 or bidi control"
else
	fail "control bytes or invalid UTF-8 in an output (see above)"
fi

# The hostile strings are still there, shown: not dropped.
grep -qF '\x1b]0;pwned\x07' info.txt && ok "info: the escape sequence is shown as \\xNN text" ||
	fail "info: escaped command line missing: $(grep -a program info.txt)"
grep -qF '[rec\x1b]0;m\x07<b>\xff+0x' stacks.txt && ok "stacks: the module path escaped" ||
	fail "stacks: escaped module name missing: $(head -3 stacks.txt)"
grep -qF "café 日本" info.txt && ok "info: valid UTF-8 passes unchanged" || fail "info: valid UTF-8 was escaped"

# ---- JSON ----------------------------------------------------------------------
$PY - <<'PY' || fail "JSON outputs (see above)"
import json, sys
bad = 0
def check(what, cond):
    global bad
    print(("ok   " if cond else "FAIL ") + what)
    bad += not cond
docs = {}
for f in ("info.json", "stats.json", "report.json", "rec.json", "replay.json"):
    try:
        docs[f] = json.load(open(f, encoding='utf-8', errors='strict'))
        check(f"{f}: loads in json.load", True)
    except Exception as e:
        check(f"{f}: loads in json.load ({e})", False)
info = docs.get("info.json", {})
cmd = info.get("command") or ""
check("info.json: invalid bytes shown as \\xNN text", "\\xff\\xfe" in cmd and "\\xed\\xa0\\x80" in cmd)
check("info.json: a valid character stays itself", "café" in cmd and "日本" in cmd)
check("info.json: the formula is kept as data", "=cmd|' -C calc'!A0" in cmd)
rep = docs.get("report.json", {})
tr = (rep.get("traces") or [{}])[0]
prog = tr.get("program") or ""
check("report.json: invalid bytes as \\xNN text", "\\xc0\\x80" in prog)
check("report.json: embedded NUL shown as \\x00, not cut", prog.endswith("\\x00hidden-after-nul"))
check("report.json: host with NUL shown whole", (tr.get("host") or "").endswith("\\x00\"x\")'after-nul"))
check("report.json: trace name with invalid byte as \\xff", (tr.get("name") or "").endswith("\\xff.zst"))
sys.exit(1 if bad else 0)
PY

# ---- CSV -----------------------------------------------------------------------
if $PY - report.csv rec.csv <<'PY'; then
import csv, sys
bad = 0
for f in sys.argv[1:]:
    rows = list(csv.reader(open(f, encoding='utf-8', newline='')))
    for r in rows:
        for c in r:
            if not c:
                continue
            if c[0] in "=+@\t\r":
                print(f"  {f}: cell starts with {c[0]!r}: {c[:60]!r}"); bad += 1
            elif c[0] == '-':
                try:
                    float(c)
                except ValueError:
                    print(f"  {f}: cell starts with '-' and is no number: {c[:60]!r}"); bad += 1
    print(f"ok   {f}: {len(rows)} rows checked")
rows = list(csv.DictReader(open("report.csv", encoding='utf-8', newline='')))
name = rows[0]["trace_name"] if rows else ""
if not name.startswith("'=cmd|' -C calc'!A0"):
    print(f"  report.csv: trace name not neutralised with a quote: {name[:60]!r}"); bad += 1
host = rows[0]["host"] if rows else ""
if not (host.startswith("'=HYPERLINK(") and host.endswith("\\x00\"x\")'after-nul")):
    print(f"  report.csv: host not neutralised or cut at the NUL: {host!r}"); bad += 1
sys.exit(1 if bad else 0)
PY
	ok "CSV: formula cells neutralised, numbers stay numbers, NUL shown"
else
	fail "CSV cells (see above)"
fi

# ---- markdown and HTML ---------------------------------------------------------
for f in report.md rec.md report.html; do
	if grep -qai '<img' "$f"; then fail "$f: raw <img tag: $(grep -ai -m1 -o '.\{0,40\}<img.\{0,40\}' "$f")"
	else ok "$f: no raw <img"; fi
done
grep -qF '&lt;img src=x onerror=alert(1)&gt;' report.html && ok "report.html: the tag is shown as text" ||
	fail "report.html: escaped tag missing"
grep -qF '&lt;img src=x onerror=alert(1)&gt;' report.md && ok "report.md: the tag is shown as text" ||
	fail "report.md: escaped tag missing"
finish
