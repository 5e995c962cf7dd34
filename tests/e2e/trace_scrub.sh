#!/usr/bin/env bash
# alloctrace scrub (docs/SHARING.md): a recorded trace (threads with names,
# --stacks so it has modules and build-ids, an argument holding the host
# name) and a generated one are scrubbed, and then
#   - no byte of the command line, the host-name argument, the program's
#     path, the thread names or the module paths is left in the file, its
#     decompressed blocks, `info --json` or `dump --stacks`;
#   - the header says scrubbed, with the note (both readers);
#   - it verifies, `dump --extra` is identical, thread and module records
#     are all there (names and paths hashed, build-ids removed), and the
#     compiled workload is identical byte for byte but for the fields that
#     name the trace file; it replays on glibc with the same op checksum and
#     is still matched to glibc as the recorded allocator;
#   - hashes are HMAC-SHA-256 under the --hash-key file (checked with
#     Python's hmac), and differ between two scrubs without one;
#   - --keep build-ids keeps them, --coarsen-time rounds every time down;
#   - a symbolic link at -o is refused and its target untouched, the output
#     is mode 0600, a truncated input gives its scrubbed prefix and exit 3,
#     a scrubbed input is refused; the corpus manifest records the note.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/progs/rec_testlib.sh"
AR=$B/bin/allocreplay
PY=/usr/bin/python3
export ALLOCRR_CACHE_DIR=$W/cache
command -v zstd >/dev/null || { echo "zstd CLI not installed"; exit 77; }
[ -x "$PY" ] || { echo "python3 not installed"; exit 77; }
"$PY" -c 'import zstandard' 2>/dev/null || { echo "python3-zstandard not installed (spec_reader.py raw)"; exit 77; }
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI not installed"; exit 77; }

# ---- a recorded trace -------------------------------------------------------------
SECRET="scrubtest-$(uname -n)-d41f7"
"$REC" -q --stacks -o rec.zst -- "$P/rec_threads" "$SECRET" >rec.out 2>rec.err
expect_eq "recording exit" $? 0
expect_eq "recording verifies" "$(verify_rc rec.zst)" 0
"$CHECK" info rec.zst >rec.info
"$AT" info --json rec.zst >rec.json
CMD=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["command"])' rec.json)

# The strings that must go, each present in the original (or the test
# would prove nothing): the command line, the argument, the program path,
# every thread name, every module path with a directory.
: >secrets
printf '%s\n' "$CMD" "$SECRET" "$P/rec_threads" >>secrets
sed -n "s/.* name '\\([^']*\\)'.*/\\1/p" rec.info | grep . >>secrets
awk '$1 == "module" && $2 ~ /\// {print $2}' rec.info >>secrets
nthreads=$(grep -c '^thread ' rec.info)
nmods=$(grep -c '^module ' rec.info)
[ "$nthreads" -ge 10 ] && [ "$nmods" -ge 2 ] && ok "recorded: $nthreads threads, $nmods modules" ||
	fail "recorded: $nthreads threads, $nmods modules"
# all_bytes FILE: the file itself (the header frame is not compressed) and
# its decompressed blocks (spec_reader.py raw: `zstd -d` stops at the first
# chained block of a 2.0 trace, SPEC 3.4).
all_bytes() { cat "$1"; "$PY" "$ROOT/tests/spec_reader.py" raw "$1"; }
all_bytes rec.zst >rec.bytes
missing=0
while IFS= read -r s; do grep -a -q -F -- "$s" rec.bytes || missing=$((missing + 1)); done <secrets
expect_eq "original holds every string looked for ($(wc -l <secrets))" "$missing" 0

"$AT" scrub rec.zst -o s.zst 2>scrub.err
expect_eq "scrub exit" $? 0
expect_eq "output mode" "$(stat -c %a s.zst)" 600
all_bytes s.zst >s.bytes
"$AT" info --json s.zst >s.json
"$AT" dump --stacks s.zst >s.stacks 2>&1
left=0
while IFS= read -r s; do
	for f in s.bytes s.json s.stacks; do
		grep -a -q -F -- "$s" "$f" && { fail "'$s' is still in $f"; left=$((left + 1)); }
	done
done <secrets
expect_eq "strings left in the scrubbed trace, info --json, dump --stacks" "$left" 0

