#!/usr/bin/env bash
# torture_alloc_debug.sh — our four allocators under the checks of their
# debug builds (build/lib/liballocrr-NAME-debug.so, docs/ALLOCATORS.md
# "Debug build") and under real programs for longer runs:
#
#   (a) stress: tests/allocators/alloc_stress.c (threads, cross-thread frees,
#       every allocation function, realloc, thread turnover, fork) under each
#       debug variant: the program checks its own patterns, the debug layer
#       checks guards, freed-block fills and every pointer freed; and the API
#       conformance suite (alloc_api.c) under each debug variant;
#   (b) negative: tests/allocators/debug_bugs.c commits each bug (one-byte
#       overflow after malloc/calloc/aligned_alloc/realloc, double free, write
#       after free, free of interior/static/stack pointers, realloc of a
#       foreign pointer) at sizes from 1 byte to a large mapping; each debug
#       variant must abort (SIGABRT) with the message naming the allocator,
#       the check, the block and its size. Never run under a normal build,
#       where these bugs are undefined behaviour. Plus the fill patterns
#       themselves (new 0xa5, calloc 0, freed 0x5a, usable size = request);
#   (c) programs: python3 (dicts, strings, json round trips, threads, with
#       PYTHONMALLOC=malloc), sort, gzip, xz, gcc -O2 on our own sources and
#       sqlite3, under glibc, each of our allocators and each debug variant;
#       every output must equal glibc's byte for byte, and every process must
#       report (ALLOCRR_ALLOC_STATS_FILE) that it allocated through ours.
#
# ALLOCRR_TORTURE_SCALE (default 1) multiplies the iteration counts and input
# sizes (Python rounds and gcc compiles grow at 1/2 and 1/4 of the rate, so
# that scale 20 stays inside tests/run.sh's 600 s per script). Prints
# "tally torture_alloc_debug part=... key=value ..." lines with exact counts
# (make torture collects them).
set -u
. "$(dirname "$0")/../allocators/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
scale=${ALLOCRR_TORTURE_SCALE:-1}
case $scale in '' | *[!0-9]* | 0) echo "ALLOCRR_TORTURE_SCALE must be a positive integer" >&2; exit 1 ;; esac
stress="$build/tests/alloc_stress" bugs="$build/tests/debug_bugs" api="$build/tests/alloc_api"
need "$list" "$stress" "$bugs" "$api"
for n in $ours; do need "$ALLOCRR_LIBDIR/liballocrr-$n.so" "$ALLOCRR_LIBDIR/liballocrr-$n-debug.so"; done
python=/usr/bin/python3 # python3 on PATH may be a pyenv shim (a bash script)
need_program sort coreutils
need_program gzip gzip
need_program xz xz-utils
need_program gcc gcc
need_program sqlite3 sqlite3
[ -x "$python" ] || { echo "skipped: $python is not installed"; exit 77; }
ulimit -c 0 # the negative tests abort on purpose

