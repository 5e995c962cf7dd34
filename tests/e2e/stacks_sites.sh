#!/usr/bin/env bash
# Allocation sites (analysis/sites.h; issue 15 item 1): tests/progs/rec_sites
# reaches one allocation line (make_block) through three call paths with
# loop counts given on its command line, so every figure below is computed
# from those counts, not from the tool. `alloctrace stacks --folded` has
# exactly three stacks, outermost frame first, with the inlined helper of
# path_c as a frame of its own; --by calls|bytes|live-at-peak|temporary|
# leaked give the program's known values; the table shows them per stack;
# --db stores them (table sites, migration 8), replacing, never adding;
# allocreport merge carries them; allocreplay stores them for a trace with
# stacks. Bad input: stack ids the trace does not define (a gen_hostile
# trace), a stripped binary, a rebuilt one (build-id differs) and a missing
# one fall back to addresses with a note, never a crash.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/../progs/rec_testlib.sh"
AR=$B/bin/allocreplay
REPORT=$B/bin/allocreport
GEN=$B/tests/gen_hostile
for f in "$AR" "$REPORT" "$GEN" "$P/rec_sites"; do
	[ -x "$f" ] || { echo "missing $f: run make first"; exit 77; }
done

NB=300 NC=7 NA=50 # rec_sites: kept blocks of 200 bytes, leaked of 300, temporary of 100
PRE='_start;__libc_start_main;__libc_start_call_main;main'
A="$PRE;path_a;make_block" Bp="$PRE;path_b;make_block" C="$PRE;path_c;leak_block;make_block"

"$REC" -q --stacks -o s.zst "$P/rec_sites" $NB $NC $NA
expect_eq "rec_sites --stacks: exit status" $? 0

# folded VALUE-KIND: the folded lines for --by KIND (stderr kept apart)
folded() { "$AT" stacks --folded ${1:+--by "$1"} s.zst 2>folded.err; }
folded >calls.txt
expect_eq "folded: exit status" $? 0
expect_eq "folded: exactly three stacks" "$(wc -l <calls.txt)" 3
bad=$(grep -cvE '^[^ ;][^;]*(;[^;]+)* [0-9]+$' calls.txt)
expect_eq "folded: every line is 'frame;frame;... COUNT' (the format flamegraph.pl reads)" "$bad" 0
expect_eq "folded: nothing on stderr" "$(cat folded.err)" ""
expect_eq "folded --by calls (default)" "$(cat calls.txt)" "$(printf '%s %s\n' "$A" $NA "$Bp" $NB "$C" $NC)"
expect_eq "folded --by calls = default" "$(folded calls)" "$(cat calls.txt)"
expect_eq "folded --by bytes" "$(folded bytes)" \
	"$(printf '%s %s\n' "$A" $((100 * NA)) "$Bp" $((200 * NB)) "$C" $((300 * NC)))"
# live bytes peak after path_c's last block: all of path_b's and path_c's
expect_eq "folded --by live-at-peak" "$(folded live-at-peak)" \
	"$(printf '%s %s\n' "$Bp" $((200 * NB)) "$C" $((300 * NC)))"
# path_a frees each block before its next allocation; path_b's are freed
# after path_c allocated (not temporary), path_c's never
expect_eq "folded --by temporary" "$(folded temporary)" "$A $NA"
expect_eq "folded --by leaked" "$(folded leaked)" "$C $((300 * NC))"

# The table: each stack's chain and figures, the frames with the inlined call.
"$AT" stacks s.zst >table.txt 2>table.err
expect_eq "table: exit status" $? 0
expect_eq "table: three stacks" "$(head -1 table.txt)" "3 stacks"
grep -qxF "  site $C" table.txt && ok "table: path_c's chain with its inlined frame" || fail "table: no site line for path_c"
grep -qxF "  calls $NB, $((200 * NB)) bytes; live at peak $((200 * NB)) bytes in $NB blocks; temporary 0 (0 bytes); leaked 0 bytes in 0 blocks" table.txt &&
	ok "table: path_b's figures" || fail "table: path_b's figures: $(grep -A1 'path_b;make_block$' table.txt)"
grep -qxF "  calls $NA, $((100 * NA)) bytes; live at peak 0 bytes in 0 blocks; temporary $NA ($((100 * NA)) bytes); leaked 0 bytes in 0 blocks" table.txt &&
	ok "table: path_a's figures" || fail "table: path_a's figures"
grep -qE '^ +inlined leak_block called at tests/progs/rec_sites.c:[0-9]+$' table.txt &&
	ok "table: the inlined call under its address" || fail "table: no inlined line"
