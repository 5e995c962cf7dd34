#!/usr/bin/env bash
# Recording windows (issue 16 items 2 and 3): allocrec --paused PROG starts
# PROG with the recorder loaded and not recording; allocrec --start PID and
# --stop PID open and close windows, each its own complete trace (FILE,
# FILE.w2.zst, ...). rec_phases makes its heap calls in phases and waits
# on files between them without any heap call, so a window opened while
# it waits holds exactly one phase: its events must equal the calls the
# program counted, the frees and reallocs of the phase before's blocks
# are the window's pre-existing blocks (old_size on them), and the WINDOW
# record says how it began. The program blocks every signal (as servers
# that sigwait do): the control channel is a thread polling files, not a
# signal. --rotate cuts a recording into segments that each verify, whose
# events sum to the calls the counting shim saw, with seqs that continue
# from one segment to the next without a gap in order or an overlap.
# Synchronisation is by files the program writes, with generous polling
# timeouts; nothing depends on timing.
. "$(dirname "$0")/../progs/rec_testlib.sh"

json_num() { "$AT" info "$1" --json | grep -o "\"$2\":[0-9]*" | head -1 | cut -d: -f2; }
json_str() { "$AT" info "$1" --json | grep -o "\"$2\":\"[^\"]*\"" | head -1 | cut -d'"' -f4; }
# wait_for FILE: poll up to 120 s.
wait_for() {
	local i
	for i in $(seq 12000); do [ -e "$1" ] && return 0; sleep 0.01; done
	fail "timed out waiting for $1"; return 1
}
# Seqs of a trace's events (and realloc's second seq), min and max.
seq_range() { "$AT" dump "$1" | awk '{s = $1 + 0; if (NR == 1 || s < lo) lo = s; if (s > hi) hi = s}
	/ seq2=/ {} END {print lo + 0, hi + 0}'; }

# ---- paused: three windows over six phases, every signal blocked -------------------
S=$W/sync
mkdir -p "$S"
# peak=160@4: the process's RSS high-water mark is set before the first
# window (a 160 MiB block touched and freed) and raised in phase 4 (320 MiB)
PEAK_MIB=160
"$REC" --paused -o "$W/ph.zst" "$P/rec_phases" "$S" 6 1500 2 block peak=$PEAK_MIB@4 >ph.out 2>ph.err &
recpid=$!
wait_for "$S/ready.0"
PID=$(cat "$S/pid")
# Not yet recording: a stop has nothing to close.
"$REC" --stop "$PID" >stop0.out 2>stop0.err
expect_eq "stop before any window: exit status" $? 2
grep -q "no window is open" stop0.err && ok "stop before any window: says no window is open" ||
	fail "stop before any window: $(cat stop0.err)"
windows="1 3 4" k=0 n=0
# (No window in the last phase: its worker threads end after it, and
# glibc's frees for their exit would belong to it.)
for phase in 0 1 2 3 4 5; do
	wait_for "$S/ready.$phase"
	win=0
	case " $windows " in *" $phase "*) win=1 ;; esac
	if [ $win = 1 ]; then
		n=$((n + 1))
		"$REC" --start "$PID" 2>start$n.err
		expect_eq "window $n: allocrec --start exit status" $? 0
		if [ $n = 1 ]; then
			"$REC" --start "$PID" 2>again.err
			expect_eq "start while recording: exit status" $? 2
			grep -q "already recording" again.err && ok "start while recording: says so" ||
				fail "start while recording: $(cat again.err)"
		fi
	fi
	touch "$S/go.$phase"
	wait_for "$S/done.$phase"
	if [ $win = 1 ]; then
		"$REC" --stop "$PID" 2>stop$n.err
		expect_eq "window $n: allocrec --stop exit status" $? 0
		echo "$phase" >"win$n.phase"
	fi
