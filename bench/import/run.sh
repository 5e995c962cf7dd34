#!/usr/bin/env bash
# make bench-import: how fast `alloctrace import` converts foreign heap logs
# (issue 17 asks >= 5 M lines/s per core). Generates LINES lines (default
# 20 M) of each input kind with bench/import/gen_input.py -- memory_replay
# without and with times (8 threads), mtrace with callers (64 sites) -- then
# times the import with /usr/bin/time over RUNS runs (default 3) and prints,
# per kind, the median of CPU (user + sys) and wall seconds and the lines per
# CPU second and per wall second. The inputs live in a temporary directory
# (about 0.6-1 GB each at 20 M lines), removed at the end.
# Figures and method: docs/BENCHMARKS.md.
set -eu
cd "$(dirname "$0")/../.."
B=${ALLOCRR_BUILD:-build}
AT=$B/bin/alloctrace
LINES=${LINES:-20000000}
RUNS=${RUNS:-3}
[ -x "$AT" ] || { echo "missing $AT: run make first" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/bench-import.XXXXXX")
trap 'rm -rf "$W"' EXIT

bench() { # NAME FORMAT GEN_ARGS...
	local name=$1 fmt=$2
	shift 2
	/usr/bin/python3 bench/import/gen_input.py "$@" >"$W/in.txt"
	local bytes; bytes=$(stat -c %s "$W/in.txt")
	cat "$W/in.txt" >/dev/null # in the page cache, like the runs after the first
	for r in $(seq "$RUNS"); do
		/usr/bin/time -f "%U %S %e %M" -o "$W/t.$r" "$AT" import -q --from "$fmt" "$W/in.txt" -o "$W/out.zst"
	done
	local out; out=$(stat -c %s "$W/out.zst")
	cat "$W"/t.* | /usr/bin/python3 -c '
import statistics, sys
name, n, size, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
runs = [[float(x) for x in l.split()] for l in sys.stdin if l.strip()]
cpu = statistics.median(u + s for u, s, _, _ in runs)
wall = statistics.median(r[2] for r in runs)
rss = statistics.median(r[3] for r in runs)
print("%-22s %5.1f M lines, %5.0f MB in, %5.1f MB trace: cpu %6.2f s (%5.2f M lines/s per core), "
      "wall %6.2f s (%5.2f M lines/s), max RSS %.0f MB" %
      (name, n / 1e6, size / 1e6, out / 1e6, cpu, n / cpu / 1e6, wall, n / wall / 1e6, rss / 1024))
' "$name" "$LINES" "$bytes" "$out"
	rm -f "$W/in.txt" "$W/out.zst"
}
echo "alloctrace import, $LINES lines per input, median of $RUNS runs ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
bench "memory_replay" memory_replay memory_replay "$LINES"
bench "memory_replay + times" memory_replay memory_replay "$LINES" --times
bench "mtrace (callers)" mtrace mtrace "$LINES"
