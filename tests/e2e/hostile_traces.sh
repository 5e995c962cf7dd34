#!/usr/bin/env bash
# Traces that are valid bytes but say absurd things (tests/hostile/gen_hostile.c:
# 1 TiB and SIZE_MAX mallocs, overflowing callocs, absurd alignments, frees
# and reallocs of pointers never returned, double frees, an address returned
# twice, duplicated and backward sequence numbers, seqs at 2^64-1, threads
# nobody declared, 100000 threads, undefined stack ids, time running
# backwards, events after a thread's exit, empty traces, millions of live
# blocks). Every alloctrace command, allocreplay (glibc and pool) and
# allocreport run on each under a timeout and a memory limit; each must end
# with its documented exit status (never a signal or a timeout), and say what
# it skipped or where the trace is wrong (SPEC.md 7.4, docs/RESULTS.md
# "Untrusted traces"). ALLOCRR_HOSTILE_LIVE sets the live-blocks case's size.
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"
AT="$B/bin/alloctrace"
REPORT="$B/bin/allocreport"
GEN="$B/tests/gen_hostile"
for f in "$AT" "$REPORT" "$GEN"; do
	[ -x "$f" ] || { echo "missing $f: build first (make all test-build)"; exit 77; }
done
MEM_KB=1500000 # every command runs under ulimit -v of this many KiB
TMO=60         # and is killed after this many seconds
LIVE=${ALLOCRR_HOSTILE_LIVE:-2000000}

mkdir tr
"$GEN" tr --live "$LIVE" >names.txt || { echo "gen_hostile failed"; exit 1; }
ncases=$(wc -l <names.txt)
expect_eq "cases generated" "$ncases" 23
runs=0

# run TAG CMD...: CMD under the limits; stdout in TAG.out, stderr in TAG.err,
# exit status in $rc. A status above 123 is a timeout or a signal: always a
# failure, whatever the case expects.
run() {
	local tag=$1
	shift
	(ulimit -v $MEM_KB && exec timeout -k 5 $TMO "$@") >"$tag.out" 2>"$tag.err"
	rc=$?
	runs=$((runs + 1))
	if [ $rc -ge 124 ]; then
		fail "$tag: killed or timed out (exit $rc): $(tail -c 300 "$tag.err")"
	fi
}
# has TAG.STREAM REGEX WHAT: the file matches (grep -E)
has() {
	if grep -qE -- "$2" "$1"; then ok "$3"; else fail "$3: /$2/ not in $1: $(head -c 400 "$1")"; fi
}
lacks() {
	if grep -qE -- "$2" "$1"; then fail "$3: /$2/ in $1"; else ok "$3"; fi
}

# Every alloctrace command on case NAME, with the exit statuses expected of
# info, verify, dump, stats and stacks (3: done on the readable part of a
# damaged trace; verify's own 1 truncated, 2 corrupt).
alloctrace_all() { # NAME INFO VERIFY DUMP STATS STACKS
	local n=$1 i=2
	for c in info verify dump stats stacks; do
		if [ $c = dump ]; then
			run "$n.$c" "$AT" dump --extra --stacks "tr/$n.zst"
		else
			run "$n.$c" "$AT" $c "tr/$n.zst"
		fi
		expect_eq "$n: alloctrace $c exit" $rc "${!i}"
		i=$((i + 1))
	done
	run "$n.json" "$AT" info --json "tr/$n.zst"
	expect_eq "$n: alloctrace info --json exit" $rc "$2"
	if [ "$6" = 2 ] && [ "$2" = 0 ]; then
		has "$n.stacks.err" "^alloctrace: tr/$n.zst: no call stacks \(record with" "$n: stacks says why it has nothing"
	fi
}

# allocreplay on case NAME (glibc and pool, one repetition) into NAME.db;
# then allocreport on it.
replay() { # NAME EXIT
	run "$1.replay" "$AR" "tr/$1.zst" -a glibc,pool --repeat 1 --db "$1.db"
	expect_eq "$1: allocreplay exit" $rc "$2"
}
report() { # NAME EXIT
	run "$1.report" "$REPORT" --db "$1.db"
	expect_eq "$1: allocreport exit" $rc "$2"
	run "$1.rjson" "$REPORT" --db "$1.db" --format json
	expect_eq "$1: allocreport --format json exit" $rc "$2"
}
# the runs of NAME.db: "allocator status" lines
runs_ok() { # NAME OPS
	expect_eq "$1: runs" "$(q "$1.db" "SELECT group_concat(allocator || ' ' || status || ' ' || ops, ',')
		FROM (SELECT * FROM runs ORDER BY allocator)")" "glibc ok $2,pool ok $2"
}
tq() { q "$1.db" "SELECT $2 FROM traces"; }

