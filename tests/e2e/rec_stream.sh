#!/usr/bin/env bash
# Streaming a trace to another process (issue 16 item 3): `allocrec -o -
# PROG | cat > t.zst` and `allocrec -o FIFO PROG` with a reader. The stream
# is a complete trace (verify exits 0); PROG's own standard output goes to
# allocrec's standard error with -o -; a FIFO nobody reads is refused
# before PROG runs (exit 2, the FIFO named).
#
# A slow reader must never make the program wait: the reader here reads
# nothing until PROG has made all its heap calls (rec_paced creates the
# file REC_PACED_DONE names then; the reader waits for that file, not for
# a time). The pipe holds 1 MiB (the shim asks for it) and the recorder 4
# buffers per thread, far below the program's 8 million calls (about 4 MB of
# trace), so it must drop, and it must count:
# recorded + dropped (the footer's dropped_events) = the calls the
# independent counting shim (librec_count.so) saw in the same process, less
# 1-3 calls glibc makes for the recorder's writer thread (rec_testlib.sh's
# run_case explains them). If the program waited for the reader instead,
# the reader would never start and the test would hang (the harness's
# timeout), not pass.
. "$(dirname "$0")/../progs/rec_testlib.sh"

json_num() { "$AT" info "$1" --json | grep -o "\"$2\":[0-9]*" | cut -d: -f2; }
counted() { # calls the counting shim saw in the traced process (pid of trace $2)
	local pid; pid=$("$AT" info "$2" --json | sed 's/.*"pid":\([0-9]*\),.*/\1/')
	awk -v p="$pid" '$1 == p {for (i = 3; i <= NF; i += 2) s += $i} END {print s + 0}' "$1"
}
# check_counts WHAT TRACE COUNTS [AFTER_STOP]: recorded + dropped (+ calls
# after a limit stop) = counted less 1-3.
check_counts() {
	local ev dr cnt d after=${4:-0}
	ev=$(json_num "$2" events); dr=$(json_num "$2" dropped_events); cnt=$(counted "$3" "$2")
	d=$((cnt - ev - dr - after))
	[ $d -ge 1 ] && [ $d -le 3 ] && ok "$1: $ev recorded + $dr dropped + $after after a stop = counted $cnt less $d of the writer thread's" ||
		fail "$1: recorded $ev + dropped $dr + after a stop $after = $((ev + dr + after)), the counting shim saw $cnt (want 1-3 more)"
}
counting() { env LD_PRELOAD=$P/librec_count.so REC_COUNT_OUT=$W/$1.counts "${@:2}"; }
# A reader that takes nothing until FILE exists, then everything.
slow_reader() {
	while [ ! -e "$1" ]; do sleep 0.05; done
	exec cat
}

PROG=("$P/rec_paced" 2 5 50000 0) # 2 threads x 5 rounds x 50000 (malloc + free)
"${PROG[@]}" >bare.out 2>bare.err
bare_rc=$?
# For the slow readers: 8 million calls, about 4 MB of trace, well past the
# 1 MiB pipe the shim asks for and the 4 buffers per thread.
BIG=("$P/rec_paced" 2 10 200000 0)

# ---- 1. -o - into a pipe whose reader keeps up -------------------------------------------
counting pipe "$REC" -o - "${PROG[@]}" 2>pipe.err | cat >pipe.zst
expect_eq "-o -: exit status" "${PIPESTATUS[0]}" $bare_rc
expect_eq "-o -: verify (complete)" "$(verify_rc pipe.zst)" 0
grep -qF "$(cat bare.out)" pipe.err && ok "-o -: the program's output went to standard error" ||
	fail "-o -: program output not on stderr: $(cat pipe.err)"
grep -q "^allocrec: -o -: the trace goes to standard output; the program's own standard output goes to standard error" pipe.err &&
	ok "-o -: said once" || fail "-o -: no note: $(cat pipe.err)"
check_counts "-o -" pipe.zst pipe.counts
ev=$(json_num pipe.zst events)
grep -q "^allocrec: (standard output): $ev events, 3 threads, $(stat -c %s pipe.zst) bytes streamed" pipe.err &&
	ok "-o -: the summary gives the stream's events and bytes" || fail "-o -: summary: $(cat pipe.err)"
expect_eq "-o -: no trace file written besides the stream" "$(ls | grep -c '\.zst$')" 1
"$REC" -q -o - "${PROG[@]}" 2>q.err | cat >q.zst
expect_eq "-o - -q: the program's output alone on stderr" "$(cat q.err)" "$(cat bare.out)"

