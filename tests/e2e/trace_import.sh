#!/usr/bin/env bash
# `alloctrace import`: Android memory_replay text and glibc mtrace logs become
# traces that verify, replay under every allocator (allocreplay exit 0, every
# run ok), and keep their source's figures exactly: op counts, threads,
# failed calls, requested bytes, peak live bytes, unknown frees, blocks and
# bytes never freed, stacks -- each computed here from the input text by an
# independent model of SPEC 5.5 (a few lines of Python) and compared with
# `alloctrace info --json` and `stats --json`. The header (read by
# tests/spec_reader.py and by offset) names the source format and sets the
# imported / no-times / stacks flags as the source warrants. Inputs are
# written here: every op and NULL form of each format, 32-bit pointers, 64
# threads with tid reuse, times, CRLF line endings, empty files. Malformed
# lines are exit 2 naming the line and byte offset, and leave nothing
# behind; --skip-bad counts them; a symbolic link at -o is refused, its
# target untouched; the output is mode 0600.
set -u
cd "$(dirname "$0")/../.."
B=${ALLOCRR_BUILD:-build}
AT=$B/bin/alloctrace
AR=$B/bin/allocreplay
PY=/usr/bin/python3
for f in "$AT" "$AR"; do [ -x "$f" ] || { echo "missing $f: run make first"; exit 77; }; done
[ -x "$PY" ] || { echo "skip: $PY not installed"; exit 77; }
T=$(mktemp -d /tmp/trace_import.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# ---- the independent model: expected figures from the input text ---------------
cat >"$T/model.py" <<'EOF'
# model.py FORMAT INPUT TRACE ALLOCTRACE: compute what the trace must say from
# the text alone (SPEC 5.5 live set in file order), then compare with info and
# stats --json of TRACE. Prints each mismatch; exit 1 if any.
import json, struct, subprocess, sys
fmt, path, trace, at = sys.argv[1:5]
MAX = 2**64 - 1
ops = {"malloc": 0, "calloc": 0, "realloc": 0, "free": 0, "memalign": 0}
live, cur, peak = {}, 0, 0
e = dict(events=0, failed=0, requested=0, unknown=0, allocs=0, frees=0, free_null=0, threads=0, callers=set())
def acquire(r, n):
    global cur, peak
    if r == 0:
        return
    if r in live:                      # handed out again while live: displaced
        cur -= live.pop(r)
    live[r] = n; cur += n; peak = max(peak, cur)
    e["allocs"] += 1
def release(p):
    global cur
    if p == 0:
        return
    if p in live:
        cur -= live.pop(p)
    else:
        e["unknown"] += 1
def call(op, ptr=0, size=0, result=0, count=None, caller=None):
    ops[op] += 1; e["events"] += 1
    if caller is not None:
        e["callers"].add(caller)
    if op == "free":
        e["frees"] += 1; e["free_null"] += ptr == 0
        release(ptr); return
    req = min(count * size, MAX) if count is not None else size
    e["requested"] = min(e["requested"] + req, MAX)
    if result == 0 and req:
        e["failed"] += 1
    if op == "realloc" and (result or req == 0):
        release(ptr)
    acquire(result, req)
text = open(path, "rb").read().decode("ascii")
lines = text.replace("\r\n", "\n").split("\n")
if fmt == "memory_replay":
    active = set()
    for ln in lines:
        f = ln.split()
        if not f:
            continue
        tid, op = f[0].rstrip(":"), f[1]
        if tid not in active:
            active.add(tid); e["threads"] += 1
        if op == "thread_done":
            active.discard(tid); continue
        h = lambda i: int(f[i], 16)
        if op == "malloc":   call(op, size=int(f[3]), result=h(2))
        if op == "calloc":   call(op, count=int(f[3]), size=int(f[4]), result=h(2))
        if op == "memalign": call(op, size=int(f[4]), result=h(2))
        if op == "realloc":  call(op, ptr=h(3), size=int(f[4]), result=h(2))
        if op == "free":     call(op, ptr=h(2))
else:
    p = lambda s: 0 if s == "(nil)" else int(s, 16)
    old = None
    for ln in lines:
        if not ln or ln.startswith("="):
            continue
        caller = None
        if ln.startswith("@ "):
            at_end = min(ln.index("] " + c + " ") for c in "+-<>!" if ("] " + c + " ") in ln)
            caller = int(ln[ln.rindex("[", 0, at_end) + 1:at_end], 16)
            ln = ln[at_end + 2:]
        f = ln.split()
        if f[0] == "+": call("malloc", size=int(f[2], 16), result=p(f[1]), caller=caller)
        if f[0] == "-": call("free", ptr=p(f[1]), caller=caller)
        if f[0] == "!": call("realloc", ptr=p(f[1]), size=int(f[2], 16), caller=caller)
        if f[0] == "<": old = (p(f[1]), caller)
        if f[0] == ">": call("realloc", ptr=old[0], size=int(f[2], 16), result=p(f[1]), caller=old[1])
    e["threads"] = 1 if e["events"] else 0
info = json.loads(subprocess.run([at, "info", "--json", trace], capture_output=True, check=True).stdout)
stats = json.loads(subprocess.run([at, "stats", "--json", trace], capture_output=True, check=True).stdout)
want = {
    ("info", "events"): e["events"], ("info", "threads"): e["threads"],
    ("info", "failed_calls"): e["failed"], ("info", "requested_bytes"): e["requested"],
    ("info", "peak_live_bytes"): peak, ("info", "frees_of_unknown_pointers"): e["unknown"],
    ("info", "stacks"): len(e["callers"]),
    ("stats", "allocations"): e["allocs"], ("stats", "frees"): e["frees"], ("stats", "free_null"): e["free_null"],
    ("stats", "unknown_frees"): e["unknown"], ("stats", "failed"): e["failed"],
    ("stats", "peak_live_bytes"): peak, ("stats", "never_freed"): len(live),
    ("stats", "never_freed_bytes"): sum(live.values()), ("stats", "live_bytes_at_end"): cur,
}
for op, n in ops.items():
    want[("info", "events_by_op", op)] = n
bad = 0
for k, v in want.items():
    got = {"info": info, "stats": stats}[k[0]]
    for key in k[1:]:
        got = got.get(key) if isinstance(got, dict) else None
    if got != v:
        print("  %s: %s is %r, the source says %r" % (path, ".".join(k), got, v)); bad += 1
print("  %d events, %d threads, peak %d B, %d unknown frees, %d never freed, %d stacks" %
      (e["events"], e["threads"], peak, e["unknown"], len(live), len(e["callers"])))
sys.exit(1 if bad else 0)
EOF

# flags TRACE: the header's flag word (SPEC 3.1: after the 8-byte skippable
# frame header, "ALLOCRRT" and two u16 versions).
flags() { "$PY" -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); assert d[8:16]==b"ALLOCRRT"; print(struct.unpack_from("<I",d,20)[0])' "$1"; }
IMPORTED=8 NO_TIMES=16 STACKS=1
HAVE_ZSTD_PY=0
"$PY" -c 'import zstandard' 2>/dev/null && HAVE_ZSTD_PY=1

# check NAME FORMAT INPUT WANT_FLAGS [replay]: import, model, verify, header, replay.
check() {
	local name=$1 fmt=$2 in=$3 want=$4 out=$T/$1.zst
	"$AT" import --from "$fmt" "$in" -o "$out" -q 2>"$T/err" || { fail "$name: import exit $?: $(cat "$T/err")"; return; }
	[ "$(stat -c %a "$out")" = 600 ] || fail "$name: output mode $(stat -c %a "$out"), not 600"
	"$AT" verify "$out" >/dev/null && ok "$name: verifies" || fail "$name: verify exit $?"
	if "$PY" "$T/model.py" "$fmt" "$in" "$out" "$AT" >"$T/model.out" 2>&1; then
		ok "$name: figures equal the source's: $(tail -n 1 "$T/model.out" | sed 's/^ *//')"
	else
		fail "$name: figures differ from the source's"; sed 's/^/    /' "$T/model.out"
	fi
	local fl; fl=$(flags "$out")
	[ "$fl" = "$want" ] && ok "$name: header flags $fl" || fail "$name: header flags $fl, want $want"
	if [ "$HAVE_ZSTD_PY" = 1 ]; then # the second reader (SPEC.md alone): header and every event
		local pj; pj=$("$PY" tests/spec_reader.py process "$out" 2>&1)
		echo "$pj" | grep -q "\"source_format\": \"$fmt\"" && ok "$name: spec_reader: source format $fmt" ||
			fail "$name: spec_reader process says $pj"
		"$AT" dump --extra "$out" >"$T/c.dump" 2>&1; "$PY" tests/spec_reader.py dump "$out" >"$T/p.dump" 2>&1
		cmp -s "$T/c.dump" "$T/p.dump" && ok "$name: spec_reader's dump = alloctrace dump --extra ($(wc -l <"$T/c.dump") lines)" ||
			fail "$name: the two readers' dumps differ: $(diff "$T/c.dump" "$T/p.dump" | head -n 3)"
	fi
	"$AT" info --json "$out" | grep -q "\"command\":\"imported from $fmt: $(basename "$in")\"" ||
		fail "$name: the header's command line does not say where the trace came from"
	[ "${5:-}" = replay ] || return
	"$AR" "$out" --all --repeat 1 --timeout 120 --db "$T/$name.db" >"$T/replay.out" 2>&1
	local rc=$? notok
	notok=$(sqlite3 "$T/$name.db" "SELECT count(*) FROM runs WHERE status <> 'ok'" 2>&1)
	local nruns; nruns=$(sqlite3 "$T/$name.db" "SELECT count(*) FROM runs" 2>&1)
	[ "$rc" = 0 ] && [ "$notok" = 0 ] && [ "$nruns" -ge 2 ] 2>/dev/null &&
		ok "$name: replays on every allocator ($nruns runs ok)" ||
		{ fail "$name: allocreplay exit $rc, $notok of $nruns runs not ok"; tail -n 5 "$T/replay.out" | sed 's/^/    /'; }
}

# ---- memory_replay ----------------------------------------------------------
# Every op and NULL form: failed malloc/calloc, realloc(NULL, n), realloc(p, 0),
# free(NULL), an unknown free, an unknown realloc, a thread done and its tid reused.
cat >"$T/mr.txt" <<'EOF'
1000: malloc 0x7f3a10001000 24
1000: calloc 0x7f3a10002000 4 16
1001: memalign 0x7f3a10004000 64 100
1001: realloc 0x7f3a10005000 0x7f3a10001000 48
1000: realloc 0x7f3a10006000 0x0 10
1000: realloc 0x0 0x7f3a10006000 0
1000: free 0x7f3a10002000
1001: free 0x0
1001: free 0x7f3a1dead000
1002: realloc 0x7f3a10007000 0x7f3a1beef000 32
1002: malloc 0x0 4611686018427387904
1002: calloc 0x0 2 2305843009213693952
1002: malloc 0x7f3a10008000 0
1000: thread_done 0x0
1000: malloc 0x7f3a10009000 8
1001: free 0x7f3a10005000
EOF
check mr memory_replay "$T/mr.txt" $((IMPORTED | NO_TIMES)) replay
n=$("$AT" info --json "$T/mr.zst" | grep -o '"threads":[0-9]*')
[ "$n" = '"threads":4' ] && ok "mr: tid 1000 after its thread_done is a new thread" || fail "mr: $n"
# No times in the source: every time figure is unknown (null, "not recorded"), never 0.
"$AT" info --json "$T/mr.zst" | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(d["duration_ns"] is not None)' &&
	ok "mr: info --json duration_ns is null" || fail "mr: info --json duration_ns is not null"
"$AT" stats --json "$T/mr.zst" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
times = [d["duration_ns"], d["peak_time_ns"], d["lifetime_ns_log2"], d["timeline"]] + [t["calls_per_sec"] for t in d["threads"]]
sys.exit(any(v is not None for v in times))' && ok "mr: stats --json time figures are null" || fail "mr: stats --json gives a time figure"
"$AT" info "$T/mr.zst" | grep -q '^duration *not recorded' && ok "mr: info says the duration is not recorded" ||
	fail "mr: info prints a duration"

# The same calls with start and end times (newer Android), thread_done with one.
awk '/thread_done/ { print $0, 1000 + NR * 100 + 50; next } { print $0, 1000 + NR * 100, 1000 + NR * 100 + 40 + NR }' \
	"$T/mr.txt" >"$T/mrt.txt"
check mrt memory_replay "$T/mrt.txt" $IMPORTED replay
# Times count from the earliest in the file (1100); each call's is its end.
d=$("$AT" info --json "$T/mrt.zst" | grep -o '"duration_ns":[0-9]*')
[ "$d" = '"duration_ns":1556' ] && ok "mrt: duration = last end - first start ($d)" || fail "mrt: $d, want 1556"
first=$("$AT" dump "$T/mrt.zst" | head -n 1)
case $first in *" t=32"*) ok "mrt: first call's time is its end, 41 ns after the start (16 ns units)" ;;
*) "$AT" dump "$T/mrt.zst" --extra | head -n 2 | grep -q 't=32' && ok "mrt: first call's time is its end" ||
	fail "mrt: first event: $first" ;;
