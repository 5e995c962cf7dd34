#!/usr/bin/env bash
# make bench-alloc: every installed allocator — glibc, jemalloc, tcmalloc,
# mimalloc and our pool, arena, tlscache, freelist — on the reference
# scenarios (alloctrace gen S1..X, traces/gen/) and on the recorded
# demo_server, through allocreplay (one worker process per allocator and
# repetition, the same compiled sequence for all). Prints per scenario the
# median throughput and the median peak heap RSS of each allocator relative
# to glibc's, from the results database.
#   ALLOCRR_BUILD=build REPEAT=3 SCENARIOS="S1 S2 ..." DB=file bash bench/alloc/run.sh
# A scenario may carry its size, NAME:OPS (alloctrace gen --ops; "S4:2000"
# replays a fifth of S4's default 10000 calls), and its thread count,
# NAME[:OPS]@THREADS (alloctrace gen --threads; "D@4" is D on 4 threads, named
# D-t4 in the tables); DEMO=0 leaves out demo_server.
# OLD_LIBDIR=DIR also replays our four allocators from the libraries in DIR
# (e.g. a build of the previous commit), interleaved with the current ones:
# each repetition runs every allocator of this build and ours from DIR
# (ALLOCRR_LIBDIR) once each, one allocreplay per allocator, in an order of
# its own (bench/fidelity/programs.sh's round_order), and the tables gain
# columns NAME-old, relative to the same run's glibc.
# The default list ends with two multi-threaded scenarios with more threads
# than a 2-core machine has cores, so threads are preempted inside the
# allocator: S1@4 (four threads churning 64-byte objects of one size class)
# and D@4 (an interpreter-like mix of a long-lived cache and short-lived
# 16-512 B temporaries, on four threads).
set -u
B=$(cd "${ALLOCRR_BUILD:-build}" && pwd)
REPEAT=${REPEAT:-3}
SCENARIOS=${SCENARIOS:-S1 S2 S3 S4 S5 A B D M X S1@4 D@4}
T=$(mktemp -d /tmp/allocrr-bench-alloc.XXXXXX)
trap 'rm -rf "$T"' EXIT
DB=${DB:-$T/bench-alloc.db}
export ALLOCRR_CACHE_DIR=$T/cache
command -v sqlite3 >/dev/null || { echo "bench-alloc needs the sqlite3 CLI (apt-get install sqlite3)"; exit 1; }

traces=()
for s in $SCENARIOS; do
	opts=() name=
	case $s in *@*) opts+=(--threads "${s#*@}"); name=-t${s#*@}; s=${s%%@*} ;; esac
	case $s in *:*) opts+=(--ops "${s#*:}"); s=${s%%:*} ;; esac
	name=$s$name
	"$B/bin/alloctrace" gen "$s" "${opts[@]}" --seed 1 -q -o "$T/$name.zst" || { echo "alloctrace gen $s failed"; exit 1; }
	traces+=("$T/$name.zst")
done
[ "${DEMO:-1}" = 0 ] || { "$B/bin/allocrec" -q -o "$T/demo_server.zst" "$B/traces/demo_server" 40000 2 >/dev/null &&
	traces+=("$T/demo_server.zst"); }

echo "bench-alloc: ${#traces[@]} traces x every installed allocator x $REPEAT repetitions," \
	"$(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
ours="pool arena tlscache freelist"
allocs=$("$B/bin/allocreplay" --list | awk 'NR > 1 && $4 == "yes" {print $1}')
if [ -z "${OLD_LIBDIR:-}" ]; then
	"$B/bin/allocreplay" "${traces[@]}" --all --repeat "$REPEAT" --db "$DB" >"$T/replay.out" 2>&1
	rc=$?
