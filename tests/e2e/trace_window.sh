#!/usr/bin/env bash
# Window traces (trace format 1.3, issue 16 item 2): a trace that begins
# while the heap is in use. tests/unit/test_window writes one with the
# library (3 threads; 4 pre-existing blocks of 12552 bytes freed or
# realloced in the window, a reallocarray among them; an unknown free;
# WINDOW record: window #2, attach, 1000000 bytes in use at the start), and
#   - verify accepts it; dump shows old_size=; the second reader
#     (tests/spec_reader.py) dumps the same lines, and read as a 1.2 reader
#     (--as-1.2) it decodes the sized ops from the op table by name;
#   - info and stats (text and JSON) agree: peak live 63552 bytes at seq 2
#     (the window's own blocks peak at 51000), 4 pre-existing blocks, 12552
#     bytes, heap at start 1000000, never seen 987448, 1 unknown free, 7 frees;
#     without the WINDOW record the heap at start and the unseen part are
#     unknown, never a number;
#   - scrub keeps old_size, the window flag and the WINDOW record;
#   - allocreplay on glibc and pool: every run ok, runs.peak_live_bytes is
#     the trace's peak, every block allocated is freed (the pre-existing ones
#     too: none skipped), the traces row holds the window columns (NULL heap
#     when unknown; 0 pre-existing for a trace that is not a window), and
#     the output says what the window did not see;
#   - an absurd old_size (2^64-1, SPEC 7.4): the peak saturates, the replay
#     runs ok with the block's malloc failed and counted, its free skipped.
# Exit 0 pass, 77 skip, 1 fail.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${ALLOCRR_BUILD:-build}
B=$(cd "$B" && pwd) || { echo "FAIL: no build directory"; exit 1; }
AT=$B/bin/alloctrace
AR=$B/bin/allocreplay
GEN=$B/tests/test_window
PY=/usr/bin/python3
for f in "$AT" "$AR" "$GEN"; do
	[ -x "$f" ] || { echo "missing $f: run make first"; exit 77; }
