#!/usr/bin/env bash
# allocreplay --counters perf|sim|none and --access-pass (docs/RESULTS.md,
# "Counters" and "Access pass"), on the checked-in single-thread sample
# traces/samples/s1-3k.zst (alloctrace gen S1 --ops 3000: 1500 64-byte
# blocks live at the peak):
#   - perf: every hardware counter is stored with source 'perf', and where
#     the kernel refuses it (this VM) as NULL with the errno reason, never 0;
#     the run still succeeds;
#   - sim (skipped without valgrind): two runs per allocator give identical
#     instruction and miss counts, allocator + other = total for each
#     figure, the allocator share is not 0, and the runs carry source 'sim';
#   - access pass: access_pass_ns/blocks/bytes stored (1500 blocks, 96000
#     bytes), and allocreport shows it; skipped with a warning on a
#     multi-thread trace;
#   - run_summary has instructions, llc_misses, counters_source,
#     access_pass_ns; schema version 3.
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"
S1="$ROOT/traces/samples/s1-3k.zst"
AREP="$B/bin/allocreport"

# ---- perf (the default) -----------------------------------------------------------
"$AR" "$S1" -a glibc,pool --repeat 1 --db p.db --access-pass >perf.txt 2>&1
expect_eq "perf: exit" $? 0
expect_eq "perf: runs ok" "$(q p.db "SELECT count(*) FROM runs WHERE status = 'ok'")" 2
expect_eq "perf: schema version (one per results/sql migration)" "$(q p.db 'PRAGMA user_version')" "$(ls "$ROOT"/results/sql/[0-9][0-9][0-9][0-9]-*.sql | wc -l)"
expect_eq "perf: every counter row has source perf" \
	"$(q p.db "SELECT count(*) FROM counters WHERE source IS NOT 'perf'")" 0
for c in cycles instructions cache_references cache_misses l1d_load_misses llc_load_misses \
	dtlb_load_misses; do
	n=$(q p.db "SELECT count(*) FROM counters WHERE name = '$c'")
	expect_eq "perf: $c stored for both runs" "$n" 2
done
expect_eq "perf: no counter stored as 0" "$(q p.db "SELECT count(*) FROM counters WHERE value = 0")" 0
bad=$(q p.db "SELECT count(*) FROM counters WHERE value IS NULL AND (reason IS NULL OR reason = '')")
expect_eq "perf: every NULL counter has a reason" "$bad" 0
if [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)" -ge 2 ] 2>/dev/null &&
	[ "$(q p.db "SELECT count(*) FROM counters WHERE value IS NULL")" -gt 0 ]; then
	q p.db "SELECT reason FROM counters WHERE value IS NULL LIMIT 1" | grep -q "perf_event_open: .*errno" &&
		ok "perf: refused counters carry the errno reason" || fail "perf: reason lacks errno"
fi
expect_eq "perf: run_summary counters_source" \
	"$(q p.db "SELECT group_concat(DISTINCT counters_source) FROM run_summary")" perf

# ---- access pass ------------------------------------------------------------------
expect_eq "access pass: blocks walked at the peak" \
	"$(q p.db "SELECT group_concat(access_pass_blocks) FROM runs ORDER BY run_id")" "1500,1500"
expect_eq "access pass: bytes walked" \
	"$(q p.db "SELECT group_concat(access_pass_bytes) FROM runs ORDER BY run_id")" "96000,96000"
expect_eq "access pass: time stored (run_summary)" \
	"$(q p.db "SELECT count(*) FROM run_summary WHERE access_pass_ns > 0")" 2
"$AREP" --db p.db >report.txt 2>&1
expect_eq "allocreport: exit" $? 0
grep -q "access_pass_ns" report.txt && ok "allocreport shows access_pass_ns" ||
	fail "allocreport: no access_pass_ns: $(cat report.txt)"
"$AREP" --db p.db --format csv | head -1 | grep -q "access_pass_ns" && ok "allocreport csv: access_pass_ns column" ||
	fail "allocreport csv: no access_pass_ns column"
# without --access-pass nothing is stored
"$AR" "$S1" -a glibc --repeat 1 --db n.db --counters none >/dev/null 2>&1
expect_eq "counters none: exit" $? 0
expect_eq "counters none: no counters, no access pass" \
	"$(q n.db "SELECT count(*) FROM counters")|$(q n.db "SELECT quote(access_pass_ns) FROM runs")" "0|NULL"
# a multi-thread trace: skipped with a warning, the runs still succeed
"$AR" "$SAMPLE" -a glibc --repeat 1 --db m.db --access-pass --counters none >mt.txt 2>&1
expect_eq "access pass, 2 threads: exit" $? 0
grep -q "access-pass skipped" mt.txt && ok "access pass, 2 threads: warned" || fail "no warning: $(cat mt.txt)"
expect_eq "access pass, 2 threads: nothing stored" "$(q m.db "SELECT quote(access_pass_ns) FROM runs")" NULL

