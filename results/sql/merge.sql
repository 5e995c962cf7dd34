-- merge.sql — fold the results database attached as "src" into the main one
-- (docs/RESULTS.md, "Merging databases"). Both must have the same schema
-- version (PRAGMA user_version); run allocreplay once on the older one to
-- migrate it first. Usage:
--   sqlite3 -bail main.db "ATTACH 'other.db' AS src" ".read results/sql/merge.sql"
-- This is the SQL `allocreport merge` runs, but run by hand nothing checks
-- src first: `allocreport merge` refuses a database carrying triggers, views
-- or columns that are not allocrr's (results/schema_check.c), so use it for
-- databases from elsewhere.
-- Traces are keyed by the SHA-256 of the trace file and allocators by
-- (name, version), so the same trace recorded once and replayed on two
-- machines merges into one traces row. Runs are identified by run_uuid:
-- merging the same database twice adds nothing. run_ids of merged runs are
-- shifted past the main database's largest, and their child rows with them.
-- Every row is copied by column name, every column of every table named
-- (tests/e2e/db_untrusted.sh checks that against the current schema: a
-- migration that adds a column adds it here too); tables of src's own are
-- not copied.
BEGIN IMMEDIATE;
INSERT OR IGNORE INTO main.traces (sha256, name, program, file_bytes, recorded_unix_ns, status, events,
    threads, calls, trace_allocs, peak_live_bytes, peak_live_blocks, skipped_unknown_frees,
    unknown_reallocs, lost_blocks, trace_null_results, cross_thread_deps, reuse_deps, slots, first_seen,
    recorded_allocator, recorded_allocator_library, recorded_allocator_version, recorded_duration_ns,
    recorded_cpu_ns, recorded_start_rss_bytes, recorded_peak_rss_bytes, recorded_recorder_bytes,
    recorded_rss_samples, recorded_reason, window_trace, preexisting_blocks, preexisting_bytes, heap_at_start_bytes,
    recorded_recorder_cpu_ns)
  SELECT sha256, name, program, file_bytes, recorded_unix_ns, status, events,
    threads, calls, trace_allocs, peak_live_bytes, peak_live_blocks, skipped_unknown_frees,
    unknown_reallocs, lost_blocks, trace_null_results, cross_thread_deps, reuse_deps, slots, first_seen,
    recorded_allocator, recorded_allocator_library, recorded_allocator_version, recorded_duration_ns,
    recorded_cpu_ns, recorded_start_rss_bytes, recorded_peak_rss_bytes, recorded_recorder_bytes,
    recorded_rss_samples, recorded_reason, window_trace, preexisting_blocks, preexisting_bytes, heap_at_start_bytes,
    recorded_recorder_cpu_ns
  FROM src.traces;
INSERT OR IGNORE INTO main.allocators (name, version, package_version, kind, description)
  SELECT name, version, package_version, kind, description FROM src.allocators;
-- old_id: the run's id in src; new_id: its id here.
DROP TABLE IF EXISTS temp.merge_map;
CREATE TEMP TABLE merge_map AS
  SELECT run_id AS old_id, run_id + (SELECT coalesce(max(run_id), 0) FROM main.runs) AS new_id
  FROM src.runs WHERE run_uuid NOT IN (SELECT run_uuid FROM main.runs);
