-- 0004-comparison-medians.sql — migration 3 -> 4: allocator_comparison takes
-- medians over repetitions, as allocreplay and allocreport do
-- (results/compare.c; it averaged before). Same columns in the same order,
-- plus ops_per_sec_spread at the end; the median of an even count is the
-- mean of the middle two (SQLite has no median(): row_number() and count()
-- over each trace x host x allocator x figure).
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
             FROM ok GROUP BY trace_sha256, host, allocator) k)
SELECT a.trace_sha256, a.trace_name, a.host, a.allocator, a.runs, a.ops_per_sec,
       a.min_ops_per_sec, a.max_ops_per_sec, a.p99_ns, a.peak_heap_rss_bytes, a.fragmentation,
       a.ops_per_sec / g.ops_per_sec AS speed_vs_glibc,
       a.peak_heap_rss_bytes / g.peak_heap_rss_bytes AS heap_rss_vs_glibc,
       CASE WHEN a.n_ops >= 2 AND a.ops_per_sec > 0
            THEN (a.max_ops_per_sec - a.min_ops_per_sec) / a.ops_per_sec END AS ops_per_sec_spread
FROM agg a LEFT JOIN agg g ON g.trace_sha256 = a.trace_sha256 AND g.host IS a.host
                          AND g.allocator = 'glibc';