done
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI not installed"; exit 77; }
W=$(mktemp -d /tmp/allocrr-window.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
export ALLOCRR_CACHE_DIR=$W/cache
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
expect_eq() { if [ "$2" = "$3" ]; then ok "$1 = $3"; else fail "$1: got '$2', want '$3'"; fi; }
# json FILE EXPR: a value of the JSON object in FILE (d), printed by Python
json() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
have_py=0
[ -x "$PY" ] && "$PY" -c 'import zstandard' 2>/dev/null && have_py=1

"$GEN" win.zst >gen.out 2>&1
expect_eq "test_window writes the trace" $? 0
"$GEN" norec.zst norecord >/dev/null 2>&1

# ---- verify, dump, the second reader -------------------------------------------
"$AT" verify win.zst >v.out 2>&1
expect_eq "verify exit" $? 0
"$AT" dump win.zst >d.out
expect_eq "dump: events with old_size" "$(grep -c ' old_size=' d.out)" 8
expect_eq "dump: a pre-existing free" "$(grep -c '^3 100 free 0x7000 old_size=4096$' d.out)" 1
expect_eq "dump: the pre-existing reallocarray" \
	"$(grep -c '^8 200 reallocarray 0xa000 10 16 = 0x30000 old_size=64$' d.out)" 1
expect_eq "dump: the unknown free has no old_size" "$(grep -c '^10 300 free 0xdead0$' d.out)" 1
if [ $have_py = 1 ]; then
	"$AT" dump --extra win.zst >dx.out
	"$PY" "$ROOT/tests/spec_reader.py" dump win.zst >py.out 2>py.err
	expect_eq "spec_reader dump exit" $? 0
	cmp -s dx.out py.out && ok "spec_reader dumps what alloctrace dump --extra does" ||
		{ fail "spec_reader and alloctrace dumps differ"; diff dx.out py.out | head -n 6; }
	"$PY" "$ROOT/tests/spec_reader.py" --as-1.2 dump win.zst >py12.out 2>py12.err
	expect_eq "1.2 reader: dump exit" $? 0
	expect_eq "1.2 reader: free_sized by its op-table name and mask (ptr, align)" \
		"$(grep -c '^3 100 free_sized 0x7000 4096 ' py12.out)" 1
	expect_eq "1.2 reader: realloc_sized" "$(grep -c '^6 100 realloc_sized 0x8000 200 300 = 0x40000 ' py12.out)" 1
	expect_eq "1.2 reader: reallocarray_sized" \
		"$(grep -c '^8 200 reallocarray_sized 0xa000 64 10 16 = 0x30000 ' py12.out)" 1
	expect_eq "1.2 reader: the same events" "$(cut -d' ' -f1 py12.out | tr '\n' ' ')" \
		"$(cut -d' ' -f1 dx.out | tr '\n' ' ')"
	"$PY" "$ROOT/tests/spec_reader.py" process win.zst >proc.json
	expect_eq "spec_reader: the WINDOW record" \
		"$(json proc.json 'd["window"]["index"], d["window"]["reason"], d["window"]["heap_in_use_bytes"], d["window"]["heap_source"], d["window_trace"]')" \
		"(2, 1, 1000000, 'glibc mallinfo2', True)"
else
	echo "skip: the second reader (needs $PY with python3-zstandard)"
fi

# ---- info and stats --------------------------------------------------------------
"$AT" info --json win.zst >info.json
expect_eq "info: peak live (pre-existing blocks counted)" "$(json info.json 'd["peak_live_bytes"]')" 63552
expect_eq "info: frees (sized frees count as frees)" "$(json info.json 'd["events_by_op"]["free"]')" 7
expect_eq "info: no sized op listed" "$(json info.json '"free_sized" in d["events_by_op"]')" False
expect_eq "info: unknown frees" "$(json info.json 'd["frees_of_unknown_pointers"]')" 1
expect_eq "info: window" \
	"$(json info.json '[d["window"][k] for k in ("index","reason","preexisting_blocks","preexisting_bytes","heap_in_use_bytes","heap_unseen_bytes")]')" \
	"[2, 'attach', 4, 12552, 1000000, 987448]"
expect_eq "info: stopped" "$(json info.json 'd["stopped"], d["calls_after_stop"]')" "('detach', 17)"
"$AT" info win.zst >info.txt
grep -q '^pre-existing      4 blocks, 12552 bytes' info.txt && ok "info text: pre-existing" || fail "info text: $(cat info.txt)"
grep -q '^never seen        987448 bytes' info.txt && ok "info text: never seen" || fail "info text: never seen"
"$AT" stats --json win.zst >stats.json
expect_eq "stats: peak live, its seq" "$(json stats.json 'd["peak_live_bytes"], d["peak_seq"]')" "(63552, 2)"
expect_eq "stats: window" "$(json stats.json 'd["window"]["preexisting_blocks"], d["window"]["preexisting_bytes"], d["window"]["heap_unseen_bytes"]')" \
	"(4, 12552, 987448)"
"$AT" stats win.zst >stats.txt
grep -q 'pre-existing      4 blocks, 12552 bytes' stats.txt && ok "stats text: pre-existing" || fail "stats text"
"$AT" info --json norec.zst >norec.json
expect_eq "no WINDOW record: heap at start and unseen unknown" \
	"$(json norec.json 'd["window"]["record"], d["window"]["heap_in_use_bytes"], d["window"]["heap_unseen_bytes"], d["window"]["preexisting_bytes"]')" \
	"(False, None, None, 12552)"
"$AT" info norec.zst | grep -q '^never seen        unknown$' && ok "no WINDOW record: text says unknown" ||
	fail "no WINDOW record: text"

# ---- scrub keeps the window --------------------------------------------------------
"$AT" scrub win.zst -o s.zst >scrub.out 2>&1
expect_eq "scrub exit" $? 0
"$AT" dump s.zst >sd.out
cmp -s d.out sd.out && ok "scrub: the same events, old_size included" || fail "scrub: dump differs"
"$AT" info --json s.zst >sinfo.json
expect_eq "scrub: the window and its record kept" "$(json sinfo.json 'd["window"]')" "$(json info.json 'd["window"]')"

# ---- replay ------------------------------------------------------------------------
"$AR" win.zst norec.zst "$ROOT/traces/samples/s1-3k.zst" -a glibc,pool --repeat 1 --db r.db >rep.out 2>rep.err
expect_eq "allocreplay exit" $? 0
q() { sqlite3 r.db "$1"; }
SHA=$(json info.json 'd["sha256"]')
NSHA=$(json norec.json 'd["sha256"]')
expect_eq "runs ok" "$(q "SELECT group_concat(allocator || ':' || status) FROM (SELECT * FROM runs WHERE trace_sha256='$SHA' ORDER BY allocator)")" \
	"glibc:ok,pool:ok"
expect_eq "replayed peak live = the trace's" \
	"$(q "SELECT group_concat(DISTINCT peak_live_bytes) FROM runs WHERE trace_sha256 IN ('$SHA','$NSHA')")" 63552
expect_eq "every block the replay allocated was freed (the pre-existing ones too)" \
	"$(q "SELECT count(*) FROM runs WHERE trace_sha256='$SHA' AND allocs_expected = frees_expected AND allocs_expected >= 6 AND failed_allocs = 0")" 2
expect_eq "traces row" "$(q "SELECT window_trace, preexisting_blocks, preexisting_bytes, heap_at_start_bytes, skipped_unknown_frees, peak_live_bytes FROM traces WHERE sha256='$SHA'")" \
	"1|4|12552|1000000|1|63552"
expect_eq "traces row without a WINDOW record: heap NULL" \
	"$(q "SELECT window_trace, preexisting_blocks, coalesce(heap_at_start_bytes, 'NULL') FROM traces WHERE sha256='$NSHA'")" "1|4|NULL"
expect_eq "traces row of a trace that is no window" \
	"$(q "SELECT window_trace, preexisting_blocks, coalesce(heap_at_start_bytes, 'NULL') FROM traces WHERE sha256 NOT IN ('$SHA','$NSHA')")" "0|0|NULL"
grep -q 'a recording window (#2): 4 pre-existing block(s), 12552 bytes, allocated untimed before it; the heap held 1000000 bytes at its start, 987448 of them never seen' rep.out &&
	ok "allocreplay says what the window did not see" || fail "allocreplay output: $(grep window rep.out)"
grep -q 'the heap in use at its start is unknown' rep.out && ok "allocreplay: unknown heap at start said" ||
	fail "allocreplay: no unknown-heap note"
expect_eq "allocreplay: each window says its allocators replay without their past" \
	"$(grep -c 'note: each allocator replays this window from its live blocks laid out afresh' rep.out)" \
	"$(grep -c 'note: a recording window (#' rep.out)"

# ---- an absurd old_size (SPEC 7.4) ---------------------------------------------------
"$GEN" absurd.zst absurd >/dev/null 2>&1
"$AT" info --json absurd.zst >absurd.json
expect_eq "absurd old_size: peak and pre-existing bytes saturate" \
	"$(json absurd.json 'd["peak_live_bytes"], d["window"]["preexisting_bytes"], d["window"]["heap_unseen_bytes"]')" \
	"(18446744073709551615, 18446744073709551615, None)"
"$AR" absurd.zst -a glibc --repeat 1 --db a.db >abs.out 2>abs.err
expect_eq "absurd old_size: allocreplay exit" $? 0
expect_eq "absurd old_size: run ok, the failed malloc counted, every block it got freed" \
	"$(sqlite3 a.db "SELECT status, failed_allocs, allocs_expected = frees_expected FROM runs")" "ok|1|1"
grep -q '1 free/realloc op(s) on the missing blocks skipped' abs.err && ok "absurd old_size: the skipped free said" ||
	fail "absurd old_size: $(cat abs.err)"

if [ $fails -gt 0 ]; then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
