#!/usr/bin/env bash
# Recorder torture: fork storms from a multi-threaded parent. Worker threads
# run every heap function without pause while three threads fork children as
# fast as they can, so forks land while other threads are anywhere in the
# recorder or glibc (the classic bug: a lock held by another thread at fork
# time, which the child then waits for forever). The "cold" run makes that
# window wide under --stacks: its workers keep starting threads that unwind
# frames nobody has seen, inside libunwind's global cache lock and the
# loader's lock (a child forked then used to hang in its first unwind).
# Every child must end by itself: none hung (blocked with no thread able to
# run for 30 s, however loaded the machine: see tests/progs/torture_fork.c)
# and none still alive at the last-resort limit; for each one that did not,
# its threads' states and a gdb backtrace are printed below. Its own trace
# PROG.PID.zst must be complete with exactly the calls it made (and its
# thread, when it started one); the parent's trace must hold exactly the
# workers' calls.
# ALLOCRR_TORTURE_SCALE multiplies the number of forks.
. "$(dirname "$0")/../progs/rec_testlib.sh"
S=${ALLOCRR_TORTURE_SCALE:-1}
TP=$P/torture_fork TC=$P/torture_check
for f in "$TP" "$TC" "$P/rec_fork"; do [ -x "$f" ] || { echo "missing $f: run make first"; exit 77; }; done

runs=0 forks=0 hung=0 timeouts=0 children_ok=0 events=0 lost=0
# run NAME ALLOCREC_OPTS WORKERS FORKERS FORKS [cold]
run() {
	local name=$1 opts=$2
	mkdir "$name" && cd "$name"
	"$REC" -q $opts "$TP" "$3" "$4" "$5" ${6:-} >out.txt 2>err.txt
	expect_eq "$name: exit status" $? 0
	expect_eq "$name: nothing on stderr" "$(cat err.txt)" ""
	local h to bad=0 n=0 pid s m st f c
	h=$(awk '/^info hung/{print $3}' out.txt)
	to=$(awk '/^info timeout/{print $3}' out.txt)
	expect_eq "$name: children that hung" "$h" 0
	expect_eq "$name: children still alive at the last-resort limit" "$to" 0
	for f in stuck.*.txt; do
		[ -e "$f" ] || continue
		echo "--- $name: $f (what the child was doing when it was given up)"
		grep -v -e '^\[New Thread' -e '^Downloading' -e 'debuginfod' "$f" | head -150
	done
	while read -r _ pid _ s _ m _ st; do
		n=$((n + 1))
		f=torture_fork.$pid.zst
		if [ "$st" != 0 ]; then bad=$((bad + 1)); echo "child $pid: status $st"; continue; fi
		c=$("$TC" count "$f" 2>&1 | tr '\n' ' ')
		local want="op malloc $m op calloc $m op realloc $m op reallocarray $m op posix_memalign $m op aligned_alloc $m op memalign $m op free $((6 * m)) "
		local th=1
		[ "$m" -gt 0 ] && th=2
		if [[ "$c" != "$want"* ]] || [[ "$c" != *"seq 0 $s info status complete info dropped 0 "* ]] ||
			[[ "$c" != *"info threads $th info order_errors 0 "* ]]; then
			bad=$((bad + 1))
			[ $bad -le 5 ] && echo "child $pid (seq $s, mix $m, $th threads): $c"
		else
			events=$((events + 2 * s + 13 * m))
		fi
	done < <(grep '^child ' out.txt)
	expect_eq "$name: children" "$n" "$5"
	expect_eq "$name: children whose trace is not complete and exact" "$bad" 0
	local parent
	parent=$(ls torture_fork.*.zst | while read -r f; do grep -q "^child ${f//[^0-9]/} " out.txt || echo "$f"; done)
	expect_eq "$name: parent verify" "$(verify_rc "$parent")" 0
	"$TC" count "$parent" >chk.txt 2>&1
	if diff <(grep '^op ' out.txt) <(grep '^op ' chk.txt) >diff.txt; then
		ok "$name: parent trace has every worker call, exactly ($(awk '/^op malloc/{print $3}' out.txt) of each kind)"
	else fail "$name: parent calls differ (program < > trace):"; cat diff.txt; fi
	expect_eq "$name: parent dropped" "$(awk '/^info dropped/{print $3}' chk.txt)" 0
	expect_eq "$name: parent order errors" "$(awk '/^info order_errors/{print $3}' chk.txt)" 0
	expect_eq "$name: traces" "$(ls torture_fork.*.zst | wc -l)" $(($5 + 1))
	runs=$((runs + 1)) forks=$((forks + n)) hung=$((hung + ${h:-0})) timeouts=$((timeouts + ${to:-0}))
	children_ok=$((children_ok + n - bad))
	local ev
	ev=$(awk '/^op /{s+=$3} END{print s}' out.txt)
	events=$((events + ev))
	lost=$((lost + ev - $(awk '/^op /{s+=$3} END{print s}' chk.txt)))
	cd ..
}

run storm "" 4 3 $((150 * S))
run stacks "--stacks" 2 2 $((40 * S))
run cold "--stacks" 2 2 $((100 * S)) cold

# A program thread inside dl_iterate_phdr when another forks (rec_fork
# loader), and a fork from inside its callback (loader-self): glibc leaves
# the loader's lock held in the child, where the recorder must not need it
# (under --stacks the child used to hang at once in the fork handler's
# module scan). The child ends by itself with its calls recorded; under
# --stacks it goes without stacks and says so, once.
loader_children=0
for mode in loader loader-self; do
	for opts in "" --stacks; do
		name=$mode${opts:+-stacks}
		mkdir "$name" && cd "$name"
		"$REC" -q $opts "$P/rec_fork" $mode >out.txt 2>err.txt
		expect_eq "$name: exit status" $? 0
		read -r _ child _ st <out.txt
		expect_eq "$name: child status (hung: still alive after 60 s)" "$st" 0
		ct=rec_fork.$child.zst
		expect_eq "$name: child trace verifies" "$(verify_rc "$ct")" 0
		expect_eq "$name: child mallocs of 1234" "$("$AT" dump "$ct" | cut -d' ' -f3- | grep -c '^malloc 1234 ')" 5
		want=
		[ -n "$opts" ] && want="allocrr: process $child was forked while another thread was inside the unwinder or the dynamic loader, whose locks a child inherits held; it is recorded without stacks"
		expect_eq "$name: stderr" "$(cat err.txt)" "$want"
		[ "$st" = 0 ] && loader_children=$((loader_children + 1))
		cd ..
	done
done

echo "tally torture_rec_fork scale=$S runs=$runs forks=$forks hung=$hung timeouts=$timeouts children_exact=$children_ok events_checked=$events events_lost=$lost loader_children_ended=$loader_children/4"
finish