# ---- 2. -o FIFO with a reader that keeps up ----------------------------------------------
mkfifo f1
cat f1 >fifo.zst &
rpid=$!
# the reader must have the FIFO open before allocrec looks: open a write end
# here (blocks until cat opened its end), which also keeps cat from an EOF
exec 6>f1
counting fifo "$REC" -o f1 "${PROG[@]}" >fifo.out 2>fifo.err
rc=$?
exec 6>&-
wait $rpid
expect_eq "-o FIFO: exit status" $rc $bare_rc
cmp -s bare.out fifo.out && ok "-o FIFO: same stdout" || fail "-o FIFO: stdout differs"
expect_eq "-o FIFO: verify (complete)" "$(verify_rc fifo.zst)" 0
check_counts "-o FIFO" fifo.zst fifo.counts
grep -q "^allocrec: $W/f1: .* events, 3 threads, $(stat -c %s fifo.zst) bytes streamed\|^allocrec: f1: .* events, 3 threads, $(stat -c %s fifo.zst) bytes streamed" fifo.err &&
	ok "-o FIFO: summary" || fail "-o FIFO: summary: $(cat fifo.err)"

# ---- 3. a FIFO nobody reads: refused before the program runs ------------------------------
mkfifo f2
"$REC" -o f2 "${PROG[@]}" >none.out 2>none.err
expect_eq "-o FIFO without reader: exit status" $? 2
expect_eq "-o FIFO without reader: the program did not run" "$(cat none.out)" ""
grep -q "^allocrec: f2: no process reads this FIFO.*start its reader first" none.err &&
	ok "-o FIFO without reader: says so, naming it" || fail "-o FIFO without reader: $(cat none.err)"

# the shim alone (ALLOCRR_OUTPUT naming that FIFO): one line, the program runs, no hang
LD_PRELOAD=$B/lib/liballocrr-rec.so ALLOCRR_OUTPUT=$W/f2 "$P/rec_paced" 1 1 100 0 >shim.out 2>shim.err
expect_eq "shim, FIFO without reader: the program's status" $? 0
grep -q "^allocrr: cannot open the FIFO $W/f2 for the trace: no process reads it" shim.err &&
	ok "shim, FIFO without reader: says so" || fail "shim, FIFO without reader: $(cat shim.err)"

# ---- 4. a slow reader: the program never waits, drops are counted ------------------------
"${BIG[@]}" >bigbare.out
# -o -: the reader is the pipeline's other end.
counting slowpipe env REC_PACED_DONE=$W/done1 "$REC" -o - "${BIG[@]}" 2>slowpipe.err |
	slow_reader "$W/done1" >slowpipe.zst
expect_eq "slow reader, -o -: exit status" "${PIPESTATUS[0]}" $bare_rc
expect_eq "slow reader, -o -: verify (complete)" "$(verify_rc slowpipe.zst)" 0
dr=$(json_num slowpipe.zst dropped_events)
[ "${dr:-0}" -gt 0 ] && ok "slow reader, -o -: $dr events dropped, not waited for" ||
	fail "slow reader, -o -: nothing dropped (the program waited for its reader?)"
check_counts "slow reader, -o -" slowpipe.zst slowpipe.counts
grep -q "^allocrec: (standard output): $dr events could not be recorded: the stream's reader was slower" slowpipe.err &&
	ok "slow reader, -o -: allocrec says how many" || fail "slow reader, -o -: summary: $(cat slowpipe.err)"
expect_eq "slow reader, -o -: allocrr printed nothing" "$(grep -c '^allocrr:' slowpipe.err)" 0
"$CHECK" check slowpipe.zst >/dev/null && ok "slow reader, -o -: SPEC order kept" || fail "slow reader: order check"

# -o FIFO: the reader has the FIFO open from the start and reads nothing
# until the program is done.
mkfifo f3
slow_reader "$W/done2" <f3 >slowfifo.zst &
rpid=$!
exec 6>f3
counting slowfifo env REC_PACED_DONE=$W/done2 "$REC" -o f3 "${BIG[@]}" >slowfifo.out 2>slowfifo.err
rc=$?
exec 6>&-
wait $rpid
expect_eq "slow reader, -o FIFO: exit status" $rc $bare_rc
cmp -s bigbare.out slowfifo.out && ok "slow reader, -o FIFO: same stdout" || fail "slow reader, -o FIFO: stdout differs"
expect_eq "slow reader, -o FIFO: verify (complete)" "$(verify_rc slowfifo.zst)" 0
dr=$(json_num slowfifo.zst dropped_events)
[ "${dr:-0}" -gt 0 ] && ok "slow reader, -o FIFO: $dr events dropped" || fail "slow reader, -o FIFO: nothing dropped"
check_counts "slow reader, -o FIFO" slowfifo.zst slowfifo.counts

