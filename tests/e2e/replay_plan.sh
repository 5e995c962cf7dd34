#!/usr/bin/env bash
# allocreplay --plan (replayer/plan_jobs.c, docs/DISTRIBUTED.md): the replay
# matrix of two traces (one whose recorded allocator, glibc, is not among
# -a, so it is a job of its own) x two allocators x 2 repetitions, printed
# as jobs, run by a real GNU parallel with two job slots, the jobs'
# databases gathered with allocreport merge — and compared with the serial
# allocreplay run of the same matrix: every run present exactly once (trace
# x allocator x repetition), statuses ok, and the figures that do not
# depend on timing (ops, peak live bytes, failed allocations, the workload's
# checksum, allocations and frees the allocator saw) equal. Timing figures
# are never compared (two jobs at once measure each other). Then
# --plan-format json parsed by python3, --plan-format slurm checked with
# bash -n and run task by task, and bad command lines.
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"
AREP="$B/bin/allocreport"
PY=/usr/bin/python3
command -v parallel >/dev/null || { echo "GNU parallel not installed (apt-get install parallel)"; exit 77; }
parallel --version 2>/dev/null | grep -q "GNU parallel" || { echo "parallel is not GNU parallel"; exit 77; }
[ -x "$PY" ] || { echo "no $PY"; exit 77; }

"$B/bin/alloctrace" gen D --ops 20000 -q -o d.zst || { fail "alloctrace gen D"; finish; }
"$B/bin/allocrec" -q -o ls.zst /bin/ls -la / >/dev/null || { fail "allocrec /bin/ls"; finish; }
rec=$("$B/bin/alloctrace" info ls.zst | awk '$1 == "allocator" {print $2}')
case $rec in libc.so*) ok "ls.zst records glibc's malloc ($rec)" ;; *) echo "ls.zst records '$rec', not glibc: skip"; exit 77 ;; esac
ALLOCS=pool,freelist
MATRIX=(d.zst ls.zst -a $ALLOCS --repeat 2 --touch pages --timing sample:64)

# ---- the serial run ----
"$AR" "${MATRIX[@]}" -q --db serial.db >serial.txt 2>serial.err || { fail "serial allocreplay: $(cat serial.err)"; finish; }

# ---- the plan, run by GNU parallel on two job slots, merged ----
mkdir jobs
"$AR" --plan "${MATRIX[@]}" --db-dir jobs >jobs.txt 2>plan.err || { fail "allocreplay --plan: $(cat plan.err)"; finish; }
expect_eq "jobs: 2 traces x 2 allocators + ls.zst's recorded glibc" "$(wc -l <jobs.txt)" 5
grep -q "also a job for glibc" plan.err && ok "the plan says glibc is a job for ls.zst" ||
	fail "no note about the baseline job: $(cat plan.err)"
expect_eq "every job has --no-baseline" "$(grep -c -- ' --no-baseline ' jobs.txt)" 5
expect_eq "every job carries --timing and --touch" "$(grep -c -- '--timing sample:64 --touch pages' jobs.txt)" 5
parallel --will-cite -j2 --halt now,fail=1 <jobs.txt >parallel.out 2>parallel.err ||
	{ fail "parallel -j2: $(tail -5 parallel.err)"; finish; }
