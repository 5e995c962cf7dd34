#!/usr/bin/env bash
# Event times follow CLOCK_MONOTONIC with either event clock (the TSC fit by
# default where the CPU has a stable TSC, clock_gettime with
# ALLOCRR_CLOCK=monotonic): a shell that waits 300 ms for a child between its
# own heap calls shows a gap of at least 300 ms in its trace (sleep never
# returns early), times never run backwards within a thread, and the whole
# trace stays within the footer's end time.
. "$(dirname "$0")/../progs/rec_testlib.sh"

for clock in default monotonic; do
	rm -f ./*.zst
	if [ $clock = monotonic ]; then export ALLOCRR_CLOCK=monotonic; else unset ALLOCRR_CLOCK; fi
	"$REC" -q -o "sh.%p.zst" /bin/sh -c 'sleep 0.3; echo done' >out.txt
	expect_eq "$clock: exit status" $? 0
	# The shell's own trace is the one whose program is /bin/sh.
	f=$(for t in ./*.zst; do "$AT" info "$t" | grep -q '^program *sh\|^program */bin/sh' && echo "$t"; done | head -1)
	[ -n "$f" ] || { fail "$clock: no trace of the shell"; continue; }
	expect_eq "$clock: verify" "$(verify_rc "$f")" 0
	"$AT" dump "$f" --extra | awk '
		{ for (i = 1; i <= NF; i++) if ($i ~ /^t=/) t = substr($i, 3) + 0
		  if (($2 in last) && t < last[$2]) back++
		  if (n++ && t - prev > gap) gap = t - prev
		  last[$2] = t; prev = t; end = t }
		END { printf "%d %d %d\n", gap, back + 0, end }' >gap.txt
	read -r gap back end <gap.txt
	[ "$gap" -ge 300000000 ] && ok "$clock: largest gap ${gap} ns covers the 300 ms wait" ||
		fail "$clock: largest gap between heap calls is $gap ns, expected >= 300000000"
	expect_eq "$clock: times running backwards within a thread" "$back" 0
	[ "$end" -lt 60000000000 ] && ok "$clock: last event at $end ns" || fail "$clock: last event at $end ns"
done
finish
