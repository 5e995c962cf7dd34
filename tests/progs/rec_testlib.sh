# rec_testlib.sh — sourced by tests/e2e/rec_*.sh (not a test itself).
# Sets B (build dir), P (test programs), REC (allocrec), AT (alloctrace),
# CHECK (rec_tracecheck), a scratch directory W (removed at exit), and a
# few helpers. Every helper prints what it compared when it fails.
set -u
B=${ALLOCRR_BUILD:-build}
B=$(cd "$B" && pwd)
P=$B/tests/progs
REC=$B/bin/allocrec
AT=$B/bin/alloctrace
CHECK=$P/rec_tracecheck
for f in "$REC" "$B/lib/liballocrr-rec.so" "$CHECK" "$AT"; do
	[ -e "$f" ] || { echo "missing $f: run make first"; exit 77; }
done
W=$(mktemp -d /tmp/allocrr-rec-test.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W"
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
# expect_eq WHAT GOT WANT
expect_eq() { if [ "$2" = "$3" ]; then ok "$1 = $3"; else fail "$1: got '$2', want '$3'"; fi; }
# The one trace matching a glob (fails if not exactly one).
one_trace() {
	local n
	n=$(ls $1 2>/dev/null | wc -l)
	[ "$n" = 1 ] || { fail "expected one trace matching $1, found $n: $(ls "$W")"; echo /nonexistent; return; }
	ls $1
}
# Dump lines without the SEQ and TID columns.
dump3() { "$AT" dump "$1" | cut -d' ' -f3-; }
# verify exit status of alloctrace verify (0 complete, 1 truncated, 2 corrupt)
verify_rc() { "$AT" verify "$1" >/dev/null 2>&1; echo $?; }
finish() {
	if [ $fails -gt 0 ]; then echo "$fails check(s) failed"; exit 1; fi
	echo "all checks passed"; exit 0
}

# run_case NAME CMD...: CMD unrecorded and recorded (allocrec $REC_OPTS,
# e.g. --stacks) in $W/NAME; the same exit status, stdout and stderr; every
# trace verifies and keeps SPEC order; the events per op, summed over all
# traces of the run, match the counting shim (librec_count.so) riding in the
# very same processes, within 8 calls or 0.5 % per op (the environment the
# shim edits changes what programs like python3 allocate). Adds the events
# and processes to rc_events and rc_traces, the largest difference to
# rc_worst.
rc_events=0 rc_traces=0 rc_worst=0
run_case() {
	local name=$1; shift
	mkdir -p "$W/$name/rec"
	( cd "$W/$name" && "$@" >bare.out 2>bare.err ); local bare=$?
	# The counting shim rides in the same processes, behind the recorder
	# (allocrec keeps an existing LD_PRELOAD after its shim): it counts the
	# very calls the recorder passes on. Counting a separate run would not
	# do: a threaded python3 makes a different number of calls each run.
	# Expected difference: per recorded process, 1 calloc and 2 frees reach
	# the counting shim but not the trace — glibc allocating and releasing
	# for the recorder's own writer thread (pthread_create's TLS vector), made
	# inside the shim and so not the program's calls (/bin/true, which makes
	# no heap call, shows exactly these three).
	( cd "$W/$name/rec" && env LD_PRELOAD=$P/librec_count.so REC_COUNT_OUT=$W/$name/counts.all \
		"$REC" -q ${REC_OPTS:-} -o "$W/$name/rec/main.zst" "$@" >../rec.out 2>../rec.err ); local rc=$?
	cd "$W/$name"
	expect_eq "$name: exit status" $rc $bare
	cmp -s bare.out rec.out && ok "$name: same stdout ($(wc -c <bare.out) bytes)" || fail "$name: stdout differs"
	cmp -s bare.err rec.err && ok "$name: same stderr" || { fail "$name: stderr differs"; diff bare.err rec.err | head; }
	local traces=(rec/*.zst) bad=0
	for t in "${traces[@]}"; do
		v=$(verify_rc "$t"); [ "$v" = 0 ] || { bad=$((bad + 1)); echo "  $t: verify $v"; }
		"$CHECK" check "$t" >/dev/null || { bad=$((bad + 1)); echo "  $t: order check failed"; }
	done
	expect_eq "$name: ${#traces[@]} trace(s) verify and keep SPEC order" $bad 0
	"$CHECK" count "${traces[@]}" >rec.counts
	# Only the recorded processes' lines (allocrec itself ran under the
	# counting shim too): their pids are in the trace headers.
	local pids; pids=$(for t in "${traces[@]}"; do "$AT" info "$t" --json | sed 's/.*"pid":\([0-9]*\),.*/\1/'; done)
	awk -v pids="$pids" 'BEGIN {n = split(pids, p, "\n"); for (i = 1; i <= n; i++) want[p[i]] = 1}
		($1 in want) {for (i = 2; i < NF; i += 2) c[$i] += $(i + 1)} END {for (k in c) print k, c[k]}' \
		counts.all | sort >cnt.counts
	local worst=0 over=0
	while read -r op n; do
		local m; m=$(awk -v o=$op '$1==o{print $2}' cnt.counts)
		local d=$((n - ${m:-0})); d=${d#-}
		local slack=$((n / 200)); [ $slack -lt 8 ] && slack=8
		[ $d -gt $worst ] && worst=$d
		[ $d -gt $slack ] && over=1
		[ $d -gt 0 ] && echo "  $op: trace $n, counting shim ${m:-0}"
	done <rec.counts
	local total; total=$(awk '{s += $2} END {print s}' rec.counts)
	rc_events=$((rc_events + total)) rc_traces=$((rc_traces + ${#traces[@]}))
	[ $worst -gt $rc_worst ] && rc_worst=$worst
	[ $over = 0 ] && ok "$name: $total events match the counting shim (largest difference $worst)" \
		|| fail "$name: event counts differ by up to $worst"
	cd "$W"
}
