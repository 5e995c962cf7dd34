#!/usr/bin/env bash
# make test-slurm (optional, root only): a private single-node Slurm —
# slurmctld and slurmd of Debian's packages (slurmctld, slurmd,
# slurm-client), started here in the foreground with a slurm.conf of this
# test's own (auth/none, no MUNGE, state, spool, logs and ports in the
# private temp dir, nothing under /etc touched) — runs the job array of
# allocreplay --plan --plan-format slurm for real with sbatch --wait; the
# array's databases, merged with allocreport merge, must hold the same runs
# as the serial allocreplay of the same matrix (trace x allocator x
# repetition, status, and the figures that do not depend on timing).
# slurmd must be root to start job steps, hence root only (exit 77
# otherwise). docs/DISTRIBUTED.md, "Slurm job arrays".
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"
AREP="$B/bin/allocreport"
[ "$(id -u)" = 0 ] || { echo "not root: slurmd must run as root to start jobs"; exit 77; }
for c in slurmctld slurmd sbatch sinfo; do
	command -v $c >/dev/null || { echo "no $c (apt-get install slurmctld slurmd slurm-client)"; exit 77; }
done

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

node=$(hostname -s)
port=$((20000 + RANDOM % 20000))
mkdir state spool
cat >slurm.conf <<EOF
ClusterName=allocrrtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/linear
ReturnToService=2
MpiDefault=none
SwitchType=switch/none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=allocrrtest Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$T/slurm.conf
slurmctld -D -i >slurmctld.out 2>&1 &
pids+=($!)
slurmd -D -N "$node" >slurmd.out 2>&1 &
pids+=($!)
for i in $(seq 1 30); do
	sinfo -h -o %t 2>/dev/null | grep -q '^idle' && break
	sleep 1
done
sinfo -h -o %t 2>/dev/null | grep -q '^idle' && ok "a private Slurm is up (node $node idle)" ||
	{ fail "Slurm did not come up: $(tail -3 slurmctld.out slurmd.out slurmctld.log slurmd.log 2>/dev/null)"; finish; }

"$B/bin/alloctrace" gen D --ops 20000 -q -o d.zst || { fail "alloctrace gen D"; finish; }
"$B/bin/alloctrace" gen S2 --threads 2 --ops 20000 -q -o s2.zst || { fail "alloctrace gen S2"; finish; }
MATRIX=(d.zst s2.zst -a glibc,pool --repeat 2)
"$AR" "${MATRIX[@]}" -q --db serial.db >/dev/null 2>serial.err || { fail "serial: $(cat serial.err)"; finish; }
mkdir jobs
"$AR" --plan "${MATRIX[@]}" --db-dir jobs --plan-format slurm >replay.sbatch 2>plan.err || { fail "plan: $(cat plan.err)"; finish; }
timeout 600 sbatch --wait -o "$T/slurm-%A_%a.out" replay.sbatch >sbatch.out 2>&1 ||
	fail "sbatch --wait: $(cat sbatch.out; tail -5 slurm-*.out)"
expect_eq "array tasks that wrote their database" "$(ls jobs/*.db 2>/dev/null | wc -l)" 4
"$AREP" merge merged.db jobs/*.db >merge.out 2>&1 || { fail "merge: $(cat merge.out)"; finish; }
runs() {
	q "$1" "SELECT trace_sha256, allocator, repetition, status, ops, peak_live_bytes, failed_allocs,
	        op_checksum, allocs_expected, frees_expected FROM runs ORDER BY 1, 2, 3"
}
runs serial.db >serial.runs
runs merged.db >merged.runs
expect_eq "serial runs" "$(wc -l <serial.runs)" 8
if cmp -s serial.runs merged.runs; then ok "the Slurm array's merged runs = the serial runs"
else fail "merged runs differ: $(diff serial.runs merged.runs | head)"; fi
expect_eq "runs not ok" "$(q merged.db "SELECT count(*) FROM runs WHERE status <> 'ok'")" 0
finish