work=$(mktemp -d /tmp/allocrr-torture-debug.XXXXXX)
trap 'rm -rf "$work"' EXIT
failed=0
t_start=$EPOCHREALTIME
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# ---- (a) the stress suite under every debug variant -----------------------------
ops=$((2000 * scale)) waves=$((1 * scale)) forks=$((2 * scale))
for name in $ours; do
	log="$work/stress-$name.log"
	t0=$EPOCHREALTIME
	LD_PRELOAD="$ALLOCRR_LIBDIR/liballocrr-$name-debug.so" timeout $((300 * scale)) \
		"$stress" "$ops" 4 "$waves" "$forks" >"$log" 2>&1
	rc=$?
	totals=$(sed -n 's/^totals: //p' "$log")
	if [ $rc -ne 0 ] || [ -z "$totals" ]; then
		echo "FAIL stress $name-debug (exit $rc):"
		tail -n 20 "$log" | sed 's/^/    /'
		failed=$((failed + 1))
		totals="allocs=0 reallocs=0 frees=0 failures=-"
	else
		echo "ok   stress $name-debug ($(elapsed "$t0")s): $totals"
	fi
	echo "tally torture_alloc_debug part=stress allocator=$name-debug threads=4 ops_per_thread=$ops" \
		"waves=$waves forks=$forks exit=$rc $totals"
	# Again with the smallest chunks, caches and batches and no quarantine:
	# every freed block is verified and reused at once (arena rewinds,
	# freelist coalesces, tlscache flushes on each free), and large blocks
	# start at a few KiB.
	t0=$EPOCHREALTIME
	env ALLOCRR_DEBUG_QUARANTINE=0 ALLOCRR_POOL_CHUNK_SIZE=64K ALLOCRR_POOL_MAX_SIZE=16K \
		ALLOCRR_TLSCACHE_CHUNK_SIZE=64K ALLOCRR_TLSCACHE_BATCH=1 ALLOCRR_TLSCACHE_MAX_BYTES=0 \
		ALLOCRR_ARENA_CHUNK_SIZE=64K ALLOCRR_ARENA_KEEP_CHUNKS=0 ALLOCRR_FREELIST_SEGMENT_SIZE=64K \
		ALLOCRR_FREELIST_KEEP_SEGMENTS=0 LD_PRELOAD="$ALLOCRR_LIBDIR/liballocrr-$name-debug.so" \
		timeout $((300 * scale)) "$stress" "$ops" 4 "$waves" "$forks" >"$log" 2>&1
	rc=$?
	totals=$(sed -n 's/^totals: //p' "$log")
	if [ $rc -ne 0 ] || [ -z "$totals" ] || grep -q '^allocrr: ignoring' "$log"; then
		echo "FAIL stress (small tunables, no quarantine) $name-debug (exit $rc):"
		tail -n 20 "$log" | sed 's/^/    /'
		failed=$((failed + 1))
		totals="allocs=0 reallocs=0 frees=0 failures=-"
	else
		echo "ok   stress (small tunables, no quarantine) $name-debug ($(elapsed "$t0")s): $totals"
	fi
	echo "tally torture_alloc_debug part=stress-small allocator=$name-debug threads=4 ops_per_thread=$ops" \
		"waves=$waves forks=$forks exit=$rc $totals"
	# The API conformance suite too: the checks must not change the contract.
	if LD_PRELOAD="$ALLOCRR_LIBDIR/liballocrr-$name-debug.so" timeout 300 "$api" "$name-debug" \
		>"$log" 2>&1; then
		api_ok=1
		echo "ok   api $name-debug"
	else
		api_ok=0
		echo "FAIL api $name-debug:"
		tail -n 20 "$log" | sed 's/^/    /'
		failed=$((failed + 1))
	fi
	echo "tally torture_alloc_debug part=api allocator=$name-debug suites=1 passed=$api_ok"
done

# ---- (b) negative tests: every bug caught by every debug variant ----------------------
# case size -> the message expected on stderr (an extended regex after
# "allocrr: NAME-debug: ").
expect() {
	local c=$1 n=$2 blk='block 0x[0-9a-f]+'
	case $c in
	overflow-malloc | overflow-calloc | overflow-memalign)
		echo "heap-buffer-overflow in free\(\): $blk of $n bytes: guard byte at offset $n is 0x78, expected 0xfd" ;;
	overflow-realloc)
		echo "heap-buffer-overflow in realloc\(\): $blk of $n bytes: guard byte at offset $n is 0x78, expected 0xfd" ;;
	overflow-realloc-grow)
		echo "heap-buffer-overflow in free\(\): $blk of $((2 * n)) bytes: guard byte at offset $((2 * n)) is 0x78" ;;
	double-free) echo "double free in free\(\): $blk of $n bytes: it was already freed" ;;
	double-free-realloc) echo "double free in realloc\(\): $blk of $n bytes: it was already freed" ;;
	write-after-free)
		echo "write after free in free\(\) \(the block was about to be reused\): $blk of $n bytes: byte at offset $((n / 2)) is 0x78, expected 0x5a" ;;
	write-after-free-exit)
		echo "write after free in exit \(quarantine check\): $blk of $n bytes: byte at offset 0 is 0x78, expected 0x5a" ;;
	free-interior | free-static | free-stack)
		echo "invalid pointer in free\(\): $blk of unknown size: not a block this allocator returned" ;;
	realloc-foreign)
		echo "invalid pointer in realloc\(\): $blk of unknown size: not a block this allocator returned" ;;
	esac
}
sized_cases="overflow-malloc overflow-calloc overflow-memalign overflow-realloc overflow-realloc-grow
	double-free double-free-realloc write-after-free write-after-free-exit free-interior"
