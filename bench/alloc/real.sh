#!/usr/bin/env bash
# make bench-alloc-real: allocators run for real, not replayed — each of
# bench-fidelity's programs (bench/fidelity/programs.sh: the same commands
# and inputs) under LD_PRELOAD of every installed allocator, interleaved
# (each round in its own order, programs.sh's round_order), and each run's
# CPU time (user + system, GNU time) compared with glibc's run of the same
# round: the median of those ratios, a bootstrap 95 % interval of it, and
# allocreport's verdict on the interval (bench/lib/rank_stats.py: the same
# paired ratio as bench-fidelity's analysis, the same floor as allocreport's
# significance). What it sees
# that replay cannot: an allocator's effect on the program's own code (where
# its blocks lie), beside the cost of its calls (docs/BENCHMARKS.md,
# "pool's chunks side by side").
#   ALLOCRR_BUILD=build REAL_PROGRAMS="perl sqlite" REAL_ALLOCATORS=glibc,pool REPEAT=11 bash bench/alloc/real.sh
# OLD_LIBDIR=DIR adds our allocators from the libraries in DIR (e.g. a build
# of the previous commit) as NAME-old, in the same rounds.
# Sizes: bench-fidelity's FIDELITY_* variables, same defaults.
set -u
B=$(cd "${ALLOCRR_BUILD:-build}" && pwd)
HERE=$(cd "$(dirname "$0")/../fidelity" && pwd)
LIBDIR=$(cd "$(dirname "$0")/../lib" && pwd)
PROGRAMS=${REAL_PROGRAMS:-perl sqlite python python-mt}
REPEAT=${REPEAT:-11}
PY=/usr/bin/python3 # Debian's, never a pyenv shim: it is what gets preloaded
die() { echo "bench-alloc-real: $*" >&2; exit 2; }
[ -x /usr/bin/time ] && [ -x $PY ] || die "needs /usr/bin/time and /usr/bin/python3 (Debian: time python3)"
T=$(mktemp -d /tmp/allocrr-bench-real.XXXXXX)
trap 'rm -rf "$T"' EXIT
IN=$T/inputs
mkdir -p "$IN"
. "$HERE/programs.sh"
make_inputs || die "cannot write the programs' inputs in $IN"

declare -A LIB
names=""
while read -r name lib; do
	[ -z "${REAL_ALLOCATORS:-}" ] || [[ ",$REAL_ALLOCATORS," == *",$name,"* ]] || continue
	LIB[$name]=$lib
	names="$names $name"
	if [ -n "${OLD_LIBDIR:-}" ] && [ -f "$OLD_LIBDIR/$(basename "$lib")" ] && [[ $lib == "$B"/* ]]; then
		LIB[$name-old]=$OLD_LIBDIR/$(basename "$lib")
		names="$names $name-old"
	fi
done < <("$B/bin/allocreplay" --list | awk 'NR > 1 && $4 == "yes" { print $1, $5 }')
[ -n "${LIB[glibc]:-}" ] || die "glibc must be among the allocators (REAL_ALLOCATORS)"
set -- $names

echo "bench-alloc-real: $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg); $REPEAT rounds of:$names"
for p in $PROGRAMS; do
	declare -F "prog_$p" >/dev/null || die "unknown program '$p'"
	: >"$T/$p.csv"
	for ((i = 0; i < REPEAT; i++)); do
		for a in $(round_order $i "$@"); do
			(cd "$T" && prog_$p /usr/bin/time -f '%U %S' -o "$T/time" env LD_PRELOAD="${LIB[$a]}" \
				>"$T/out.$a" 2>"$T/err") || die "$p under $a failed: $(tail -1 "$T/err")"
			cmp -s "$T/out.$a" "$T/out.glibc" 2>/dev/null || [ ! -f "$T/out.glibc" ] ||
				die "$p under $a printed something else than under glibc"
			echo "$i $a $(awk '{ print $1 + $2 }' "$T/time")" >>"$T/$p.csv"
		done
	done
	rm -f "$T"/out.*
	$PY - "$p" "$T/$p.csv" "$LIBDIR" "$@" <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[3])
from rank_stats import effect_floor, paired_ratio, verdict
from statistics import median
runs = {}  # allocator -> round -> CPU s
for line in open(sys.argv[2]):
    i, a, t = line.split()
    runs.setdefault(a, {})[i] = float(t)
base = runs["glibc"]
if min(base.values()) <= 0:
    sys.exit("bench-alloc-real: %s: a run under glibc took 0 s of CPU time at GNU time's 10 ms resolution;"
             " make the program's input larger (FIDELITY_* sizes)" % sys.argv[1])
floor = effect_floor()
print("%s: CPU s (user + system), %d rounds; ratio = median over rounds of the run's time / glibc's in the"
      " same round; verdict: the 95 %% interval against 1 +- %.0f %%" % (sys.argv[1], len(base), floor * 100))
print("  %-14s %9s %7s %7s %7s %8s %8s  %s" % ("allocator", "median s", "min", "max", "ratio", "95% low", "95% high",
                                               "verdict"))
for a in sys.argv[4:]:  # the allocators' order, not the runs'
    v = runs[a]
    r, lo, hi = paired_ratio(v, base)
    t = list(v.values())
    print("  %-14s %9.3f %7.3f %7.3f %7.3f %8.3f %8.3f  %s" % (a, median(t), min(t), max(t), r, lo, hi,
                                                             "-" if a == "glibc" else verdict(lo, hi, floor)))
PYEOF
done
