/*
 * db_schema.c — the results database schema as a list of forward
 * migrations: migration i takes PRAGMA user_version from i to i+1. A
 * database is only ever moved forward, one migration per transaction; a
 * database newer than this program is refused (db.c). Never edit a shipped
 * migration: add the next one. docs/RESULTS.md describes every table.
 *
 * Conventions: every quantity's column name carries its unit (_ns, _bytes,
 * _per_sec); a value that was not measured is NULL, never 0; traces are
 * keyed by the SHA-256 of the trace file and runs carry a random run_uuid,
 * so databases from different machines merge (docs/RESULTS.md, "Merging").
 */
#include <stddef.h>

#include "replay.h"

static const char *const migrations[] = {
	/* 0 -> 1: the initial schema */
	"CREATE TABLE traces (\n"
	"  sha256 TEXT PRIMARY KEY,\n"
	"  name TEXT NOT NULL,\n"
	"  program TEXT,\n"
	"  file_bytes INTEGER,\n"
	"  recorded_unix_ns INTEGER,\n"
	"  status TEXT NOT NULL,\n"
	"  events INTEGER NOT NULL,\n"
	"  threads INTEGER NOT NULL,\n"
	"  calls INTEGER NOT NULL,\n"
	"  trace_allocs INTEGER NOT NULL,\n"
	"  peak_live_bytes INTEGER NOT NULL,\n"
	"  peak_live_blocks INTEGER NOT NULL,\n"
	"  skipped_unknown_frees INTEGER NOT NULL,\n"
	"  unknown_reallocs INTEGER NOT NULL,\n"
	"  lost_blocks INTEGER NOT NULL,\n"
	"  trace_null_results INTEGER NOT NULL,\n"
	"  cross_thread_deps INTEGER NOT NULL,\n"
	"  reuse_deps INTEGER NOT NULL,\n"
	"  slots INTEGER NOT NULL,\n"
	"  first_seen TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))\n"
	");\n"
	"CREATE TABLE allocators (\n"
	"  name TEXT NOT NULL,\n"
	"  version TEXT NOT NULL,\n"
	"  package_version TEXT,\n"
	"  kind TEXT NOT NULL CHECK (kind IN ('system','ours')),\n"
	"  description TEXT,\n"
	"  PRIMARY KEY (name, version)\n"
	");\n"
	"CREATE TABLE runs (\n"
	"  run_id INTEGER PRIMARY KEY,\n"
	"  run_uuid TEXT NOT NULL UNIQUE,\n"
	"  trace_sha256 TEXT NOT NULL REFERENCES traces(sha256),\n"
	"  allocator TEXT NOT NULL,\n"
	"  allocator_version TEXT NOT NULL,\n"
	"  repetition INTEGER NOT NULL,\n"
	"  status TEXT NOT NULL CHECK (status IN ('ok','wrong_allocator','unsupported','crashed',"
	"'timeout','oom','error')),\n"
	"  reason TEXT,\n"
	"  started_at TEXT NOT NULL,\n"
	"  host TEXT, cpu_model TEXT, cpus INTEGER, kernel TEXT, glibc_version TEXT,\n"
	"  allocrr_version TEXT NOT NULL,\n"
	"  options TEXT NOT NULL,\n"
	"  touch TEXT NOT NULL,\n"
	"  preload TEXT,\n"
	"  expected_library TEXT,\n"
	"  library_path TEXT,\n"
	"  threads INTEGER, ops INTEGER,\n"
	"  wall_ns INTEGER, cpu_user_ns INTEGER, cpu_sys_ns INTEGER, timed_ns INTEGER,\n"
	"  ops_per_sec REAL,\n"
	"  timer TEXT, ticks_per_ns REAL, timer_overhead_ns REAL, timer_overhead_median_ns REAL,\n"
	"  baseline_rss_bytes INTEGER, peak_rss_bytes INTEGER, peak_heap_rss_bytes INTEGER,\n"
	"  peak_rss_method TEXT,\n"
	"  final_heap_rss_bytes INTEGER, maxrss_bytes INTEGER,\n"
	"  peak_live_bytes INTEGER, fragmentation REAL,\n"
	"  minor_faults INTEGER, major_faults INTEGER,\n"
	"  voluntary_ctx_switches INTEGER, involuntary_ctx_switches INTEGER,\n"
	"  failed_allocs INTEGER, leaked_blocks INTEGER,\n"
	"  dep_waits INTEGER, dep_blocked INTEGER,\n"
	"  op_checksum TEXT,\n"
	"  allocs_expected INTEGER, frees_expected INTEGER,\n"
	"  allocator_allocs_delta INTEGER, allocator_frees_delta INTEGER,\n"
	"  worker_stderr TEXT\n"
	");\n"
	"CREATE INDEX runs_by_trace ON runs(trace_sha256, allocator);\n"
	"CREATE TABLE latency (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
	"  op TEXT NOT NULL,\n"
	"  count INTEGER NOT NULL,\n"
	"  mean_ns REAL, min_ns REAL, p50_ns REAL, p90_ns REAL, p99_ns REAL, p999_ns REAL,\n"
	"  max_ns REAL,\n"
	"  PRIMARY KEY (run_id, op)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE histogram (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
	"  op TEXT NOT NULL,\n"
	"  lo_ns REAL NOT NULL,\n"
	"  hi_ns REAL NOT NULL,\n"
	"  count INTEGER NOT NULL,\n"
	"  PRIMARY KEY (run_id, op, lo_ns)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE rss_samples (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
	"  sample INTEGER NOT NULL,\n"
	"  event INTEGER NOT NULL,\n"
	"  elapsed_ns INTEGER NOT NULL,\n"
	"  anon_rss_bytes INTEGER NOT NULL,\n"
	"  heap_rss_bytes INTEGER NOT NULL,\n"
	"  live_bytes INTEGER NOT NULL,\n"
	"  PRIMARY KEY (run_id, sample)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE counters (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
	"  name TEXT NOT NULL,\n"
	"  value INTEGER,\n"
	"  reason TEXT,\n"
	"  PRIMARY KEY (run_id, name)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE allocator_stats (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
	"  name TEXT NOT NULL,\n"
	"  value INTEGER,\n"
	"  PRIMARY KEY (run_id, name)\n"
	") WITHOUT ROWID;\n"
	"CREATE VIEW run_summary AS\n"
	"SELECT r.run_id, r.trace_sha256, t.name AS trace_name, r.allocator, r.repetition,\n"
	"       r.status, r.threads, r.ops, r.wall_ns, r.ops_per_sec,\n"
	"       l.p50_ns, l.p99_ns, l.p999_ns, l.max_ns,\n"
	"       r.peak_rss_bytes, r.peak_heap_rss_bytes, r.peak_live_bytes, r.fragmentation,\n"
	"       r.minor_faults, r.major_faults, r.failed_allocs, r.library_path,\n"
	"       r.host, r.started_at, r.reason\n"
	"FROM runs r JOIN traces t ON t.sha256 = r.trace_sha256\n"
	"LEFT JOIN latency l ON l.run_id = r.run_id AND l.op = 'all';\n"
	"CREATE VIEW allocator_comparison AS\n"
	"WITH ok AS (SELECT * FROM run_summary WHERE status = 'ok'),\n"
	"agg AS (SELECT trace_sha256, trace_name, host, allocator, count(*) AS runs,\n"
	"              avg(ops_per_sec) AS ops_per_sec, min(ops_per_sec) AS min_ops_per_sec,\n"
	"              max(ops_per_sec) AS max_ops_per_sec, avg(p99_ns) AS p99_ns,\n"
	"              avg(peak_heap_rss_bytes) AS peak_heap_rss_bytes,\n"
	"              avg(fragmentation) AS fragmentation\n"
	"       FROM ok GROUP BY trace_sha256, host, allocator)\n"
	"SELECT a.*, a.ops_per_sec / g.ops_per_sec AS speed_vs_glibc,\n"
	"       a.peak_heap_rss_bytes / g.peak_heap_rss_bytes AS heap_rss_vs_glibc\n"
	"FROM agg a LEFT JOIN agg g ON g.trace_sha256 = a.trace_sha256 AND g.host IS a.host\n"
	"                          AND g.allocator = 'glibc';\n",
	/* 1 -> 2: SYNC ops hold a thread back where the trace shows it waited
	 * for other threads (replayer/workload.h); how often one had to wait. */
	"ALTER TABLE runs ADD COLUMN sync_waits INTEGER;\n",
	/* 2 -> 3: cache statistics from two sources (allocreplay --counters
	 * perf|sim) and the locality pass (--access-pass). Every counter row
	 * says where it came from; rows written before were all perf.
	 * run_summary keeps its columns and their order and gains
	 * instructions, llc_misses (perf: LLC read misses; sim: simulated LL
	 * misses, reads and writes), counters_source and access_pass_ns at the
	 * end; allocator_comparison reads run_summary by name and is unchanged. */
	"ALTER TABLE counters ADD COLUMN source TEXT CHECK (source IN ('perf','sim'));\n"
	"UPDATE counters SET source = 'perf';\n"
	"ALTER TABLE runs ADD COLUMN counters_source TEXT;\n"
	"ALTER TABLE runs ADD COLUMN access_pass_ns INTEGER;\n"
	"ALTER TABLE runs ADD COLUMN access_pass_blocks INTEGER;\n"
	"ALTER TABLE runs ADD COLUMN access_pass_bytes INTEGER;\n"
	"ALTER TABLE runs ADD COLUMN access_pass_lines INTEGER;\n"
	"DROP VIEW run_summary;\n"
	"CREATE VIEW run_summary AS\n"
	"SELECT r.run_id, r.trace_sha256, t.name AS trace_name, r.allocator, r.repetition,\n"
	"       r.status, r.threads, r.ops, r.wall_ns, r.ops_per_sec,\n"
	"       l.p50_ns, l.p99_ns, l.p999_ns, l.max_ns,\n"
	"       r.peak_rss_bytes, r.peak_heap_rss_bytes, r.peak_live_bytes, r.fragmentation,\n"
	"       r.minor_faults, r.major_faults, r.failed_allocs, r.library_path,\n"
	"       r.host, r.started_at, r.reason,\n"
	"       (SELECT c.value FROM counters c WHERE c.run_id = r.run_id\n"
	"          AND c.name = 'instructions') AS instructions,\n"
	"       (SELECT c.value FROM counters c WHERE c.run_id = r.run_id\n"
	"          AND ((c.source = 'perf' AND c.name = 'llc_load_misses')\n"
	"            OR (c.source = 'sim' AND c.name = 'll_misses'))) AS llc_misses,\n"
	"       coalesce((SELECT min(c.source) FROM counters c WHERE c.run_id = r.run_id),\n"
	"                r.counters_source) AS counters_source,\n"
	"       r.access_pass_ns\n"
	"FROM runs r JOIN traces t ON t.sha256 = r.trace_sha256\n"
	"LEFT JOIN latency l ON l.run_id = r.run_id AND l.op = 'all';\n",
};

int ar_db_schema_version(void)
{
	return (int)(sizeof migrations / sizeof migrations[0]);
}

const char *ar_db_migration(int i)
{
	return i >= 0 && i < ar_db_schema_version() ? migrations[i] : NULL;
}
