#!/usr/bin/env bash
# allocrec -p PID / --detach PID (issue 16 item 1): recording a process that
# is already running, and stopping, several times over, while the process
# works on unharmed. rec_server checks its own blocks (a pattern per block,
# checked before each free and realloc) and reports, every 50 ms, how far
# it got and which object &malloc, read through its own GOT, belongs to.
# Each window must verify with its footer, hold events from several threads,
# include glibc's own malloc calls (strdup: malloc 778, made inside libc),
# and those of a library the program dlopens during the window; after each
# detach, every GOT entry is back (malloc_in libc.so.6, and the shim's own
# count of hooked entries, asked through gdb, is 0). Refusals: a static
# process, a process another tracer holds, no gdb, nothing to detach.
# No timing is asserted: every wait polls the status file, bounded.
. "$(dirname "$0")/../progs/rec_testlib.sh"
S=$P/rec_server
for f in "$S" "$P/rec_server_static" "$P/rec_server_nopie" "$P/librec_dllib.so"; do
	[ -e "$f" ] || { echo "missing $f: run make first"; exit 77; }
done
if ! command -v gdb >/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "installing gdb (allocrec -p drives it)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gdb >/dev/null 2>&1
	fi
	command -v gdb >/dev/null || { echo "skipped: gdb is not installed (apt-get install gdb)"; exit 77; }
fi

pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$W"; }
trap cleanup EXIT

# field NAME: a value of the server's status file
field() { awk -v k="$1" '$1==k{print $2}' st 2>/dev/null; }
# wait_for CMD...: poll (20 s at most) until CMD succeeds
wait_for() { for _ in $(seq 400); do "$@" && return 0; sleep 0.05; done; return 1; }
# rounds_past N: the server has done more than N rounds (it is alive and working)
rounds_past() { [ "$(field rounds)" -gt "$1" ] 2>/dev/null; }
bound_to() { [ "$(field malloc_in)" = "$1" ]; }
# hooked: the shim's count of GOT entries pointing at its hooks
hooked() { gdb --batch -n -q -p "$1" -ex 'call (int)allocrr_attach_hooked()' 2>/dev/null | sed -n 's/^\$1 = //p'; }
# the tids with events in a trace
threads_with_events() { "$AT" dump "$1" | awk '{print $2}' | sort -u | wc -l; }
# mallocs of SIZE made by thread TID
mallocs_of() { "$AT" dump "$1" | awk -v t="$2" -v n="$3" '($2==t || t=="") && $3=="malloc" && $4==n' | wc -l; }

"$S" st 4 "$P/librec_dllib.so" >server.out 2>server.err &
srv=$!; pids+=($srv)
wait_for rounds_past 100 || { fail "rec_server does not run"; finish; }

# A process gdb cannot attach to here (a container without ptrace) is not
# the recorder's fault: say so and skip.
if ! gdb --batch -n -q -p $srv -ex 'detach' >gdbprobe.out 2>&1 || grep -q "ptrace: Operation not permitted" gdbprobe.out; then
	echo "skipped: gdb cannot attach to a process here: $(grep -m1 ptrace gdbprobe.out)"; exit 77
fi

# check_window NAME TRACE: the window's trace is complete and rich enough
check_window() {
	expect_eq "$1: verifies (footer written)" "$(verify_rc "$2")" 0
	"$CHECK" check "$2" >/dev/null && ok "$1: SPEC order" || fail "$1: order check failed"
	local th; th=$(threads_with_events "$2")
	[ "$th" -ge 3 ] && ok "$1: events from $th threads" || fail "$1: events from $th threads only"
	local n; n=$(mallocs_of "$2" "" 778)
	[ "$n" -gt 0 ] && ok "$1: $n of glibc's own mallocs (strdup) recorded" || fail "$1: no malloc 778 from strdup"
	"$AT" info "$2" | grep -qi "window\|attach" && ok "$1: a window trace" || fail "$1: not marked a window: $("$AT" info "$2")"
}
# check_detached NAME: the process runs on, bound to libc again
check_detached() {
	local r; r=$(field rounds)
	wait_for rounds_past $((r + 200)) && ok "$1: the process works on" || fail "$1: the process stopped working"
	wait_for bound_to libc.so.6 && ok "$1: &malloc is libc's again" || fail "$1: &malloc is in $(field malloc_in)"
	expect_eq "$1: GOT entries still hooked" "$(hooked $srv)" 0
	expect_eq "$1: no corrupted block" "$(field errors)" 0
}