grep -qxF "total: $((NA + NB + NC)) allocations, $((100 * NA + 200 * NB + 300 * NC)) bytes; peak live $((200 * NB + 300 * NC)) bytes; leaked $((300 * NC)) bytes in $NC blocks" table.txt &&
	ok "table: totals" || fail "table: totals: $(grep '^total' table.txt)"

# C++: frames demangled (template calls too), spaces kept inside a frame.
"$REC" -q --stacks -o cxx.zst "$P/rec_cxx" >/dev/null
"$AT" stacks --folded --by bytes cxx.zst >cxx.txt 2>cxx.err
expect_eq "c++ folded: exit status" $? 0
grep -q ';main;operator new(unsigned long) 404$' cxx.txt && ok "c++ folded: new int + new int[100] = 404 bytes from main" ||
	fail "c++ folded: no 'main;operator new(unsigned long) 404': $(cut -c1-200 cxx.txt)"
grep -qF ';main;std::vector<int, std::allocator<int> >::push_back(int const&);' cxx.txt &&
	ok "c++ folded: push_back's call chain, demangled" || fail "c++ folded: no push_back frame"
grep -q '_Z' cxx.txt && fail "c++ folded: a mangled name left" || ok "c++ folded: no mangled names"

# ---- the results database ------------------------------------------------------------
q() { sqlite3 -batch "$1" "$2"; }
SHA=$(sha256sum s.zst | cut -d' ' -f1)
"$AT" stacks --folded --db a.db s.zst >/dev/null 2>db.err
expect_eq "--db: exit status" $? 0
expect_eq "--db: created at the current schema version" "$(q a.db 'PRAGMA user_version')" \
	"$(ls "$ROOT"/results/sql/[0-9][0-9][0-9][0-9]-*.sql | wc -l)"
expect_eq "--db: the sites of the trace" "$(q a.db "SELECT stack, calls, bytes, live_at_peak_bytes, live_at_peak_blocks,
	temporary_calls, leaked_bytes, leaked_blocks FROM sites WHERE trace_sha256 = '$SHA' ORDER BY stack")" \
	"$(printf '%s\n' "$A|$NA|$((100 * NA))|0|0|$NA|0|0" "$Bp|$NB|$((200 * NB))|$((200 * NB))|$NB|0|0|0" \
		"$C|$NC|$((300 * NC))|$((300 * NC))|$NC|0|$((300 * NC))|$NC")"
"$AT" stacks --db a.db s.zst >/dev/null 2>&1
expect_eq "--db twice: replaced, not added" "$(q a.db 'SELECT count(*) FROM sites')" 3
expect_eq "per-site SQL (docs/RESULTS.md): top site by live at peak" \
	"$(q a.db "SELECT stack FROM sites WHERE trace_sha256 = '$SHA' ORDER BY live_at_peak_bytes DESC LIMIT 1")" "$Bp"

# allocreplay stores the sites of a trace with stacks (alloctrace as a child)
"$AR" s.zst -a glibc --repeat 1 --db r.db -q >replay.out 2>replay.err
expect_eq "allocreplay: exit status" $? 0
expect_eq "allocreplay: sites stored, keyed like traces" \
	"$(q r.db "SELECT count(*) FROM sites s JOIN traces t ON t.sha256 = s.trace_sha256")" 3
expect_eq "allocreplay: the same figures as alloctrace" \
	"$(q r.db 'SELECT stack, calls, bytes, live_at_peak_bytes, temporary_calls, leaked_bytes FROM sites ORDER BY stack')" \
	"$(q a.db 'SELECT stack, calls, bytes, live_at_peak_bytes, temporary_calls, leaked_bytes FROM sites ORDER BY stack')"
"$REPORT" --db r.db >report.out 2>report.err
expect_eq "allocreport reads a database with sites (schema check)" $? 0
expect_eq "allocreplay: alloctrace's notes kept out of its output" "$(grep -c '^alloctrace:' replay.err)" 0
# alloctrace failing or missing: said, and the runs stored all the same
ALLOCRR_ALLOCTRACE=/bin/false "$AR" s.zst -a glibc --repeat 1 --db f.db -q >/dev/null 2>false.err
expect_eq "alloctrace failing: allocreplay exit status" $? 0
grep -q "s.zst: sites not stored: /bin/false failed (run it again: alloctrace stacks --db f.db s.zst)" false.err &&
	ok "alloctrace failing: said, with the command to run" || fail "alloctrace failing: $(cat false.err)"
