#!/usr/bin/env bash
# Recorder torture: the trace's file system fills up, or the trace hits
# RLIMIT_FSIZE (the kernel then sends SIGXFSZ, which kills by default, to
# the writing thread and fails the write with EFBIG). In every case the
# program must be unharmed (exit status and output as unrecorded), the
# recorder must say so once ("allocrr: ..."), and the trace on disk must be
# readable and marked incomplete (verify 1: no footer), or, when not even its
# header fits, not exist at all (never an unreadable file).
#   tmpfs      a 128 KiB tmpfs (skipped, with the reason, if mount fails;
#              the whole trace is 400-550 KB here, and once fitted 256 KiB)
#   fsize      ulimit -f 64: the writer thread's write fails with EFBIG
#   fsize0     ulimit -f 0: the header write, made on the program's main
#              thread at start-up, fails
#   fsize_fork ulimit -f 16: a forking parent whose trace fails; children
#              forked before that write and close their own traces, often on
#              their own thread at exit (no writer thread yet); children
#              forked after it inherit "recording stopped" and write none
# ALLOCRR_TORTURE_SCALE multiplies the rounds.
. "$(dirname "$0")/../progs/rec_testlib.sh"
S=${ALLOCRR_TORTURE_SCALE:-1}
TP=$P/torture_threads TF=$P/torture_fork
for f in "$TP" "$TF"; do [ -x "$f" ] || { echo "missing $f: run make first"; exit 77; }; done
ARGS=(4 8 10000)
"$TP" "${ARGS[@]}" >bare.txt 2>&1 || { fail "unrecorded run failed"; finish; }

# limited KB CMD...: run CMD under ulimit -f KB; stdout, stderr and status
# go to out.txt, err.txt, rc.txt through pipes (not limited files).
limited() {
	local kb=$1; shift
	{ { (ulimit -f "$kb"; exec "$@"); echo $? >rc.txt; } 2>&1 1>&3 | cat >err.txt; } 3>&1 | cat >out.txt
}

rounds=0 incomplete=0 no_file=0 warnings=0 skipped=""
# check NAME TRACE ERRNO_TEXT WANT(incomplete|nofile|either)
check() {
	local name=$1 t=$2 why=$3 want=$4
	expect_eq "$name: exit status" "$(cat rc.txt)" 0
	expect_eq "$name: output like unrecorded" "$(md5sum <out.txt)" "$(md5sum <bare.txt)"
	expect_eq "$name: one warning" "$(grep -c '^allocrr: ' err.txt)" 1
	expect_eq "$name: nothing else on stderr" "$(grep -vc '^allocrr: ' err.txt)" 0
	grep -q "$why" err.txt && ok "$name: the warning says '$why'" || fail "$name: warning: $(cat err.txt)"
	warnings=$((warnings + $(grep -c '^allocrr: ' err.txt)))
	if [ -e "$t" ]; then
		local v
		v=$(verify_rc "$t")
		expect_eq "$name: trace readable and marked incomplete (verify)" "$v" 1
		[ "$v" = 1 ] && incomplete=$((incomplete + 1))
		[ "$want" = nofile ] && fail "$name: a trace whose header did not fit exists"
	else
		[ "$want" = incomplete ] && fail "$name: no trace"
		[ "$want" = nofile ] && ok "$name: no trace file (its header did not fit)"
		no_file=$((no_file + 1))
	fi
	rounds=$((rounds + 1))
}

for r in $(seq 1 $S); do
	mkdir -p mnt
	if mount -t tmpfs -o size=128k allocrr-torture "$W/mnt" 2>mount.err; then
		{ "$REC" -q -o "$W/mnt/t.zst" "$TP" "${ARGS[@]}"; echo $? >rc.txt; } >out.txt 2>err.txt
		check "tmpfs $r" "$W/mnt/t.zst" "No space left on device" incomplete
		umount "$W/mnt"
	else
		skipped="tmpfs: cannot mount a tmpfs here ($(head -1 mount.err))"
	fi
	rm -f t.zst
	limited 64 "$REC" -q -o "$W/t.zst" "$TP" "${ARGS[@]}"
	check "fsize $r" t.zst "File too large" incomplete
	rm -f t.zst
	limited 0 "$REC" -q -o "$W/t.zst" "$TP" "${ARGS[@]}"
	check "fsize0 $r" t.zst "File too large" nofile
	rm -f t.zst
done

# A forking parent under a limit its trace exceeds: no child may hang or die,
# every trace left must be readable, every warning the limit's.
mkdir fork && cd fork
limited 16 "$REC" -q "$TF" 1 1 20
expect_eq "fsize_fork: exit status" "$(cat rc.txt)" 0
expect_eq "fsize_fork: no child hung or died" "$(grep -c '^child .* status 0$' out.txt)" 20
bad=0
for t in torture_fork.*.zst; do v=$(verify_rc "$t"); [ "$v" -le 1 ] || { bad=$((bad + 1)); echo "$t: verify $v"; }; done
expect_eq "fsize_fork: unreadable traces" $bad 0
expect_eq "fsize_fork: at most one warning per process" "$(grep -vc '^allocrr: cannot write trace .*File too large' err.txt)" 0
warnings=$((warnings + $(grep -c '^allocrr: ' err.txt)))
cd ..

[ -n "$skipped" ] && echo "skipped: $skipped"
echo "tally torture_rec_fsfull scale=$S rounds=$rounds incomplete=$incomplete no_file=$no_file warnings=$warnings fork_traces=$(ls fork/*.zst | wc -l) tmpfs=$([ -n "$skipped" ] && echo skipped || echo yes)"
finish