# ---- 1. attach with --duration: the shim ends the window itself --------------
"$REC" -p $srv -o w1.zst --duration 1 2>a1.err; rc=$?
expect_eq "attach 1 (--duration 1): status" $rc 0
grep -q "w1.zst: [0-9]* events" a1.err && ok "attach 1: summary line" || fail "attach 1: no summary: $(cat a1.err)"
check_window "attach 1" w1.zst
check_detached "after attach 1"

# ---- 2. attach, dlopen during the window, allocrec --detach -------------------
"$REC" -p $srv -o w2.zst 2>a2.err &
a2=$!
wait_for bound_to liballocrr-rec.so && ok "attach 2: &malloc is the recorder's" || fail "attach 2: &malloc is in $(field malloc_in)"
touch st.dlopen
wait_for awk '$1=="dllib" && $2>=3 {f=1} END {exit !f}' st || fail "attach 2: the program's dlopen did not happen"
"$REC" --detach $srv 2>d2.err; expect_eq "allocrec --detach: status" $? 0
wait $a2; expect_eq "attach 2: allocrec -p status after the detach" $? 0
t2=w2.zst # a process's second window, named as -o said (no .w2 of its own)
[ -f w2.zst ] && ok "attach 2: the trace is the -o file itself" || fail "attach 2: no w2.zst: $(ls w2*)"
check_window "attach 2" "$t2"
n=$(mallocs_of "$t2" $srv 3333)
[ "$n" -gt 0 ] && ok "attach 2: $n mallocs of the library dlopen'ed during the window" \
	|| fail "attach 2: the dlopen'ed library's mallocs were not recorded"
check_detached "after attach 2"

# ---- 3. Ctrl-C on the waiting allocrec -p detaches ---------------------------------
"$REC" -p $srv -o w3.zst 2>a3.err &
a3=$!
wait_for bound_to liballocrr-rec.so || fail "attach 3: &malloc is in $(field malloc_in)"
r=$(field rounds); wait_for rounds_past $((r + 100))
kill -INT $a3
wait $a3; expect_eq "attach 3: allocrec -p status after Ctrl-C" $? 0
check_window "attach 3" "$(one_trace "w3*.zst")"
check_detached "after attach 3 (Ctrl-C)"

# ---- 4. a non-PIE program that takes &malloc and &free -------------------------
# Their canonical addresses are its own PLT stubs, which jump through its
# own GOT: the recorder must forward to the definitions behind them (or it
# would call itself once that GOT entry is its hook) and rebind the
# executable's entries (or its frees go unseen: the order check fails).
"$P/rec_server_nopie" st_np 3 >np.out 2>&1 &
np=$!; pids+=($np)
wait_for test -s st_np
expect_eq "non-PIE: &free is its own PLT stub" "$(awk '$1=="free_in"{print $2}' st_np)" rec_server_nopie
"$REC" -p $np -o np.zst --duration 1 2>np.err; expect_eq "non-PIE: allocrec -p status" $? 0
check_window "non-PIE" np.zst
kill -TERM $np; wait $np; expect_eq "non-PIE: its own check at the end (exit status)" $? 0

# ---- 5. a program whose malloc is jemalloc's (as Debian's redis-server) ------------
# The hooks must forward to jemalloc, malloc_usable_size included (a window
# measures the pre-existing blocks it frees with it): glibc's on a jemalloc
# block crashes the program.
je=$(ls /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -1)
if [ -n "$je" ]; then
	LD_PRELOAD=$je "$S" st_je 3 >je.out 2>&1 &
	jp=$!; pids+=($jp)
	wait_for test -s st_je
	for n in 1 2; do
		"$REC" -p $jp -o je$n.zst --duration 0.5 2>je.err; expect_eq "jemalloc, attach $n: status" $? 0
		[ -f je$n.zst ] && ok "jemalloc, attach $n: the trace is je$n.zst" || fail "jemalloc, attach $n: $(ls je$n*)"
		check_window "jemalloc, attach $n" "$(one_trace "je$n*.zst")"
		"$AT" info "$(one_trace "je$n*.zst")" | grep -q "^allocator .*jemalloc" && ok "jemalloc, attach $n: served by jemalloc" \
			|| fail "jemalloc, attach $n: $("$AT" info "$(one_trace "je$n*.zst")" | grep ^allocator)"
	done
	kill -TERM $jp; wait $jp; expect_eq "jemalloc: the program's own check at the end (exit status)" $? 0
else
	echo "note: libjemalloc.so.2 not installed: the jemalloc case is not checked"
fi

