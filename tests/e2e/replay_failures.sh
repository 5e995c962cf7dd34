#!/usr/bin/env bash
# allocreplay when things go wrong: a wrong LD_PRELOAD is refused instead of
# measuring glibc under another name; a crashing allocator and a hanging
# worker become rows with a status while the other allocators succeed; bad
# command lines and bad traces give clear messages and exit codes; a killed
# allocreplay leaves an intact database without partial runs; a database
# from a newer allocreplay is refused.
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"
libs="$B/tests/replay"
[ -f "$libs/libfake.so" ] && [ -f "$libs/libcrash.so" ] || { echo "missing test libraries"; exit 77; }
LIBC=$("$AR" --list | awk '$1=="glibc"{print $5}')

# 1. Wrong LD_PRELOAD: "pool" points at a library that defines no malloc.
mkdir fake && cp "$libs/libfake.so" fake/liballocrr-pool.so
ALLOCRR_LIBDIR="$T/fake" "$AR" "$SAMPLE" -a glibc,pool --repeat 1 --db f.db >out1.txt 2>err1.txt
expect_eq "wrong preload: exit" $? 2
expect_eq "wrong preload: status" "$(q f.db "SELECT status FROM runs WHERE allocator='pool'")" wrong_allocator
expect_eq "wrong preload: proof stored" "$(q f.db "SELECT library_path FROM runs WHERE allocator='pool'")" "$LIBC"
expect_eq "wrong preload: no numbers" "$(q f.db "SELECT count(*) FROM latency l JOIN runs r USING (run_id) WHERE r.allocator='pool'")" 0
grep -q "LD_PRELOAD did not take effect" err1.txt && ok "wrong preload: reason on stderr" || { fail "no reason"; cat err1.txt; }
expect_eq "wrong preload: glibc still ok" "$(q f.db "SELECT status FROM runs WHERE allocator='glibc'")" ok

# 2. A crashing allocator.
mkdir crash && cp "$libs/libcrash.so" crash/liballocrr-pool.so
ALLOCRR_LIBDIR="$T/crash" "$AR" "$SAMPLE" -a pool,glibc --repeat 1 --db f.db >out2.txt 2>err2.txt
expect_eq "crash: exit" $? 2
expect_eq "crash: status" "$(q f.db "SELECT status FROM runs WHERE allocator='pool' ORDER BY run_id DESC LIMIT 1")" crashed
q f.db "SELECT reason FROM runs WHERE allocator='pool' ORDER BY run_id DESC LIMIT 1" | grep -q "signal 11" \
	&& ok "crash: reason names the signal" || fail "crash reason: $(q f.db "SELECT reason FROM runs ORDER BY run_id DESC LIMIT 1")"
expect_eq "crash: glibc after it ok" "$(q f.db "SELECT status FROM runs WHERE allocator='glibc' ORDER BY run_id DESC LIMIT 1")" ok

# 3. A hanging worker is killed by --timeout.
s=$SECONDS
ALLOCRR_WORKER_TEST_HANG=1 "$AR" "$SAMPLE" -a glibc --repeat 1 --timeout 2 --db f.db >out3.txt 2>err3.txt
expect_eq "timeout: exit" $? 2
expect_eq "timeout: status" "$(q f.db "SELECT status FROM runs ORDER BY run_id DESC LIMIT 1")" timeout
[ $((SECONDS - s)) -lt 30 ] && ok "timeout: killed in $((SECONDS - s)) s" || fail "timeout took $((SECONDS - s)) s"

# 4. Usage and input errors.
"$AR" "$SAMPLE" -a nosuch --db f.db >/dev/null 2>err4.txt
expect_eq "unknown allocator: exit" $? 1
grep -q "unknown allocator 'nosuch'" err4.txt && ok "unknown allocator: message" || fail "message: $(cat err4.txt)"
"$AR" --repeat 0 "$SAMPLE" >/dev/null 2>&1
expect_eq "bad --repeat: exit" $? 1
"$AR" "$T/missing.zst" -a glibc --db f.db >/dev/null 2>err5.txt
expect_eq "missing trace: exit" $? 2
grep -qx "allocreplay: $T/missing.zst: No such file or directory" err5.txt && ok "missing trace: message" ||
	fail "message: $(cat err5.txt)"
head -c 3000 /dev/urandom >corrupt.zst
"$AR" corrupt.zst -a glibc --db f.db >/dev/null 2>err6.txt
expect_eq "corrupt trace: exit" $? 2
grep -q "^allocreplay: corrupt.zst: cannot compile: " err6.txt && ok "corrupt trace: message" ||
	fail "message: $(cat err6.txt)"
expect_eq "corrupt trace: the path said once" "$(grep -o 'corrupt.zst:' err6.txt | wc -l)" 1

# 5. allocreplay killed mid-way: the database stays intact, no partial run.
"$AR" "$SAMPLE" -a glibc --repeat 200 --db k.db >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do
	n=$(q k.db "SELECT count(*) FROM runs" 2>/dev/null || echo 0)
	[ "${n:-0}" -ge 3 ] && break
	sleep 0.05
done
kill -9 $pid
wait $pid 2>/dev/null
expect_eq "killed: integrity" "$(q k.db 'PRAGMA integrity_check')" ok
n=$(q k.db "SELECT count(*) FROM runs")
[ "$n" -ge 1 ] && [ "$n" -lt 200 ] && ok "killed: $n complete runs kept" || fail "killed: $n runs"
expect_eq "killed: runs without their latency rows" \
	"$(q k.db "SELECT count(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM latency l WHERE l.run_id=r.run_id AND l.op='all')")" 0
"$AR" "$SAMPLE" -a glibc --repeat 1 --db k.db >/dev/null 2>&1
expect_eq "killed: database usable afterwards" $? 0

# 6. A database from a newer allocreplay is refused, untouched.
q k.db 'PRAGMA user_version=99'
"$AR" "$SAMPLE" -a glibc --repeat 1 --db k.db >/dev/null 2>err7.txt
expect_eq "newer schema: exit" $? 2
grep -q "newer than this allocreplay" err7.txt && ok "newer schema: message" || fail "message: $(cat err7.txt)"
finish
