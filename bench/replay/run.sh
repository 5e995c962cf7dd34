#!/usr/bin/env bash
# make bench-replay: the replayer measured against itself and against reality.
#
# (a) Harness cost. One recorded trace (bench_rec_workload, 1 worker thread)
#     replayed by allocreplay-worker directly, --touch none, under libbump.so
#     (bump.c: a null allocator, named to the worker with --library, which
#     proves it serves malloc) with and without per-call timing (--timing
#     calls|none), and under glibc for comparison. Per op: wall time of the
#     replay phase, time inside the heap calls (timed runs: timed_ns), and
#     the rest, which is the harness.
# (b) Fidelity. Three malloc-heavy programs of our own — bench_rec_workload
#     with 1 and 2 threads (per-thread slots) and demo_server (2 threads,
#     cross-thread frees) — each recorded once, then, RUNS times interleaved:
#     the program itself under each allocator (LD_PRELOAD; wall time and
#     peak RSS from /usr/bin/time) and allocreplay of its trace under all
#     four. Medians; per allocator the real and the replayed ratio to glibc
#     (time: real wall time / replay ops/s inverted; memory: real peak RSS /
#     replay peak heap RSS), the rankings, and Spearman's rank correlation.
# (c) Timing modes (timing.sh, also make bench-replay-timing): ops/s of the
#     reference scenarios under --timing none, sample:N and every, side by
#     side, with ratios to none, and whether each mode ranks the allocators
#     as untimed replay does. TIMING_RUNS rounds (default RUNS).
#
#   ALLOCRR_BUILD=build RUNS=5 EV1=4000000 EV2=6000000 REQ=100000 bash bench/replay/run.sh
set -u
B=$(cd "${ALLOCRR_BUILD:-build}" && pwd)
RUNS=${RUNS:-5}
EV1=${EV1:-4000000}  # heap calls of the 1-thread program
EV2=${EV2:-6000000}  # heap calls of the 2-thread program
REQ=${REQ:-100000}   # demo_server requests
ALLOCS="glibc jemalloc tcmalloc mimalloc"
AR=$B/bin/allocreplay
WORKER=$B/bin/allocreplay-worker
BUMP=$B/bench/libbump.so
T=$(mktemp -d /tmp/allocrr-bench-replay.XXXXXX)
trap 'rm -rf "$T"' EXIT
export ALLOCRR_CACHE_DIR=$T/cache
for f in "$AR" "$WORKER" "$BUMP" "$B/bin/allocrec" "$B/bin/bench_rec_workload" \
	"$B/traces/demo_server"; do
	[ -e "$f" ] || { echo "bench-replay: missing $f (run make all)" >&2; exit 2; }
done
command -v sqlite3 >/dev/null && command -v python3 >/dev/null && [ -x /usr/bin/time ] ||
	{ echo "bench-replay: needs sqlite3, python3 and /usr/bin/time (Debian: sqlite3 python3 time)" >&2; exit 2; }

declare -A LIB
for a in $ALLOCS; do
	LIB[$a]=$("$AR" --list | awk -v n=$a '$1 == n && $4 == "yes" {print $5}')
	[ -n "${LIB[$a]}" ] || { echo "bench-replay: allocator $a is not installed" >&2; exit 2; }
done

PROGS="w1 w2 ds"
declare -A CMD=(
	[w1]="$B/bin/bench_rec_workload 1 $EV1 set"
	[w2]="$B/bin/bench_rec_workload 2 $EV2 set"
	[ds]="$B/traces/demo_server $REQ 2"
)
declare -A LABEL=(
	[w1]="bench_rec_workload 1 thread, $EV1 calls"
	[w2]="bench_rec_workload 2 threads, $EV2 calls"
	[ds]="demo_server $REQ requests, 2 threads, cross-thread frees"
)

echo "bench-replay: $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load average $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $PROGS; do
	"$B/bin/allocrec" -q -o "$T/$p.zst" ${CMD[$p]} >/dev/null ||
		{ echo "bench-replay: recording ${CMD[$p]} failed" >&2; exit 2; }
done

# ---- (a) harness cost --------------------------------------------------------------
# Compile the trace once (allocreplay caches the workload by the trace's SHA-256).
"$AR" "$T/w1.zst" -a glibc --repeat 1 --touch none --db "$T/a.db" >/dev/null ||
	{ echo "bench-replay: allocreplay failed on $T/w1.zst" >&2; exit 2; }
sha=$(sha256sum "$T/w1.zst" | cut -d' ' -f1) # the cache's key (docs/RESULTS.md)
WL=$(ls "$ALLOCRR_CACHE_DIR/$sha".v*.wl 2>/dev/null | head -1)
[ -f "$WL" ] || { echo "bench-replay: no compiled workload for $sha" >&2; exit 2; }

