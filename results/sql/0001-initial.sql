-- 0001-initial.sql — migration 0 -> 1 (PRAGMA user_version): the initial
-- schema. docs/RESULTS.md describes every table. Never edit a shipped
-- migration: add the next file.
CREATE TABLE traces (
  sha256 TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  program TEXT,
  file_bytes INTEGER,
  recorded_unix_ns INTEGER,
  status TEXT NOT NULL,
  events INTEGER NOT NULL,
  threads INTEGER NOT NULL,
  calls INTEGER NOT NULL,
  trace_allocs INTEGER NOT NULL,
  peak_live_bytes INTEGER NOT NULL,
  peak_live_blocks INTEGER NOT NULL,
  skipped_unknown_frees INTEGER NOT NULL,
  unknown_reallocs INTEGER NOT NULL,
  lost_blocks INTEGER NOT NULL,
  trace_null_results INTEGER NOT NULL,
  cross_thread_deps INTEGER NOT NULL,
  reuse_deps INTEGER NOT NULL,
  slots INTEGER NOT NULL,
  first_seen TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);
CREATE TABLE allocators (
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  package_version TEXT,
  kind TEXT NOT NULL CHECK (kind IN ('system','ours')),
  description TEXT,
  PRIMARY KEY (name, version)
);
CREATE TABLE runs (
  run_id INTEGER PRIMARY KEY,
  run_uuid TEXT NOT NULL UNIQUE,
  trace_sha256 TEXT NOT NULL REFERENCES traces(sha256),
  allocator TEXT NOT NULL,
  allocator_version TEXT NOT NULL,
  repetition INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ok','wrong_allocator','unsupported','crashed','timeout','oom','error')),
  reason TEXT,
  started_at TEXT NOT NULL,
  host TEXT, cpu_model TEXT, cpus INTEGER, kernel TEXT, glibc_version TEXT,
  allocrr_version TEXT NOT NULL,
  options TEXT NOT NULL,
  touch TEXT NOT NULL,
  preload TEXT,
  expected_library TEXT,
  library_path TEXT,
  threads INTEGER, ops INTEGER,
  wall_ns INTEGER, cpu_user_ns INTEGER, cpu_sys_ns INTEGER, timed_ns INTEGER,
  ops_per_sec REAL,
  timer TEXT, ticks_per_ns REAL, timer_overhead_ns REAL, timer_overhead_median_ns REAL,
  baseline_rss_bytes INTEGER, peak_rss_bytes INTEGER, peak_heap_rss_bytes INTEGER,
  peak_rss_method TEXT,
  final_heap_rss_bytes INTEGER, maxrss_bytes INTEGER,
  peak_live_bytes INTEGER, fragmentation REAL,
  minor_faults INTEGER, major_faults INTEGER,
  voluntary_ctx_switches INTEGER, involuntary_ctx_switches INTEGER,
  failed_allocs INTEGER, leaked_blocks INTEGER,
  dep_waits INTEGER, dep_blocked INTEGER,
  op_checksum TEXT,
  allocs_expected INTEGER, frees_expected INTEGER,
  allocator_allocs_delta INTEGER, allocator_frees_delta INTEGER,
  worker_stderr TEXT
);
CREATE INDEX runs_by_trace ON runs(trace_sha256, allocator);
CREATE TABLE latency (
  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  op TEXT NOT NULL,
  count INTEGER NOT NULL,
  mean_ns REAL, min_ns REAL, p50_ns REAL, p90_ns REAL, p99_ns REAL, p999_ns REAL,
  max_ns REAL,
  PRIMARY KEY (run_id, op)
) WITHOUT ROWID;
CREATE TABLE histogram (
  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  op TEXT NOT NULL,
  lo_ns REAL NOT NULL,
  hi_ns REAL NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (run_id, op, lo_ns)
) WITHOUT ROWID;
CREATE TABLE rss_samples (
  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  sample INTEGER NOT NULL,
  event INTEGER NOT NULL,
  elapsed_ns INTEGER NOT NULL,
  anon_rss_bytes INTEGER NOT NULL,
  heap_rss_bytes INTEGER NOT NULL,
  live_bytes INTEGER NOT NULL,
  PRIMARY KEY (run_id, sample)
) WITHOUT ROWID;
CREATE TABLE counters (
  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value INTEGER,
  reason TEXT,
  PRIMARY KEY (run_id, name)
) WITHOUT ROWID;
CREATE TABLE allocator_stats (
  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value INTEGER,
  PRIMARY KEY (run_id, name)
) WITHOUT ROWID;
CREATE VIEW run_summary AS
SELECT r.run_id, r.trace_sha256, t.name AS trace_name, r.allocator, r.repetition,
       r.status, r.threads, r.ops, r.wall_ns, r.ops_per_sec,
       l.p50_ns, l.p99_ns, l.p999_ns, l.max_ns,
       r.peak_rss_bytes, r.peak_heap_rss_bytes, r.peak_live_bytes, r.fragmentation,
       r.minor_faults, r.major_faults, r.failed_allocs, r.library_path,
       r.host, r.started_at, r.reason
FROM runs r JOIN traces t ON t.sha256 = r.trace_sha256
LEFT JOIN latency l ON l.run_id = r.run_id AND l.op = 'all';
CREATE VIEW allocator_comparison AS
WITH ok AS (SELECT * FROM run_summary WHERE status = 'ok'),
agg AS (SELECT trace_sha256, trace_name, host, allocator, count(*) AS runs,
              avg(ops_per_sec) AS ops_per_sec, min(ops_per_sec) AS min_ops_per_sec,
              max(ops_per_sec) AS max_ops_per_sec, avg(p99_ns) AS p99_ns,
              avg(peak_heap_rss_bytes) AS peak_heap_rss_bytes,
              avg(fragmentation) AS fragmentation
       FROM ok GROUP BY trace_sha256, host, allocator)
SELECT a.*, a.ops_per_sec / g.ops_per_sec AS speed_vs_glibc,
       a.peak_heap_rss_bytes / g.peak_heap_rss_bytes AS heap_rss_vs_glibc
FROM agg a LEFT JOIN agg g ON g.trace_sha256 = a.trace_sha256 AND g.host IS a.host
                          AND g.allocator = 'glibc';
