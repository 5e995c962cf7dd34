#!/usr/bin/env bash
# Multi-threaded recording: cross-thread frees (every free after its
# allocation in sequence order, no address live twice), threads that exit
# early, thread names, and event counts.
. "$(dirname "$0")/../progs/rec_testlib.sh"

"$REC" -q "$P/rec_threads" >out.txt 2>err.txt
expect_eq "exit status" $? 0
expect_eq "program output" "$(cat out.txt)" "freed 60000 of 60000"
f=$(one_trace "rec_threads.*.zst")
expect_eq "verify" "$(verify_rc "$f")" 0
if "$CHECK" check "$f" >check.txt; then ok "sequence order: $(grep -E '^(events|errors)' check.txt | tr '\n' ' ')"
else fail "sequence order"; cat check.txt; fi
expect_eq "frees of unknown blocks" "$(awk '/^unknown_frees/{print $2}' check.txt)" 0
expect_eq "dropped events" "$(awk '/^dropped/{print $2}' check.txt)" 0
"$CHECK" info "$f" >info.txt
expect_eq "threads" "$(grep -c '^thread ' info.txt)" 14
for n in prod-0 prod-1 prod-2 cons-0 cons-1 early-0 early-7 rec_threads; do
	grep -q "name '$n'" info.txt && ok "thread $n named" || fail "no thread named $n"
done
# Early threads exited (exit seq recorded); main did not exit inside the trace.
expect_eq "early threads with an exit record" \
	"$(grep "name 'early-" info.txt | grep -vc ' exit 0 ')" 8
# Each producer: 20000 mallocs; the consumers freed them all.
mallocs=$("$AT" dump "$f" | awk '$3=="malloc" && $4>=16 && $4<216' | wc -l)
[ "$mallocs" -ge 60000 ] && ok "producer mallocs $mallocs >= 60000" || fail "producer mallocs $mallocs < 60000"
# Cross-thread: a free on a thread other than the allocating one.
cross=$("$AT" dump "$f" | awk '$3=="malloc"{own[$6]=$2} $3=="free" && ($4 in own){ if (own[$4]!=$2) c++; delete own[$4]} END{print c+0}')
[ "$cross" -ge 59000 ] && ok "cross-thread frees: $cross" || fail "cross-thread frees: $cross"
finish
