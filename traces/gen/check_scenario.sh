#!/usr/bin/env bash
# check_scenario.sh SCENARIO TRACE [--recorded]
# Does TRACE have the shape of SCENARIO (traces/gen, `alloctrace gen --list`)?
# Checks, from `alloctrace info --json` and `alloctrace dump`: the op mix, the
# request sizes, the thread count (given as EXPECT_THREADS, default the
# scenario's), and the scenario's structure (immediate frees for A, batch
# releases for S5/B, bucket growth by realloc for S3, the size mix for M,
# cross-thread frees for X). Generated traces must match exactly; with
# --recorded (a scen_* program recorded by allocrec) up to 1 % of the events
# may be the program's own (bookkeeping arrays, thread start-up, free(NULL)).
# Prints one "ok:"/"FAIL:" line per check; exit 0 when all pass, 1 otherwise.
set -u
scen=${1:?usage: check_scenario.sh SCENARIO TRACE [--recorded]}
trace=${2:?usage: check_scenario.sh SCENARIO TRACE [--recorded]}
recorded=0; [ "${3:-}" = --recorded ] && recorded=1
AT=${ALLOCRR_BUILD:-build}/bin/alloctrace
case $scen in S2) def=8 ;; X) def=2 ;; *) def=1 ;; esac
threads=${EXPECT_THREADS:-$def}

info=$("$AT" info "$trace" --json) || { echo "FAIL: alloctrace info $trace"; exit 1; }
json() { echo "$info" | grep -o "\"$1\":[^,}]*" | head -n 1 | cut -d: -f2 | tr -d '"'; }

"$AT" dump "$trace" | awk -v S="$scen" -v REC=$recorded -v THREADS="$threads" \
	-v INFO_THREADS="$(json threads)" -v UNKNOWN="$(json frees_of_unknown_pointers)" -v STATUS="$(json status)" '
function check(cond, what) { if (cond) print "ok: " what; else { print "FAIL: " what; bad++ } }
function in_range(x, lo, hi) { return x >= lo && x <= hi }
function pow2(x) { while (x > 1 && x % 2 == 0) x /= 2; return x == 1 }
# Is an allocation of `size` bytes (calloc: n*size) one the scenario makes?
function fits(op, size, n) {
	if (S == "S1" || S == "S2") return op == "malloc" && size == 64
	if (S == "S3") return (op == "malloc" && size == 32) || (op == "calloc" && n * size == 128) ||
		(op == "realloc" && size >= 256 && pow2(size))
	if (S == "S4") return op == "malloc" && in_range(size, 1000000, 10000000)
	if (S == "S5") return op == "malloc" && in_range(size, 16, 256)
	if (S == "A") return op == "malloc" && in_range(size, 16, 128) && size % 8 == 0
	if (S == "B") return op == "malloc" && in_range(size, 2048, 8192)
	if (S == "D") return (op == "malloc" || op == "realloc") && in_range(size, 16, 4096)
	if (S == "M") return op == "malloc" && (size == 128 || size == 4096 || size == 65536 || size == 2097152)
	if (S == "X") return op == "malloc" && in_range(size, 64, 1024) && size % 16 == 0
	return 0
}
{
	seq = $1; tid = $2; op = $3; events++; ops[op]++
	if (op == "free") {
		p = $4
		if (p == "0x0") { other++; next }
		if (p in owner) {
			if (owner[p] != tid) xfree++
			if (S == "A" && last[tid] == p) immediate++
			delete owner[p]
		}
		run_free[tid]++
		if (run_alloc[tid]) { alloc_runs++; alloc_run_sum += run_alloc[tid]; run_alloc[tid] = 0 }
		last[tid] = ""
		next
	}
	if (op == "malloc") { size = $4; n = 1; res = $6 }
	else if (op == "calloc") { n = $4; size = $5; res = $7 }
	else if (op == "realloc") { if ($4 in owner) delete owner[$4]; size = $5; n = 1; res = $7 }
	else { other++; next }
	if (fits(op, size, n)) good++; else { other++; if (nbad++ < 3) print "  not in " S ": " $0 }
	if (op == "malloc") {
		if (size <= 128) cat128++; else if (size <= 4096) cat4k++; else if (size <= 65536) cat64k++; else cat2m++
	}
	owner[res] = tid; last[tid] = res
	run_alloc[tid]++
	if (run_free[tid]) { free_runs++; free_run_sum += run_free[tid]; run_free[tid] = 0 }
}
END {
	slack = REC ? int(events / 100) + 8 : 0
	check(STATUS == "complete" && UNKNOWN == 0, "trace complete, no frees of unknown pointers")
	check(INFO_THREADS == THREADS, "threads " INFO_THREADS " (want " THREADS ")")
	check(other <= slack, (events - other) " of " events " events are the scenario'"'"'s (" other + 0 " others, allowed " slack ")")
	nalloc = ops["malloc"] + ops["calloc"]
	check(nalloc > 0 && (ops["free"] - nalloc <= slack && nalloc - ops["free"] <= slack), "every allocation freed: " nalloc " allocations, " ops["free"] " frees")
	if (S == "S3") check(ops["realloc"] > 0 && ops["calloc"] > 0, "bucket arrays: " ops["calloc"] " callocs, " ops["realloc"] " reallocs")
	else if (S == "D") check(in_range(ops["realloc"] / events, 0.01, 0.04), "cache entries resized by realloc: " ops["realloc"] " reallocs")
	else check(ops["realloc"] + 0 == 0, "no realloc")
	if (S == "A") check(immediate >= ops["malloc"] - slack, immediate " of " ops["malloc"] " objects freed by the next call")
	if (S == "S5") check(free_runs && free_run_sum / free_runs >= 32, "frees come in batches (mean run " (free_runs ? free_run_sum / free_runs : 0) ")")
	if (S == "B") check(alloc_runs && in_range(alloc_run_sum / alloc_runs, 16, 64), "allocations come in batches of 16-64 (mean " (alloc_runs ? alloc_run_sum / alloc_runs : 0) ")")
	if (S == "M") {
		m = ops["malloc"]; if (!m) m = 1
		check(in_range(cat128 / m, 0.57, 0.63) && in_range(cat4k / m, 0.17, 0.23) && in_range(cat64k / m, 0.12, 0.18) && in_range(cat2m / m, 0.03, 0.07),
			sprintf("size mix %.1f%% 128 B, %.1f%% 4 KiB, %.1f%% 64 KiB, %.1f%% 2 MiB (want 60/20/15/5)", 100 * cat128 / m, 100 * cat4k / m, 100 * cat64k / m, 100 * cat2m / m))
	}
	if (S == "X") check(xfree >= ops["free"] - slack && xfree > 0, xfree " of " ops["free"] " frees are cross-thread")
	else check(xfree <= slack, xfree + 0 " cross-thread frees (allowed " slack ")")
	exit bad > 0
}'
