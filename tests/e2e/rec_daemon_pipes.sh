#!/usr/bin/env bash
# Ordinary situations that used to lose data (issue 16 item 4): daemons that
# close or dup2 over every descriptor, pipeline members killed by SIGPIPE,
# other default-fatal signals, static and set-group-ID programs, children
# exec'ed with an empty environment, -o naming a symbolic link. Each run is
# compared with the same program unrecorded (status, output), and each
# trace must hold every heap call the program made: recorded + dropped =
# what it did, footer present (verify 0).
. "$(dirname "$0")/../progs/rec_testlib.sh"
D=$P/rec_daemon
for f in "$D" "$P/rec_daemon_static"; do [ -x "$f" ] || { echo "missing $f: run make first"; exit 77; }; done
# events of one kind ("malloc 5555") in a trace, plus its dropped events
count() { dump3 "$1" 2>/dev/null | grep -c "^$2 "; }
dropped() { "$AT" info "$1" --json 2>/dev/null | grep -o '"dropped_events":[0-9]*' | cut -d: -f2; }

# ---- the daemon idiom ------------------------------------------------------
# With the usual limits (soft 1024, hard higher) the recorder's descriptors
# live above the soft limit; with soft = hard they sit below it and must
# survive the close loop by interposition and move out of dup2's way.
hard=$(ulimit -Hn)
for lim in 1024 hard; do
	if [ $lim = 1024 ] && [ "$hard" != unlimited ] && [ "$hard" -le 1100 ]; then
		echo "skip: hard RLIMIT_NOFILE $hard leaves no room above a soft limit of 1024"; continue
	fi
	for m in closeloop closerange cloexec unshare closefrom dup2all; do
		[ $lim = hard ] && [ $m = dup2all ] && continue # below, on its own
		mkdir -p d-$lim-$m && cd d-$lim-$m
		(
			if [ $lim = 1024 ]; then ulimit -Sn 1024; else ulimit -Sn "$(ulimit -Hn)"; fi
			"$D" $m >bare.out 2>bare.err; echo $? >bare.rc
			"$REC" -q -o t.zst "$D" $m >rec.out 2>rec.err; echo $? >rec.rc
		)
		expect_eq "daemon $m (soft limit $lim): status" "$(cat rec.rc)" "$(cat bare.rc)"
		expect_eq "daemon $m (soft limit $lim): what the program saw" "$(cat rec.out)" "$(cat bare.out)"
		expect_eq "daemon $m (soft limit $lim): no warning" "$(cat rec.err)" ""
		expect_eq "daemon $m (soft limit $lim): verify" "$(verify_rc t.zst)" 0
		n=$(count t.zst 'malloc 5555'); d=$(dropped t.zst)
		expect_eq "daemon $m (soft limit $lim): recorded + dropped mallocs after it" $((n + ${d:-0})) 1000
		f=$(count t.zst free)
		[ "$f" -ge 1000 ] && ok "daemon $m (soft limit $lim): $f frees" || fail "daemon $m (soft limit $lim): $f frees"
		cd "$W"
	done
done
# soft = hard and a dup2 onto every number: no number is left for the
# trace; it ends there complete, with one warning, and the program is
# unaffected.
mkdir full && cd full
( ulimit -Sn "$(ulimit -Hn)"; [ "$(ulimit -n)" = unlimited ] || ulimit -n 2000
  "$D" dup2all >bare.out; "$REC" -q -o t.zst "$D" dup2all >rec.out 2>rec.err )
expect_eq "dup2 onto every descriptor: what the program saw" "$(cat rec.out)" "$(cat bare.out)"
expect_eq "dup2 onto every descriptor: trace complete" "$(verify_rc t.zst)" 0
grep -q "no descriptor is left for the trace file" rec.err && ok "dup2 onto every descriptor: said so" \
	|| fail "dup2 onto every descriptor: no warning: $(cat rec.err)"
cd "$W"

# The classic double-fork daemon: the grandchild fills a buffer (so its own
# trace is open), closes everything and takes /dev/null for 0-2; its trace
# holds all of its calls. allocrec returns when the first process exits, so wait for
# the grandchild to finish (bounded, so a lost trace fails instead of hanging).
mkdir daemonize && cd daemonize
"$REC" -q -o top.zst "$D" daemonize 40000; st=$?
expect_eq "double fork: status" $st 0
found=0
for i in $(seq 1 300); do
	for f in rec_daemon.*.zst; do
		[ -e "$f" ] && [ "$(verify_rc "$f")" = 0 ] && [ "$(count "$f" 'malloc 5555')" = 40000 ] && found=1
	done
	[ $found = 1 ] && break
	sleep 0.1
done
expect_eq "double fork: the daemon's trace, complete, with its 40000 allocations" $found 1
cd "$W"