done
wait_for "$S/ready.exit"
touch "$S/go.exit"
wait $recpid
expect_eq "paused program: exit status" $? 0
expect_eq "paused program: nothing on its stdout" "$(cat ph.out)" ""
expect_eq "window files" "$(cd "$W" && ls ph*.zst | tr '\n' ' ')" "ph.w2.zst ph.w3.zst ph.zst "
prev_hi=0
for n in 1 2 3; do
	case $n in 1) f=ph.zst ;; *) f=ph.w$n.zst ;; esac
	phase=$(cat win$n.phase)
	read -r _ calls _ older <"$S/done.$phase"
	expect_eq "window $n ($f): verify" "$(verify_rc "$f")" 0
	"$CHECK" check "$f" >/dev/null && ok "window $n: SPEC order" || fail "window $n: order check failed"
	expect_eq "window $n: events = the calls of phase $phase" "$(json_num "$f" events)" "$calls"
	expect_eq "window $n: pre-existing blocks = frees/reallocs of older blocks" \
		"$(json_num "$f" preexisting_blocks)" "$older"
	expect_eq "window $n: WINDOW record index" "$(json_num "$f" index)" "$n"
	expect_eq "window $n: began by" "$(json_str "$f" reason)" start
	expect_eq "window $n: stopped by" "$(json_str "$f" stopped)" stop-command
	# Every free and realloc of a pointer carries its old size (rec_phases
	# frees no NULL and every realloc is of a block).
	frees=$("$AT" dump "$f" | awk '$3 == "free" || $3 == "realloc"' | wc -l)
	sized=$("$AT" dump "$f" | awk '($3 == "free" || $3 == "realloc") && / old_size=[1-9]/' | wc -l)
	expect_eq "window $n: frees and reallocs with old_size" "$sized" "$frees"
	[ -n "$(json_num "$f" heap_in_use_bytes)" ] && [ "$(json_num "$f" heap_in_use_bytes)" -gt 0 ] &&
		ok "window $n: heap in use at the start from $(json_str "$f" heap_source)" ||
		fail "window $n: no heap figure (glibc serves malloc here: mallinfo2 must give one)"
	read -r lo hi < <(seq_range "$f")
	[ "$lo" -gt "$prev_hi" ] && ok "window $n: seqs $lo..$hi come after the last window's" ||
		fail "window $n: seqs $lo..$hi overlap the last window's (up to $prev_hi)"
	prev_hi=$hi
	# SPEC 6.10: the process's CPU time when the window began, which a
	# window's own CPU time leaves out: after the last window's close, at
	# most this one's
	cpu0=$(($(json_num "$f" cpu_user_start_ns) + $(json_num "$f" cpu_sys_start_ns)))
	cpu1=$(($(json_num "$f" cpu_user_ns) + $(json_num "$f" cpu_sys_ns)))
	[ "$cpu0" -gt "${prev_cpu:-0}" ] && [ "$cpu0" -le "$cpu1" ] &&
		ok "window $n: CPU time at its start ($cpu0 ns) after the last window's close, not above its own" ||
		fail "window $n: CPU at start $cpu0, at close $cpu1, the last window's close ${prev_cpu:-0}"
	prev_cpu=$cpu1
	# SPEC 6.10: a window's peak RSS is its own. Windows 1 and 2 (phases 1
	# and 3) lie below the high-water mark set before them: their peak is
	# their highest sample, far below it; window 3 (phase 4) raises it.
	peak=$(json_num "$f" peak_rss_bytes) src=$(json_str "$f" peak_rss_source)
	lo_rss=$(json_num "$f" start_rss_bytes) end_rss=$(json_num "$f" end_rss_bytes)
	if [ "$phase" = 4 ]; then
		[ "$src" = hwm ] && [ "${peak:-0}" -ge $((2 * PEAK_MIB << 20)) ] &&
			ok "window $n: the high-water mark rose in it: peak $peak bytes from VmHWM" ||
			fail "window $n: peak $peak ($src), want VmHWM of at least $((2 * PEAK_MIB)) MiB"
	else
		[ "$src" = sampled ] && [ "${peak:-0}" -lt $((PEAK_MIB << 20)) ] &&
			[ "${peak:-0}" -ge "$lo_rss" ] && [ "${peak:-0}" -ge "$end_rss" ] &&
			ok "window $n: peak $peak bytes, its highest sample, not the older high-water mark" ||
			fail "window $n: peak $peak ($src), start $lo_rss, end $end_rss: want the highest sample, below $PEAK_MIB MiB"
	fi
done
"$AT" info ph.zst | grep -q "^process RSS .* peak .* MiB (the window's highest sample: the process's VmHWM predates the window)" &&
	ok "info text says a window's peak is its highest sample" ||
	fail "window info text: $("$AT" info ph.zst | grep 'process RSS')"
"$AT" info ph.w2.zst | grep -q "^process CPU .* s since the trace began (user .* s, system .* s; .* s before)" &&
	ok "a window's info text gives its own CPU time and the process's before it" ||
	fail "window info text: $("$AT" info ph.w2.zst | grep 'process CPU')"
