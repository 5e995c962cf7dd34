-- 0003-counters-source.sql — migration 2 -> 3: cache statistics from two
-- sources (allocreplay --counters perf|sim) and the locality pass
-- (--access-pass). Every counter row says where it came from; rows written
-- before were all perf. run_summary keeps its columns and their order and
-- gains instructions, llc_misses (perf: LLC read misses; sim: simulated LL
-- misses, reads and writes), counters_source and access_pass_ns at the end;
-- allocator_comparison reads run_summary by name and is unchanged.
ALTER TABLE counters ADD COLUMN source TEXT CHECK (source IN ('perf','sim'));
UPDATE counters SET source = 'perf';
ALTER TABLE runs ADD COLUMN counters_source TEXT;
ALTER TABLE runs ADD COLUMN access_pass_ns INTEGER;
ALTER TABLE runs ADD COLUMN access_pass_blocks INTEGER;
ALTER TABLE runs ADD COLUMN access_pass_bytes INTEGER;
ALTER TABLE runs ADD COLUMN access_pass_lines INTEGER;
DROP VIEW run_summary;
CREATE VIEW run_summary AS
SELECT r.run_id, r.trace_sha256, t.name AS trace_name, r.allocator, r.repetition,
       r.status, r.threads, r.ops, r.wall_ns, r.ops_per_sec,
       l.p50_ns, l.p99_ns, l.p999_ns, l.max_ns,
       r.peak_rss_bytes, r.peak_heap_rss_bytes, r.peak_live_bytes, r.fragmentation,
       r.minor_faults, r.major_faults, r.failed_allocs, r.library_path,
       r.host, r.started_at, r.reason,
       (SELECT c.value FROM counters c WHERE c.run_id = r.run_id
          AND c.name = 'instructions') AS instructions,
       (SELECT c.value FROM counters c WHERE c.run_id = r.run_id
          AND ((c.source = 'perf' AND c.name = 'llc_load_misses')
            OR (c.source = 'sim' AND c.name = 'll_misses'))) AS llc_misses,
       coalesce((SELECT min(c.source) FROM counters c WHERE c.run_id = r.run_id),
                r.counters_source) AS counters_source,
       r.access_pass_ns
FROM runs r JOIN traces t ON t.sha256 = r.trace_sha256
LEFT JOIN latency l ON l.run_id = r.run_id AND l.op = 'all';