# ---- absurd sizes ------------------------------------------------------------
# The trace's own figures are kept as recorded (saturated at 2^64-1 where a
# sum overflows); in replay the allocator returns NULL, which is counted.
n=malloc-1tib
alloctrace_all $n 0 0 0 0 2
has $n.info.out "^failed calls +1$" "$n: the NULL 1 TiB malloc is a failed call"
has $n.info.out "^peak live bytes +1099511627968 " "$n: peak live counts the 1 TiB block"
replay $n 0
runs_ok $n 6
expect_eq "$n: replay failed_allocs" "$(q $n.db "SELECT group_concat(failed_allocs) FROM runs")" "2,2"
expect_eq "$n: trace_null_results" "$(tq $n trace_null_results)" 1
report $n 0

n=malloc-sizemax
alloctrace_all $n 0 0 0 0 2
has $n.info.out "^peak live bytes +18446744073709551615 " "$n: live bytes saturate at 2^64-1"
has $n.json.out '"requested_bytes":18446744073709551615,' "$n: requested bytes saturate"
replay $n 0
runs_ok $n 7
expect_eq "$n: replay failed_allocs" "$(q $n.db "SELECT group_concat(failed_allocs) FROM runs")" "3,3"
expect_eq "$n: peak_live_bytes stored saturated" "$(tq $n peak_live_bytes)" 9223372036854775807
report $n 0
lacks $n.report.out "peak live -" "$n: no negative peak in the report"

n=calloc-overflow
alloctrace_all $n 0 0 0 0 2
has $n.info.out "^failed calls +2$" "$n: two overflowing callocs failed"
has $n.info.out "^peak live bytes +18446744073709551615 " "$n: an overflowing calloc that 'succeeded' saturates"
replay $n 0
runs_ok $n 5
expect_eq "$n: replay failed_allocs" "$(q $n.db "SELECT group_concat(failed_allocs) FROM runs")" "3,3"
expect_eq "$n: trace_null_results" "$(tq $n trace_null_results)" 2
report $n 0
lacks $n.report.out "peak live -" "$n: no negative peak in the report"

n=align-absurd
alloctrace_all $n 0 0 0 0 2
has $n.dump.out "^1 1000 posix_memalign 3 64 = 0x0 .*err=22" "$n: dump shows the refused alignment"
replay $n 0
# alignment 3, 24 (posix_memalign: EINVAL), 2^40, 2^63 and 2^64-1 (no memory)
# fail everywhere; aligned_alloc(48, 100) is the C library's choice.
for a in glibc pool; do
	f=$(q $n.db "SELECT failed_allocs FROM runs WHERE allocator='$a'")
	[ "${f:-0}" -ge 5 ] && [ "$f" -le 6 ] && ok "$n: $a failed_allocs $f" || fail "$n: $a failed_allocs '$f'"
done
expect_eq "$n: runs ok" "$(q $n.db "SELECT group_concat(status) FROM runs")" "ok,ok"
report $n 0

# ---- pointers the trace never returned ------------------------------------------
n=realloc-unknown
alloctrace_all $n 0 0 0 0 2
has $n.info.out "^unknown frees +1 " "$n: info counts the realloc of an unknown pointer"
replay $n 0
runs_ok $n 5
expect_eq "$n: unknown_reallocs" "$(tq $n unknown_reallocs)" 1
has $n.replay.err "trace tr/$n.zst: skipped 0 free.*replayed 1 realloc\(s\) of such pointers as realloc\(NULL, n\)" \
	"$n: stderr says it replayed realloc(NULL)"
report $n 0

n=free-unknown
alloctrace_all $n 0 0 0 0 2
has $n.info.out "^unknown frees +2 " "$n: info counts both unknown frees"
replay $n 0
runs_ok $n 2
expect_eq "$n: skipped_unknown_frees" "$(tq $n skipped_unknown_frees)" 2
expect_eq "$n: calls (events minus skipped)" "$(tq $n "events || ' ' || calls")" "4 2"
has $n.replay.err "trace tr/$n.zst: skipped 2 free\(s\) of pointers it never returned" "$n: stderr counts the skips"
has $n.replay.out "note: 2 free\(s\) of pointers the trace never returned skipped" "$n: the table notes them"
report $n 0

n=double-free
alloctrace_all $n 0 0 0 0 2
has $n.info.out "^unknown frees +1 " "$n: the second free is of an unknown pointer"
replay $n 0
runs_ok $n 4
expect_eq "$n: skipped_unknown_frees" "$(tq $n skipped_unknown_frees)" 1
has $n.replay.err "skipped 1 free\(s\)" "$n: stderr counts the skip"
report $n 0