for n in 1 2 3; do
	case $n in 1) f=ph.zst ;; *) f=ph.w$n.zst ;; esac
	grep -q "$f: " ph.err && ok "allocrec's summary lists $f" || fail "summary does not list $f: $(cat ph.err)"
done

# ---- refusals --------------------------------------------------------------------------
"$REC" --start 2147483646 2>nosuch.err
expect_eq "--start of no process: exit status" $? 2
grep -q "no process 2147483646" nosuch.err && ok "--start of no process: says so" || fail "$(cat nosuch.err)"
sleep 60 &
plain=$!
"$REC" --start $plain 2>plain.err
expect_eq "--start of a process not run --paused: exit status" $? 2
grep -q "not started with allocrec --paused" plain.err && ok "--start of an unrecorded process: says so" ||
	fail "$(cat plain.err)"
kill $plain 2>/dev/null
"$REC" --start 12x 2>bad.err
expect_eq "--start 12x: usage error" $? 1
"$REC" --start 1 ls 2>bad2.err
expect_eq "--start PID PROG: usage error" $? 1
if [ "$(id -u)" != 0 ]; then
	"$REC" --start 1 2>other.err
	expect_eq "--start of another user's process: exit status" $? 2
	grep -q "another user" other.err && ok "--start of another user's process: says so" || fail "$(cat other.err)"
fi

# ---- paused with --duration: each window ends itself ---------------------------------
S=$W/sync2
mkdir -p "$S"
"$REC" --paused --duration 0.3 -o "$W/du.zst" "$P/rec_phases" "$S" 2 500 1 >du.out 2>du.err &
recpid=$!
wait_for "$S/ready.0"
PID=$(cat "$S/pid")
"$REC" --start "$PID" 2>/dev/null
expect_eq "duration window: started" $? 0
# The program waits (no heap call) while the window runs out: poll until
# the trace is complete (its footer written).
for i in $(seq 3000); do [ "$(verify_rc du.zst)" = 0 ] && break; sleep 0.02; done
expect_eq "duration window: complete by itself" "$(verify_rc du.zst)" 0
expect_eq "duration window: stopped by" "$(json_str du.zst stopped)" duration
expect_eq "duration window: no events (the program waited)" "$(json_num du.zst events)" 0
"$REC" --stop "$PID" 2>/dev/null
expect_eq "duration window: --stop after it ended: nothing open" $? 2
"$REC" --start "$PID" 2>/dev/null
expect_eq "duration window: a second window starts" $? 0
touch "$S/go.0"
wait_for "$S/done.0"
read -r _ calls _ older <"$S/done.0"
for i in $(seq 3000); do [ "$(verify_rc du.w2.zst)" = 0 ] && break; sleep 0.02; done
expect_eq "duration window 2: complete" "$(verify_rc du.w2.zst)" 0
expect_eq "duration window 2: events = phase 0's calls" "$(json_num du.w2.zst events)" "$calls"
touch "$S/go.1" "$S/go.exit"
wait $recpid
expect_eq "duration program: exit status" $? 0

# ---- dlopen'ed, not preloaded: the shim stays dormant -----------------------------------
# (What attach relies on: allocrec -p loads it into a running process.) No
# trace, no edit of the environment, the program unharmed.
ALLOCRR_OUTPUT=$W/dl.zst /usr/bin/python3 -c '
import ctypes, sys
ctypes.CDLL(sys.argv[1])
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
x = [bytes(100 + i % 50) for i in range(20000)]
print(libc.getenv(b"ALLOCRR_OUTPUT").decode(), len(x))' "$B/lib/liballocrr-rec.so" >dl.out 2>dl.err
expect_eq "dlopen'ed shim: program exit status" $? 0
expect_eq "dlopen'ed shim: environment untouched, program ran" "$(cat dl.out)" "$W/dl.zst 20000"
expect_eq "dlopen'ed shim: no trace" "$(ls "$W"/dl*.zst 2>/dev/null | wc -l)" 0
expect_eq "dlopen'ed shim: nothing on stderr" "$(cat dl.err)" ""

# ---- --rotate: segments that sum up ----------------------------------------------------
S=$W/sync3
mkdir -p "$S"
touch "$S/go.0" "$S/go.1" "$S/go.2" "$S/go.3" "$S/go.exit"
rm -f rot.counts
env LD_PRELOAD=$P/librec_count.so REC_COUNT_OUT=$W/rot.counts \
	"$REC" --rotate 24K -o "$W/rot.zst" "$P/rec_phases" "$S" 4 6000 3 >rot.out 2>rot.err
