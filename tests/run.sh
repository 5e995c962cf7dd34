#!/usr/bin/env bash
# run.sh UNIT_BIN... -- E2E_SCRIPT...
# Runs every test once, prints "PASS name (s)" or "FAIL name" per test with
# the tail of a failing test's output, and ends with "N passed, N failed".
# Unit tests also run from the sanitizer build ($ALLOCRR_SAN_BUILD) when it
# has them, and those named in $ALLOCRR_TSAN_TESTS from the ThreadSanitizer
# build ($ALLOCRR_TSAN_BUILD). Logs go to $ALLOCRR_BUILD/test-logs/.
set -u
build=${ALLOCRR_BUILD:-build}
san=${ALLOCRR_SAN_BUILD:-}
logs="$build/test-logs"
mkdir -p "$logs"
passed=0 failed=0 skipped=0
failed_names=()

run_one() { # name, command...
	local name=$1; shift
	local log="$logs/$(echo "$name" | tr '/ ' '__').log"
	local t0=$EPOCHREALTIME rc
	timeout --kill-after=10 600 "$@" >"$log" 2>&1 </dev/null
	rc=$?
	local dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1)); echo "PASS $name (${dt}s)"
	elif [ $rc -eq 77 ]; then
		skipped=$((skipped + 1)); echo "SKIP $name: $(tail -n 1 "$log")"
	else
		failed=$((failed + 1)); failed_names+=("$name")
		echo "FAIL $name (exit $rc, ${dt}s) — log: $log"
		tail -n 20 "$log" | sed 's/^/    /'
	fi
}

units=() e2e=() seen_sep=0
for a in "$@"; do
	if [ "$a" = "--" ]; then seen_sep=1; continue; fi
	if [ $seen_sep = 0 ]; then units+=("$a"); else e2e+=("$a"); fi
done

export ALLOCRR_BUILD="$build"
for t in "${units[@]}"; do run_one "unit/$(basename "$t")" "$t"; done
if [ -n "$san" ]; then
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
	for t in "${units[@]}"; do
		s="$san/${t#"$build"/}"
		[ -x "$s" ] && run_one "asan+ubsan/$(basename "$t")" "$s"
	done
	unset ASAN_OPTIONS UBSAN_OPTIONS
fi
if [ -n "${ALLOCRR_TSAN_BUILD:-}" ]; then
	export TSAN_OPTIONS=halt_on_error=1
	for name in ${ALLOCRR_TSAN_TESTS:-}; do
		s="$ALLOCRR_TSAN_BUILD/tests/$name"
		[ -x "$s" ] && run_one "tsan/$name" "$s"
	done
	unset TSAN_OPTIONS
fi
for t in "${e2e[@]}"; do run_one "e2e/$(basename "$t" .sh)" bash "$t"; done

[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
if [ $skipped -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ $failed -eq 0 ]
