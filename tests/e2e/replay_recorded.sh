#!/usr/bin/env bash
# The recorded program as replay's reference (issue 14 items 2, 5, 6):
# allocreplay always replays the allocator the program ran on, makes it the
# baseline, stores what the recording measured (traces.recorded_*) and the
# predictions of results/predict.c, whose formula is checked here row by
# row against the stored figures; --touch auto calibrates and says so; a
# trace without the 1.1 records still replays, its predictions NULL with
# the reason.
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"

cat >s.sql <<'SQL'
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO t SELECT i, hex(randomblob(8 + i % 40)) FROM n;
COMMIT;
CREATE INDEX tb ON t(b);
SELECT count(*) FROM t WHERE b LIKE 'A%';
SQL
"$B/bin/allocrec" -q -o s.zst sqlite3 :memory: <s.sql >/dev/null || { fail "allocrec sqlite3"; finish; }

# -a pool only: glibc, what sqlite3 ran on, is added and said
"$AR" s.zst -a pool --repeat 2 --db r.db -q >out.txt 2>err.txt || fail "allocreplay exit $?"
grep -q "also replaying glibc, which the recorded program ran on" err.txt && ok "the recorded allocator is added, and said" ||
	fail "no word of adding glibc: $(cat err.txt)"
expect_eq "recorded allocator" "$(q r.db 'SELECT recorded_allocator FROM traces')" glibc
expect_eq "recorded figures present" "$(q r.db 'SELECT recorded_cpu_ns > 0 AND recorded_duration_ns > 0 AND
	recorded_peak_rss_bytes > recorded_start_rss_bytes AND recorded_rss_samples >= 2 AND
	recorded_recorder_bytes > 0 AND recorded_recorder_bytes < recorded_peak_rss_bytes AND
	recorded_recorder_cpu_ns > 0 AND recorded_recorder_cpu_ns < recorded_cpu_ns FROM traces')" 1
expect_eq "runs: 2 glibc, 2 pool, all ok" "$(q r.db "SELECT group_concat(allocator || ':' || n) FROM
	(SELECT allocator, count(*) AS n FROM runs WHERE status = 'ok' GROUP BY allocator ORDER BY allocator)")" \
	"glibc:2,pool:2"
grep -q "glibc (recorded)" out.txt && ok "the table marks the recorded row" || fail "no '(recorded)' row: $(cat out.txt)"

# predict.c's model, recomputed in SQL from the stored figures (median of 2 =
# mean): the program's CPU time is the process's less the recorder's own
bad=$(q r.db "WITH t AS (SELECT * FROM traces),
	rec AS (SELECT avg(cpu_user_ns + cpu_sys_ns) AS cpu, avg(peak_rss_bytes) AS rss
	        FROM runs WHERE allocator = 'glibc' AND status = 'ok')
	SELECT count(*) FROM runs r, t, rec WHERE r.status = 'ok' AND (
	  abs(r.predicted_time_ns - (t.recorded_cpu_ns - t.recorded_recorder_cpu_ns
	                             + (r.cpu_user_ns + r.cpu_sys_ns) - rec.cpu)) > 1
	  OR abs(r.predicted_peak_rss_bytes - (t.recorded_peak_rss_bytes - t.recorded_recorder_bytes
	                                       + r.peak_rss_bytes - rec.rss)) > 1
	  OR r.predicted_time_ns IS NULL OR r.prediction_reason IS NOT NULL)")
expect_eq "runs whose prediction breaks the model" "$bad" 0
expect_eq "fidelity on the recorded allocator's runs only" "$(q r.db "SELECT group_concat(allocator || ':' ||
	(fidelity_rss_error IS NOT NULL) || (fidelity_time_error IS NULL) || (fidelity_reason IS NOT NULL))
	FROM (SELECT * FROM runs ORDER BY allocator, run_id)")" "glibc:111,glibc:111,pool:010,pool:010"
bad=$(q r.db "SELECT count(*) FROM runs r, traces t WHERE r.allocator = 'glibc' AND
	abs(r.fidelity_rss_error - (t.recorded_start_rss_bytes + r.peak_heap_rss_bytes
	    - (t.recorded_peak_rss_bytes - t.recorded_recorder_bytes)) * 1.0
	    / (t.recorded_peak_rss_bytes - t.recorded_recorder_bytes)) > 1e-9")
expect_eq "fidelity: (start RSS + heap peak - program's peak) / program's peak" "$bad" 0
grep -q "replay vs recorded program (glibc): peak RSS" out.txt && ok "the table says how far replay is" ||
	fail "no fidelity line: $(cat out.txt)"

# allocreport reads the stored predictions and agrees with allocreplay's table
"$B/bin/allocreport" --db r.db --format json >rep.json || fail "allocreport json"
python3 - rep.json <<'PY' && ok "allocreport: baseline glibc (recorded), predictions present" || fail "allocreport json"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["traces"][0]
assert t["baseline"] == "glibc", t["baseline"]
g = [a for a in t["allocators"] if a["name"] == "glibc"][0]
assert g["predicted_time_ns"]["n"] == 2, g
PY

# the program on jemalloc (preloaded): jemalloc is the recorded row and the baseline
JE=$("$AR" --list | awk '$1 == "jemalloc" && $4 == "yes" {print $5}')
if [ -n "$JE" ]; then
	LD_PRELOAD=$JE "$B/bin/allocrec" -q -o j.zst sqlite3 :memory: <s.sql >/dev/null || fail "allocrec under jemalloc"
	"$AR" j.zst -a glibc --repeat 1 --db j.db -q >jout.txt 2>&1 || fail "allocreplay j.zst exit $?"
	expect_eq "jemalloc program: recorded allocator" "$(q j.db 'SELECT recorded_allocator FROM traces')" jemalloc
	grep -q "jemalloc (recorded)" jout.txt && ok "jemalloc program: jemalloc is the recorded row" ||
		fail "jemalloc program: $(cat jout.txt)"
else
	ok "jemalloc not installed: its case skipped"
fi

# --touch auto: one calibration, said, and the chosen policy in runs.touch
"$AR" s.zst -a glibc --repeat 1 --touch auto --db a.db -q >/dev/null 2>aerr.txt || fail "touch auto exit $?"
grep -q -- "--touch auto: \(pages\|first\) (touching every page, replay under glibc makes" aerr.txt &&
	ok "--touch auto said what it chose and why" || fail "--touch auto: $(cat aerr.txt)"
expect_eq "--touch auto: stored policy" "$(q a.db "SELECT touch IN ('pages', 'first') AND options LIKE 'touch=auto %' FROM runs")" 1

# a trace without the 1.1 records: replays, no prediction, the reason stored
"$AR" "$SAMPLE" -a glibc --repeat 1 --db old.db -q >/dev/null 2>&1 || fail "sample replay exit $?"
expect_eq "1.0-style trace: no recorded allocator, a reason" \
	"$(q old.db "SELECT recorded_allocator IS NULL AND length(recorded_reason) > 10 FROM traces")" 1
expect_eq "1.0-style trace: predictions NULL with the reason" \
	"$(q old.db "SELECT predicted_time_ns IS NULL AND predicted_peak_rss_bytes IS NULL AND length(prediction_reason) > 10 FROM runs")" 1
finish