# ---- the header says so -------------------------------------------------------------
note=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["scrub_note"])' s.json)
case $note in
"command line: hashed; thread names: hashed; module paths: hashed; build-ids: removed;"*"times: kept"*)
	ok "scrub note: $note" ;;
*) fail "scrub note: '$note'" ;;
esac
expect_eq "original has no note" "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1])).get("scrub_note"))' rec.json)" None
"$AT" info s.zst | grep -q "^scrubbed  *command line: hashed" && ok "info text shows the note" || fail "info text: no note"
if "$PY" -c 'import zstandard' 2>/dev/null; then
	"$PY" "$ROOT/tests/spec_reader.py" process s.zst >s.spec
	"$PY" - s.json s.spec <<'EOF' && ok "spec_reader reads the same note and flags" || fail "spec_reader disagrees: $(cat s.spec)"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if all(a[k] == b[k] for k in ("scrub_note", "source_format", "times_recorded")) else 1)
EOF
fi

# ---- every event, thread and module kept ---------------------------------------------
expect_eq "scrubbed verifies" "$(verify_rc s.zst)" 0
"$AT" dump --extra rec.zst >rec.dump
"$AT" dump --extra s.zst >s.dump
cmp -s rec.dump s.dump && ok "dump --extra identical ($(wc -l <s.dump) events)" || fail "dump --extra differs"
"$CHECK" info s.zst >s.info
strip_names() { sed -e "s/ name '[^']*'//" -e 's/^module [^ ]* /module /' -e 's/build_id_len [0-9]*//' "$1" | grep -E '^(thread|module) '; }
cmp -s <(strip_names rec.info) <(strip_names s.info) && ok "thread and module records kept (tids, start/exit seqs, event counts, bases, sizes)" ||
	{ fail "thread or module records differ"; diff <(strip_names rec.info) <(strip_names s.info) | head -5; }