pointer_cases="free-static free-stack realloc-foreign"
# 1 and 32 sit at class edges, 4096 mid-range, 40000 and 200000 are large
# blocks (own mapping) in pool/tlscache and, for 200000, in all four.
sizes="1 24 32 4096 40000 200000"
for name in $ours; do
	lib="$ALLOCRR_LIBDIR/liballocrr-$name-debug.so"
	cases=0 caught=0 patterns=0 patterns_ok=0
	runs=()
	for c in $sized_cases; do for n in $sizes; do runs+=("$c $n"); done; done
	for c in $pointer_cases; do runs+=("$c 24"); done
	for r in "${runs[@]}"; do
		set -- $r
		log="$work/bug.log"
		# "; exit": the subshell, not this shell, reports "Aborted" (into the log).
		(LD_PRELOAD=$lib timeout 60 "$bugs" "$1" "$2"; exit $?) >"$log" 2>&1
		rc=$?
		cases=$((cases + 1))
		if [ $rc -eq 134 ] && grep -Eq "^allocrr: $name-debug: $(expect "$1" "$2")" "$log"; then
			caught=$((caught + 1))
		else
			echo "FAIL $name-debug did not catch $1 (size $2) as expected (exit $rc):"
			sed 's/^/    /' "$log" | tail -n 5
			failed=$((failed + 1))
		fi
	done
	for n in $sizes; do
		patterns=$((patterns + 1))
		if LD_PRELOAD=$lib timeout 60 "$bugs" patterns "$n" >"$work/pat.log" 2>&1; then
			patterns_ok=$((patterns_ok + 1))
		else
			echo "FAIL $name-debug fill patterns, size $n:"
			sed 's/^/    /' "$work/pat.log" | tail -n 5
			failed=$((failed + 1))
		fi
	done
	echo "ok   negative $name-debug: $caught of $cases bugs caught, $patterns_ok of $patterns pattern checks"
	echo "tally torture_alloc_debug part=negative allocator=$name-debug cases=$cases caught=$caught" \
		"pattern_checks=$patterns pattern_ok=$patterns_ok"
done

# ---- (c) real programs, compared with glibc ---------------------------------------------
lines=$((25000 * scale))
awk -v n="$lines" 'BEGIN { x = 7; for (i = 0; i < n; i++) {
	x = (x * 1103515245 + 12345) % 2147483648
	printf "%08x %d line-%d %s\n", x, x % 100000, i, substr("abcdefghijklmnopqrstuvwxyz", x % 26 + 1, 1 + x % 9) } }' \
	>"$work/sort.in"
head -c $((524288 * scale)) "$work/sort.in" >"$work/comp.in"
rows=$((5000 * scale))
cat >"$work/db.sql" <<SQL
CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, val REAL, grp INTEGER, note TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $rows)
INSERT INTO t SELECT x, printf('name-%07d', (x * 7919) % $rows), x * 0.5, x % 97,
	printf('%x', x * 2654435761 % 4294967296) FROM c;