# ---- 4b. a limit stop ends the stream there, complete; allocrec counts what came after ----
counting lim "$REC" --max-size 64K -o - "${PROG[@]}" 2>lim.err | cat >lim.zst
expect_eq "--max-size on a stream: exit status" "${PIPESTATUS[0]}" $bare_rc
expect_eq "--max-size on a stream: verify (complete)" "$(verify_rc lim.zst)" 0
expect_eq "--max-size on a stream: stopped" "$("$AT" info lim.zst --json | grep -o '"stopped":"[a-z-]*"')" '"stopped":"max-size"'
after=$(sed -n 's/^allocrec: (standard output): stopped at its --max-size limit; \([0-9]*\) heap calls after that.*/\1/p' lim.err)
[ "${after:-0}" -gt 0 ] && ok "--max-size on a stream: allocrec counts $after calls after the stop" ||
	fail "--max-size on a stream: summary: $(cat lim.err)"
check_counts "--max-size on a stream" lim.zst lim.counts "${after:-0}"

# ---- 5. the stream is a trace like any other ----------------------------------------------
"$B/bin/allocreplay" slowpipe.zst -a glibc --db "$W/r.db" >replay.out 2>replay.err
expect_eq "allocreplay reads a streamed trace with drops" $? 0

# ---- 6. children: only the first image streams --------------------------------------------
"$REC" -o - /bin/sh -c "\"$P/rec_paced\" 1 1 1000 0 >/dev/null; \"$P/rec_paced\" 1 1 1000 0" 2>kids.err | cat >kids.zst
expect_eq "children: the stream (sh) verifies" "$(verify_rc kids.zst)" 0
expect_eq "children: the stream is sh's" "$("$CHECK" info kids.zst | sed -n 's/^cmdline //p' | cut -c1-7)" "/bin/sh"
n=0
for t in rec_paced.*.zst; do
	[ -e "$t" ] || continue
	n=$((n + 1))
	expect_eq "children: $t verifies" "$(verify_rc "$t")" 0
done
expect_eq "children: the two rec_paced images wrote files" $n 2
grep -q "^rec_paced: 1 threads" kids.err && ok "children: their output on stderr too" || fail "children: $(cat kids.err)"

# ---- 7. the reader goes away: the program is not killed by SIGPIPE -----------------------
"$REC" -o - "${BIG[@]}" 2>gone.err | head -c 100 >/dev/null
expect_eq "reader gone: the program's exit status" "${PIPESTATUS[0]}" $bare_rc
grep -q "^allocrr: cannot write trace (standard output):.*Broken pipe" gone.err &&
	ok "reader gone: one allocrr line says why" || fail "reader gone: $(cat gone.err)"

# ---- 7b. a reader that takes nothing until the program has exited: the exit waits 10 s at most ----
# (the gate is created only after allocrec returned, so a program that waited
# for its reader would hang here)
{ "$REC" -o - "${BIG[@]}" 2>never.err; echo $? >never.rc; touch "$W/gate"; } | slow_reader "$W/gate" >never.zst
expect_eq "reader too slow at exit: the program's exit status" "$(cat never.rc)" $bare_rc
expect_eq "reader too slow at exit: the stream reads as truncated" "$(verify_rc never.zst)" 1
grep -q "^allocrr: the reader of the trace stream (standard output) did not take the rest of the trace within 10 s: .*without its footer" never.err &&
	ok "reader too slow at exit: one allocrr line says so" || fail "reader too slow at exit: $(cat never.err)"
grep -q "^allocrec: (standard output): the recorder did not close the stream" never.err &&
	ok "reader too slow at exit: allocrec says it" || fail "reader too slow at exit: summary: $(cat never.err)"

# ---- 8. usage --------------------------------------------------------------------------
"$REC" -o - --output-for x "$P/rec_seq" >/dev/null 2>usage.err
expect_eq "--output-for with -o -: usage error" $? 1
for opt in "--rotate 1M" --paused; do
	"$REC" $opt -o - "$P/rec_seq" >usage.out 2>usage.err
	expect_eq "$opt with -o -: usage error" $? 1
	grep -q "cannot go with a stream" usage.err && ok "$opt with -o -: says why" || fail "$opt with -o -: $(cat usage.err)"
	[ -s usage.out ] && fail "$opt with -o -: wrote a stream anyway" || ok "$opt with -o -: nothing streamed"
done
"$REC" --help | grep -q -- "'-' streams it to standard output" && ok "--help says -o -" || fail "--help lacks -o -"
finish