expect_eq "alloctrace failing: runs stored, no sites" "$(q f.db 'SELECT (SELECT count(*) FROM runs) || (SELECT count(*) FROM sites)')" 10
ALLOCRR_ALLOCTRACE=$W/none "$AR" s.zst -a glibc --repeat 1 --db f.db -q >/dev/null 2>none.err
expect_eq "alloctrace missing: allocreplay exit status" $? 0
grep -q "sites not stored: cannot find alloctrace" none.err && ok "alloctrace missing: said" || fail "alloctrace missing: $(cat none.err)"

# merge carries sites, by key
"$REPORT" merge m.db r.db a.db >merge.out 2>merge.err
expect_eq "merge: exit status" $? 0
expect_eq "merge: sites once per (trace, stack)" "$(q m.db 'SELECT count(*) FROM sites')" 3
expect_eq "merge: the figures kept" \
	"$(q m.db "SELECT calls FROM sites WHERE stack = '$C'")" $NC

# ---- bad input -------------------------------------------------------------------------
mkdir tr && "$GEN" tr --live 100 >/dev/null || fail "gen_hostile"
"$AT" stacks --folded --by bytes tr/stack-undefined.zst >und.txt 2>und.err
expect_eq "undefined stack ids: exit status" $? 0
expect_eq "undefined stack ids: one line each, the defined one as addresses" "$(cat und.txt)" \
	"$(printf '%s\n' '0x402000;0x401000 16' '[undefined stack 123456789] 16' '[undefined stack 2147483648] 16' \
		'[undefined stack 4294967295] 16')"
grep -q "3 allocation(s) name a stack id the trace does not define" und.err &&
	ok "undefined stack ids: noted" || fail "undefined stack ids: no note: $(cat und.err)"

# A copy of the program, recorded, then stripped / replaced by another
# program / removed: frames of that module become rec_sites+0xOFFSET.
mkdir bin && cp "$P/rec_sites" bin/rec_sites
"$REC" -q --stacks -o c.zst bin/rec_sites $NB $NC $NA
strip bin/rec_sites
"$AT" stacks --folded c.zst >strip.txt 2>strip.err
expect_eq "stripped: exit status" $? 0
expect_eq "stripped: still three stacks" "$(wc -l <strip.txt)" 3
expect_eq "stripped: the program's frames as module+offset, libc's named" \
	"$(grep -cE '^rec_sites\+0x[0-9a-f]+;__libc_start_main;__libc_start_call_main;rec_sites\+0x[0-9a-f]+;rec_sites\+0x[0-9a-f]+;rec_sites\+0x[0-9a-f]+ [0-9]+$' strip.txt)" 3
expect_eq "stripped: counts kept" "$(cut -d' ' -f2 strip.txt | sort -n | tr '\n' ' ')" "$NC $NA $NB "
grep -q "frames have no symbol" strip.err && ok "stripped: noted" || fail "stripped: no note: $(cat strip.err)"
"$AT" stacks c.zst >strip_table.txt 2>strip_table.err
expect_eq "stripped: table exit status" $? 0
grep -q "have no symbol" strip_table.err && ok "stripped: the table notes it too" || fail "stripped: table: no note"
cp "$P/rec_seq" bin/rec_sites
"$AT" stacks --folded c.zst >rebuilt.txt 2>rebuilt.err
expect_eq "build-id differs: exit status" $? 0
expect_eq "build-id differs: three stacks" "$(grep -c '^rec_sites+0x' rebuilt.txt)" 3
grep -q "1 module(s) missing or rebuilt since recording (build-id differs)" rebuilt.err &&
	ok "build-id differs: noted" || fail "build-id differs: no note: $(cat rebuilt.err)"
rm bin/rec_sites
"$AT" stacks c.zst >missing.txt 2>missing.err
expect_eq "missing module: table exit status" $? 0
grep -q 'make_block' missing.txt && fail "missing module: a name it cannot know" || ok "missing module: no names invented"
grep -q "module(s) missing" missing.err && ok "missing module: noted" || fail "missing module: no note"

# ---- usage -----------------------------------------------------------------------------
"$AT" stacks --folded --by nonsense s.zst >/dev/null 2>usage.err
expect_eq "--by nonsense: usage error" $? 1
"$AT" stacks --by bytes s.zst >/dev/null 2>usage.err
expect_eq "--by without --folded: usage error" $? 1
"$AT" stacks --db - s.zst >/dev/null 2>usage.err
expect_eq "--db -: usage error" $? 1
[ -e ./- ] && fail "--db -: a file named - was created" || ok "--db -: no file named -"
finish
