-- 0009-comparison-machine.sql — migration 8 -> 9: allocator_comparison per
-- trace x machine, not per trace x host (issue 18 item 1: results from
-- different machines are never silently compared).
--
-- A machine is what every run stores of the one it ran on: runs.host,
-- cpu_model, cpus, kernel and glibc_version, compared byte for byte — the
-- same five fields, joined by the same unit separator, as results/load.c's
-- MACHINE_KEY, so the view has one row per allocator wherever allocreport
-- has one comparison (a job list spread over two CPUs of one host name, a
-- kernel upgrade between two replays: two rows each). Medians, ranges and
-- the baseline (0006's rule) are per trace x machine.
--
-- Every column of 0006 stays, in the same order (scripts read them); one
-- column is appended: machine, the machine in load.c's MACHINE_TEXT form
-- "HOST (CPU, N CPUs, KERNEL, glibc V)". One text column rather than the
-- five fields because it is the very string allocreport's table, CSV
-- (column machine) and JSON ("machine") print, so a row of the view is
-- matched to a report's by equality; a query that needs one field reads it
-- from runs. host keeps its place and meaning (the machine's host name).
DROP VIEW allocator_comparison;
CREATE VIEW allocator_comparison AS
WITH ok AS (SELECT s.*,
                   coalesce(r.host, '') || char(31) || coalesce(r.cpu_model, '') || char(31) ||
                   coalesce(r.cpus, '') || char(31) || coalesce(r.kernel, '') || char(31) ||
                   coalesce(r.glibc_version, '') AS mkey,
                   coalesce(r.host, '(unknown host)') || ' (' || coalesce(r.cpu_model, 'unknown CPU') || ', ' ||
                   coalesce(r.cpus, '?') || ' CPUs, ' || coalesce(r.kernel, 'unknown kernel') || ', glibc ' ||
                   coalesce(r.glibc_version, '?') || ')' AS machine
            FROM run_summary s JOIN runs r ON r.run_id = s.run_id WHERE s.status = 'ok'),
long AS (SELECT trace_sha256, mkey, allocator, 'ops' AS m, ops_per_sec AS v FROM ok
  UNION ALL SELECT trace_sha256, mkey, allocator, 'p99', p99_ns FROM ok
  UNION ALL SELECT trace_sha256, mkey, allocator, 'heap', peak_heap_rss_bytes FROM ok
  UNION ALL SELECT trace_sha256, mkey, allocator, 'frag', fragmentation FROM ok),
ranked AS (SELECT *, row_number() OVER (PARTITION BY trace_sha256, mkey, allocator, m
                                        ORDER BY v) AS i,
                 count(*) OVER (PARTITION BY trace_sha256, mkey, allocator, m) AS n
          FROM long WHERE v IS NOT NULL),
med AS (SELECT trace_sha256, mkey, allocator, m, avg(v) AS v FROM ranked
        WHERE i IN ((n + 1) / 2, (n + 2) / 2) GROUP BY trace_sha256, mkey, allocator, m),
agg AS (SELECT k.trace_sha256, k.trace_name, k.host, k.mkey, k.machine, k.allocator, k.runs,
         (SELECT v FROM med WHERE med.trace_sha256 = k.trace_sha256 AND med.mkey = k.mkey
            AND med.allocator = k.allocator AND m = 'ops') AS ops_per_sec,
         k.min_ops_per_sec, k.max_ops_per_sec,
         (SELECT v FROM med WHERE med.trace_sha256 = k.trace_sha256 AND med.mkey = k.mkey
            AND med.allocator = k.allocator AND m = 'p99') AS p99_ns,
         (SELECT v FROM med WHERE med.trace_sha256 = k.trace_sha256 AND med.mkey = k.mkey
            AND med.allocator = k.allocator AND m = 'heap') AS peak_heap_rss_bytes,
         (SELECT v FROM med WHERE med.trace_sha256 = k.trace_sha256 AND med.mkey = k.mkey
            AND med.allocator = k.allocator AND m = 'frag') AS fragmentation,
         k.n_ops
       FROM (SELECT trace_sha256, trace_name, min(host) AS host, mkey, min(machine) AS machine, allocator,
                    count(*) AS runs, min(ops_per_sec) AS min_ops_per_sec, max(ops_per_sec) AS max_ops_per_sec,
                    count(ops_per_sec) AS n_ops
             FROM ok GROUP BY trace_sha256, mkey, allocator) k),
-- one row per trace x machine with ok runs: its baseline (agg holds exactly
-- the allocators with ok runs)
base AS (SELECT h.trace_sha256, h.mkey,
           CASE WHEN EXISTS (SELECT 1 FROM agg x WHERE x.trace_sha256 = h.trace_sha256 AND x.mkey = h.mkey
                               AND x.allocator = t.recorded_allocator) THEN t.recorded_allocator
                WHEN EXISTS (SELECT 1 FROM agg x WHERE x.trace_sha256 = h.trace_sha256 AND x.mkey = h.mkey
                               AND x.allocator = 'glibc') THEN 'glibc' END AS baseline
         FROM (SELECT DISTINCT trace_sha256, mkey FROM agg) h
         JOIN traces t ON t.sha256 = h.trace_sha256)
SELECT a.trace_sha256, a.trace_name, a.host, a.allocator, a.runs, a.ops_per_sec,
       a.min_ops_per_sec, a.max_ops_per_sec, a.p99_ns, a.peak_heap_rss_bytes, a.fragmentation,
       a.ops_per_sec / g.ops_per_sec AS speed_vs_glibc,
       a.peak_heap_rss_bytes / g.peak_heap_rss_bytes AS heap_rss_vs_glibc,
       CASE WHEN a.n_ops >= 2 AND a.ops_per_sec > 0
            THEN (a.max_ops_per_sec - a.min_ops_per_sec) / a.ops_per_sec END AS ops_per_sec_spread,
       b.baseline,
       a.ops_per_sec / bb.ops_per_sec AS speed_vs_baseline,
       a.peak_heap_rss_bytes / bb.peak_heap_rss_bytes AS heap_rss_vs_baseline,
       a.machine
FROM agg a LEFT JOIN agg g ON g.trace_sha256 = a.trace_sha256 AND g.mkey = a.mkey
                          AND g.allocator = 'glibc'
           LEFT JOIN base b ON b.trace_sha256 = a.trace_sha256 AND b.mkey = a.mkey
           LEFT JOIN agg bb ON bb.trace_sha256 = a.trace_sha256 AND bb.mkey = a.mkey
                           AND bb.allocator = b.baseline;
