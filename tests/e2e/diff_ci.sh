#!/usr/bin/env bash
# The CI example of docs/CI.md, run as written: the shell block after the
# "ci-example" marker is extracted and run with the build's bin directory on
# PATH, three times —
#   1. no baseline yet: it records, replays and creates the baseline (exit 0);
#   2. the same program again (the demo server, one worker thread: the same
#      heap every run): the trace diff says "no difference" and passes; the
#      replay diff prints its table and exits 0 or, when a replay figure
#      changed meaningfully by chance on a shared machine, 4 with every
#      violation a replay figure's (timings are not asserted here);
#   3. a baseline of tests/progs/rec_diffleak, then the same program with
#      --leak: exit 4, and the violation line docs/CI.md shows, verbatim.
. "$(dirname "$0")/report_lib.inc"
REC=$B/bin/allocrec
DEMO=$B/traces/demo_server
LEAKY=$B/tests/progs/rec_diffleak
for f in "$REC" "$DEMO" "$LEAKY"; do [ -x "$f" ] || { echo "missing $f"; exit 77; }; done
DOC=$ROOT/docs/CI.md

# The block: from the line after the marker's ```sh to the closing ```.
awk '/<!-- ci-example/ {m = 1; next} m == 1 && /^```sh$/ {m = 2; next} m == 2 && /^```$/ {exit} m == 2' "$DOC" >heap-check.sh
[ -s heap-check.sh ] && ok "example extracted ($(wc -l <heap-check.sh) lines)" || { fail "no ci-example block in $DOC"; finish; }
export PATH="$B/bin:$PATH"

# ---- 1. first run: the baseline is created --------------------------------------------
TEST_RUN="$DEMO 20000 1" sh heap-check.sh >run1.out 2>run1.err
expect_eq "first run: exit" $? 0
grep -q "^baseline created in baseline$" run1.out && ok "first run: baseline created" || fail "first run: $(cat run1.out run1.err)"
[ -f baseline/test.zst ] && [ -f baseline/results.db ] && ok "baseline files" || fail "baseline files missing"

# ---- 2. the same program again ---------------------------------------------------------
TEST_RUN="$DEMO 20000 1" sh heap-check.sh >run2.out 2>run2.err
rc=$?
case $rc in 0 | 4) ok "second run: exit $rc (a verdict, not a broken job)" ;; *) fail "second run: exit $rc: $(cat run2.err)" ;; esac
expect_eq "second run: trace diff verdict" "$(tail -n 1 out/trace-diff.txt)" "no difference"
grep -q "^alloctrace: regression" run2.err && fail "second run: the trace diff failed: $(cat run2.err)" ||
	ok "second run: no trace regression"
grep -q "^trace test.zst .*matched by name: the trace itself changed" out/replay-diff.txt &&
	ok "second run: the new test.zst paired with the baseline's" || fail "second run: $(head out/replay-diff.txt)"
grep -q "only in" out/replay-diff.txt && fail "second run: a trace on one side only" || ok "second run: nothing unpaired"
grep -qE '^  (glibc|pool) +p99 ' out/replay-diff.txt && ok "second run: per-allocator rows" || fail "second run: no p99 rows"
if [ $rc = 4 ]; then
	expect_eq "second run: every violation a replay figure's" \
		"$(grep ': regression: ' run2.err | grep -cvE "^allocreport: regression: trace test.zst, allocator (glibc|pool): (p99|ops_s|heap_rss) .*, meaningful\)")" 0
fi

# ---- 3. a leak -------------------------------------------------------------------------
rm -rf baseline out
TEST_RUN="$LEAKY" sh heap-check.sh >run3.out 2>run3.err
expect_eq "leak baseline: exit" $? 0
TEST_RUN="$LEAKY --leak" sh heap-check.sh >run4.out 2>run4.err
expect_eq "leak: exit" $? 4
line=$(grep -F "alloctrace: regression: leaked in out/test.zst" "$DOC")
[ -n "$line" ] && grep -qxF "$line" run4.err && ok "leak: the violation line of docs/CI.md" ||
	fail "leak: docs say '$line', got: $(cat run4.err)"
grep -qE ';main;leak_site$' run4.out && ok "leak: the site in the trace diff" || fail "leak: no leak_site in the output"
finish