INSERT INTO main.runs (run_id, run_uuid, trace_sha256, allocator, allocator_version, repetition, status,
    reason, started_at, host, cpu_model, cpus, kernel, glibc_version, allocrr_version, options, touch,
    preload, expected_library, library_path, threads, ops, wall_ns, cpu_user_ns, cpu_sys_ns, timed_ns,
    ops_per_sec, timer, ticks_per_ns, timer_overhead_ns, timer_overhead_median_ns, baseline_rss_bytes,
    peak_rss_bytes, peak_heap_rss_bytes, peak_rss_method, final_heap_rss_bytes, maxrss_bytes,
    peak_live_bytes, fragmentation, minor_faults, major_faults, voluntary_ctx_switches,
    involuntary_ctx_switches, failed_allocs, leaked_blocks, dep_waits, dep_blocked, op_checksum,
    allocs_expected, frees_expected, allocator_allocs_delta, allocator_frees_delta, worker_stderr,
    sync_waits, counters_source, access_pass_ns, access_pass_blocks, access_pass_bytes, access_pass_lines,
    timing_every, timer_resolution_ns, predicted_time_ns, predicted_peak_rss_bytes, prediction_reason,
    fidelity_time_error, fidelity_rss_error, fidelity_reason)
  SELECT m.new_id, run_uuid, trace_sha256, allocator, allocator_version, repetition, status,
    reason, started_at, host, cpu_model, cpus, kernel, glibc_version, allocrr_version, options, touch,
    preload, expected_library, library_path, threads, ops, wall_ns, cpu_user_ns, cpu_sys_ns, timed_ns,
    ops_per_sec, timer, ticks_per_ns, timer_overhead_ns, timer_overhead_median_ns, baseline_rss_bytes,
    peak_rss_bytes, peak_heap_rss_bytes, peak_rss_method, final_heap_rss_bytes, maxrss_bytes,
    peak_live_bytes, fragmentation, minor_faults, major_faults, voluntary_ctx_switches,
    involuntary_ctx_switches, failed_allocs, leaked_blocks, dep_waits, dep_blocked, op_checksum,
    allocs_expected, frees_expected, allocator_allocs_delta, allocator_frees_delta, worker_stderr,
    sync_waits, counters_source, access_pass_ns, access_pass_blocks, access_pass_bytes, access_pass_lines,
    timing_every, timer_resolution_ns, predicted_time_ns, predicted_peak_rss_bytes, prediction_reason,
    fidelity_time_error, fidelity_rss_error, fidelity_reason
  FROM src.runs s JOIN temp.merge_map m ON m.old_id = s.run_id ORDER BY m.new_id;
INSERT INTO main.latency (run_id, op, count, mean_ns, min_ns, p50_ns, p90_ns, p99_ns, p999_ns, max_ns)
  SELECT m.new_id, op, count, mean_ns, min_ns, p50_ns, p90_ns, p99_ns, p999_ns, max_ns
  FROM src.latency s JOIN temp.merge_map m ON m.old_id = s.run_id;
INSERT INTO main.histogram (run_id, op, lo_ns, hi_ns, count)
  SELECT m.new_id, op, lo_ns, hi_ns, count
  FROM src.histogram s JOIN temp.merge_map m ON m.old_id = s.run_id;
INSERT INTO main.rss_samples (run_id, sample, event, elapsed_ns, anon_rss_bytes, heap_rss_bytes, live_bytes)
  SELECT m.new_id, sample, event, elapsed_ns, anon_rss_bytes, heap_rss_bytes, live_bytes
  FROM src.rss_samples s JOIN temp.merge_map m ON m.old_id = s.run_id;
INSERT INTO main.counters (run_id, name, value, reason, source)
  SELECT m.new_id, name, value, reason, source
  FROM src.counters s JOIN temp.merge_map m ON m.old_id = s.run_id;
INSERT INTO main.allocator_stats (run_id, name, value)
  SELECT m.new_id, name, value
  FROM src.allocator_stats s JOIN temp.merge_map m ON m.old_id = s.run_id;
DROP TABLE temp.merge_map;
-- Sites are facts about a trace file: the same trace has the same sites
-- wherever it was analysed, so a row already here is kept.
INSERT OR IGNORE INTO main.sites (trace_sha256, stack, calls, bytes, live_at_peak_bytes, live_at_peak_blocks,
    temporary_calls, leaked_bytes, leaked_blocks)
  SELECT trace_sha256, stack, calls, bytes, live_at_peak_bytes, live_at_peak_blocks,
    temporary_calls, leaked_bytes, leaked_blocks
  FROM src.sites;
COMMIT;