esac

# Generated: 64 threads (tids reused after thread_done), 32-bit pointers,
# cross-thread frees, CRLF line endings.
cat >"$T/gen.py" <<'EOF'
import random, sys
fmt, n, bits, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
free_addrs, live, top = [], [], 0x10000
out = sys.stdout
def addr(size):
    global top
    if free_addrs and rng.random() < 0.7:
        return free_addrs.pop(rng.randrange(len(free_addrs)))
    top += (size + 31) // 16 * 16 + 16
    assert top < 2**bits
    return top
def h(p): return "0x%x" % p if fmt == "memory_replay" or p else "(nil)"
tids = [3000 + i for i in range(64)]
for i in range(n):
    if fmt == "memory_replay":
        t = rng.choice(tids)
        if rng.random() < 0.002:
            out.write("%d: thread_done 0x0\r\n" % t); continue
        pre = "%d: " % t
    else:
        pre = "@ ./prog:[0x%x] " % (0x401000 + rng.randrange(40) * 16) if rng.random() < 0.9 else ""
    r = rng.random()
    if live and r < 0.42:
        p, s = live.pop(rng.randrange(len(live))); free_addrs.append(p)
        out.write(pre + ("free 0x%x" % p if fmt == "memory_replay" else "- 0x%x" % p) + "\r\n")
    elif live and r < 0.5:
        j = rng.randrange(len(live)); p, s = live[j]; ns = rng.randrange(1, 4096)
        q = addr(ns); live[j] = (q, ns); free_addrs.append(p)
        if fmt == "memory_replay":
            out.write(pre + "realloc 0x%x 0x%x %d\r\n" % (q, p, ns))
        else:
            out.write(pre + "< 0x%x\r\n" % p + pre + "> 0x%x 0x%x\r\n" % (q, ns))
    else:
        s = rng.randrange(0, 2048); p = addr(s); live.append((p, s))
        if fmt == "memory_replay":
            k = rng.randrange(3)
            out.write(pre + ["malloc 0x%x %d" % (p, s), "calloc 0x%x 1 %d" % (p, s), "memalign 0x%x 16 %d" % (p, s)][k] + "\r\n")
        else:
            out.write(pre + "+ 0x%x %s\r\n" % (p, "%#x" % s if s else "0"))
