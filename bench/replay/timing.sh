#!/usr/bin/env bash
# make bench-replay-timing (also part (c) of make bench-replay): what timing
# the heap calls costs the speed figure. The reference scenarios
# (alloctrace gen, docs/SCENARIOS.md) are generated at their default sizes,
# compiled once by allocreplay, then replayed by allocreplay-worker directly
# under each allocator with allocreplay's defaults (--touch pages) and
# --counters none, in each timing mode: none (no clock read), sample:N for
# each N of NS (1 call in N timed, worker_clock.h "Sampling") and every (each
# call between two fenced TSC reads). RUNS rounds; in each round every
# scenario x allocator runs every mode once, the modes' order rotated, so a
# drift of the machine spreads over all of them. Per scenario x allocator:
# the best Mops/s of the RUNS (the run least disturbed by other work: on a
# shared 2-core VM a median of a few 20-100 ms runs moves by tens of
# percent) per mode and its ratio to none's; per mode: the median and the
# worst ratio over all pairs (also of the medians), how many timed calls a
# sampled run had, and whether the mode ranks the allocators by ops/s in the
# same order as untimed replay (Spearman per scenario, and how many orders
# are identical).
# S4 (1-10 MB buffers), M (5 % of 2 MiB blocks) and B (2-8 KiB batches) are
# left out by default: their replays are page faults (S4 20 s under glibc
# and 2 min under pool per run here, M 6 s and 2 min; B 0.14 M ops/s under
# glibc), a clock read per call is nothing beside them, and they would make
# the benchmark hours long.
#
#   ALLOCRR_BUILD=build RUNS=5 NS="64 256" SCEN="S1 S3 A D X" \
#       ALLOCS="glibc jemalloc tcmalloc mimalloc pool" bash bench/replay/timing.sh
set -u
B=$(cd "${ALLOCRR_BUILD:-build}" && pwd)
RUNS=${RUNS:-5}
NS=${NS:-64 256}
SCEN=${SCEN:-S1 S3 A D X}
ALLOCS=${ALLOCS:-glibc jemalloc tcmalloc mimalloc pool}
AR=$B/bin/allocreplay
WORKER=$B/bin/allocreplay-worker
T=$(mktemp -d /tmp/allocrr-bench-timing.XXXXXX)
trap 'rm -rf "$T"' EXIT
export ALLOCRR_CACHE_DIR=$T/cache
for f in "$AR" "$WORKER" "$B/bin/alloctrace"; do
	[ -x "$f" ] || { echo "bench-replay-timing: missing $f (run make all)" >&2; exit 2; }
done
command -v python3 >/dev/null || { echo "bench-replay-timing: needs python3" >&2; exit 2; }

declare -A LIB
for a in $ALLOCS; do
	LIB[$a]=$("$AR" --list | awk -v n=$a '$1 == n && $4 == "yes" {print $5}')
	[ -n "${LIB[$a]}" ] || { echo "bench-replay-timing: allocator $a is not installed" >&2; exit 2; }
done
MODES="none"
for n in $NS; do MODES="$MODES sample:$n"; done
MODES="$MODES every"

echo "bench-replay-timing: $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load average $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A WL
for s in $SCEN; do
	"$B/bin/alloctrace" gen -q "$s" -o "$T/$s.zst" ||
		{ echo "bench-replay-timing: alloctrace gen $s failed" >&2; exit 2; }
	# compile once (allocreplay caches the workload by the trace's SHA-256)
	"$AR" -q "$T/$s.zst" -a glibc --repeat 1 --counters none --db "$T/c.db" >/dev/null 2>"$T/ar.err" ||
		{ echo "bench-replay-timing: allocreplay $s failed: $(tail -3 "$T/ar.err")" >&2; exit 2; }
	sha=$(sha256sum "$T/$s.zst" | cut -d' ' -f1)
	WL[$s]=$(ls "$ALLOCRR_CACHE_DIR/$sha".v*.wl 2>/dev/null | head -1)
	[ -f "${WL[$s]}" ] || { echo "bench-replay-timing: no compiled workload for $s" >&2; exit 2; }
done

