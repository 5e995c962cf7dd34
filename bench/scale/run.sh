#!/usr/bin/env bash
# make bench-scale: traces larger than RAM, and the matrix on two job slots
# (issue 18; figures and method in docs/BENCHMARKS.md, "Traces larger than
# RAM" and "Parallel replay").
#
# (a) big. One generated trace of SCALE_EVENTS events (alloctrace gen
#     SCALE_SCEN --ops N: S1 by default, a window of 4096 64 B objects, so
#     the live set, and with it the replayed heap, does not grow with N).
#     Its bytes per event; alloctrace info and stats on it (time, peak RSS:
#     GNU time's %M); then allocreplay -a SCALE_ALLOCS --repeat 1 on it into
#     a cache of its own, while a sampler reads /proc/PID/status of
#     allocreplay and of each worker every 0.2 s (VmHWM, VmRSS, RssAnon,
#     RssFile): allocreplay's own peak during the compile (until its first
#     worker starts) and overall, each worker's peak, beside what the
#     database says of the same worker (maxrss_bytes, baseline_rss_bytes,
#     peak_heap_rss_bytes); the compiled workload's bytes (file size and
#     du's allocated bytes) per event; compile time (allocreplay's start to
#     its first worker: SHA-256 of the trace, cache check, compile) and
#     events/s. A workload this large is streamed (its decoded ops do not
#     fit --workload-memory's default).
# (b) proof. One scenario (SCALE_PROOF_SCEN, D by default: a long-lived
#     cache of 2048 entries plus short-lived temporaries, realloc included;
#     its peak live bytes are 3.05 MB at 1 M events and 3.09 MB at 20 M, and
#     its calls are slow enough that p50 is above the timer's resolution,
#     unlike S1's) and seed at SCALE_SMALL and 20 x SCALE_SMALL events,
#     replayed SCALE_RUNS times interleaved (order rotated each round) as: 1x
#     streamed (--workload-memory=0), 1x resident (decoded whole before the
#     baselines: --workload-memory=4G), 20x streamed. Per allocator and mode:
#     medians and spread ((max-min)/median) of peak heap RSS, baseline RSS,
#     minor faults (in all and per million ops), ops/s, p50/p99 per op kind
#     (latency table); ratios 20x/1x and streamed/resident. SCALE_SMALL
#     of at least 2.56 M calls keeps the timing period (1 in 256, worker.h
#     AR_TIMING_MIN_SAMPLES) the same at 1x and 20x. Nothing is
#     asserted: the ratios are printed beside the spread they have to be
#     read against.
# (c) parallel. The demo matrix (what make demo replays: demo_server 40000
#     requests, 2 threads, recorded with --stacks; allocreplay --all, 3
#     repetitions) run serially and as allocreplay --plan | parallel -j2 +
#     allocreport merge, SCALE_PAR_RUNS pairs, the order alternated, workload
#     already cached; the same for a control matrix on a 1-thread trace (gen
#     D), whose replays never wait for another thread; then the demo matrix
#     once each way from an empty cache (how many jobs compiled the same
#     trace). Wall time (date), CPU time of the serial run (GNU time), the
#     sums of the replay phases' wall and CPU time from the databases (how
#     much the two slots slowed each other's replays), the load average
#     before each run.
#
#   ALLOCRR_BUILD=build SCALE_EVENTS=500000000 SCALE_SMALL=5000000 SCALE_SCEN=S1 \
#       SCALE_PROOF_SCEN=D SCALE_ALLOCS=glibc,jemalloc SCALE_RUNS=3 SCALE_PAR_RUNS=3 \
#       SCALE_PARTS="big proof parallel" SCALE_DIR=/var/tmp SCALE_KEEP=0 bash bench/scale/run.sh
#
# SCALE_DIR: where the traces, workloads and databases go (a temporary
# directory under it; about 5.5 bytes per event of the big trace plus 21 x
# 7 per SCALE_SMALL event: checked with df before anything is written).
# SCALE_KEEP=1 keeps that directory.
set -u
B=$(cd "${ALLOCRR_BUILD:-build}" && pwd)
EVENTS=${SCALE_EVENTS:-500000000}
SMALL=${SCALE_SMALL:-5000000}
SCEN=${SCALE_SCEN:-S1}
PSCEN=${SCALE_PROOF_SCEN:-D}
ALLOCS=${SCALE_ALLOCS:-glibc,jemalloc}
RUNS=${SCALE_RUNS:-3}
PAR_RUNS=${SCALE_PAR_RUNS:-3}
PARTS=${SCALE_PARTS:-big proof parallel}
AR=$B/bin/allocreplay
AT=$B/bin/alloctrace
REPORT=$B/bin/allocreport
for f in "$AR" "$AT" "$REPORT" "$B/bin/allocreplay-worker" "$B/bin/allocrec" "$B/traces/demo_server"; do
	[ -x "$f" ] || { echo "bench-scale: missing $f (run make all)" >&2; exit 2; }
