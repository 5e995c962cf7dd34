#!/usr/bin/env bash
# scenarios.sh — `make scenarios`: generate every scenario trace (defaults,
# seed 1), replay them and the corpus under every installed allocator
# (allocreplay --all, REPEAT repetitions, default 3) into a fresh results
# database, and print from it, as markdown, the table the allocator
# write-ups publish: per trace, throughput relative to glibc, peak heap RSS
# relative to glibc, and p99 latency of all calls. Output: $OUT/table.md
# (OUT defaults to $ALLOCRR_BUILD/scenarios) next to results.db.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${ALLOCRR_BUILD:-build}
OUT=${OUT:-$B/scenarios}
REPEAT=${REPEAT:-3}
AT=$B/bin/alloctrace RP=$B/bin/allocreplay
for t in "$AT" "$RP"; do [ -x "$t" ] || { echo "scenarios.sh: $t missing: run make first" >&2; exit 1; }; done
command -v sqlite3 >/dev/null || { echo "scenarios.sh: sqlite3 missing (make deps installs it)" >&2; exit 1; }
mkdir -p "$OUT"
# A cache of our own: a stale workload in the user's cache (an older replayer
# build) must not turn runs into errors, and the cache stays next to the results.
export ALLOCRR_CACHE_DIR=$OUT/cache
rm -f "$OUT/results.db"
scen=(S1 S2 S3 S4 S5 A B D M X)
for s in "${scen[@]}"; do "$AT" gen "$s" --seed 1 -q -o "$OUT/$s.zst"; done
traces=()
for s in "${scen[@]}"; do traces+=("$OUT/$s.zst"); done
traces+=(traces/corpus/*.zst)
"$RP" "${traces[@]}" --all --repeat "$REPEAT" --db "$OUT/results.db" >"$OUT/replay.log"

# One markdown table per measure: rows = traces (in the order replayed),
# columns = allocators (glibc first, then as the registry lists them).
allocs=$("$RP" --list | awk 'NR > 1 && $4 == "yes" { print $1 }')
table() { # title, SQL expression over allocator_comparison, printf format
	local title=$1 expr=$2 fmt=$3
	echo
	echo "$title"
	echo
	printf '| trace |'; for a in $allocs; do printf ' %s |' "$a"; done; echo
	printf '|---|'; for a in $allocs; do printf -- '---:|'; done; echo
	for t in "${traces[@]}"; do
		local name; name=$(basename "$t" .zst)
		printf '| %s |' "$name"
		for a in $allocs; do
			v=$(sqlite3 "$OUT/results.db" "SELECT $expr FROM allocator_comparison c JOIN traces t ON t.sha256 = c.trace_sha256 \
				WHERE t.sha256 = '$("$AT" info "$t" --json | grep -o '"sha256":"[0-9a-f]*"' | cut -d'"' -f4)' AND c.allocator = '$a';")
			if [ -n "$v" ]; then printf " $fmt |" "$v"; else printf ' — |'; fi
		done
		echo
	done
}
{
	echo "Measured by \`make scenarios\` on $(hostname) ($(nproc) CPUs, $(uname -r)), $(date -u +%Y-%m-%d), $REPEAT repetitions (mean of successful runs; — = no successful run)."
	table "Throughput relative to glibc (higher is faster)" "speed_vs_glibc" "%.2f"
	table "Peak heap RSS relative to glibc (lower is smaller)" "heap_rss_vs_glibc" "%.2f"
	table "p99 latency of all calls, ns" "p99_ns" "%.0f"
} | tee "$OUT/table.md"