EOF
"$PY" "$T/gen.py" memory_replay 30000 32 5 >"$T/mr32.txt"
check mr32 memory_replay "$T/mr32.txt" $((IMPORTED | NO_TIMES)) replay
n=$("$AT" info --json "$T/mr32.zst" | grep -o '"threads":[0-9]*' | cut -d: -f2)
[ "$n" -gt 64 ] && ok "mr32: $n threads (64 tids, reused)" || fail "mr32: $n threads"

# ---- mtrace ---------------------------------------------------------------------
# Every form glibc writes: callers with and without file and symbol (and a
# space in a path), no caller, "+ (nil)" (failed), size "0", realloc as "<"
# ">", a failed realloc "!", realloc(p, 0) as "-", an unknown free, = Start/End twice.
cat >"$T/mt.txt" <<'EOF'
= Start
@ ./prog:[0x401136] + 0x4052a0 0x10
@ ./prog:(main+0x1f)[0x40114f] + 0x4056d0 0x20
@ /lib/x86_64-linux-gnu/libc.so.6:(__libc_start_main+80)[0x7f12aa0] + 0x405700 0
@ [0x401200] < 0x4052a0
@ [0x401200] > 0x405710 0x40
@ ./prog:[0x401136] ! 0x4056d0 0x4000000000000000
@ ./prog:[0x401136] - 0x4056d0
@ ./prog:[0x401300] - 0x999999
+ (nil) 0x4000000000000000
@ /opt/my app/bin/x:(f-0x3)[0x401400] + 0x405800 0x1000
= End
= Start
@ ./prog:[0x401136] - 0x405710
= End
EOF
check mt mtrace "$T/mt.txt" $((IMPORTED | NO_TIMES | STACKS)) replay
"$AT" dump --stacks "$T/mt.zst" | grep -A1 ' free 0x405710' | grep -q '0x401136' &&
	ok "mt: a free's caller is its one-frame stack" || fail "mt: the last free has no stack 0x401136"