expect_eq "thread names hashed" "$(sed -n "s/.* name '\\([^']*\\)'.*/\\1/p" s.info | grep -cv '^hmac:[0-9a-f]\{16\}$')" 0
expect_eq "module paths hashed" "$(grep '^module ' s.info | grep -cEv '^module hmac:[0-9a-f]{16} ')" 0
expect_eq "build-ids removed" "$(grep '^module ' s.info | grep -vc 'build_id_len 0$')" 0
expect_eq "thread names: equal names stay equal" \
	"$(sed -n "s/.* name '\\([^']*\\)'.*/\\1/p" rec.info | sort -u | wc -l)" \
	"$(sed -n "s/.* name '\\([^']*\\)'.*/\\1/p" s.info | sort -u | wc -l)"
"$AT" scrub --keep build-ids rec.zst -o kb.zst 2>/dev/null
"$CHECK" info kb.zst >kb.info
cmp -s <(grep -o 'build_id_len [0-9]*' rec.info) <(grep -o 'build_id_len [0-9]*' kb.info) &&
	grep -q 'build_id_len [1-9]' kb.info && ok "--keep build-ids keeps them" || fail "--keep build-ids: $(grep -m2 '^module' kb.info)"
grep -q '^scrubbed .*build-ids: kept' <("$AT" info kb.zst) && ok "--keep build-ids: the note says kept" || fail "note of kb.zst"

# ---- the same compiled workload, the same replay -----------------------------------------
# Byte for byte, but for the fields that name the trace file: its SHA-256,
# its size, the compile time and the digest over all of them (workload.h).
cat >wloff.c <<'EOF'
#include <stdio.h>
#include "workload.h"
#define F(f) offsetof(ar_wl_header_t, f), sizeof(((ar_wl_header_t *)0)->f)
int main(void)
{
	printf("%zu %zu %zu %zu %zu %zu %zu %zu\n", F(trace_sha256), F(compile_ns), F(trace_file_bytes),
	       F(content_sha256));
	return 0;
}
EOF
if cc -I"$ROOT/replayer" -I"$ROOT/trace-format" wloff.c -o wloff 2>wloff.err; then
	MASK=$(./wloff)
else
	MASK=
	echo "note: no C compiler for the workload layout ($(head -1 wloff.err)); workloads compared by replay only"
fi
# same_workload A.zst B.zst: compile both (allocreplay on glibc), compare.
same_workload() {
	local a=$1 b=$2 sa sb
	"$AR" -q "$a" "$b" -a glibc --repeat 1 --db "$a.db" >"$a.replay" 2>&1
	expect_eq "$a, $b: replay on glibc exit" $? 0
	expect_eq "$a, $b: runs ok" "$(q "$a.db" "SELECT group_concat(status) FROM runs")" "ok,ok"
	expect_eq "$a, $b: same op checksum" "$(q "$a.db" "SELECT count(DISTINCT op_checksum) FROM runs")" 1
	sa=$(sha256sum "$a" | cut -c1-64); sb=$(sha256sum "$b" | cut -c1-64)
	[ -n "$MASK" ] || return 0
	"$PY" - "$ALLOCRR_CACHE_DIR/$sa".v*.wl "$ALLOCRR_CACHE_DIR/$sb".v*.wl $MASK <<'EOF'
import sys
a, b = (open(p, "rb").read() for p in sys.argv[1:3])
m = list(map(int, sys.argv[3:]))
masked = set()
for off, n in zip(m[::2], m[1::2]):
    masked.update(range(off, off + n))
diff = [i for i in range(min(len(a), len(b))) if a[i] != b[i] and i not in masked]
print("workloads: %d and %d bytes, %d bytes differ outside the trace's name fields" % (len(a), len(b), len(diff)))
sys.exit(0 if len(a) == len(b) and not diff and len(a) > 4096 else 1)
EOF
	[ $? -eq 0 ] && ok "$a, $b: identical compiled workloads" || fail "$a, $b: compiled workloads differ"
}
q() { sqlite3 -batch -noheader "$@"; }
same_workload rec.zst s.zst
expect_eq "scrubbed trace still matched to glibc (allocator file name kept)" \
	"$(q rec.zst.db "SELECT group_concat(coalesce(recorded_allocator, 'NULL')) FROM traces")" "glibc,glibc"

# ---- a generated trace ------------------------------------------------------------------
"$AT" gen X --ops 20000 -o gen.zst 2>/dev/null
"$AT" scrub -q gen.zst -o gens.zst
expect_eq "generated: scrub exit" $? 0
cmp -s <("$AT" dump --extra gen.zst) <("$AT" dump --extra gens.zst) && ok "generated: dump --extra identical" ||
	fail "generated: dump differs"
all_bytes gens.zst | grep -a -q -F "alloctrace gen X" && fail "generated: command line left" || ok "generated: command line gone"
same_workload gen.zst gens.zst

# ---- hashing ------------------------------------------------------------------------------
head -c 32 /dev/urandom >team.key
"$AT" scrub -q --hash-key team.key rec.zst -o k1.zst
"$AT" scrub -q --hash-key team.key rec.zst -o k2.zst
"$AT" scrub -q rec.zst -o r2.zst
cmdof() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["command"])' <("$AT" info --json "$1"); }
want=$("$PY" -c 'import hmac,hashlib,sys; print("hmac:" + hmac.new(open(sys.argv[1], "rb").read(), sys.argv[2].encode(), hashlib.sha256).hexdigest()[:16])' team.key "$CMD")
expect_eq "--hash-key: HMAC-SHA-256 of the command line" "$(cmdof k1.zst)" "$want"
expect_eq "--hash-key: the same in a second scrub" "$(cmdof k2.zst)" "$want"
[ "$(cmdof s.zst)" != "$(cmdof r2.zst)" ] && ok "random key: two scrubs hash differently" || fail "random key: same hash twice"
"$AT" info k1.zst | grep -q "hash: HMAC-SHA-256, key from a key file" && ok "--hash-key: the note says so" || fail "--hash-key note"
head -c 8 /dev/urandom >short.key
"$AT" scrub -q --hash-key short.key rec.zst -o short.zst 2>short.err
expect_eq "a key under 16 bytes: exit" $? 2
[ ! -e short.zst ] && ok "a key under 16 bytes: no output" || fail "short key left an output"
"$AT" scrub -q --remove command-line,thread-names --keep module-paths rec.zst -o rm.zst
expect_eq "--remove command-line" "$(cmdof rm.zst)" ""
"$CHECK" info rm.zst | grep -q " name '[^']" && fail "--remove thread-names left names" || ok "--remove thread-names"
cmp -s <(grep '^module' rec.info | cut -d' ' -f2) <("$CHECK" info rm.zst | grep '^module' | cut -d' ' -f2) &&
	ok "--keep module-paths" || fail "--keep module-paths"

alloc() { "$PY" -c 'import json,sys; a=json.load(open(sys.argv[1]))["allocator"]; print(a["path"], a["soname"], a["version"])' <("$AT" info --json "$1"); }
read -r apath asoname aversion <<<"$(alloc rec.zst)"
expect_eq "allocator by default: file name, soname, version" "$(alloc s.zst)" "$(basename "$apath") $asoname $aversion"
"$AT" scrub -q --keep allocator rec.zst -o ka.zst && expect_eq "--keep allocator" "$(alloc ka.zst)" "$apath $asoname $aversion"
"$AT" scrub -q --remove allocator rec.zst -o ra.zst && expect_eq "--remove allocator" "$(alloc ra.zst | tr -d ' ')" ""

wall() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["start_wall_ns"])' <("$AT" info --json "$1"); }
w0=$(wall rec.zst)
expect_eq "start time by default: its date, 00:00 UTC" "$(wall s.zst)" "$((w0 - w0 % 86400000000000))"
"$AT" scrub -q --keep start-time rec.zst -o kt.zst && expect_eq "--keep start-time" "$(wall kt.zst)" "$w0"