# ---- 5. refusals -----------------------------------------------------------------------------
"$REC" --detach $srv 2>nd.err; rc=$?
expect_eq "--detach when not attached: status" $rc 2
grep -q "nothing to detach" nd.err && ok "--detach when not attached: said so" || fail "--detach: $(cat nd.err)"

"$REC" -p $srv -o w4.zst 2>busy.err &
a4=$!
wait_for bound_to liballocrr-rec.so || fail "attach 4: &malloc is in $(field malloc_in)"
"$REC" -p $srv -o w5.zst 2>twice.err; rc=$?
expect_eq "a second allocrec -p on a recorded process: status" $rc 2
grep -q "being recorded already" twice.err && ok "a second -p: said so" || fail "a second -p: $(cat twice.err)"

( PATH=/nonexistent "$REC" -p $srv -o w6.zst ) 2>nogdb.err; rc=$?
expect_eq "no gdb: status" $rc 2
grep -q "gdb is not installed" nogdb.err && ok "no gdb: said so" || fail "no gdb: $(cat nogdb.err)"

# --detach without the control channel (its file removed): gdb calls allocrr_detach
for d in /run/user/$(id -u)/allocrr /tmp/allocrr-$(id -u); do rm -f "$d/$srv.ctl"; done
"$REC" --detach $srv 2>d4.err; expect_eq "--detach through gdb: status" $? 0
wait $a4; expect_eq "attach 4: allocrec -p status" $? 0
check_window "attach 4 (detached through gdb)" "$(one_trace "w4*.zst")"
check_detached "after attach 4"

"$P/rec_server_static" st_static 1 >/dev/null 2>&1 &
stat_pid=$!; pids+=($stat_pid)
wait_for test -s st_static
"$REC" -p $stat_pid -o s.zst 2>static.err; rc=$?
expect_eq "static process: status" $rc 2
grep -q "statically linked" static.err && ok "static process: said so" || fail "static: $(cat static.err)"
[ ! -e s.zst ] && ok "static process: no trace" || fail "static process: a trace was written"
kill $stat_pid

if command -v strace >/dev/null; then
	strace -p $srv -o /dev/null 2>strace.err &
	st_pid=$!; pids+=($st_pid)
	wait_for grep -q "TracerPid:[[:space:]]*$st_pid" /proc/$srv/status
	"$REC" -p $srv -o t.zst 2>traced.err; rc=$?
	expect_eq "traced process: status" $rc 2
	grep -q "already traced by process $st_pid (strace)" traced.err && ok "traced process: said so" \
		|| fail "traced: $(cat traced.err)"
	kill $st_pid; wait $st_pid 2>/dev/null
else
	echo "note: strace not installed: the already-traced refusal is not checked"
fi

# Another mount namespace (a container, a systemd service with PrivateTmp=):
# its /tmp is not ours, so the shim could not write the run directory's
# files and allocrec would wait for ever; refused, with the way round.
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
	unshare -m --propagation private "$S" st_ns 1 >/dev/null 2>&1 &
	ns_pid=$!; pids+=($ns_pid)
	wait_for test -s st_ns
	"$REC" -p $ns_pid -o ns.zst --duration 1 2>ns.err; rc=$?
	expect_eq "another mount namespace: status" $rc 2
	grep -q "another mount namespace.*nsenter -t $ns_pid -m" ns.err && ok "another mount namespace: said so" ||
		fail "another mount namespace: $(cat ns.err)"
	kill $ns_pid
else
	echo "note: unshare -m not available: the mount-namespace refusal is not checked"
fi

# A program started by allocrec records already: -p says to use --start/--stop.
"$REC" -q --paused -o pre.zst "$S" st_pre 1 >/dev/null 2>&1 &
pids+=($!)
wait_for test -s st_pre
pre=$(pgrep -P $! rec_server); pids+=($pre)
"$REC" -p $pre -o x.zst 2>pre.err; rc=$?
expect_eq "a process allocrec started: status" $rc 2
grep -q "preloaded in it already" pre.err && ok "a process allocrec started: said so" || fail "preloaded: $(cat pre.err)"
kill $pre

# The process exits during the window: its trace is closed at exit, complete.
"$S" st_exit 2 >/dev/null 2>&1 &
ex=$!; pids+=($ex)
wait_for test -s st_exit
"$REC" -p $ex -o ex.zst 2>ex.err &
aex=$!
wait_for grep -q "malloc_in liballocrr-rec.so" st_exit || fail "exit case: not attached"
kill -TERM $ex; wait $ex
wait $aex; expect_eq "process exits while attached: allocrec -p status" $? 0
grep -q "exited before the window was closed" ex.err && ok "process exits while attached: said so" || fail "exit: $(cat ex.err)"
expect_eq "process exits while attached: trace verifies" "$(verify_rc ex.zst)" 0