# No caller anywhere: no stacks flag, no stacks.
sed 's/^@ [^]]*] //' "$T/mt.txt" >"$T/mtn.txt"
check mtn mtrace "$T/mtn.txt" $((IMPORTED | NO_TIMES))

"$PY" "$T/gen.py" mtrace 30000 64 9 >"$T/mtg.txt"
check mtg mtrace "$T/mtg.txt" $((IMPORTED | NO_TIMES | STACKS)) replay

# ---- empty inputs: a valid trace of no events ----------------------------------------
: >"$T/empty.txt"
for fmt in memory_replay mtrace; do
	check "empty-$fmt" $fmt "$T/empty.txt" $((IMPORTED | NO_TIMES))
done

# ---- bad input ----------------------------------------------------------------------
# bad NAME FORMAT LINE OFFSET: INPUT $T/NAME.txt must fail with exit 2 naming
# the line and its byte offset, and leave no output or temporary file.
bad() {
	local name=$1 fmt=$2 line=$3 off=$4 rc
	mkdir -p "$T/bad"
	"$AT" import --from "$fmt" "$T/$name.txt" -o "$T/bad/out.zst" 2>"$T/err"
	rc=$?
	if [ $rc = 2 ] && grep -q "$name.txt: line $line (byte offset $off): " "$T/err" && [ -z "$(ls -A "$T/bad")" ]; then
		ok "$name: exit 2, $(cut -c1-150 "$T/err")"
	else
		fail "$name: exit $rc, $(cat "$T/err"); left: $(ls -A "$T/bad")"
	fi
}
printf '1: malloc 0x10 8\n1: free 0x10\n1: malloc zz 24\n' >"$T/badptr.txt"
bad badptr memory_replay 3 30
printf '1: malloc 0x10 8\r\n1: frobnicate 0x10\r\n' >"$T/badop.txt"
bad badop memory_replay 2 18
printf '1: malloc 0x10 8 100 200\n1: free 0x10\n' >"$T/badmix.txt"
bad badmix memory_replay 2 25
printf '1: malloc 0x10 8 junk\n' >"$T/badtail.txt"
bad badtail memory_replay 1 0
printf '1: malloc 0x10 99999999999999999999999\n' >"$T/badbig.txt"
bad badbig memory_replay 1 0
printf '= Start\n@ [0x1] < 0x10\n@ [0x1] - 0x20\n' >"$T/badpair.txt"
bad badpair mtrace 2 8
printf '= Start\n@ [0x1] + 0x10 0x8\n@ [0x1] < 0x10\n' >"$T/badend.txt"
bad badend mtrace 3 27
printf '= Start\n+ 0x10 16\n' >"$T/badsize.txt"
bad badsize mtrace 2 8
printf '= Begin\n' >"$T/badeq.txt"
bad badeq mtrace 1 0
# An existing output stays as it was when the import fails.
echo keep >"$T/keep.zst"
"$AT" import --from mtrace "$T/badeq.txt" -o "$T/keep.zst" 2>/dev/null
[ "$(cat "$T/keep.zst")" = keep ] && ok "a failed import leaves an existing OUT as it was" || fail "OUT was changed"
# --skip-bad: the good lines, a count of the bad ones.
printf '1: malloc 0x10 8\n1: bogus\n1: free 0x10\nnope\n' >"$T/skip.txt"
if "$AT" import --from memory_replay --skip-bad "$T/skip.txt" -o "$T/skip.zst" 2>"$T/err" &&
	grep -q "2 malformed lines skipped, the first line 2" "$T/err" &&
	[ "$("$AT" info --json "$T/skip.zst" | grep -o '"events":[0-9]*')" = '"events":2' ]; then
	ok "--skip-bad: 2 events, 2 lines skipped and counted"