# worker MODE: one replay; appends "mode calls wall_ns timed_ns sampling_ns" to $T/a.tsv.
worker() {
	local mode=$1 lib timing out
	case $mode in
	bump-*) lib=$(realpath "$BUMP") ;;
	*) lib=${LIB[glibc]} ;;
	esac
	case $mode in *-untimed) timing=none ;; *) timing=calls ;; esac
	if [ "$lib" = "${LIB[glibc]}" ]; then
		out=$(env -u LD_PRELOAD "$WORKER" --workload "$WL" --allocator glibc --library "$lib" \
			--touch none --timing $timing --fd 1 2>&1)
	else
		out=$(LD_PRELOAD=$lib "$WORKER" --workload "$WL" --allocator bump --library "$lib" \
			--touch none --timing $timing --fd 1 2>&1)
	fi
	if ! grep -q '^Z' <<<"$out" || grep -q '^E' <<<"$out"; then
		echo "bench-replay: worker ($mode) failed: $(grep -m1 '^E' <<<"$out")" >&2
		return 1
	fi
	awk -v m=$mode '$1 == "S" {v[$2] = $3}
		END {print m, v["calls"], v["wall_ns"], ("timed_ns" in v) ? v["timed_ns"] : "-", v["sampling_ns"]}' \
		<<<"$out" >>"$T/a.tsv"
}
MODES="bump-untimed bump-timed glibc-untimed glibc-timed"
for ((i = 0; i < RUNS; i++)); do
	for m in $MODES; do worker $m || exit 2; done
done

python3 - "$T/a.tsv" "$(basename "${CMD[w1]%% *}") ${CMD[w1]#* }" "$RUNS" <<'EOF'
import os, statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
print(f"\n(a) harness cost: {sys.argv[2]} replayed by allocreplay-worker --touch none,")
print(f"    {rows[0][1]} calls on 2 replay threads (main + worker); median (min) of {sys.argv[3]} interleaved runs")
print(f"{'mode':<16} {'wall ns/op':>16} {'in calls ns/op':>16} {'harness ns/op':>16} {'RSS reads ns/op':>16}")
calls_bump = None
for mode in ["bump-untimed", "bump-timed", "glibc-untimed", "glibc-timed"]:
    r = [x for x in rows if x[0] == mode]
    n = int(r[0][1])
    wall = [int(x[2]) / n for x in r]
    samp = st.median(int(x[4]) / n for x in r)
    if r[0][3] != "-":
        inc = [int(x[3]) / n for x in r]
        rest = [w - c for w, c in zip(wall, inc)]
        inc_s = f"{st.median(inc):.1f} ({min(inc):.1f})"
        rest_s = f"{st.median(rest):.1f} ({min(rest):.1f})"
        if mode == "bump-timed":
            calls_bump = st.median(inc)
    else:
        inc_s = "not timed"
        rest_s = "-"
    print(f"{mode.replace('-', ' '):<16} {st.median(wall):>8.1f} ({min(wall):5.1f}) {inc_s:>16} {rest_s:>16} {samp:>16.2f}")
    if mode == "bump-untimed":
        bump_untimed = st.median(wall)
if calls_bump is not None:
    print(f"untimed harness = bump untimed wall - bump's calls as timed: "
          f"{bump_untimed:.1f} - {calls_bump:.1f} = {bump_untimed - calls_bump:.1f} ns/op (an estimate)")
print("(in calls = timed_ns, each call between fenced TSC reads with the timer's own minimum cost"
      " subtracted; harness = wall - in calls, including the RSS sample reads shown last)")
EOF

# ---- (b) fidelity ------------------------------------------------------------------
# real P A: run program P under allocator A once; appends "P A wall_s maxrss_kb" to $T/real.tsv.
real() {
	local p=$1 a=$2 t0 t1 rc preload=LD_PRELOAD=${LIB[$a]}
	[ $a = glibc ] && preload="-u LD_PRELOAD"
	t0=$EPOCHREALTIME
	/usr/bin/time -f %M -o "$T/rss" env $preload ${CMD[$p]} >/dev/null 2>&1
	rc=$?
	t1=$EPOCHREALTIME
	[ $rc = 0 ] || { echo "bench-replay: ${CMD[$p]} under $a failed ($rc)" >&2; return 1; }
	echo "$p $a $(awk -v a=$t0 -v b=$t1 'BEGIN {printf "%.6f", b - a}') $(tail -1 "$T/rss")" >>"$T/real.tsv"
}
set -- $ALLOCS
for ((i = 0; i < RUNS; i++)); do
	# rotate the allocators' order each round, so none is always first
	order="$*"
	for ((k = 0; k < i % 4; k++)); do order="${order#* } ${order%% *}"; done
	for p in $PROGS; do
		for a in $order; do real $p $a || exit 2; done
		"$AR" "$T/$p.zst" -a "${order// /,}" --repeat 1 --db "$T/b.db" >/dev/null 2>"$T/ar.err" ||
			{ echo "bench-replay: allocreplay $p failed: $(tail -3 "$T/ar.err")" >&2; exit 2; }
	done