# one S A MODE: one worker; appends "S A MODE calls wall_ns timing_every timed_calls" to $T/t.tsv.
one() {
	local s=$1 a=$2 mode=$3 pre out
	pre="LD_PRELOAD=${LIB[$a]}"
	[ "$a" = glibc ] && pre="-u LD_PRELOAD"
	out=$(env $pre "$WORKER" --workload "${WL[$s]}" --allocator "$a" --library "${LIB[$a]}" \
		--touch pages --counters none --timing "$mode" --fd 1 2>&1)
	if ! grep -q '^Z' <<<"$out" || grep -q '^E' <<<"$out"; then
		echo "bench-replay-timing: $s under $a, --timing $mode failed: $(grep -m1 '^E' <<<"$out")" >&2
		return 1
	fi
	awk -v s=$s -v a=$a -v m=$mode '$1 == "S" {v[$2] = $3}
		END {print s, a, m, v["calls"], v["wall_ns"], v["timing_every"], ("timed_calls" in v) ? v["timed_calls"] : 0}' \
		<<<"$out" >>"$T/t.tsv"
}
set -- $MODES
nm=$#
for ((i = 0; i < RUNS; i++)); do
	order="$*"
	for ((k = 0; k < i % nm; k++)); do order="${order#* } ${order%% *}"; done
	for s in $SCEN; do
		for a in $ALLOCS; do
			for m in $order; do one "$s" "$a" "$m" || exit 2; done
		done
	done
done

BENCH_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")/../lib" && pwd) python3 - "$T/t.tsv" "$RUNS" "$MODES" "$SCEN" "$ALLOCS" <<'EOF'
import os, statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
runs, modes, scen, allocs = sys.argv[2], sys.argv[3].split(), sys.argv[4].split(), sys.argv[5].split()

sys.path.insert(0, os.environ["BENCH_LIB"])
from rank_stats import spearman  # noqa: E402

ops, every, timed = {}, {}, {}
for s, a, m, calls, wall, te, tc in rows:
    ops.setdefault((s, a, m), []).append(int(calls) * 1e9 / int(wall))
    every[(s, m)] = int(te)
    timed.setdefault((s, a, m), []).append(int(tc))
best = {k: max(v) for k, v in ops.items()}
medians = {k: st.median(v) for k, v in ops.items()}
med = best
print(f"\n(c) timing modes: best Mops/s of {runs} interleaved runs (allocreplay-worker --touch pages"
      f" --counters none), x = ratio to --timing none's best")
hdr = f"{'scenario':<8} {'calls':>8} {'allocator':<9}" + "".join(f" {m:>18}" for m in modes)
print(hdr)
ratios = {m: [] for m in modes}
for s in scen:
    calls = next(int(r[3]) for r in rows if r[0] == s)
    for a in allocs:
        base = med[(s, a, "none")]
        cells = []
        for m in modes:
            x = med[(s, a, m)] / base
            ratios[m].append(x)
            cells.append(f"{med[(s, a, m)] / 1e6:8.2f} {x:5.3f}x" + (
                f"/{every[(s, m)]:<3}" if m.startswith("sample") else "    "))
        print(f"{s:<8} {calls:>8} {a:<9}" + "".join(f" {c:>18}" for c in cells))
print("(sample cells: Mops/s, ratio, /period used: a trace with fewer than 10000 x N calls is"
      " sampled more often, worker.h AR_TIMING_MIN_SAMPLES)")
print(f"\n{'mode':<11} {'median x':>8} {'worst x':>8} {'x of medians':>12} {'timed calls/run (min-max)':>26}"
      f" {'same order as none':>19} {'Spearman median (min)':>22}")
for m in modes:
    xm = [medians[(s, a, m)] / medians[(s, a, "none")] for s in scen for a in allocs]
    tc = [t for (s, a, mm), v in timed.items() if mm == m for t in v]
    same, rho = 0, []
    for s in scen:
        x = [med[(s, a, "none")] for a in allocs]
        y = [med[(s, a, m)] for a in allocs]
        same += sorted(allocs, key=lambda a: med[(s, a, "none")]) == sorted(allocs, key=lambda a: med[(s, a, m)])
        rho.append(spearman(x, y))
    print(f"{m:<11} {st.median(ratios[m]):8.3f} {min(ratios[m]):8.3f} {st.median(xm):12.3f} {f'{min(tc)}-{max(tc)}':>26}"
          f" {f'{same} of {len(scen)}':>19} {f'{st.median(rho):+.2f} ({min(rho):+.2f})':>22}")
EOF