else
	fail "--skip-bad: $(cat "$T/err")"
fi

# ---- the output is never written through a symbolic link -------------------------
echo precious >"$T/target"
ln -s "$T/target" "$T/link.zst"
"$AT" import --from memory_replay "$T/mr.txt" -o "$T/link.zst" 2>"$T/err"
rc=$?
[ $rc = 2 ] && [ "$(cat "$T/target")" = precious ] && [ -L "$T/link.zst" ] &&
	ok "symlink at -o: refused (exit 2), its target untouched: $(cat "$T/err")" ||
	fail "symlink at -o: exit $rc, target now '$(head -c 40 "$T/target")'"

# ---- usage errors ----------------------------------------------------------------------
"$AT" import "$T/mr.txt" -o "$T/u.zst" 2>/dev/null; rc=$?
[ $rc = 1 ] && ok "no --from: usage error" || fail "no --from: exit $rc"
"$AT" import --from heaptrack "$T/mr.txt" -o "$T/u.zst" 2>/dev/null; rc=$?
[ $rc = 1 ] && ok "unknown format: usage error" || fail "unknown format: exit $rc"
"$AT" import --from mtrace "$T/missing.txt" -o "$T/u.zst" 2>"$T/err"; rc=$?
[ $rc = 2 ] && grep -q 'missing.txt' "$T/err" && ok "missing IN: exit 2 naming it" || fail "missing IN: exit $rc"

[ $fails = 0 ] && echo "PASS trace_import" || echo "FAIL trace_import: $fails"
[ $fails = 0 ]