done
sqlite3 -batch -noheader -separator ' ' "$T/b.db" \
	"SELECT replace(t.name, '.zst', ''), r.allocator, r.ops_per_sec, r.peak_heap_rss_bytes, r.wall_ns,
	        r.timed_ns
	 FROM runs r JOIN traces t ON t.sha256 = r.trace_sha256 WHERE r.status = 'ok'" >"$T/replay.tsv"

BENCH_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")/../lib" && pwd) python3 - "$T/real.tsv" "$T/replay.tsv" "$RUNS" "$PROGS" "$ALLOCS" \
	"${LABEL[w1]}" "${LABEL[w2]}" "${LABEL[ds]}" <<'EOF'
import os, statistics as st, sys
real_f, replay_f, runs, progs, allocs = sys.argv[1:6]
labels = dict(zip(progs.split(), sys.argv[6:9]))
progs, allocs = progs.split(), allocs.split()
MiB = 1 << 20

def med(rows, p, a, i):
    v = [float(r[i]) for r in rows if r[0] == p and r[1] == a]
    return st.median(v) if v else float("nan")

sys.path.insert(0, os.environ["BENCH_LIB"])
from rank_stats import spearman  # noqa: E402

real = [l.split() for l in open(real_f)]
rep = [l.split() for l in open(replay_f)]
print(f"\n(b) fidelity: the program run under each allocator (LD_PRELOAD) vs allocreplay of its trace;")
print(f"    medians of {runs} interleaved runs; x = ratio to glibc (time: > 1 is slower; memory: > 1 is more);")
print(f"    replay x = glibc's ops/s over the allocator's; calls x = ratio of the time inside the heap calls")
pooled = {"time": ([], []), "mem": ([], [])}
agree = {"time": 0, "mem": 0}
for p in progs:
    print(f"\n{p}: {labels[p]}")
    print(f"{'allocator':<10} {'real s':>7} {'x':>5} {'replay s':>8} {'Mops/s':>7} {'x':>5} {'calls x':>7}  "
          f"{'real RSS':>9} {'x':>5} {'replay heap':>11} {'x':>5} {'real-glibc':>10} {'replay-glibc':>12}")
    rt = {a: med(real, p, a, 2) for a in allocs}
    rr = {a: med(real, p, a, 3) * 1024 for a in allocs}
    ops = {a: med(rep, p, a, 2) for a in allocs}
    heap = {a: med(rep, p, a, 3) for a in allocs}
    rw = {a: med(rep, p, a, 4) / 1e9 for a in allocs}
    calls = {a: med(rep, p, a, 5) for a in allocs}
    g = allocs[0]
    xr_t = {a: rt[a] / rt[g] for a in allocs}
    xp_t = {a: ops[g] / ops[a] for a in allocs}
    xr_m = {a: rr[a] / rr[g] for a in allocs}
    xp_m = {a: heap[a] / heap[g] for a in allocs}
    for a in allocs:
        print(f"{a:<10} {rt[a]:7.3f} {xr_t[a]:5.2f} {rw[a]:8.3f} {ops[a] / 1e6:7.2f} {xp_t[a]:5.2f} "
              f"{calls[a] / calls[g]:7.2f}  "
              f"{rr[a] / MiB:5.1f} MiB {xr_m[a]:5.2f} {heap[a] / MiB:7.1f} MiB {xp_m[a]:5.2f} "
              f"{(rr[a] - rr[g]) / MiB:+6.1f} MiB {(heap[a] - heap[g]) / MiB:+8.1f} MiB")
    for kind, x, y in (("time", xr_t, xp_t), ("mem", xr_m, xp_m)):
        xs, ys = [x[a] for a in allocs], [y[a] for a in allocs]
        same = sorted(allocs, key=x.get) == sorted(allocs, key=y.get)
        agree[kind] += same
        for a in allocs[1:]:
            pooled[kind][0].append(x[a])
            pooled[kind][1].append(y[a])
        name = "time  " if kind == "time" else "memory"
        print(f"  {name} ranking real:   {' < '.join(sorted(allocs, key=x.get))}")
        print(f"  {name} ranking replay: {' < '.join(sorted(allocs, key=y.get))}   "
              f"{'same' if same else 'differs'}, Spearman {spearman(xs, ys):+.2f}")
n = len(progs)
print(f"\nsummary over {n} programs ({len(pooled['time'][0])} allocator ratios to glibc each):")
for kind, name in (("time", "time  "), ("mem", "memory")):
    x, y = pooled[kind]
    err = st.median(abs(b / a - 1) for a, b in zip(x, y))
    print(f"  {name}: rankings agree in {agree[kind]} of {n}; Spearman of the ratios {spearman(x, y):+.2f}; "
          f"median |replay/real - 1| of the ratios {err * 100:.0f} %")
EOF

# ---- (c) timing modes ---------------------------------------------------------------
RUNS=${TIMING_RUNS:-$RUNS} ALLOCRR_BUILD=$B bash "$(dirname "$0")/timing.sh" || exit 2