n=addr-twice
alloctrace_all $n 0 0 0 0 2
replay $n 0
runs_ok $n 5
expect_eq "$n: lost_blocks" "$(tq $n lost_blocks)" 1
has $n.replay.err "1 address\(es\) returned again while live" "$n: stderr names the lost block"
report $n 0

# ---- sequence numbers ----------------------------------------------------------------
# Duplicates and a thread going backwards are corrupt (SPEC 4, 7.3): the
# events before the problem are read, dumped, counted and replayed.
for n in seq-duplicate seq-backwards; do
	alloctrace_all $n 3 2 3 3 2
	has $n.info.out "^status +corrupt at byte offset [0-9]+: " "$n: info names the offset"
	has $n.verify.out "^tr/$n.zst: corrupt at byte offset [0-9]+: .*seq" "$n: verify names file, offset, seq"
	has $n.dump.err "^alloctrace: tr/$n.zst: corrupt at byte offset [0-9]+: " "$n: dump names file and offset"
	has $n.stats.err "^alloctrace: tr/$n.zst: corrupt at byte offset [0-9]+: " "$n: stats names file and offset"
	replay $n 3 # AR_EXIT_WARN: only the valid prefix replayed
	has $n.replay.err "trace tr/$n.zst is corrupt; replaying its valid prefix" "$n: replay says it used the prefix"
	expect_eq "$n: traces.status" "$(tq $n status)" corrupt
	report $n 0
done
expect_eq "seq-backwards: events before the bad block" "$(tq seq-backwards events)" 3
has seq-backwards.verify.out "seq 5 does not follow its previous block's 12" "seq-backwards: verify says which seqs"

n=seq-huge
alloctrace_all $n 0 0 0 0 2
has $n.dump.out "realloc 0x10001000 64 = 0x10002000 .*seq2=18446744073709551615" "$n: seq2 = 2^64-1 read back"
has $n.info.out "^peak live bytes +64 " "$n: the realloc result at seq2 2^64-1 counts as live"
replay $n 0
runs_ok $n 2
expect_eq "$n: peak_live_bytes" "$(tq $n peak_live_bytes)" 64
report $n 0

# ---- threads and stacks ----------------------------------------------------------------
n=thread-undeclared
alloctrace_all $n 0 0 0 0 2
has $n.info.out "^threads +3$" "$n: three threads with events"
has $n.dump.out "^2 4000001000 free 0x10001000" "$n: thread index 4000000000 dumped by its tid"
replay $n 0
runs_ok $n 6
expect_eq "$n: threads" "$(tq $n threads)" 3
report $n 0

n=threads-declared
alloctrace_all $n 0 0 0 0 2
has $n.info.out "^threads +100000$" "$n: info counts the declared threads"
replay $n 0
runs_ok $n 2
expect_eq "$n: replay threads (threads with events only)" "$(q $n.db "SELECT group_concat(threads) FROM runs")" "1,1"
report $n 0

n=threads-active
alloctrace_all $n 0 0 0 0 2
has $n.info.out "^threads +100000$" "$n: info counts them"
replay $n 2
has $n.replay.err "tr/$n.zst: cannot compile: .*100000 threads make heap calls.*at most 4096" \
	"$n: refused before starting a thread, with the limit"
expect_eq "$n: no runs stored" "$(q $n.db "SELECT count(*) FROM runs")" 0
report $n 2
has $n.report.err "holds no runs" "$n: allocreport says there is nothing"

n=stack-undefined
alloctrace_all $n 0 0 0 0 0
has $n.stacks.out "^1 stacks$" "$n: one defined stack listed"
has $n.stacks.out "^stack 1 \(1 events\)$" "$n: its use counted"
has $n.stacks.err "4 event\(s\) name a stack id the trace does not define" "$n: undefined ids counted apart"
has $n.stats.out "stack 4294967295 \(not defined in the trace\)" "$n: stats marks undefined sites"
has $n.dump.out "\(stack 2147483648 is not defined in the trace\)" "$n: dump --stacks marks them"
replay $n 0
runs_ok $n 8
report $n 0

# ---- time, lifecycle, emptiness ------------------------------------------------------------
n=time-backwards
alloctrace_all $n 0 0 0 0 2
has $n.dump.out "^4 1000 free 0x10002000 t=0$" "$n: time 0 after 2 hours read back"
replay $n 0
runs_ok $n 6
report $n 0

n=after-exit
alloctrace_all $n 0 0 0 0 2
replay $n 0
runs_ok $n 4
report $n 0

