#!/usr/bin/env bash
# allocreplay end to end: the checked-in sample and a recorded real program
# (sort) replayed under every installed allocator, twice, into a fresh
# database; then the database is checked row by row with the sqlite3 CLI.
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"

"$B/bin/allocrec" -q -o sort.zst sort /etc/services >/dev/null || { fail "allocrec sort"; finish; }
installed=$("$AR" --list | awk 'NR > 1 && $4 == "yes"' | wc -l)
[ "$installed" -ge 1 ] && ok "$installed allocators installed" || fail "no allocator installed"

# --timing every: the latency counts below must equal ops (the default
# samples 1 call in N on traces long enough, tests/e2e/replay_timing.sh)
"$AR" "$SAMPLE" sort.zst --all --repeat 2 --timing every --db r.db >out.txt 2>err.txt
expect_eq "exit status" $? 0
cat out.txt
expect_eq "integrity" "$(q r.db 'PRAGMA integrity_check')" ok
expect_eq "schema version (one per results/sql migration)" "$(q r.db 'PRAGMA user_version')" "$(ls "$ROOT"/results/sql/[0-9][0-9][0-9][0-9]-*.sql | wc -l)"
expect_eq "traces" "$(q r.db 'SELECT count(*) FROM traces')" 2

for tr in "$SAMPLE" sort.zst; do
	sha=$(sha256sum "$tr" | cut -d' ' -f1)
	name=$(basename "$tr")
	expect_eq "$name: runs" "$(q r.db "SELECT count(*) FROM runs WHERE trace_sha256='$sha'")" $((installed * 2))
	expect_eq "$name: runs not ok" "$(q r.db "SELECT count(*) FROM runs WHERE trace_sha256='$sha' AND status<>'ok'")" 0
	# every installed allocator, each repetition once
	expect_eq "$name: allocator x repetition" \
		"$(q r.db "SELECT count(DISTINCT allocator || ':' || repetition) FROM runs WHERE trace_sha256='$sha'")" $((installed * 2))
	# events from an independent reader; calls = events minus skipped frees
	events=$("$B/bin/alloctrace" verify "$tr" | sed -n 's/.*ok, \([0-9]*\) events.*/\1/p')
	expect_eq "$name: events as alloctrace counts" "$(q r.db "SELECT events FROM traces WHERE sha256='$sha'")" "$events"
	expect_eq "$name: ops = events - skipped" \
		"$(q r.db "SELECT count(*) FROM runs r JOIN traces t ON t.sha256=r.trace_sha256 WHERE r.trace_sha256='$sha' AND r.ops = t.events - t.skipped_unknown_frees")" $((installed * 2))
	expect_eq "$name: one op checksum for all workers" \
		"$(q r.db "SELECT count(DISTINCT op_checksum) FROM runs WHERE trace_sha256='$sha'")" 1
	expect_eq "$name: latency 'all' row per run, count = ops" \
		"$(q r.db "SELECT count(*) FROM runs r JOIN latency l ON l.run_id=r.run_id AND l.op='all' WHERE r.trace_sha256='$sha' AND l.count=r.ops AND l.p50_ns <= l.p99_ns AND l.p99_ns <= l.max_ns")" $((installed * 2))
done

# The proof: the library that served malloc is the registry's.
"$AR" --list | awk 'NR > 1 && $4 == "yes" { print $1, $5 }' | while read -r name lib; do
	got=$(q r.db "SELECT DISTINCT library_path FROM runs WHERE allocator='$name'")
	[ "$got" = "$lib" ] && echo "ok   $name served by $lib" || echo "FAIL $name served by '$got', registry says '$lib'"
done >proof.txt
cat proof.txt
nfail=$((nfail + $(grep -c '^FAIL' proof.txt)))
expect_eq "library_path = expected_library" "$(q r.db 'SELECT count(*) FROM runs WHERE library_path IS NOT expected_library')" 0

# Hardware counters (7 per run, replayer/worker_probe.c): a value, or NULL
# with a reason — never a silent 0.
expect_eq "counter rows" "$(q r.db 'SELECT count(*) FROM counters')" $((installed * 4 * 7))
expect_eq "counters NULL without a reason" "$(q r.db "SELECT count(*) FROM counters WHERE value IS NULL AND coalesce(reason,'')=''")" 0
nulls=$(q r.db 'SELECT count(*) FROM counters WHERE value IS NULL')
ok "counters NULL with a reason: $nulls ($(q r.db 'SELECT reason FROM counters WHERE value IS NULL LIMIT 1'))"

# The harness never mallocs during the replay: our allocators' own counters
# moved by exactly what the trace's calls explain.
ours=$(q r.db 'SELECT count(*) FROM runs WHERE allocator_allocs_delta IS NOT NULL')
if [ "$ours" -gt 0 ]; then
	expect_eq "runs whose allocator counted extra allocations" \
		"$(q r.db 'SELECT count(*) FROM runs WHERE allocator_allocs_delta IS NOT NULL AND (allocator_allocs_delta <> allocs_expected OR allocator_frees_delta <> frees_expected)')" 0
	ok "harness-never-mallocs checked on $ours runs"
else
	fail "no run under one of our allocators: cannot check that the harness never mallocs"
fi
expect_eq "rss samples of the sample trace" "$(q r.db "SELECT count(*) > 0 FROM rss_samples")" 1
expect_eq "peaks measured" "$(q r.db "SELECT count(*) FROM runs WHERE peak_heap_rss_bytes IS NULL OR fragmentation IS NULL")" 0
expect_eq "run_summary rows" "$(q r.db 'SELECT count(*) FROM run_summary')" $((installed * 4))
expect_eq "allocator_stats of ours and glibc" "$(q r.db "SELECT count(DISTINCT r.allocator) >= 2 FROM allocator_stats s JOIN runs r USING (run_id)")" 1
grep -q "glibc" out.txt && ok "comparison table printed" || fail "no table"

# Second run: the workload comes from the cache; JSON output parses.
"$AR" "$SAMPLE" -a glibc --repeat 1 --db r.db --json >j.json 2>err2.txt
expect_eq "second run exit" $? 0
ls "$ALLOCRR_CACHE_DIR"/*.wl >/dev/null 2>&1 && ok "workload cached" || fail "no cached workload"
"$AR" "$SAMPLE" -a glibc --repeat 1 --db r.db >out2.txt 2>&1
grep -q "workload from cache" out2.txt && ok "cache hit" || { fail "no cache hit"; cat out2.txt; }
python3 -c 'import json,sys; d=json.load(open("j.json")); r=d["traces"][0]["allocators"][0]["runs"][0]; assert d["format_version"]==2 and r["status"]=="ok" and r["ops"]>0' \
	&& ok "json parses" || fail "json"
finish
