-- 0006-comparison-baseline.sql — migration 5 -> 6: allocator_comparison
-- also gives every ratio against the trace's baseline, as allocreplay and
-- allocreport compute it (results/compare.c): the allocator the recorded
-- program ran on (traces.recorded_allocator) when it has ok runs on the
-- trace x host, else glibc when it has, else none (NULL ratios). The
-- columns of 0004 stay, in the same order, with speed_vs_glibc and
-- heap_rss_vs_glibc still against glibc (scripts read them); baseline,
-- speed_vs_baseline and heap_rss_vs_baseline come at the end. A view cannot
-- take allocreport's --baseline: it always follows the rule above.
DROP VIEW allocator_comparison;
CREATE VIEW allocator_comparison AS
WITH ok AS (SELECT * FROM run_summary WHERE status = 'ok'),
long AS (SELECT trace_sha256, host, allocator, 'ops' AS m, ops_per_sec AS v FROM ok
  UNION ALL SELECT trace_sha256, host, allocator, 'p99', p99_ns FROM ok
  UNION ALL SELECT trace_sha256, host, allocator, 'heap', peak_heap_rss_bytes FROM ok
  UNION ALL SELECT trace_sha256, host, allocator, 'frag', fragmentation FROM ok),
ranked AS (SELECT *, row_number() OVER (PARTITION BY trace_sha256, host, allocator, m
                                        ORDER BY v) AS i,
                 count(*) OVER (PARTITION BY trace_sha256, host, allocator, m) AS n
          FROM long WHERE v IS NOT NULL),
med AS (SELECT trace_sha256, host, allocator, m, avg(v) AS v FROM ranked
        WHERE i IN ((n + 1) / 2, (n + 2) / 2) GROUP BY trace_sha256, host, allocator, m),
agg AS (SELECT k.trace_sha256, k.trace_name, k.host, k.allocator, k.runs,
         (SELECT v FROM med WHERE med.trace_sha256 = k.trace_sha256 AND med.host IS k.host
            AND med.allocator = k.allocator AND m = 'ops') AS ops_per_sec,
         k.min_ops_per_sec, k.max_ops_per_sec,
         (SELECT v FROM med WHERE med.trace_sha256 = k.trace_sha256 AND med.host IS k.host
            AND med.allocator = k.allocator AND m = 'p99') AS p99_ns,
         (SELECT v FROM med WHERE med.trace_sha256 = k.trace_sha256 AND med.host IS k.host
            AND med.allocator = k.allocator AND m = 'heap') AS peak_heap_rss_bytes,
         (SELECT v FROM med WHERE med.trace_sha256 = k.trace_sha256 AND med.host IS k.host
            AND med.allocator = k.allocator AND m = 'frag') AS fragmentation,
         k.n_ops
       FROM (SELECT trace_sha256, trace_name, host, allocator, count(*) AS runs,
                    min(ops_per_sec) AS min_ops_per_sec, max(ops_per_sec) AS max_ops_per_sec,
                    count(ops_per_sec) AS n_ops
             FROM ok GROUP BY trace_sha256, host, allocator) k),
-- one row per trace x host with ok runs: its baseline (agg holds exactly the
-- allocators with ok runs)
base AS (SELECT h.trace_sha256, h.host,
           CASE WHEN EXISTS (SELECT 1 FROM agg x WHERE x.trace_sha256 = h.trace_sha256 AND x.host IS h.host
                               AND x.allocator = t.recorded_allocator) THEN t.recorded_allocator
                WHEN EXISTS (SELECT 1 FROM agg x WHERE x.trace_sha256 = h.trace_sha256 AND x.host IS h.host
                               AND x.allocator = 'glibc') THEN 'glibc' END AS baseline
         FROM (SELECT DISTINCT trace_sha256, host FROM agg) h
         JOIN traces t ON t.sha256 = h.trace_sha256)
SELECT a.trace_sha256, a.trace_name, a.host, a.allocator, a.runs, a.ops_per_sec,
       a.min_ops_per_sec, a.max_ops_per_sec, a.p99_ns, a.peak_heap_rss_bytes, a.fragmentation,
       a.ops_per_sec / g.ops_per_sec AS speed_vs_glibc,
       a.peak_heap_rss_bytes / g.peak_heap_rss_bytes AS heap_rss_vs_glibc,
       CASE WHEN a.n_ops >= 2 AND a.ops_per_sec > 0
            THEN (a.max_ops_per_sec - a.min_ops_per_sec) / a.ops_per_sec END AS ops_per_sec_spread,
       b.baseline,
       a.ops_per_sec / bb.ops_per_sec AS speed_vs_baseline,
       a.peak_heap_rss_bytes / bb.peak_heap_rss_bytes AS heap_rss_vs_baseline
FROM agg a LEFT JOIN agg g ON g.trace_sha256 = a.trace_sha256 AND g.host IS a.host
                          AND g.allocator = 'glibc'
           LEFT JOIN base b ON b.trace_sha256 = a.trace_sha256 AND b.host IS a.host
           LEFT JOIN agg bb ON bb.trace_sha256 = a.trace_sha256 AND bb.host IS a.host
                           AND bb.allocator = b.baseline;
