#!/usr/bin/env bash
# rec_fd_race.sh — the shim's own files never take a descriptor number the
# program is juggling. A shell's `cmd </file` is close(0) then dup2(3, 0);
# the recorder's writer thread opening a file (the registry reading the
# allocator's ELF file at the first block) between the two got number 0,
# the shell's dup2 replaced it, and the writer's close then closed the
# shell's standard input: dash reading its own smaps under allocrec read
# nothing in 2-3 runs of 100 (perf: the writer's openat returned 0). The
# race needs the two threads to meet, so the check is repeated; no run may
# lose its input. No timing is asserted.
. "$(dirname "$0")/../progs/rec_testlib.sh"
SH=/bin/dash
[ -x $SH ] || SH=/bin/sh
RUNS=${REC_FD_RACE_RUNS:-150}
lost=0 bad=0
for i in $(seq "$RUNS"); do
	rm -f in.txt t.zst
	"$REC" -q --no-follow -o t.zst $SH -c \
		'while IFS= read -r l; do printf "%s\n" "$l"; done </proc/$$/smaps >in.txt' ||
		{ fail "run $i: allocrec $SH exit $?"; break; }
	[ -s in.txt ] || { lost=$((lost + 1)); echo "run $i: the shell read nothing from its redirected input"; }
	[ "$(verify_rc t.zst)" = 0 ] || bad=$((bad + 1))
done
expect_eq "runs whose shell lost its redirected standard input (of $RUNS)" "$lost" 0
expect_eq "runs whose trace does not verify (of $RUNS)" "$bad" 0

# The same juggling done by the program's own threads while the shim's
# writer runs: a C program (tests/progs) would add nothing dash does not;
# the dup2 onto a number the shim keeps is rec_daemon_pipes.sh's.
finish
