#!/usr/bin/env bash
# Recorder torture with real programs for longer runs: Debian's python3 on
# an allocation-heavy workload (PYTHONMALLOC=malloc, two threads, json,
# reallocs; tests/allocators/programs/torture_workload.py), recorded plain
# and with --stacks; gcc -O2 compiling our own sources (gcc forks and execs
# cc1 and as, each recorded into its own trace); sqlite3 building and
# querying an indexed table. For each: the same exit status, stdout and
# stderr as unrecorded, every trace complete and in SPEC order, and the
# events per op equal to what the counting shim saw in the same processes
# (run_case, rec_testlib.sh). ALLOCRR_TORTURE_SCALE multiplies the Python
# rounds, the files compiled and the rows.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/progs/rec_testlib.sh"
S=${ALLOCRR_TORTURE_SCALE:-1}
for t in /usr/bin/python3 gcc sqlite3; do
	[ -x "$(command -v $t)" ] || { echo "$t not installed (make deps installs it)"; exit 77; }
done
export PYTHONHASHSEED=0 LC_ALL=C
[ -f "$P/librec_count.so" ] || { echo "missing $P/librec_count.so: run make first"; exit 77; }
t0=$SECONDS

run_case python /usr/bin/env PYTHONMALLOC=malloc /usr/bin/python3 "$ROOT/tests/allocators/programs/torture_workload.py" $((2 * S))
REC_OPTS=--stacks run_case python-stacks /usr/bin/env PYTHONMALLOC=malloc /usr/bin/python3 \
	"$ROOT/tests/allocators/programs/torture_workload.py" $((1 * S))
# The workload prints one digest per round: it ran, not merely failed alike.
expect_eq "python: rounds printed" "$(wc -l <"$W/python/bare.out")" $((2 * S))
expect_eq "python-stacks: rounds printed" "$(wc -l <"$W/python-stacks/bare.out")" $((1 * S))

# gcc on 3 x SCALE of our sources, one process tree each (bash itself is
# recorded too, so the trace count says every exec was followed).
srcs=$(ls "$ROOT"/trace-format/*.c "$ROOT"/analysis/*.c "$ROOT"/replayer/*.c "$ROOT"/recorder/*.c | head -n $((3 * S)))
n_srcs=$(echo "$srcs" | wc -l)
inc="-I$ROOT/trace-format -I$ROOT/common -I$ROOT/results -I$ROOT/analysis -I$ROOT/traces/gen -I$ROOT/replayer -I$ROOT/allocators"
run_case gcc bash -c 'for f in "$@"; do gcc -O2 -std=c11 -D_GNU_SOURCE '"$inc"' -c -o /dev/null "$f" || exit; done' \
	gcc $srcs
expect_eq "gcc: every file compiled (exit status)" "$(cd "$W/gcc" && bash -c 'for f in "$@"; do gcc -O2 -std=c11 \
	-D_GNU_SOURCE '"$inc"' -fsyntax-only "$f" || exit; done' gcc $srcs >/dev/null 2>&1; echo $?)" 0
# bash, and per file: bash's fork, gcc, cc1 and as
expect_eq "gcc: traces" "$(ls "$W"/gcc/rec/*.zst | wc -l)" $((1 + 4 * n_srcs))
rows=$((100000 * S))
run_case sqlite3 sqlite3 :memory: "create table t(a integer, b text); with recursive c(x) as (select 1 union all
	select x+1 from c where x < $rows) insert into t select x, printf('%08d-%s', x, hex(x * 7919)) from c;
	create index i on t(b); select count(*), sum(length(b)) from t; select b from t order by b desc limit 2;"
expect_eq "sqlite3: rows counted" "$(head -n 1 "$W/sqlite3/bare.out" | cut -d'|' -f1)" $rows

echo "tally torture_rec_programs scale=$S python_rounds=$((3 * S)) gcc_files=$n_srcs sqlite_rows=$rows traces=$rc_traces events_checked=$rc_events largest_count_difference=$rc_worst failures=$fails seconds=$((SECONDS - t0))"
finish