done
command -v sqlite3 >/dev/null && command -v python3 >/dev/null && [ -x /usr/bin/time ] ||
	{ echo "bench-scale: needs sqlite3, python3 and /usr/bin/time (Debian: sqlite3 python3 time)" >&2; exit 2; }
case " $PARTS " in *" parallel "*)
	command -v parallel >/dev/null ||
		{ echo "bench-scale: part parallel needs GNU parallel (Debian: parallel; make test-deps installs it)" >&2; exit 2; }
esac
mkdir -p "${SCALE_DIR:-/var/tmp}" || exit 2
T=$(mktemp -d "${SCALE_DIR:-/var/tmp}/allocrr-bench-scale.XXXXXX") || exit 2
[ "${SCALE_KEEP:-0}" = 1 ] || trap 'rm -rf "$T"' EXIT
[ "${SCALE_KEEP:-0}" = 1 ] && echo "bench-scale: working in $T (kept)"

need=0
case " $PARTS " in *" big "*) need=$((need + EVENTS * 11 / 2)) ;; esac   # S1: 1.7 + 3.0 bytes/event
case " $PARTS " in *" proof "*) need=$((need + SMALL * 21 * 7)) ;; esac      # D: 2.7 + 3.8
avail=$(df --output=avail -B1 "$T" | tail -1)
if [ "$avail" -lt "$need" ]; then
	echo "bench-scale: $T has $avail bytes free, these parts need about $need; set SCALE_DIR to a larger disk or lower SCALE_EVENTS" >&2
	exit 2
fi
echo "bench-scale: $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(free -g | awk '/^Mem/ {print $2}') GiB," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg); $T: $((avail >> 30)) GiB free, about $((need >> 30)) GiB needed"