# ---- sim -------------------------------------------------------------------------------
"$AR" "$S1" -a glibc --counters bogus --db x.db >/dev/null 2>&1
expect_eq "bad --counters: usage error" $? 1
if ! command -v valgrind >/dev/null; then
	echo "skip sim checks: valgrind not installed"
	finish
fi
"$AR" "$S1" -a glibc,pool --repeat 2 --db s.db --counters sim --access-pass >sim.txt 2>&1
expect_eq "sim: exit" $? 0
expect_eq "sim: runs ok" "$(q s.db "SELECT count(*) FROM runs WHERE status = 'ok'")" 4
expect_eq "sim: every counter row has source sim" \
	"$(q s.db "SELECT count(*) FROM counters WHERE source IS NOT 'sim'")" 0
for c in instructions d1_misses ll_misses; do
	# repetitions 1 and 2 of each allocator: one distinct value each
	d=$(q s.db "SELECT count(DISTINCT c.value) FROM counters c JOIN runs r USING (run_id)
		WHERE c.name = '$c' GROUP BY r.allocator" | sort -u | tr '\n' ' ')
	n=$(q s.db "SELECT count(*) FROM counters WHERE name = '$c' AND value > 0")
	expect_eq "sim: $c identical in both repetitions" "$d" "1 "
	expect_eq "sim: $c measured in all runs" "$n" 4
	bad=$(q s.db "SELECT count(*) FROM counters t
		JOIN counters a ON a.run_id = t.run_id AND a.name = t.name || '_allocator'
		JOIN counters o ON o.run_id = t.run_id AND o.name = t.name || '_other'
		WHERE t.name = '$c' AND a.value + o.value != t.value")
	expect_eq "sim: ${c}_allocator + ${c}_other = $c" "$bad" 0
done
expect_eq "sim: allocator share measured (> 0) in every run" \
	"$(q s.db "SELECT count(*) FROM counters WHERE name = 'instructions_allocator' AND value > 0")" 4
expect_eq "sim: access pass counted (its instructions)" \
	"$(q s.db "SELECT count(*) FROM counters WHERE name = 'access_pass_instructions' AND value > 0")" 4
expect_eq "sim: run_summary instructions = counter" \
	"$(q s.db "SELECT count(*) FROM run_summary s JOIN counters c ON c.run_id = s.run_id
		AND c.name = 'instructions' WHERE s.instructions = c.value")" 4
expect_eq "sim: run_summary llc_misses = ll_misses" \
	"$(q s.db "SELECT count(*) FROM run_summary s JOIN counters c ON c.run_id = s.run_id
		AND c.name = 'll_misses' WHERE s.llc_misses = c.value")" 4
expect_eq "sim: counters_source" "$(q s.db "SELECT group_concat(DISTINCT counters_source) FROM run_summary")" sim
expect_eq "sim: no valgrind-speed ops_per_sec" "$(q s.db "SELECT count(ops_per_sec) FROM runs")" 0
expect_eq "sim: worker proved the allocator under valgrind" \
	"$(q s.db "SELECT count(*) FROM runs WHERE allocator = 'pool' AND library_path LIKE '%liballocrr-pool.so'")" 2
# The timer under valgrind: rdtscp only where the host's flags list it
# (valgrind's CPUID claims it everywhere and then refuses it: issue 13).
if grep -qw rdtscp /proc/cpuinfo; then want_timer=rdtsc; else want_timer=rdtsc-lfence; fi
grep -qw constant_tsc /proc/cpuinfo && grep -qw nonstop_tsc /proc/cpuinfo || want_timer=clock_gettime
expect_eq "sim: timer the host grants" "$(q s.db "SELECT group_concat(DISTINCT timer) FROM runs")" "$want_timer"
# The stop read without rdtscp, forced: runs succeed natively and under valgrind.
ALLOCRR_TIMER=rdtsc "$AR" "$S1" -a glibc --repeat 1 --db l.db --counters none >/dev/null 2>&1
expect_eq "timer without rdtscp: exit" $? 0
ALLOCRR_TIMER=rdtsc "$AR" "$S1" -a glibc --repeat 1 --db l.db --counters sim >/dev/null 2>&1
expect_eq "timer without rdtscp under valgrind: exit" $? 0
[ "$want_timer" = clock_gettime ] || expect_eq "timer without rdtscp: stored as such" \
	"$(q l.db "SELECT group_concat(DISTINCT timer) || ' ' || count(*) FROM runs WHERE status = 'ok'")" "rdtsc-lfence 2"
"$AREP" --db s.db >sreport.txt 2>&1
grep -q "sim.instructions_allocator" sreport.txt && ok "allocreport shows simulated counters as sim.*" ||
	fail "allocreport: $(cat sreport.txt)"
finish