CREATE INDEX t_name ON t(name);
CREATE INDEX t_grp ON t(grp, val);
SELECT count(*), sum(val), min(name), max(name) FROM t;
SELECT grp, count(*), round(avg(val), 3), group_concat(id % 10, '') FROM t GROUP BY grp ORDER BY grp LIMIT 20;
SELECT a.grp, count(*) FROM t a JOIN t b ON b.id = a.id - 1 WHERE (a.grp + b.grp) % 3 = 0 GROUP BY a.grp ORDER BY 2 DESC, 1 LIMIT 5;
UPDATE t SET note = upper(note) || name WHERE id % 3 = 0;
DELETE FROM t WHERE id % 5 = 0;
SELECT count(*), sum(length(note)), max(note) FROM t;
SELECT id, name FROM t ORDER BY note DESC, id LIMIT 10;
SQL
# gcc -O2 compiles ceil(scale/4) of our own sources (cycling through allocators/,
# as the debug build does so that common/debug.c compiles too).
srcs=()
for f in "$root"/allocators/*/*.c; do srcs+=("${f#"$root"/}"); done
ncompile=$(((scale + 3) / 4))
python_rounds=$(((scale + 1) / 2))

# run_all DIR: every program, outputs into DIR (LD_PRELOAD already set),
# each command under a timeout. Returns the failing step's number.
tmo=$((300 * scale))
run_all() {
	local out=$1 i t="timeout $tmo"
	mkdir -p "$out/tmp"
	PYTHONMALLOC=malloc PYTHONHASHSEED=0 $t "$python" "$root/tests/allocators/programs/torture_workload.py" \
		"$python_rounds" >"$out/python.out" || return 1
	LC_ALL=C $t sort --parallel=2 -S 4M -T "$out/tmp" "$work/sort.in" >"$out/sort.txt" || return 2
	md5sum <"$out/sort.txt" >"$out/sort.out" && rm -f "$out/sort.txt"
	LC_ALL=C $t sort -k2,2n -k1,1 -o "$out/sortn.txt" "$work/sort.in" || return 2
	md5sum <"$out/sortn.txt" >"$out/sortn.out" && rm -f "$out/sortn.txt"
	$t gzip -6 -c "$work/comp.in" >"$out/comp.gz" || return 3
	$t gzip -d -c "$out/comp.gz" >"$out/comp.back" && cmp -s "$out/comp.back" "$work/comp.in" || return 3
	$t xz -T2 -2 --block-size=512KiB -c "$work/comp.in" >"$out/comp.xz" || return 4
	$t xz -T2 -d -c "$out/comp.xz" >"$out/comp.back" && cmp -s "$out/comp.back" "$work/comp.in" || return 4
	rm -f "$out/comp.back"
	for ((i = 0; i < ncompile; i++)); do
		(cd "$root" && $t gcc -O2 -std=c11 -D_GNU_SOURCE -DAR_ALLOC_DEBUG -Itrace-format -Icommon \
			-Iallocators -Iallocators/common -Iallocators/pool -c "${srcs[i % ${#srcs[@]}]}" -o "$out/cc$i.o") || return 5
	done
	$t sqlite3 "$out/db.sqlite" <"$work/db.sql" >"$out/sqlite.out" || return 6
	rm -f "$out/db.sqlite"
	return 0
}
outputs="python.out sort.out sortn.out comp.gz comp.xz sqlite.out"
for ((i = 0; i < ncompile; i++)); do outputs="$outputs cc$i.o"; done
progs="python3 sort gzip xz gcc cc1 as sqlite3"

t0=$EPOCHREALTIME
if ! run_all "$work/glibc"; then
	echo "FAIL: the reference run on glibc failed"
	exit 1
fi
echo "ok   programs glibc ($(elapsed "$t0")s): the reference"
for name in $ours; do
	for variant in "$name" "$name-debug"; do
		stats="$work/$variant.stats"
		: >"$stats"
		t0=$EPOCHREALTIME
		LD_PRELOAD="$ALLOCRR_LIBDIR/liballocrr-$variant.so" ALLOCRR_ALLOC_STATS_FILE=$stats \
			run_all "$work/$variant" 2>"$work/$variant.err"
		rc=$?
		same=0 differ="" missing=""
		for f in $outputs; do
			if [ -e "$work/$variant/$f" ] && cmp -s "$work/glibc/$f" "$work/$variant/$f"; then
				same=$((same + 1))
			else
				differ="$differ $f"
			fi
		done
		# Proof that each program allocated through ours (a debug variant
		# reports under its allocator's name).
		for exe in $progs; do
			grep "allocator=$name exe=[^ ]*/[^ /]*$exe[^ /]* " "$stats" | grep -qv ' allocs_total=0 ' ||
				missing="$missing $exe"
		done
		nproc=$(grep -c "allocator=$name " "$stats")
		allocs=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^allocs_total=/) { sub(/.*=/, "", $i); s += $i } }
			END { printf "%d", s }' "$stats")
		if [ $rc -ne 0 ] || [ -n "$differ" ] || [ -n "$missing" ]; then
			echo "FAIL programs $variant (step exit $rc): differs from glibc:${differ:- none}; no stats from:${missing:- none}"
			sed 's/^/    /' "$work/$variant.err" | tail -n 5
			failed=$((failed + 1))
		else
			echo "ok   programs $variant ($(elapsed "$t0")s, $nproc processes, $allocs allocations)"
		fi
		echo "tally torture_alloc_debug part=programs allocator=$variant exit=$rc outputs=$(echo $outputs | wc -w)" \
			"identical=$same processes=$nproc allocs_total=$allocs python_rounds=$python_rounds" \
			"sort_lines=$lines compressed_bytes=$((524288 * scale)) gcc_compiles=$ncompile sqlite_rows=$rows"
	done
done

echo "tally torture_alloc_debug part=total scale=$scale failed=$failed"
echo "took $(elapsed "$t_start")s at scale $scale"
[ $failed -eq 0 ]