# Impossible process figures (format 1.1, SPEC 7.4): read as written,
# never used by replay, and the reason says so; an allocator nobody has
# leaves the baseline on glibc and predicts nothing.
n=process-peak-below-start
alloctrace_all $n 0 0 0 0 2
replay $n 0
runs_ok $n 2
expect_eq "$n: no peak or start RSS used" "$(tq $n "recorded_peak_rss_bytes IS NULL AND recorded_start_rss_bytes IS NULL")" 1
expect_eq "$n: the reason" "$(tq $n "recorded_reason LIKE '%peak RSS is below its start%'")" 1
expect_eq "$n: no RSS predicted, none negative" "$(q $n.db "SELECT count(*) FROM runs WHERE predicted_peak_rss_bytes IS NOT NULL OR predicted_time_ns < 0")" 0
report $n 0
n=process-recorder-over-peak
alloctrace_all $n 0 0 0 0 2
replay $n 0
runs_ok $n 2
expect_eq "$n: no recorded allocator" "$(tq $n "recorded_allocator IS NULL AND recorded_recorder_bytes IS NULL")" 1
expect_eq "$n: the reason names the library and the recorder figure" \
	"$(tq $n "recorded_reason LIKE '%/nonexistent/libnosuch.so.1%' AND recorded_reason LIKE '%not below the peak%'")" 1
expect_eq "$n: nothing predicted" "$(q $n.db "SELECT count(*) FROM runs WHERE predicted_peak_rss_bytes IS NOT NULL OR predicted_time_ns IS NOT NULL")" 0
report $n 0

n=empty
alloctrace_all $n 0 0 0 0 2
has $n.info.out "^events +0$" "$n: no events"
replay $n 0
runs_ok $n 0
report $n 0

n=header-only
alloctrace_all $n 3 1 3 3 2
has $n.verify.out "truncated at byte offset [0-9]+: .*no footer" "$n: verify says truncated and where"
has $n.dump.err "truncated after 0 events" "$n: dump notes the truncation"
replay $n 3 # a truncated trace: its valid prefix (no events) replayed
expect_eq "$n: traces.status" "$(tq $n status)" truncated
runs_ok $n 0
report $n 0

# Escape sequences in the header's strings reach no terminal: info, the
# replay's table and allocreport show them as \xNN.
n=escape-strings
alloctrace_all $n 0 0 0 0 2
has $n.info.out '^program +evil \\x1b\]0;owned\\x07\\x1b\[2J\\x0d\\x0a$' "$n: info shows the command line escaped"
replay $n 0
report $n 0
for f in $n.info.out $n.replay.out $n.replay.err $n.report.out; do
	if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' $f; then fail "$n: control bytes in $f"; else ok "$n: no control bytes in $f"; fi
done
has $n.report.out 'program: evil \\x1b' "$n: allocreport shows the program escaped"

# Millions of live blocks in a few kilobytes: the tools' memory follows the
# live set (docs/RESULTS.md), so they finish under the limit above, and under
# a tenth of it they stop with a clean "out of memory" (exit 2), no signal.
n=live-millions
alloctrace_all $n 0 0 0 0 2
expect_eq "$n: dump lines" "$(wc -l <$n.dump.out)" "$LIVE"
rm -f $n.dump.out
replay $n 0
runs_ok $n "$LIVE"
expect_eq "$n: peak_live_blocks" "$(tq $n peak_live_blocks)" "$LIVE"
report $n 0
if [ "$LIVE" -ge 1000000 ]; then
	MEM_KB=250000
	run $n.small-info "$AT" info "tr/$n.zst"
	expect_eq "$n: info in 250 MB exit" $rc 2
	has $n.small-info.err "^alloctrace: tr/$n.zst: out of memory tracking [0-9]+ live objects" "$n: info says why"
	run $n.small-stats "$AT" stats "tr/$n.zst"
	expect_eq "$n: stats in 250 MB exit" $rc 2
	has $n.small-stats.err "^alloctrace: tr/$n.zst: out of memory tracking" "$n: stats says why"
	rm -rf "$ALLOCRR_CACHE_DIR"
	run $n.small-replay "$AR" "tr/$n.zst" -a glibc --repeat 1 --db small.db
	expect_eq "$n: allocreplay in 250 MB exit" $rc 2
	has $n.small-replay.err "tr/$n.zst: cannot compile: .*(memory|slots)" "$n: allocreplay says why"
	run $n.small-dump "$AT" verify "tr/$n.zst"
	expect_eq "$n: verify in 250 MB (streams, no live set)" $rc 0
fi

echo "tally hostile: $ncases traces, $runs tool runs"
finish
