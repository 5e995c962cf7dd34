#!/usr/bin/env bash
# Recorder torture: dlopen/dlclose loops. Three threads each load, use and
# unload four copies of a library that allocates (tests/progs/rec_dllib.c)
# hundreds of times, round-robin, so the same and different libraries come
# and go concurrently, while another thread runs every heap function. The
# trace must hold exactly the library's and the thread's calls; with
# --stacks every library malloc must have a stack whose innermost frame lies
# in one of the libraries' reported modules.
# ALLOCRR_TORTURE_SCALE multiplies the number of rounds.
. "$(dirname "$0")/../progs/rec_testlib.sh"
S=${ALLOCRR_TORTURE_SCALE:-1}
TP=$P/torture_dl TC=$P/torture_check
for f in "$TP" "$TC" "$P/librec_dllib.so"; do [ -x "$f" ] || [ -f "$f" ] || { echo "missing $f: run make first"; exit 77; }; done
libs=()
for i in 0 1 2 3; do cp "$P/librec_dllib.so" "$W/dl_$i.so"; libs+=("$W/dl_$i.so"); done

runs=0 dlopens=0 events=0 lost=0
for opts in "" --stacks; do
	name=plain; [ -n "$opts" ] && name=stacks
	"$REC" -q $opts -o $name.zst "$TP" $((300 * S)) 3 "${libs[@]}" >$name.out 2>$name.err
	expect_eq "$name: exit status" $? 0
	expect_eq "$name: nothing on stderr" "$(cat $name.err)" ""
	expect_eq "$name: verify" "$(verify_rc $name.zst)" 0
	"$TC" count $name.zst >$name.chk 2>&1
	if diff <(grep -E '^op |^dllib (malloc|free)' $name.out) <(grep -E '^op |^dllib (malloc|free)' $name.chk) >diff.txt; then
		ok "$name: the library's $(awk '/^dllib malloc/{print $3}' $name.out) mallocs and frees and the mixer's calls, exactly"
	else fail "$name: calls differ (program < > trace):"; cat diff.txt; fi
	expect_eq "$name: dlopen calls" "$(awk '/^info dlopen/{print $3}' $name.out)" $((900 * S))
	expect_eq "$name: dropped" "$(awk '/^info dropped/{print $3}' $name.chk)" 0
	expect_eq "$name: order errors" "$(awk '/^info order_errors/{print $3}' $name.chk)" 0
	if [ -n "$opts" ]; then
		expect_eq "$name: library mallocs with a stack in a library module" \
			"$(awk '/^dllib stacked/{print $3}' $name.chk)" "$(awk '/^dllib malloc/{print $3}' $name.out)"
		m=$("$CHECK" info $name.zst | grep -c '^module .*/dl_[0-3]\.so ')
		[ "$m" -ge 1 ] && ok "$name: $m library modules reported" || fail "$name: no library module reported"
	fi
	ev=$(awk '/^op |^dllib (malloc|free)/{s+=$3} END{print s}' $name.out)
	runs=$((runs + 1)) dlopens=$((dlopens + $(awk '/^info dlopen/{print $3}' $name.out))) events=$((events + ev))
	lost=$((lost + ev - $(awk '/^op |^dllib (malloc|free)/{s+=$3} END{print s}' $name.chk)))
done
echo "tally torture_rec_dl scale=$S runs=$runs dlopen_dlclose=$dlopens events_checked=$events events_lost=$lost"
finish