expect_eq "rotate: exit status" $? 0
segs=$(cd "$W" && ls rot.zst rot.w*.zst 2>/dev/null | sort -t w -k2 -n | wc -l)
[ "$segs" -ge 3 ] && ok "rotate: $segs segments" || fail "rotate: $segs segment(s): $(ls "$W")"
sum=0 dropped=0 prev_hi=0 bad=0
for i in $(seq 1 "$segs"); do
	f=rot.zst; [ $i -gt 1 ] && f=rot.w$i.zst
	[ -e "$f" ] || { fail "rotate: missing $f"; continue; }
	v=$(verify_rc "$f")
	[ "$v" = 0 ] || { bad=$((bad + 1)); echo "  $f: verify $v"; }
	"$CHECK" check "$f" >/dev/null || { bad=$((bad + 1)); echo "  $f: order check failed"; }
	e=$(json_num "$f" events) d=$(json_num "$f" dropped_events)
	sum=$((sum + e)) dropped=$((dropped + d))
	if [ $i -lt "$segs" ]; then
		[ "$(json_str "$f" stopped)" = rotate ] || { bad=$((bad + 1)); echo "  $f: stopped $(json_str "$f" stopped)"; }
	fi
	if [ $i -gt 1 ]; then
		[ "$(json_str "$f" reason)" = rotate ] || { bad=$((bad + 1)); echo "  $f: window reason $(json_str "$f" reason)"; }
		[ "$(json_num "$f" index)" = $((i - 1)) ] || { bad=$((bad + 1)); echo "  $f: window index $(json_num "$f" index)"; }
	fi
	# A rotation that lands just before the program's last call leaves a last
	# segment without events: nothing to order there.
	if [ "$e" != 0 ]; then
		read -r lo hi < <(seq_range "$f")
		[ "$lo" -gt "$prev_hi" ] || { bad=$((bad + 1)); echo "  $f: seqs $lo..$hi, previous segment up to $prev_hi"; }
		prev_hi=$hi
	fi
done
expect_eq "rotate: every segment verifies, keeps order, says rotate, seqs continue" $bad 0
pid=$("$AT" info rot.zst --json | sed 's/.*"pid":\([0-9]*\),.*/\1/')
counted=$(awk -v p="$pid" '$1 == p {for (i = 3; i <= NF; i += 2) s += $i} END {print s + 0}' rot.counts)
d=$((counted - sum - dropped))
# The counting shim also sees 1-3 calls glibc makes for the recorder's
# writer thread (rec_bounded.sh says which); nothing else may differ.
[ $d -ge 1 ] && [ $d -le 3 ] && ok "rotate: $sum events + $dropped dropped over $segs segments = counted $counted less $d of the writer thread's" ||
	fail "rotate: segments hold $sum events + $dropped dropped, the counting shim saw $counted"

# ---- --rotate with --stacks: every segment has its own stacks and module map ------------
S=$W/sync4
mkdir -p "$S"
touch "$S/go.0" "$S/go.1" "$S/go.2" "$S/go.exit"
# 12 000 calls a phase (~600 KB of trace, 0.2 s): with 3 000 (~130 KB) a
# loaded machine's writer could be late enough for one segment to take all
"$REC" -q --stacks --rotate 48K -o "$W/st.zst" "$P/rec_phases" "$S" 3 12000 2 >st.out 2>st.err
expect_eq "rotate --stacks: exit status" $? 0
bad=0 n=0
for f in st*.zst; do
	n=$((n + 1))
	v=$(verify_rc "$f")
	[ "$v" = 0 ] || { bad=$((bad + 1)); echo "  $f: verify $v"; }
	e=$(json_num "$f" events) st=$(json_num "$f" stacks) mo=$(json_num "$f" modules)
	if [ "$e" -gt 100 ] && { [ "$st" = 0 ] || [ "$mo" = 0 ]; }; then
		bad=$((bad + 1)); echo "  $f: $e events, $st stacks, $mo modules"
	fi
	"$AT" stacks "$f" >/dev/null 2>&1 || [ "$e" -le 100 ] || { bad=$((bad + 1)); echo "  $f: alloctrace stacks failed"; }
done
[ $n -ge 2 ] && ok "rotate --stacks: $n segments" || fail "rotate --stacks: $n segment(s)"
expect_eq "rotate --stacks: every segment verifies with its own stacks and modules" $bad 0

finish