else
	OLD_DB=${OLD_DB:-${DB%.db}-old.db}
	echo "old libraries: $OLD_LIBDIR (columns NAME-old), interleaved, $REPEAT repetitions"
	# Each repetition runs every allocator, new and old, in an allocreplay
	# of its own, in the round's own order (round_order): when the old
	# libraries always ran right after the new ones, in a shorter
	# allocreplay, the old columns of two rows came out 20-30 % off what
	# alternated rounds measured (docs/BENCHMARKS.md, "asleep in mprotect").
	HERE=$(cd "$(dirname "$0")/../fidelity" && pwd)
	. "$HERE/programs.sh"
	rc=0
	for r in $(seq "$REPEAT"); do
		for a in $(round_order "$r" $allocs $(for o in $ours; do echo "$o-old"; done)); do
			case $a in
			*-old) ALLOCRR_LIBDIR=$OLD_LIBDIR "$B/bin/allocreplay" "${traces[@]}" -a "${a%-old}" \
				--no-baseline --repeat 1 --db "$OLD_DB" >>"$T/replay-old.out" 2>&1 || rc=$? ;;
			*) "$B/bin/allocreplay" "${traces[@]}" -a "$a" --no-baseline --repeat 1 --db "$DB" \
				>>"$T/replay.out" 2>&1 || rc=$? ;;
			esac
		done
	done
	allocs="$allocs $(for a in $ours; do echo "$a-old"; done)"
fi
[ $rc -eq 0 ] || echo "note: allocreplay exit $rc (some runs failed; their cells show their status)"

# median of ops/s and of peak heap RSS per (trace, allocator), then ratios to glibc
query="SELECT s.trace_name, s.allocator, s.status, s.ops_per_sec, s.peak_heap_rss_bytes, s.p99_ns,
	        CASE WHEN r.ops > 0 THEN r.timed_ns * 1.0 / r.ops END
	 FROM run_summary s JOIN runs r ON r.run_id = s.run_id ORDER BY s.trace_name, s.allocator"
{
	sqlite3 -batch -noheader -separator ' ' "$DB" "$query"
	[ -z "${OLD_LIBDIR:-}" ] || sqlite3 -batch -noheader -separator ' ' "$OLD_DB" "$query" | awk '{ $2 = $2 "-old"; print }'
} |
awk -v w="${OLD_LIBDIR:+12}" -v allocs="$(echo $allocs)" -v order="$(for t in "${traces[@]}"; do basename "$t"; done | tr '\n' ' ')" '
function median(list,   n, a, i, j, t) {
	n = split(list, a, ",")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
	key = $1 SUBSEP $2; traces[$1] = 1
	if ($3 != "ok") { bad[key] = $3; next }
	ops[key] = ops[key] (ops[key] == "" ? "" : ",") $4
	mem[key] = mem[key] (mem[key] == "" ? "" : ",") $5
	p99[key] = p99[key] (p99[key] == "" ? "" : ",") $6
	cost[key] = cost[key] (cost[key] == "" ? "" : ",") $7
}
END {
	if (w == "") w = 9
	fs = " %" w "s"; fd = " %" w "d"; ff1 = " %" w ".1f"; ff2 = " %" w ".2f"
	na = split(allocs, A, " ")
	for (part = 1; part <= 4; part++) {
		title = part == 1 ? "throughput relative to glibc (median ops/s over the replay, touching included; higher is faster)" : \
			part == 2 ? "peak heap RSS relative to glibc (median; lower is smaller)" : \
			part == 3 ? "p99 latency of all calls, ns (median over repetitions)" : \
			"mean time inside the allocator per call, ns (timer overhead subtracted; median)"
		printf "\n%s\n%-16s", title, "scenario"
		for (i = 1; i <= na; i++) printf fs, A[i]
		printf "\n"
		nt = split(order, names, " ")
		for (x = 1; x <= nt; x++) {
			tr = names[x]; sub(/\.zst$/, "", tr)
			printf "%-16s", tr
			g = names[x] SUBSEP "glibc"
			for (i = 1; i <= na; i++) {
				k = names[x] SUBSEP A[i]
				if (k in bad && !(k in ops)) { printf fs, bad[k]; continue }
				if (!(k in ops)) { printf fs, "-"; continue }
				if (part == 1) v = (g in ops) ? median(ops[k]) / median(ops[g]) : 0
				else if (part == 2) v = (g in mem && median(mem[g]) > 0) ? median(mem[k]) / median(mem[g]) : 0
				else if (part == 3) v = median(p99[k])
				else v = median(cost[k])
				printf part == 3 ? fd : part == 4 ? ff1 : ff2, v
			}
			printf "\n"
		}
	}
}'
echo
echo "(per-run details: allocreplay's tables below; database: $DB)"
sed -n '/^trace /,$p' "$T/replay.out" | grep -v '^$' | head -200