# sample PID OUT: until PID exits, every 0.2 s, a line per process of PID
# and its children: "seconds pid role VmHWM VmRSS RssAnon RssFile" (KiB).
# Bash builtins but for one sleep per sample, so the sampler costs little.
sample() {
	local pid=$1 out=$2 t0 now k v _ _k p role hwm rss anon file kids f
	t0=${EPOCHREALTIME/./}
	while kill -0 "$pid" 2>/dev/null; do
		kids=""
		for f in /proc/"$pid"/task/*/children; do
			_k=()
			read -r -a _k 2>/dev/null <"$f" # no newline at its end: read says 1
			kids="$kids ${_k[*]}"
		done
		now=${EPOCHREALTIME/./}
		for p in "$pid" $kids; do
			role=worker
			[ "$p" = "$pid" ] && role=allocreplay
			hwm=0 rss=0 anon=0 file=0
			while read -r k v _; do
				case $k in
				VmHWM:) hwm=$v ;; VmRSS:) rss=$v ;; RssAnon:) anon=$v ;; RssFile:) file=$v ;;
				esac
			done 2>/dev/null <"/proc/$p/status"
			[ "$hwm" = 0 ] || echo "$(((now - t0) / 1000)) $p $role $hwm $rss $anon $file" >>"$out"
		done
		sleep 0.2
	done
}

# ---- (a) one big trace -------------------------------------------------------------
big() {
	local tr=$T/big.zst t0 t1 wl pid
	echo
	echo "(a) $SCEN, $EVENTS events: alloctrace gen, info, stats; allocreplay -a $ALLOCS --repeat 1"
	/usr/bin/time -f "%e %M" -o "$T/gen.time" "$AT" gen -q "$SCEN" --ops "$EVENTS" --seed 1 -o "$tr" ||
		{ echo "bench-scale: alloctrace gen failed" >&2; return 1; }
	/usr/bin/time -f "%e %M" -o "$T/info.time" "$AT" info "$tr" >"$T/info.txt" ||
		{ echo "bench-scale: alloctrace info failed" >&2; return 1; }
	/usr/bin/time -f "%e %M" -o "$T/stats.time" "$AT" stats "$tr" >"$T/stats.txt" ||
		{ echo "bench-scale: alloctrace stats failed" >&2; return 1; }
	export ALLOCRR_CACHE_DIR=$T/cache-big
	t0=$(date +%s%N)
	"$AR" "$tr" -a "$ALLOCS" --repeat 1 --timeout 0 --cache-max 0 --db "$T/big.db" -q \
		>"$T/big.out" 2>"$T/big.err" &
	pid=$!
	sample "$pid" "$T/big.rss" &
	wait "$pid"
	local rc=$?
	t1=$(date +%s%N)
	wait
	[ "$rc" = 0 ] || { echo "bench-scale: allocreplay on the big trace exited $rc: $(tail -3 "$T/big.err")" >&2; return 1; }
	wl=$(ls "$ALLOCRR_CACHE_DIR"/*.wl | head -1)
	echo "$(stat -c %s "$wl") $(du --block-size=1 "$wl" | cut -f1)" >"$T/wl.size"
	python3 - "$T" "$EVENTS" "$(((t1 - t0) / 1000000))" "$(stat -c %s "$tr")" <<'EOF'
import sqlite3, sys
T, events, total_ms, trace_bytes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
MiB = 1 << 20
def rd(name):
    return open(f"{T}/{name}").read().split()
print(f"  trace: {trace_bytes} bytes, {trace_bytes / events:.2f} bytes/event")
for step in ("gen", "info", "stats"):
    s, kb = rd(f"{step}.time")
    print(f"  alloctrace {step:<5}  {float(s):8.1f} s  {events / float(s) / 1e6:6.1f} M events/s  peak RSS {int(kb) / 1024:7.1f} MiB")
size, alloc = map(int, rd("wl.size"))
print(f"  workload: {size} bytes ({size / events:.2f} bytes/event), {alloc} allocated on disk"
      f" ({alloc / events:.2f} bytes/event)")
rows = [l.split() for l in open(f"{T}/big.rss")]
first_worker = min((int(r[0]) for r in rows if r[2] == "worker"), default=None)
if first_worker is None:
    sys.exit("bench-scale: the sampler saw no worker")
ar = [r for r in rows if r[2] == "allocreplay"]
comp = [r for r in ar if first_worker is None or int(r[0]) < first_worker]
def mx(rs, i):
    return max((int(r[i]) for r in rs), default=0) / 1024
print(f"  allocreplay: {total_ms / 1000:.1f} s in all; compile (start to first worker, SHA-256 and"
      f" cache check included) {first_worker / 1000:.1f} s = {events / first_worker * 1000 / 1e6:.2f} M events/s")
print(f"  allocreplay's own RSS, sampled every 0.2 s (MiB): during the compile VmHWM {mx(comp, 3):.1f},"
      f" RssAnon max {mx(comp, 5):.1f}, RssFile max {mx(comp, 6):.1f}; whole run VmHWM {mx(ar, 3):.1f}")
db = sqlite3.connect(f"{T}/big.db")
runs = db.execute("SELECT allocator, status, ops, wall_ns, ops_per_sec, baseline_rss_bytes, peak_rss_bytes,"
                  " peak_heap_rss_bytes, maxrss_bytes, minor_faults FROM runs ORDER BY run_id").fetchall()
workers = sorted({r[1] for r in rows if r[2] == "worker"}, key=lambda p: min(int(r[0]) for r in rows if r[1] == p))
print(f"  {'worker':<10} {'status':<6} {'ops':>10} {'replay s':>8} {'Mops/s':>7} {'heap MiB':>9} {'baseline':>9}"
      f" {'maxrss':>9} {'maxrss-heap':>11} {'VmHWM smp':>9} {'RssFile':>8} {'faults':>9}")
for i, (a, st, ops, wall, opss, base, peak, heap, maxrss, minflt) in enumerate(runs):
    smp = [r for r in rows if i < len(workers) and r[1] == workers[i]]
    heap = heap or 0
    print(f"  {a:<10} {st:<6} {ops or 0:>10} {(wall or 0) / 1e9:8.1f} {(opss or 0) / 1e6:7.2f} {heap / MiB:9.2f}"
          f" {(base or 0) / MiB:9.1f} {(maxrss or 0) / MiB:9.1f} {((maxrss or 0) - heap) / MiB:11.1f}"
          f" {mx(smp, 3):9.1f} {mx(smp, 6):8.1f} {minflt or 0:>9}")
print("  (MiB; heap = peak_heap_rss_bytes; baseline = the worker's RSS before the replay; maxrss = its"
      " getrusage peak, start-up included; VmHWM smp / RssFile = the sampler's maxima for that process)")
EOF
}

# ---- (b) 1x against 20x, streamed against resident -----------------------------------
proof() {
	local s1=$T/x1.zst s20=$T/x20.zst r i order m tr
	echo
	echo "(b) $PSCEN at $SMALL and $((SMALL * 20)) events (seed 1), -a $ALLOCS, $RUNS rounds interleaved"
	export ALLOCRR_CACHE_DIR=$T/cache-proof
	"$AT" gen -q "$PSCEN" --ops "$SMALL" --seed 1 -o "$s1" &&
		"$AT" gen -q "$PSCEN" --ops $((SMALL * 20)) --seed 1 -o "$s20" ||
		{ echo "bench-scale: alloctrace gen failed" >&2; return 1; }
	for tr in "$s1" "$s20"; do # compile each once, outside the rounds
		"$AR" -q "$tr" -a glibc --repeat 1 --timing none --counters none --timeout 0 --cache-max 0 \
			--db "$T/compile.db" >/dev/null 2>"$T/ar.err" ||
			{ echo "bench-scale: allocreplay $tr failed: $(tail -3 "$T/ar.err")" >&2; return 1; }
	done
	declare -A TR=([x1s]=$s1 [x1r]=$s1 [x20s]=$s20) MEM=([x1s]=0 [x1r]=4G [x20s]=0)
	set -- x1s x1r x20s
	for ((r = 0; r < RUNS; r++)); do
		order="$*"
		for ((i = 0; i < r % 3; i++)); do order="${order#* } ${order%% *}"; done
		for m in $order; do
			"$AR" -q "${TR[$m]}" -a "$ALLOCS" --repeat 1 --timeout 0 --cache-max 0 \
				--workload-memory "${MEM[$m]}" --db "$T/proof-$m.db" >/dev/null 2>"$T/ar.err" ||
				{ echo "bench-scale: allocreplay ($m) failed: $(tail -3 "$T/ar.err")" >&2; return 1; }
		done
	done
	python3 - "$T" "$ALLOCS" <<'EOF'
import sqlite3, statistics as st, sys
T, allocs = sys.argv[1], sys.argv[2].split(",")
modes = {"x1s": "1x streamed", "x1r": "1x resident", "x20s": "20x streamed"}
M, kinds = {}, []
for m in modes:
    db = sqlite3.connect(f"{T}/proof-{m}.db")
    for (op,) in db.execute("SELECT DISTINCT op FROM latency WHERE op != 'all' ORDER BY op"):
        if op not in kinds:
            kinds.append(op)
    for a in allocs:
        runs = db.execute("SELECT run_id, ops, ops_per_sec, peak_heap_rss_bytes, baseline_rss_bytes, minor_faults"
                          " FROM runs WHERE allocator = ? AND status = 'ok'", (a,)).fetchall()
        v = {"heap": [r[3] / 1024 for r in runs], "baseline": [r[4] / 1048576 for r in runs],
             "faults": [r[5] for r in runs], "faults/Mop": [r[5] / r[1] * 1e6 for r in runs],
             "ops/s": [r[2] / 1e6 for r in runs]}
        ids = ",".join(str(r[0]) for r in runs) or "NULL"
        for op, q, x in db.execute(f"SELECT op, 'p50', p50_ns FROM latency WHERE run_id IN ({ids}) UNION ALL"
                                   f" SELECT op, 'p99', p99_ns FROM latency WHERE run_id IN ({ids})"):
            v.setdefault(f"{op} {q} ns", []).append(x)
        M[(m, a)] = v
def med(x):
    return st.median(x) if x else float("nan")
def spread(x):
    return (max(x) - min(x)) / st.median(x) if x and st.median(x) else float("nan")
def ratio(a, b):
    return a / b if b else float("nan")
keys = ["heap", "baseline", "faults", "faults/Mop", "ops/s"] + [f"{op} {q} ns" for op in kinds + ["all"]
                                                              for q in ("p50", "p99")]
names = {"heap": "peak heap KiB", "baseline": "baseline MiB", "faults": "minor faults", "ops/s": "Mops/s"}
for a in allocs:
    n = len(M[("x1s", a)]["heap"])
    print(f"\n  {a} ({n} runs per mode; median ± spread = (max-min)/median)")
    print(f"  {'figure':<16}" + "".join(f" {modes[m]:>21}" for m in modes) + f" {'20x/1x':>8} {'str/res':>8}")
    for k in keys:
        if not all(M[(m, a)].get(k) for m in modes):
            continue
        cells = [f"{med(M[(m, a)][k]):12.2f} ±{spread(M[(m, a)][k]) * 100:5.1f} %" for m in modes]
        r20 = ratio(med(M[("x20s", a)][k]), med(M[("x1s", a)][k]))
        rsr = ratio(med(M[("x1s", a)][k]), med(M[("x1r", a)][k]))
        print(f"  {names.get(k, k):<16}" + "".join(f" {c:>21}" for c in cells) + f" {r20:8.3f} {rsr:8.3f}")
te = {m: sorted({x for (x,) in sqlite3.connect(f"{T}/proof-{m}.db").execute("SELECT timing_every FROM runs")})
      for m in modes}
print("  (20x/1x: 20x streamed over 1x streamed; str/res: 1x streamed over 1x resident; baseline = the"
      " worker's RSS before the replay, which holds the decoded workload when resident)")
print("  calls timed 1 in " + ", ".join(f"{modes[m]} {'/'.join(map(str, te[m]))}" for m in modes)
      + ("" if len({tuple(v) for v in te.values()}) == 1 else
         ": not the same period (SCALE_SMALL below 2.56 M calls), so latencies and ops/s are not comparable"))
EOF
}

# ---- (c) the demo matrix: serial against two job slots --------------------------------
# par_once MATRIX KIND NAME: one timed run of MATRIX (demo or ctl: the
# trace $T/MATRIX.zst, --all, 3 repetitions), serial or as --plan | parallel
# -j2 | merge, into $T/NAME.db; appends "matrix kind wall_ms cpu_s load1
# replays_wall_ms replays_cpu_ms compiles merge_ms" to $T/par.tsv.
par_once() {
	local mx=$1 kind=$2 name=$3 t0 t1 tm load cpu=NA merge=0 comp jobs=$T/jobs-$3
	load=$(cut -d' ' -f1 /proc/loadavg)
	rm -rf "$jobs" "$T/$name.db" && mkdir -p "$jobs"
	t0=$(date +%s%N)
	if [ "${kind%-cold}" = serial ]; then
		/usr/bin/time -f "%U %S" -o "$T/serial.time" "$AR" "$T/$mx.zst" --all --db "$T/$name.db" -q \
			>"$T/$name.out" 2>"$T/ar.err" ||
			{ echo "bench-scale: serial $mx matrix failed: $(tail -3 "$T/ar.err")" >&2; return 1; }
		t1=$(date +%s%N)
		cpu=$(awk '{print $1 + $2}' "$T/serial.time")
	else
		"$AR" --plan "$T/$mx.zst" --all --db-dir "$jobs" >"$jobs.txt" 2>/dev/null &&
			parallel --will-cite -j2 --halt soon,fail=1 <"$jobs.txt" >"$T/$name.out" 2>"$T/ar.err" &&
			tm=$(date +%s%N) &&
			"$REPORT" merge "$T/$name.db" "$jobs"/*.db >/dev/null 2>>"$T/ar.err" ||
			{ echo "bench-scale: parallel $mx matrix failed: $(tail -3 "$T/ar.err")" >&2; return 1; }
		t1=$(date +%s%N)
		merge=$(((t1 - tm) / 1000000))
	fi
	# a job that compiled its workload does not say "(workload from cache)"
	comp=$(($(grep -c '^trace ' "$T/$name.out") - $(grep -c 'workload from cache' "$T/$name.out")))
	echo "$mx $kind $(((t1 - t0) / 1000000)) $cpu $load" \
		"$(sqlite3 -separator ' ' "$T/$name.db" 'SELECT sum(wall_ns) / 1000000, sum(cpu_user_ns + cpu_sys_ns) / 1000000 FROM runs')" \
		"$comp $merge" >>"$T/par.tsv"
}

# The demo matrix (tests/demo.sh), and a control matrix of the same shape
# on a 1-thread trace (alloctrace gen D, 1 M calls), whose replays never
# wait for another thread: where the control gains and the demo does not,
# the demo's own threads (hand-offs, waits) are why.
parallel_part() {
	local i mx
	echo
	echo "(c) the demo matrix (demo_server 40000 2, --all, 3 repetitions) and a 1-thread control (gen D):"
	echo "    serial allocreplay vs allocreplay --plan | parallel -j2 + allocreport merge, $PAR_RUNS pairs each"
	"$B/bin/allocrec" --stacks -o "$T/demo.zst" "$B/traces/demo_server" 40000 2 >/dev/null 2>&1 ||
		{ echo "bench-scale: allocrec demo_server failed" >&2; return 1; }
	"$AT" gen -q D --seed 1 -o "$T/ctl.zst" || { echo "bench-scale: alloctrace gen D failed" >&2; return 1; }
	: >"$T/par.tsv"
	for mx in demo ctl; do
		export ALLOCRR_CACHE_DIR=$T/cache-$mx
		"$AR" -q "$T/$mx.zst" -a glibc --repeat 1 --counters none --db "$T/warm.db" >/dev/null 2>&1 # compile once
		for ((i = 0; i < PAR_RUNS; i++)); do
			if ((i % 2 == 0)); then
				par_once $mx serial "$mx-s$i" && par_once $mx parallel "$mx-p$i" || return 1
			else
				par_once $mx parallel "$mx-p$i" && par_once $mx serial "$mx-s$i" || return 1
			fi
		done
	done
	# the demo matrix from an empty cache, once each: what a first run pays
	export ALLOCRR_CACHE_DIR=$T/cache-cold-s
	par_once demo serial-cold demo-cs || return 1
	export ALLOCRR_CACHE_DIR=$T/cache-cold-p
	par_once demo parallel-cold demo-cp || return 1
	python3 - "$T/par.tsv" <<'EOF'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
print(f"  {'matrix':<6} {'run':<14} {'wall s':>7} {'of it merge':>11} {'cpu s':>6} {'load1':>6} {'replays wall s':>14}"
      f" {'replays cpu s':>13} {'compiles':>8}")
for mx, k, w, c, l, rw, rc, comp, mg in rows:
    print(f"  {mx:<6} {k:<14} {int(w) / 1000:7.2f} {int(mg) / 1000:11.2f} {c:>6} {l:>6} {float(rw) / 1000:14.2f}"
          f" {float(rc) / 1000:13.2f} {comp:>8}")
print("  (merge: allocreport merge of the jobs' databases; cpu s: the serial allocreplay's user + system time,"
      " its workers included; replays wall/cpu: the sums of runs.wall_ns and cpu_user_ns + cpu_sys_ns over the"
      " matrix's runs; compiles: runs that compiled the workload instead of taking it from the cache)")
for mx in ("demo", "ctl"):
    s = [int(r[2]) for r in rows if r[0] == mx and r[1] == "serial"]
    p = [int(r[2]) for r in rows if r[0] == mx and r[1] == "parallel"]
    if not s or not p:
        continue
    sr = [float(r[5]) for r in rows if r[0] == mx and r[1] == "serial"]
    pr = [float(r[5]) for r in rows if r[0] == mx and r[1] == "parallel"]
    print(f"  {mx}: serial median {st.median(s) / 1000:.2f} s, parallel -j2 median {st.median(p) / 1000:.2f} s,"
          f" ratio of medians {st.median(p) / st.median(s):.3f} (target <= 0.6), per pair"
          f" {' '.join(f'{pp / ss:.3f}' for ss, pp in zip(s, p))}; replay phases {st.median(pr) / st.median(sr):.2f}x"
          " as long in sum")
    pm = [int(r[2]) - int(r[8]) for r in rows if r[0] == mx and r[1] == "parallel"]
    print(f"    without the merge: parallel median {st.median(pm) / 1000:.2f} s, ratio {st.median(pm) / st.median(s):.3f}")
cs = [int(r[2]) for r in rows if r[1] == "serial-cold"]
cp = [int(r[2]) for r in rows if r[1] == "parallel-cold"]
if cs and cp:
    print(f"  demo from an empty cache: serial {cs[0] / 1000:.2f} s, parallel -j2 {cp[0] / 1000:.2f} s,"
          f" ratio {cp[0] / cs[0]:.3f}")
EOF
}

for part in $PARTS; do
	case $part in
	big) big || exit 2 ;;
	proof) proof || exit 2 ;;
	parallel) parallel_part || exit 2 ;;
	*) echo "bench-scale: unknown part $part (big, proof, parallel)" >&2; exit 1 ;;
	esac
done
echo
echo "bench-scale: done, load average $(cut -d' ' -f1-3 /proc/loadavg)"