# ---- coarsened times ------------------------------------------------------------------------
"$AT" scrub -q --coarsen-time 1000000 rec.zst -o c.zst
expect_eq "--coarsen-time: exit" $? 0
"$AT" dump --extra c.zst >c.dump
"$PY" - rec.dump c.dump <<'EOF' && ok "--coarsen-time 1000000: every time rounded down, nothing else changed" || fail "--coarsen-time"
import sys
a, b = (open(p).read().splitlines() for p in sys.argv[1:3])
def split(l):
    f = l.split()
    t = [x for x in f if x.startswith("t=")]
    return [x for x in f if not x.startswith("t=")], int(t[0][2:])
bad = len(a) != len(b)
rounded = 0
for x, y in zip(a, b):
    (fx, tx), (fy, ty) = split(x), split(y)
    bad |= fx != fy or ty != tx - tx % 1000000
    rounded += tx != ty
print("%d lines, %d times changed" % (len(a), rounded))
sys.exit(1 if bad or not rounded else 0)
EOF
"$AT" info c.zst | grep -q "times: rounded down to 1000000 ns" && ok "--coarsen-time: the note says so" || fail "--coarsen-time note"
# the copy's time unit: the recording's (64 ns) when times are kept; with
# --coarsen-time the largest power of two dividing the step (10^6 = 2^6 x
# 15625; 2^20 for 2^20), so the coarse times cost fewer bytes. Their sizes
# are not compared here: the two copies round to different steps, and zstd's
# output is not ordered by its input's entropy (a 2^20 copy of a recording
# came out 115 551 bytes against the 10^6 copy's 115 265 once in CI).
unit_of() { "$AT" info --json "$1" | sed -n 's/.*"time_unit_ns":\([0-9]*\).*/\1/p'; }
expect_eq "time unit of the recording" "$(unit_of rec.zst)" 64
expect_eq "time unit kept by a scrub" "$(unit_of s.zst)" 64
expect_eq "time unit with --coarsen-time 1000000" "$(unit_of c.zst)" 64
"$AT" scrub -q --coarsen-time 1048576 rec.zst -o c20.zst
expect_eq "time unit with --coarsen-time 1048576" "$(unit_of c20.zst)" 1048576
"$AT" dump --extra s.zst | cmp -s - rec.dump && ok "a scrub keeps every time exactly" ||
	fail "times changed by a scrub without --coarsen-time"
"$AT" scrub -q --coarsen-time 1000 rec.zst -o bad.zst 2>/dev/null
expect_eq "--coarsen-time not a multiple of 16: usage error" $? 1

