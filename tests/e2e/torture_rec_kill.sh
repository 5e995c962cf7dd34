#!/usr/bin/env bash
# Recorder torture: SIGKILL at random moments. A program allocates without
# end (three threads in bursts, one thread once every 20 ms, which only the
# writer's steal from idle threads brings to disk) and records its progress
# in a shared file every millisecond; it is killed with SIGKILL after a
# random delay. Each time the trace must be readable (verify 0 or 1, never
# 2), each thread's mallocs in it exactly the first N of its sequence (a
# prefix: no gap, nothing made up), and nothing older than the documented
# bound missing: docs/RECORDER.md promises an event on disk ~1.5 x the flush
# age after it happened (300 ms at the default 200 ms) plus the time to
# compress a backlog. We check 1.5 x flush age + 700 ms of margin (machine
# load, other users of the 2 cores) against the program's own progress
# records and count violations; the largest loss seen is reported.
# ALLOCRR_TORTURE_SCALE multiplies the number of kills.
. "$(dirname "$0")/../progs/rec_testlib.sh"
S=${ALLOCRR_TORTURE_SCALE:-1}
TP=$P/torture_kill TC=$P/torture_check
for f in "$TP" "$TC"; do [ -x "$f" ] || { echo "missing $f: run make first"; exit 77; }; done
FLUSH_MS=200
BOUND_MS=$((FLUSH_MS * 3 / 2 + 700))

kills=$((12 * S)) unreadable=0 truncated=0 complete=0 notrace=0 bad_prefix=0 violations=0 checked=0 lost=0 max_loss=0
for i in $(seq 1 $kills); do
	rm -f t.zst sh.bin
	# One kill in six lands early, in the recorder's start-up.
	if [ $((i % 6)) = 0 ]; then d=$((RANDOM % 30)); else d=$((100 + RANDOM % 1000)); fi
	ALLOCRR_OUTPUT=$W/t.zst ALLOCRR_FLUSH_MS=$FLUSH_MS LD_PRELOAD=$B/lib/liballocrr-rec.so "$TP" sh.bin 4 &
	pid=$!
	sleep "$(printf '%d.%03d' $((d / 1000)) $((d % 1000)))"
	kill -9 $pid
	wait $pid 2>/dev/null
	if [ ! -e t.zst ]; then notrace=$((notrace + 1)); continue; fi
	v=$(verify_rc t.zst)
	case $v in
	0) complete=$((complete + 1)) ;;
	1) truncated=$((truncated + 1)) ;;
	*) unreadable=$((unreadable + 1)); echo "kill $i after ${d} ms: verify $v ($(stat -c %s t.zst) bytes)"; continue ;;
	esac
	[ -e sh.bin ] || continue
	if ! "$TC" seq t.zst sh.bin $BOUND_MS >seq.txt 2>seq.err; then
		# killed before the program wrote its progress file's header (a
		# kill in the first milliseconds): nothing to compare with
		grep -q "not a torture shared file" seq.err && continue
		bad_prefix=$((bad_prefix + 1)); echo "kill $i after ${d} ms:"; head -5 seq.err
	fi
	vi=$(awk '/^violations/{s=$2} END{print s+0}' seq.txt)
	[ "${vi:-0}" -gt 0 ] && { echo "kill $i after ${d} ms: $(cat seq.err)"; violations=$((violations + vi)); }
	checked=$((checked + $(awk '/^worker/{s+=$4} END{print s+0}' seq.txt)))
	lost=$((lost + $(awk '/^lost/{s=$2} END{print s+0}' seq.txt)))
	max_loss=$(awk -v a="$max_loss" '/^max_loss_ms/ && $2 > a {a = $2} END{print a}' seq.txt)
done
expect_eq "unreadable traces after SIGKILL ($kills kills)" $unreadable 0
expect_eq "traces that are not a prefix of what the program did" $bad_prefix 0
expect_eq "mallocs older than ${BOUND_MS} ms missing" $violations 0
echo "tally torture_rec_kill scale=$S kills=$kills truncated=$truncated complete=$complete no_trace=$notrace unreadable=$unreadable events_checked=$checked events_lost=$lost max_loss_ms=$max_loss bound_ms=$BOUND_MS violations=$violations"
finish
