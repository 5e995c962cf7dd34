#!/usr/bin/env bash
# The recorder never harms the program: an output it cannot create or a
# disk that is full gives one "allocrr: ..." warning and the program runs
# on with its own output and exit status. An LD_PRELOAD already set is kept
# (after the shim), so a program preloading something is recorded with it.
. "$(dirname "$0")/../progs/rec_testlib.sh"

"$REC" -q -o /nonexistent-dir/x.zst "$P/rec_threads" >out.txt 2>err.txt
rc=$?
expect_eq "bad dir: allocrec refuses before running" "$rc" 2
grep -q 'output directory' err.txt && ok "bad dir: says why" || fail "bad dir message: $(cat err.txt)"

# Unwritable file in an existing directory: the shim itself must cope.
mkdir ro && chmod 555 ro
if [ "$(id -u)" = 0 ]; then
	# root ignores permissions: use a path whose parent is a file instead
	touch notadir; out=notadir/x.zst
else out=ro/x.zst; fi
env ALLOCRR_OUTPUT=$W/$out ALLOCRR_DIR=$W LD_PRELOAD=$B/lib/liballocrr-rec.so "$P/rec_threads" >out.txt 2>err.txt
expect_eq "unwritable: exit status" $? 0
expect_eq "unwritable: program output" "$(cat out.txt)" "freed 60000 of 60000"
expect_eq "unwritable: one warning" "$(grep -c '^allocrr: ' err.txt)" 1
grep -q "^allocrr: cannot create trace $W/$out" err.txt && ok "unwritable: warning names the file" || fail "warning: $(cat err.txt)"

# Disk full: /dev/full accepts the open and fails every write with ENOSPC.
"$REC" -q -o /dev/full "$P/rec_threads" >out.txt 2>err.txt
expect_eq "disk full: exit status" $? 0
expect_eq "disk full: program output" "$(cat out.txt)" "freed 60000 of 60000"
expect_eq "disk full: one warning" "$(grep -c '^allocrr: ' err.txt)" 1
grep -q 'No space left on device' err.txt && ok "disk full: says ENOSPC" || fail "disk full: $(cat err.txt)"

# An existing LD_PRELOAD stays active: the counting shim still counts.
LD_PRELOAD=$P/librec_count.so REC_COUNT_OUT=$W/counts.txt "$REC" -q "$P/rec_seq" >/dev/null
expect_eq "existing LD_PRELOAD: status" $? 0
f=$(one_trace "rec_seq.*.zst")
pid=${f#rec_seq.}; pid=${pid%.zst}
m=$(awk -v p=$pid '$1==p{for(i=2;i<NF;i+=2) if($i=="malloc") print $(i+1)}' counts.txt | tail -1)
t=$("$CHECK" count $f | awk '$1=="malloc"{print $2}')
expect_eq "existing LD_PRELOAD: counting shim and trace agree on mallocs" "$m" "$t"
finish