# ---- output and input rules -----------------------------------------------------------------
echo precious >target.txt
ln -s target.txt link.zst
"$AT" scrub -q rec.zst -o link.zst 2>link.err
expect_eq "a symbolic link at -o: exit" $? 2
expect_eq "its target untouched" "$(cat target.txt)" precious
[ -L link.zst ] && ok "the link is still a link" || fail "the link was replaced"
grep -q "symbolic link" link.err && ok "message: $(cat link.err)" || fail "message: $(cat link.err)"
expect_eq "no temporary file left" "$(ls | grep -c '\.tmp\.')" 0
"$AT" scrub -q rec.zst 2>/dev/null
expect_eq "no -o: usage error" $? 1
"$AT" scrub -q s.zst -o again.zst 2>again.err
expect_eq "an already scrubbed input: exit" $? 2
[ ! -e again.zst ] && grep -q "already scrubbed" again.err && ok "already scrubbed: refused, nothing written" ||
	fail "already scrubbed: $(cat again.err)"

size=$(stat -c %s rec.zst)
head -c $((size * 6 / 10)) rec.zst >cut.zst
expect_eq "cut input reads as truncated" "$(verify_rc cut.zst)" 1
"$AT" scrub -q cut.zst -o cuts.zst 2>cut.err
expect_eq "truncated input: exit 3 (done on the readable part)" $? 3
grep -q "truncated at byte offset" cut.err && ok "message: $(cat cut.err)" || fail "message: $(cat cut.err)"
expect_eq "its scrubbed prefix reads as truncated" "$(verify_rc cuts.zst)" 1
"$AT" dump --extra cut.zst >cut.dump 2>/dev/null
"$AT" dump --extra cuts.zst >cuts.dump 2>/dev/null
[ -s cut.dump ] && cmp -s cut.dump cuts.dump && ok "truncated: the same $(wc -l <cut.dump) events" ||
	fail "truncated: dumps differ ($(wc -l <cut.dump) vs $(wc -l <cuts.dump))"

# ---- hostile traces (tests/hostile): never a crash; the same events out --------------------
if [ -x "$B/tests/gen_hostile" ] && mkdir hostile && "$B/tests/gen_hostile" hostile --live 200000 >hostile.txt; then
	bad=0 n=0
	for f in hostile/*.zst; do
		n=$((n + 1)); o=$f.scrubbed
		(ulimit -v 1500000; timeout 60 "$AT" scrub -q "$f" -o "$o" 2>"$o.err"); rc=$?
		vi=$(verify_rc "$f"); vo=$(verify_rc "$o")
		# exit 0: the copy verifies like its input; 3: input and copy are
		# both not whole; and both dump the same events (up to any problem).
		if { [ $rc = 0 ] && [ "$vi" = "$vo" ]; } || { [ $rc = 3 ] && [ "$vi" != 0 ] && [ "$vo" != 0 ]; }; then
			cmp -s <("$AT" dump --extra "$f" 2>/dev/null) <("$AT" dump --extra "$o" 2>/dev/null) ||
				{ bad=$((bad + 1)); echo "  $f: dumps differ"; }
		else
			bad=$((bad + 1)); echo "  $f: scrub exit $rc, verify $vi -> $vo: $(head -c 200 "$o.err")"
		fi
	done
	expect_eq "hostile traces ($n): scrubbed with the documented exit and the same events" "$bad" 0
else
	echo "note: tests/gen_hostile not built; hostile traces not scrubbed"
fi

# ---- the corpus manifest records it ---------------------------------------------------------
mkdir corpus && cp s.zst gen.zst corpus/
"$AT" corpus add corpus/MANIFEST corpus/s.zst --program rec_threads --version 1 --command x >/dev/null &&
	"$AT" corpus add corpus/MANIFEST corpus/gen.zst --program gen --version 1 --command x >/dev/null
expect_eq "corpus add" $? 0
col=$(head -2 corpus/MANIFEST | tail -1 | tr '\t' '\n' | grep -n '^scrubbed$' | cut -d: -f1)
expect_eq "manifest: scrubbed of s.zst" "$(awk -F'\t' -v c="$col" '$1 == "s.zst" {print $c}' corpus/MANIFEST)" "$note"
expect_eq "manifest: scrubbed of gen.zst" "$(awk -F'\t' -v c="$col" '$1 == "gen.zst" {print $c}' corpus/MANIFEST)" no
"$AT" verify --manifest corpus/MANIFEST >/dev/null
expect_eq "manifest verifies" $? 0
sed -i 's/command line: hashed/command line: kept/' corpus/MANIFEST
"$AT" verify --manifest corpus/MANIFEST >/dev/null
expect_eq "a manifest whose note is wrong fails" $? 2
finish