# A raw close_range system call cannot be intercepted: one warning, the
# program unharmed, the trace readable (truncated: no footer is claimed).
mkdir raw && cd raw
"$D" rawclose >bare.out
"$REC" -q -o t.zst "$D" rawclose >rec.out 2>rec.err; st=$?
expect_eq "raw close_range: status" $st 0
expect_eq "raw close_range: what the program saw" "$(cat rec.out)" "$(cat bare.out)"
grep -q "behind the recorder's back" rec.err && ok "raw close_range: said so" || fail "raw close_range: $(cat rec.err)"
expect_eq "raw close_range: trace readable, truncated" "$(verify_rc t.zst)" 1
cd "$W"

# ---- pipelines and signals ---------------------------------------------------
mkdir pipe && cd pipe
st=$(bash -c '"$0" -q -o t.zst "$1" sigpipe 3000 | head -c 1 >/dev/null; echo ${PIPESTATUS[0]}' "$REC" "$D")
bare=$(bash -c '"$0" sigpipe 3000 | head -c 1 >/dev/null; echo ${PIPESTATUS[0]}' "$D")
expect_eq "SIGPIPE: status as the shell sees it" "$st" "$bare"
expect_eq "SIGPIPE: status is 141" "$st" 141
expect_eq "SIGPIPE: verify" "$(verify_rc t.zst)" 0
expect_eq "SIGPIPE: every allocation before it" "$(count t.zst 'malloc 4242')" 3000
# The issue's own examples: yes | head -1, and sort in a pipeline, which
# dies of SIGPIPE when head has gone.
st=$(bash -c '"$0" -q -o yes.zst yes | head -1 >/dev/null; echo ${PIPESTATUS[0]}' "$REC")
expect_eq "yes | head -1: status" "$st" 141
expect_eq "yes | head -1: trace complete" "$(verify_rc yes.zst)" 0
st=$(bash -c 'seq 1 300000 | "$0" -q -o sort.zst sort | head -1 >/dev/null; echo ${PIPESTATUS[1]}' "$REC")
expect_eq "sort | head: sort died of SIGPIPE" "$st" 141
expect_eq "sort | head: trace complete" "$(verify_rc sort.zst)" 0
n=$(dump3 sort.zst 2>/dev/null | wc -l)
[ "$n" -gt 100 ] && ok "sort | head: $n events" || fail "sort | head: only $n events"
# The program's own handler keeps working: it runs, write fails with EPIPE.
st=$(bash -c '"$0" -q -o h.zst "$1" pipehandler 500 2>h.err | head -c 1 >/dev/null; echo ${PIPESTATUS[0]}' "$REC" "$D")
bare=$(bash -c '"$0" pipehandler 500 2>bare.err | head -c 1 >/dev/null; echo ${PIPESTATUS[0]}' "$D")
expect_eq "own SIGPIPE handler: status" "$st" "$bare"
expect_eq "own SIGPIPE handler: it ran" "$(cat h.err)" "$(cat bare.err)"
expect_eq "own SIGPIPE handler: verify" "$(verify_rc h.zst)" 0
expect_eq "own SIGPIPE handler: allocations" "$(count h.zst 'malloc 4242')" 500
cd "$W"
for m in usr1 alrm rt; do
	mkdir sig-$m && cd sig-$m
	"$REC" -q -o t.zst "$D" $m 2000 >rec.out 2>&1; st=$?
	(ulimit -c 0; "$D" $m 2000 >/dev/null 2>&1); bare=$?
	expect_eq "$m: status like unrecorded" $st $bare
	[ $st -gt 128 ] && ok "$m: died of signal $((st - 128))" || fail "$m: status $st"
	expect_eq "$m: verify" "$(verify_rc t.zst)" 0
	expect_eq "$m: every allocation before it" "$(count t.zst 'malloc 4242')" 2000
	cd "$W"
done

# ---- programs the recorder cannot enter -------------------------------------------
mkdir static && cd static
"$REC" -q "$P/rec_daemon_static" child 10 >rec.out 2>rec.err; st=$?
expect_eq "static: runs, its status" $st 0
expect_eq "static: its output" "$(cat rec.out)" "$("$P/rec_daemon_static" child 10)"
expect_eq "static: one line says why" "$(grep -c 'statically linked' rec.err)" 1
expect_eq "static: no trace" "$(ls *.zst 2>/dev/null | wc -l)" 0
"$REC" -q -o s.zst "$P/rec_daemon_static" child 10 >rec.out 2>rec.err; st=$?
expect_eq "static with -o: refused" $st 2
expect_eq "static with -o: not run" "$(cat rec.out)" ""
grep -q "statically linked.*cannot be recorded" rec.err && ok "static with -o: says why" || fail "static with -o: $(cat rec.err)"
printf '#!%s\n' "$P/rec_daemon_static" >script.sh && chmod +x script.sh
"$REC" -q ./script.sh >/dev/null 2>rec.err
grep -q "interpreter .*statically linked" rec.err && ok "script with a static interpreter: says why" \
	|| fail "script with a static interpreter: $(cat rec.err)"