# The process is killed during the window: nothing closes the trace, so it is
# cut short; allocrec -p keeps what was written and exits 3, as the readers do
# for a truncated trace, instead of 0.
"$S" st_kill 2 >/dev/null 2>&1 &
kx=$!; pids+=($kx)
wait_for test -s st_kill
"$REC" -p $kx -o kx.zst 2>kx.err &
akx=$!
wait_for grep -q "malloc_in liballocrr-rec.so" st_kill || fail "kill case: not attached"
wait_for test -s kx.zst
kill -KILL $kx; wait $kx 2>/dev/null
wait $akx; expect_eq "process killed while attached: allocrec -p status" $? 3
grep -q "cut short" kx.err && ok "process killed while attached: said so" || fail "kill: $(cat kx.err)"
expect_eq "process killed while attached: trace truncated but readable (verify 1)" "$(verify_rc kx.zst)" 1

# ---- root recording another user's process -----------------------------------------------
# A database's backend or a server's worker runs as its own user; root
# attaches. The shim writes the manifest and the done file into allocrec's
# private run directory as that user: before, the window was recorded but
# allocrec waited until the process exited and then said it wrote no trace.
# The other user must be able to run the server and load the recorder: a
# fresh clone in a mktemp -d directory is root's alone, so both are copied
# where it can (ALLOCRR_SHIM names the copy).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 0711 "$W" # the way to pub/ and other/ open to that user
	mkdir pub && cp "$S" "$B/lib/liballocrr-rec.so" pub/ && chmod -R a+rX pub
	export ALLOCRR_SHIM=$W/pub/liballocrr-rec.so
	# run directories handed to that user (other runs' may be there already)
	theirs_left() { ls -d /tmp/allocrec-attach.* 2>/dev/null | xargs -r stat -c %U 2>/dev/null | grep -c nobody; }
	theirs_before=$(theirs_left)
	mkdir other && chown 65534:65534 other && chmod 0700 other
	mkdir closed && chmod 0700 closed # where that user cannot write
	(cd other && exec setpriv --reuid=65534 --regid=65534 --clear-groups "$W/pub/rec_server" st 4 >server.out \
		2>server.err) &
	ou=$!; pids+=($ou)
	orounds() { [ "$(awk '$1=="rounds"{print $2}' other/st 2>/dev/null)" -gt "$1" ] 2>/dev/null; }
	wait_for orounds 100 || fail "other user: rec_server does not run"
	osrv=$(pgrep -P $ou -f rec_server || echo $ou)
	"$REC" -p $osrv -o other/ou.zst --duration 1 2>ou.err; rc=$?
	expect_eq "another user's process: allocrec -p status" $rc 0
	grep -q "ou.zst: [0-9]* events" ou.err && ok "another user's process: the window reported" ||
		fail "another user's process: $(cat ou.err)"
	expect_eq "another user's process: verifies" "$(verify_rc other/ou.zst)" 0
	"$REC" -p $osrv -o closed/no.zst --duration 1 2>closed.err; rc=$?
	expect_eq "-o where that user cannot write: allocrec -p status" $rc 2
	grep -q "runs as user 65534, who must be able to create the -o file" closed.err &&
		ok "-o where that user cannot write: says whose permission is missing" || fail "closed: $(cat closed.err)"
	expect_eq "another user's process: its run directories removed" "$(theirs_left)" "$theirs_before"
	wait_for orounds "$(( $(awk '$1=="rounds"{print $2}' other/st) + 50 ))" &&
		ok "another user's process: still working after the window" || fail "another user's process stopped"
	kill -TERM $osrv; wait $ou
	expect_eq "another user's process: its own check at the end" "$(grep -c 'errors 0' other/server.out)" 1
	unset ALLOCRR_SHIM
else
	echo "skip: recording another user's process needs root and setpriv"
fi

# ---- the program ran unharmed throughout ------------------------------------------------------
kill -TERM $srv
wait $srv; rc=$?
expect_eq "rec_server's own check at the end (exit status)" $rc 0
grep -q "errors 0" server.out && ok "rec_server: $(cat server.out)" || fail "rec_server: $(cat server.out)"
expect_eq "rec_server wrote nothing to stderr" "$(cat server.err)" ""
finish
