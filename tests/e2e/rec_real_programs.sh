#!/usr/bin/env bash
# Real programs under allocrec: python3, perl, sqlite3, sort, gcc (which
# forks and execs cc1, as, collect2, ld). Each must print the same stdout
# and stderr and exit with the same status as unrecorded; every trace must
# verify; and the events per op, summed over all traces of the run, must
# match an independent counting shim (librec_count.so) run the same way.
#
# Why the counts can differ at all: the recorded run's environment lacks
# ALLOCRR_OUTPUT (the shim removes it) and has other values in ALLOCRR_*/
# LD_PRELOAD, and programs copy their environment (python builds os.environ
# and sys.path from it and from its working directory, whose path differs
# between the two runs). We give the counting run the same variables, so we
# allow only a small slack per op: 8 calls or 0.5 %, whichever is larger.
. "$(dirname "$0")/../progs/rec_testlib.sh"
export PYTHONHASHSEED=0 LC_ALL=C

need() { command -v "$1" >/dev/null || { echo "$1 not installed (make deps installs it)"; exit 77; }; }
for t in /usr/bin/python3 perl sqlite3 sort gcc; do need $t; done

seq 1 60000 | awk '{print ($1 * 7919) % 100003, "line", $1}' >input.txt
cat >prog.c <<'C'
#include <stdio.h>
struct s { int a; double b; };
int main(void) { struct s v = {1, 2.0}; printf("%d %f\n", v.a, v.b); return 0; }
C
cat >script.py <<'PY'
import json, threading, collections
d = {str(i): list(range(i % 50)) for i in range(20000)}
s = json.dumps(d)
c = collections.Counter(s)
def work(n):
    return sum(len(str(x)) for x in range(n))
ts = [threading.Thread(target=work, args=(50000,)) for _ in range(3)]
[t.start() for t in ts]; [t.join() for t in ts]
print(len(s), c.most_common(3))
PY

run_case python3 /usr/bin/python3 "$W/script.py"
run_case perl perl -e 'my %h; $h{$_ % 5000} .= "x" x ($_ % 100) for 1..200000; my @k = sort { $a <=> $b } keys %h; print scalar(@k), " ", length(join("", values %h)), "\n";'
run_case sqlite3 sqlite3 :memory: "create table t(a integer, b text); with recursive c(x) as (select 1 union all select x+1 from c where x < 50000) insert into t select x, printf('%08d-%s', x, hex(x * 7919)) from c; create index i on t(b); select count(*), sum(length(b)) from t; select b from t order by b desc limit 2;"
run_case sort sort -k1,1n -S 1M "$W/input.txt"
run_case gcc gcc -O2 -o /dev/null "$W/prog.c"
finish
