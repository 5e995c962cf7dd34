#!/usr/bin/env bash
# Dying of signals and unusual exits: allocrec returns the program's status
# (128+signal), what the program sees of its signal dispositions is what it
# installed, its output is unchanged, and the trace stays readable (verify
# exit 0 or 1, never 2). With a default fatal action (SIGTERM, SIGSEGV,
# SIGABRT; also reached from the program's own SA_RESETHAND handler that
# raises the signal again), _exit, and exit from a thread the recorder
# closes the trace, so it is complete; SIGKILL cannot be caught, but the time-based flush bounds
# the loss: allocations made 2 s before the kill are on disk. SIGTERM to
# a busy multi-threaded program leaves a complete trace too. A SIGTERM
# that lands while the recorder closes a child's trace in _exit (a process
# pool's terminate()) waits for that close: the trace is complete, the child
# exits 0 or dies of SIGTERM; so does one that lands while a fork child's
# trace is being opened: complete, or no file when the child had not yet
# returned from fork.
. "$(dirname "$0")/../progs/rec_testlib.sh"

for mode in term handler reraise ignore segv abort kill; do
	mkdir $mode && cd $mode
	"$REC" -q "$P/rec_signal" $mode >out.txt 2>err.txt
	rc=$?
	(ulimit -c 0; "$P/rec_signal" $mode >bare.txt 2>/dev/null); bare=$?
	expect_eq "$mode: exit status like unrecorded" $rc $bare
	expect_eq "$mode: output like unrecorded" "$(cat out.txt)" "$(cat bare.txt)"
	f=$(one_trace "rec_signal.*.zst")
	v=$(verify_rc $f)
	[ "$v" -le 1 ] && ok "$mode: verify $v" || fail "$mode: verify $v"
	[ $mode = kill ] || expect_eq "$mode: trace complete" "$v" 0
	n=$("$AT" dump $f 2>/dev/null | cut -d' ' -f3- | grep -c '^malloc 4444 ')
	expect_eq "$mode: the 1000 allocations are in the trace" "$n" 1000
	cd ..
done
expect_eq "term status" "$(cd term && "$REC" -q "$P/rec_signal" term >/dev/null 2>&1; echo $?)" 143

# SIGTERM landing in one of four threads the writer holds back (each waits
# for a buffer): the trace is complete, no thread is given up on, and each
# thread loses at most the one call it held (counted as dropped). The same
# with the program's own handler calling exit(3), which sees the sender's
# siginfo even when the signal waited for the end of an append.
for mode in busy busy-exit; do
	mkdir $mode && cd $mode
	"$REC" -q "$P/rec_signal" $mode >out.txt 2>err.txt
	expect_eq "$mode: status" $? $([ $mode = busy ] && echo 143 || echo 3)
	f=$(one_trace "rec_signal.*.zst")
	expect_eq "$mode: trace complete" "$(verify_rc $f)" 0
	expect_eq "$mode: recorder warnings" "$(cat err.txt)" ""
	expect_eq "$mode: the 1000 allocations are in the trace" "$(dump3 $f | grep -c '^malloc 4444 ')" 1000
	dropped=$("$AT" info $f | awk '/^dropped events/ { n = $3 } END { print n + 0 }')
	[ "$dropped" -le 4 ] && ok "$mode: dropped $dropped (at most one a thread)" ||
		fail "$mode: dropped $dropped, more than one a thread"
	cd ..
done

mkdir _exit && cd _exit
"$REC" -q "$P/rec_exit" _exit; expect_eq "_exit: status" $? 5
f=$(one_trace "rec_exit.*.zst")
expect_eq "_exit: verify" "$(verify_rc $f)" 0
expect_eq "_exit: allocations" "$(dump3 $f | grep -c '^malloc 7777 ')" 500
cd ..
mkdir thread && cd thread
"$REC" -q "$P/rec_exit" thread; expect_eq "exit from a thread: status" $? 4
f=$(one_trace "rec_exit.*.zst")
expect_eq "exit from a thread: verify" "$(verify_rc $f)" 0
expect_eq "exit from a thread: allocations" "$(dump3 $f | grep -c '^malloc 7777 ')" 500
expect_eq "exit from a thread: its malloc" "$(dump3 $f | grep -c '^malloc 99 ')" 1
cd ..
mkdir terminated && cd terminated
"$REC" -q "$P/rec_exit" terminated 60; expect_eq "terminated children: each exited 0 or died of SIGTERM" $? 0
n=0 whole=0 all=0
for f in rec_exit.*.zst; do # the parent's and its children's: 500 allocations each, all on disk
	n=$((n + 1))
	[ "$(verify_rc $f)" = 0 ] && whole=$((whole + 1)) || echo "  $f: $("$AT" verify $f 2>&1 | tail -1)"
	[ "$(dump3 $f | grep -c '^malloc 7777 ')" = 500 ] && all=$((all + 1))
done
expect_eq "terminated children: traces (and the parent's)" $n 61
expect_eq "terminated children: complete traces" $whole 61
expect_eq "terminated children: traces with all 500 allocations" $all 61
cd ..
mkdir started && cd started
"$REC" -q "$P/rec_exit" started 300; expect_eq "children terminated as they start: each died of SIGTERM" $? 0
bad=0
for f in rec_exit.*.zst; do
	[ "$(verify_rc $f)" = 0 ] || { bad=$((bad + 1)); echo "  $f: $("$AT" verify $f 2>&1 | tail -1)"; }
done
expect_eq "children terminated as they start: traces not complete" $bad 0
cd ..
finish
