#!/usr/bin/env bash
# bench/replay/loop.sh: what the replay loop itself costs per op (the
# untimed harness cost of docs/BENCHMARKS.md, "Replayer"), and how two
# builds of the worker compare on it.
#
# `alloctrace gen S1 --ops OPS` (64 B blocks in a random window of 4096:
# free and malloc alternate) is compiled once by allocreplay, then its
# workload is replayed by allocreplay-worker directly under libbump.so (the
# null allocator of bench/replay/bump.c, named with --library) with
# --timing none --touch none, decoded whole before the replay (the default
# for a workload this size). Each worker given in WORKERS runs RUNS times,
# the workers interleaved round by round. Printed per worker: wall ns/op of
# the replay phase (the worker's wall_ns / calls: the harness plus bump's
# own calls), median (min-max), the same without the RSS sample reads
# (sampling_ns), the CPU time of the replay phase per op (user + system:
# less disturbed than wall time by other processes taking the CPU, though
# not by their use of the caches), and the op checksums seen, which must be one value across
# every run and worker (the same calls in the same order).
#
#   ALLOCRR_BUILD=build RUNS=7 OPS=4000000 bash bench/replay/loop.sh
#   WORKERS="old=/path/old/allocreplay-worker new=build/bin/allocreplay-worker" bash bench/replay/loop.sh
#
# The workload is compiled by this build's allocreplay; a worker of an
# older build reads it only if its workload format is the same (else it
# stops with an error naming the version).
set -u
B=$(cd "${ALLOCRR_BUILD:-build}" && pwd)
RUNS=${RUNS:-7}
OPS=${OPS:-4000000}
WORKERS=${WORKERS:-this=$B/bin/allocreplay-worker}
BUMP=$(realpath "$B/bench/libbump.so" 2>/dev/null)
for f in "$B/bin/alloctrace" "$B/bin/allocreplay" "$BUMP"; do
	[ -e "$f" ] || { echo "loop.sh: missing $f (run make all)" >&2; exit 2; }
done
command -v python3 >/dev/null || { echo "loop.sh: needs python3" >&2; exit 2; }
T=$(mktemp -d /tmp/allocrr-bench-loop.XXXXXX)
trap 'rm -rf "$T"' EXIT
export ALLOCRR_CACHE_DIR=$T/cache

"$B/bin/alloctrace" gen S1 --ops "$OPS" -q -o "$T/s1.zst" ||
	{ echo "loop.sh: alloctrace gen failed" >&2; exit 2; }
"$B/bin/allocreplay" "$T/s1.zst" -a glibc --repeat 1 --touch none --timing none --db "$T/x.db" \
	>/dev/null 2>&1 || { echo "loop.sh: allocreplay failed on $T/s1.zst" >&2; exit 2; }
WL=$(ls "$ALLOCRR_CACHE_DIR"/*.wl 2>/dev/null | head -1)
[ -f "$WL" ] || { echo "loop.sh: no compiled workload" >&2; exit 2; }

echo "loop.sh: $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load average $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < RUNS; i++)); do
	for lw in $WORKERS; do
		label=${lw%%=*} w=${lw#*=}
		out=$(LD_PRELOAD=$BUMP "$w" --workload "$WL" --allocator bump --library "$BUMP" \
			--touch none --timing none --fd 1 2>&1)
		if ! grep -q '^Z' <<<"$out" || grep -q '^E' <<<"$out"; then
			echo "loop.sh: worker $label failed: $(grep -m1 '^E' <<<"$out")" >&2
			exit 2
		fi
		awk -v l="$label" '$1 == "S" {v[$2] = $3}
			END {print l, v["calls"], v["wall_ns"], v["sampling_ns"], v["op_checksum"],
				v["cpu_user_ns"] + v["cpu_sys_ns"]}' \
			<<<"$out" >>"$T/runs"
	done
done
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$T/runs" "$OPS" "$RUNS" <<'EOF'
import collections, statistics as st, sys
wall, net, sums, calls, cpu = (collections.defaultdict(list) for _ in range(5))
order = []
for line in open(sys.argv[1]):
    label, n, w, s, ck, c = line.split()
    if label not in order:
        order.append(label)
    wall[label].append(int(w) / int(n))
    net[label].append((int(w) - int(s)) / int(n))
    sums[label].append(ck)
    calls[label].append(int(n))
    cpu[label].append(int(c) / int(n))
print(f"S1 --ops {sys.argv[2]}, libbump.so, --timing none --touch none, workload decoded whole;"
      f" {sys.argv[3]} interleaved runs per worker")
print(f"{'worker':<10} {'wall ns/op median (min-max)':>30} {'without RSS reads':>26} {'CPU ns/op':>22}  calls  op checksum")
for l in order:
    w, x, c = wall[l], net[l], cpu[l]
    print(f"{l:<10} {st.median(w):12.2f} ({min(w):5.2f}-{max(w):5.2f}) "
          f"{st.median(x):14.2f} ({min(x):5.2f}-{max(x):5.2f}) "
          f"{st.median(c):10.2f} ({min(c):5.2f}-{max(c):5.2f})  {calls[l][0]}  "
          f"{','.join(sorted(set(sums[l])))}")
every = {c for l in order for c in sums[l]}
print("op checksums: " + ("the same in every run" if len(every) == 1 else "DIFFER: " + " ".join(sorted(every))))
sys.exit(0 if len(every) == 1 else 1)
EOF