if [ "$(id -u)" = 0 ] && [ "$(id -g)" != 65534 ]; then
	# set-group-ID to another group: the loader runs it in secure mode
	cp "$D" sg && chgrp 65534 sg && chmod g+s sg
	"$REC" -q ./sg child 10 >rec.out 2>rec.err; st=$?
	expect_eq "set-group-ID: runs, its status" $st 0
	grep -q "set-user-ID or set-group-ID" rec.err && ok "set-group-ID: says why" || fail "set-group-ID: $(cat rec.err)"
	expect_eq "set-group-ID: indeed no trace (the loader ignored the recorder)" "$(ls *.zst 2>/dev/null | wc -l)" 0
	"$REC" -q -o sg.zst ./sg child 10 >/dev/null 2>&1
	expect_eq "set-group-ID with -o: refused" $? 2
else
	echo "skip: set-group-ID case needs root"
fi
cd "$W"

# ---- a server's worker that drops its privileges after fork -------------------------
# nginx's workers (and apache's, postfix's, ...) are forked by a root master
# and setuid to an unprivileged user at once: a trace created at the
# child's first write could not be created in root's directory any more,
# and the worker, where the requests are served, went unrecorded (its
# stderr said "Permission denied"). The child's trace is created at fork.
if [ "$(id -u)" = 0 ]; then
	mkdir dropuid && cd dropuid && chmod 0755 .
	"$REC" -o top.zst "$D" dropuid 800 >rec.out 2>rec.err; st=$?
	expect_eq "dropuid: status (the child's, which became user 65534)" $st 0
	c=$(ls rec_daemon.*.zst 2>/dev/null)
	[ -n "$c" ] && ok "dropuid: the worker has a trace" || fail "dropuid: the worker was not recorded: $(cat rec.err)"
	[ -n "$c" ] && expect_eq "dropuid: the worker's allocations after it dropped root" "$(count $c 'malloc 6161')" 800
	[ -n "$c" ] && expect_eq "dropuid: its trace verifies" "$(verify_rc $c)" 0
	grep -q "$c: 8[0-9][0-9] events" rec.err && ok "dropuid: allocrec lists the worker's trace" ||
		fail "dropuid: allocrec's summary: $(cat rec.err)"
	grep -q "Permission denied" rec.err && fail "dropuid: a permission error: $(cat rec.err)" ||
		ok "dropuid: no permission error"
	cd "$W"
else
	echo "skip: the worker that drops privileges needs root"
fi

# ---- children exec'ed with an empty environment -----------------------------------
for m in emptyenv clearenv; do
	mkdir env-$m && cd env-$m
	REC_TEST_MARK=1 "$REC" -q -o top.zst "$D" $m 700 >rec.out 2>rec.err; st=$?
	bare=$(REC_TEST_MARK=1 "$D" $m 700)
	expect_eq "$m: status" $st 0
	expect_eq "$m: the child saw what it would unrecorded" "$(cat rec.out)" "$bare"
	c=$(ls rec_daemon.*.zst 2>/dev/null)
	[ -n "$c" ] && ok "$m: the child has a trace" || fail "$m: the child was not recorded"
	[ -n "$c" ] && expect_eq "$m: the child's allocations" "$(count $c 'malloc 3131')" 700
	[ -n "$c" ] && expect_eq "$m: the child's trace verifies" "$(verify_rc $c)" 0
	cd "$W"
done
mkdir env-nofollow && cd env-nofollow
"$REC" -q --no-follow -o top.zst "$D" emptyenv 700 >/dev/null 2>&1
expect_eq "--no-follow: the child is not recorded" "$(ls rec_daemon.*.zst 2>/dev/null | wc -l)" 0
cd "$W"

# ---- -o and symbolic links ------------------------------------------------------------
mkdir links && cd links
echo precious >target && chmod 644 target && ln -s target link.zst
"$REC" -q -o link.zst "$D" child 5 >/dev/null 2>err; st=$?
expect_eq "-o LINK: refused" $st 2
grep -q "symbolic link" err && ok "-o LINK: says why" || fail "-o LINK: $(cat err)"
expect_eq "-o LINK: target unchanged" "$(cat target)" precious
# Straight to the shim (a link made after allocrec looked): never followed.
env LD_PRELOAD="$B/lib/liballocrr-rec.so" ALLOCRR_OUTPUT=link.zst "$D" child 5 >/dev/null 2>err
expect_eq "shim with ALLOCRR_OUTPUT=LINK: target unchanged" "$(cat target)" precious
grep -q "symbolic link" err && ok "shim with ALLOCRR_OUTPUT=LINK: says why" || fail "shim: $(cat err)"
echo old >reg.zst && chmod 644 reg.zst
"$REC" -q -o reg.zst "$D" child 5 >/dev/null 2>&1
expect_eq "-o over a 0644 file: mode" "$(stat -c %a reg.zst)" 600
expect_eq "-o over a 0644 file: the trace" "$(verify_rc reg.zst)" 0
cd "$W"
finish
