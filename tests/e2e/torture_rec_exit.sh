#!/usr/bin/env bash
# Recorder torture: a worker thread ends the process (exit(0) or _exit(3))
# while five other threads are in the middle of allocating. The status must
# be the program's, the trace complete (the recorder closes it on both
# paths), and each worker's mallocs in the trace exactly the first N of its
# sequence, with N at least what it had finished when exit was called (the
# program's snapshot in a shared file): nothing done before the exit is
# lost, nothing is out of order. What threads do after the close began is
# not recorded (by design) and reported as events_after_close.
# ALLOCRR_TORTURE_SCALE multiplies the number of rounds.
. "$(dirname "$0")/../progs/rec_testlib.sh"
S=${ALLOCRR_TORTURE_SCALE:-1}
TP=$P/torture_exit TC=$P/torture_check
for f in "$TP" "$TC"; do [ -x "$f" ] || { echo "missing $f: run make first"; exit 77; }; done

rounds=$((10 * S)) bad_status=0 not_complete=0 bad_seq=0 checked=0 after=0 lost=0
for i in $(seq 1 $rounds); do
	mode=exit want=0
	[ $((i % 2)) = 0 ] && mode=_exit want=3
	opts=""
	[ $((i % 5)) = 0 ] && opts=--stacks
	n=$((5000 + RANDOM % 30000))
	rm -f t.zst sh.bin
	"$REC" -q $opts -o t.zst "$TP" sh.bin 6 $n $mode >out.txt 2>err.txt
	rc=$?
	if [ $rc != $want ] || [ -s out.txt ] || [ -s err.txt ]; then
		bad_status=$((bad_status + 1)); echo "round $i ($mode $opts): status $rc, output: $(cat out.txt err.txt)"
	fi
	v=$(verify_rc t.zst)
	[ "$v" = 0 ] || { not_complete=$((not_complete + 1)); echo "round $i ($mode $opts): verify $v"; }
	if ! "$TC" seq t.zst sh.bin 0 >seq.txt 2>seq.err; then
		bad_seq=$((bad_seq + 1)); echo "round $i ($mode $opts):"; cat seq.err | head -5
	fi
	checked=$((checked + $(awk '/^worker/{s+=$8} END{print s+0}' seq.txt)))
	after=$((after + $(awk '/^lost/{print $2}' seq.txt)))
	lost=$((lost + $(awk '/^worker/ && $8 > $4 {s += $8 - $4} END{print s+0}' seq.txt)))
done
expect_eq "status and output like the program's ($rounds rounds)" $bad_status 0
expect_eq "traces not complete" $not_complete 0
expect_eq "traces missing a malloc done before exit, or out of order" $bad_seq 0
expect_eq "mallocs done before exit and missing" $lost 0
echo "tally torture_rec_exit scale=$S rounds=$rounds threads=$((6 * rounds)) events_checked=$checked events_after_close=$after incomplete=$not_complete events_lost=$lost"
finish