expect_eq "databases written by the jobs" "$(ls jobs/*.db | wc -l)" 5
"$AREP" merge merged.db jobs/*.db >merge.out 2>&1 || { fail "allocreport merge: $(cat merge.out)"; finish; }

# Every run, by what identifies it and what does not depend on timing.
runs() {
	q "$1" "SELECT trace_sha256, allocator, repetition, status, ops, peak_live_bytes, failed_allocs,
	        op_checksum, allocs_expected, frees_expected FROM runs ORDER BY 1, 2, 3"
}
runs serial.db >serial.runs
runs merged.db >merged.runs
expect_eq "serial runs (2 traces x 2 allocators x 2, + glibc x 2 on ls.zst)" "$(wc -l <serial.runs)" 10
if cmp -s serial.runs merged.runs; then ok "merged runs = serial runs (trace, allocator, repetition, status, ops, peak live, failed, checksum, allocs, frees)"
else fail "merged runs differ from serial: $(diff serial.runs merged.runs | head -10)"; fi
expect_eq "runs present more than once in the merge" \
	"$(q merged.db "SELECT count(*) FROM (SELECT 1 FROM runs GROUP BY trace_sha256, allocator, repetition HAVING count(*) > 1)")" 0
expect_eq "runs not ok in the merge" "$(q merged.db "SELECT count(*) FROM runs WHERE status <> 'ok'")" 0
expect_eq "options stored with the runs: the same" \
	"$(q merged.db "SELECT DISTINCT options FROM runs ORDER BY 1")" "$(q serial.db "SELECT DISTINCT options FROM runs ORDER BY 1")"

# The comparison allocreport builds from each: same traces, allocators, run
# counts, baseline and exact figures (timing left out).
"$AREP" --db serial.db --format json >serial.json 2>serial.rep.err || fail "allocreport serial.db: $(cat serial.rep.err)"
"$AREP" --db merged.db --format json >merged.json 2>merged.rep.err || fail "allocreport merged.db: $(cat merged.rep.err)"
shape() {
	"$PY" - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for t in sorted(doc["traces"], key=lambda t: t["sha256"]):
    print(t["sha256"], t["events"], t["calls"], t["threads"], t["peak_live_bytes"], t["baseline"])
    for a in sorted(t["allocators"], key=lambda a: a["name"]):
        print(" ", a["name"], a["runs_total"], a["runs_ok"], json.dumps(a["failed_allocs"]))
PY
}
shape serial.json >serial.shape && shape merged.json >merged.shape || fail "reading the comparison JSON"
if [ -s serial.shape ] && cmp -s serial.shape merged.shape; then ok "allocreport: the same comparison (traces, allocators, runs, baseline)"
else fail "comparisons differ: $(diff serial.shape merged.shape | head -10)"; fi
expect_eq "ls.zst's baseline is the recorded glibc, in the merge too" \
	"$(grep -c ' glibc$' merged.shape)" 1

# ---- results from two machines are not silently compared ----
# One job's database as if run elsewhere (runs.kernel is part of the
# machine; the host name too): merged, the trace is two comparisons unless
# --across-machines.
dsha=$(q serial.db "SELECT sha256 FROM traces WHERE name = 'd.zst'")
other=jobs/${dsha:0:16}-freelist.db
cp "$other" other.db
q other.db "UPDATE runs SET kernel = 'Linux 9.9-elsewhere'" || fail "editing other.db"
"$AREP" merge mixed.db jobs/${dsha:0:16}-pool.db other.db >/dev/null 2>&1 || fail "merge mixed.db"
"$AREP" --db mixed.db --format json >mixed.json 2>mixed.err || fail "allocreport mixed.db: $(cat mixed.err)"
grep -q "d.zst: runs from 2 machines, compared per machine" mixed.err && ok "two machines: said on stderr" ||
	fail "no note about two machines: $(cat mixed.err)"
"$PY" - mixed.json <<'PY' && ok "two machines: two comparisons of d.zst, one allocator each, machines named" || fail "mixed.json per machine"
import json, sys
ts = json.load(open(sys.argv[1]))["traces"]
assert len(ts) == 2 and ts[0]["sha256"] == ts[1]["sha256"], [(t["sha256"], t["machine"]) for t in ts]
assert sorted(a["name"] for t in ts for a in t["allocators"]) == ["freelist", "pool"]
assert "Linux 9.9-elsewhere" in ts[1]["machine"] and "Linux 9.9-elsewhere" not in ts[0]["machine"], ts[1]["machine"]
PY
"$AREP" --db mixed.db 2>/dev/null | grep -q "machine .*Linux 9.9-elsewhere" && ok "two machines: the table names the machine" || fail "table without the machine"
"$AREP" --db mixed.db --across-machines --format json >across.json 2>across.err || fail "--across-machines: $(cat across.err)"
grep -q "d.zst: comparing runs from 2 machines as one (--across-machines)" across.err && ok "--across-machines: said on stderr" ||
	fail "--across-machines: no note: $(cat across.err)"
"$PY" - across.json <<'PY' && ok "--across-machines: one comparison of d.zst with both allocators" || fail "across.json"
import json, sys
ts = json.load(open(sys.argv[1]))["traces"]
assert len(ts) == 1 and sorted(a["name"] for a in ts[0]["allocators"]) == ["freelist", "pool"], ts
assert ts[0]["machine"] == "2 machines (--across-machines)", ts[0]["machine"]
PY
"$AREP" --db merged.db --format json >/dev/null 2>one.err
grep -q "machines" one.err && fail "one machine, yet a note: $(cat one.err)" || ok "one machine: no note"
"$AREP" --db mixed.db --recommend >/dev/null 2>&1 || fail "--recommend on mixed.db"
"$AREP" diff "$other" other.db >diff.txt 2>diff.err
grep -q "DIFFERENT MACHINES: OLD ran on .*, NEW on .*Linux 9.9-elsewhere" diff.txt && grep -q "Linux 9.9-elsewhere" diff.err &&
	ok "diff: the same trace on another machine is said (table and stderr)" || fail "diff: $(head -5 diff.txt diff.err)"

# An allocator at two versions on one machine: compared as one, said so.
cp merged.db versions.db
q versions.db "UPDATE runs SET allocator_version = '0.0-other' WHERE run_id = (SELECT min(run_id) FROM runs WHERE allocator = 'pool')"
"$AREP" --db versions.db >/dev/null 2>versions.err
grep -q ": pool ran at versions .*0.0-other.*, compared as one allocator" versions.err &&
	ok "an allocator at two versions: said on stderr" || fail "no note about versions: $(cat versions.err)"

# ---- --plan-format json ----
"$AR" --plan "${MATRIX[@]}" --db-dir jobs --plan-format json >jobs.json 2>/dev/null || fail "--plan-format json"
"$PY" - jobs.json jobs.txt <<'PY' && ok "--plan-format json: 5 objects, fields and argv = the shell plan's commands" || fail "--plan-format json"
import json, shlex, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
lines = [l.rstrip("\n") for l in open(sys.argv[2])]
assert len(objs) == 5, len(objs)
for k, (o, line) in enumerate(zip(objs, lines)):
    assert o["job"] == k
    assert set(o) == {"job", "trace", "sha256", "allocator", "repeat", "db", "argv"}, o.keys()
    assert len(o["sha256"]) == 64 and o["repeat"] == 2
    assert o["db"] == "jobs/%s-%s.db" % (o["sha256"][:16], o["allocator"])
    assert shlex.split(line) == o["argv"], (line, o["argv"])
    assert o["argv"][-1] == o["trace"] and o["argv"][o["argv"].index("-a") + 1] == o["allocator"]
assert len({o["db"] for o in objs}) == 5
PY

# Quoting: a directory with a space and a quote survives the shell.
"$AR" --plan d.zst -a pool --db-dir "it's here" >quoted.txt 2>/dev/null
"$PY" - quoted.txt <<'PY' && ok "--db-dir with a space and a quote: one shell word" || fail "quoting: $(cat quoted.txt)"
import shlex, sys
argv = shlex.split(open(sys.argv[1]).read())
assert argv[argv.index("--db") + 1].startswith("it's here/"), argv
PY

# ---- --route travels with the job: the same routed runs as serially ----
ROUTED=(d.zst -a glibc --repeat 1 --route pool:size=64 --route arena:size=100-200)
"$AR" "${ROUTED[@]}" -q --db rserial.db >/dev/null 2>&1 || fail "serial --route"
mkdir rj && "$AR" --plan "${ROUTED[@]}" --db-dir rj >rj.txt 2>/dev/null && bash rj.txt >/dev/null 2>rj.err ||
	fail "--route job: $(cat rj.err)"
rq() { q "$1" "SELECT allocator, repetition, status, ops, options FROM runs ORDER BY 1, 2"; }
[ -n "$(rq rserial.db)" ] && [ "$(rq rserial.db)" = "$(rq rj/*.db)" ] &&
	ok "--route: the job's runs (names, options) = the serial run's: $(rq rj/*.db | cut -d'|' -f1 | tr '\n' ' ')" ||
	fail "--route: serial '$(rq rserial.db)' vs job '$(rq rj/*.db)'"

# ---- --plan-format slurm: a job-array script, task k runs job k ----
"$AR" --plan d.zst -a pool,freelist --repeat 1 --db-dir sl --plan-format slurm >array.sh 2>/dev/null || fail "--plan-format slurm"
"$AR" --plan d.zst -a pool,freelist --repeat 1 --db-dir sl >array.txt 2>/dev/null
bash -n array.sh && ok "the array script parses (bash -n)" || fail "bash -n array.sh"
expect_eq "#SBATCH --array" "$(grep '^#SBATCH --array=' array.sh)" "#SBATCH --array=0-1"
mkdir sl
for k in 0 1; do
	want=$(sed -n "$((k + 1))p" array.txt | awk '{for (i = 1; i < NF; i++) if ($i == "--db") print $(i + 1)}')
	before=$(ls sl | wc -l)
	SLURM_ARRAY_TASK_ID=$k bash array.sh >task$k.out 2>&1 || fail "task $k: $(cat task$k.out)"
	expect_eq "task $k: one new database" "$(($(ls sl | wc -l) - before))" 1
	[ -f "$want" ] && ok "task $k wrote job $k's $want" || fail "task $k did not write $want: $(ls sl)"
	expect_eq "task $k: job $k's runs only" "$(q "$want" "SELECT DISTINCT allocator FROM runs")" \
		"$(sed -n "$((k + 1))p" array.txt | awk '{for (i = 1; i < NF; i++) if ($i == "-a") print $(i + 1)}')"
done
SLURM_ARRAY_TASK_ID=2 bash array.sh >task2.out 2>&1 && fail "task 2 of a 2-job array succeeded" ||
	{ grep -q "no job 2" task2.out && ok "task 2: no such job, said" || fail "task 2: $(cat task2.out)"; }
env -u SLURM_ARRAY_TASK_ID bash array.sh >notask.out 2>&1 && fail "the script ran outside an array task" ||
	ok "outside an array task: refused ($(head -c 80 notask.out))"

# ---- bad command lines: exit 1, one clear line ----
bad() { # what, expected message, args...
	local what=$1 msg=$2
	shift 2
	"$AR" "$@" >bad.out 2>bad.err
	local rc=$?
	expect_eq "$what: exit status" "$rc" 1
	grep -q -- "$msg" bad.err && ok "$what: says '$msg'" || fail "$what: $(cat bad.err)"
}
bad "--plan without traces" "no trace given" --plan -a pool
bad "--plan with an unknown allocator" "unknown allocator 'nosuch'" --plan -a nosuch d.zst
bad "--plan-format xml" "--plan-format must be shell, json or slurm" --plan --plan-format xml d.zst
bad "--db-dir without --plan" "go with --plan" --db-dir x d.zst
"$AR" --plan -a pool missing.zst >bad.out 2>bad.err
expect_eq "--plan with a missing trace: exit status" "$?" 2
[ ! -s bad.out ] && grep -q "missing.zst" bad.err && ok "a missing trace: named, no partial plan" || fail "missing trace: $(cat bad.out bad.err)"
finish
