-- merge.sql — fold the results database attached as "src" into the main one
-- (docs/RESULTS.md, "Merging databases"). Both must have the same schema
-- version (PRAGMA user_version); run allocreplay once on the older one to
-- migrate it first. Usage:
--   sqlite3 main.db "ATTACH 'other.db' AS src" ".read results/sql/merge.sql"
-- Traces are keyed by the SHA-256 of the trace file and allocators by
-- (name, version), so the same trace recorded once and replayed on two
-- machines merges into one traces row. Runs are identified by run_uuid:
-- merging the same database twice adds nothing. run_ids of merged runs are
-- shifted past the main database's largest, and their child rows with them.
BEGIN IMMEDIATE;
INSERT OR IGNORE INTO main.traces SELECT * FROM src.traces;
INSERT OR IGNORE INTO main.allocators SELECT * FROM src.allocators;
CREATE TEMP TABLE merge_off AS SELECT coalesce(max(run_id), 0) AS off FROM main.runs;
CREATE TEMP TABLE merge_runs AS
  SELECT * FROM src.runs WHERE run_uuid NOT IN (SELECT run_uuid FROM main.runs);
CREATE TEMP TABLE merge_ids AS SELECT run_id FROM temp.merge_runs;
UPDATE temp.merge_runs SET run_id = run_id + (SELECT off FROM temp.merge_off);
INSERT INTO main.runs SELECT * FROM temp.merge_runs;
CREATE TEMP TABLE m_latency AS SELECT * FROM src.latency WHERE run_id IN (SELECT run_id FROM temp.merge_ids);
CREATE TEMP TABLE m_histogram AS SELECT * FROM src.histogram WHERE run_id IN (SELECT run_id FROM temp.merge_ids);
CREATE TEMP TABLE m_rss AS SELECT * FROM src.rss_samples WHERE run_id IN (SELECT run_id FROM temp.merge_ids);
CREATE TEMP TABLE m_counters AS SELECT * FROM src.counters WHERE run_id IN (SELECT run_id FROM temp.merge_ids);
CREATE TEMP TABLE m_astats AS SELECT * FROM src.allocator_stats WHERE run_id IN (SELECT run_id FROM temp.merge_ids);
UPDATE temp.m_latency SET run_id = run_id + (SELECT off FROM temp.merge_off);
UPDATE temp.m_histogram SET run_id = run_id + (SELECT off FROM temp.merge_off);
UPDATE temp.m_rss SET run_id = run_id + (SELECT off FROM temp.merge_off);
UPDATE temp.m_counters SET run_id = run_id + (SELECT off FROM temp.merge_off);
UPDATE temp.m_astats SET run_id = run_id + (SELECT off FROM temp.merge_off);
INSERT INTO main.latency SELECT * FROM temp.m_latency;
INSERT INTO main.histogram SELECT * FROM temp.m_histogram;
INSERT INTO main.rss_samples SELECT * FROM temp.m_rss;
INSERT INTO main.counters SELECT * FROM temp.m_counters;
INSERT INTO main.allocator_stats SELECT * FROM temp.m_astats;
DROP TABLE temp.merge_off; DROP TABLE temp.merge_runs; DROP TABLE temp.merge_ids;
DROP TABLE temp.m_latency; DROP TABLE temp.m_histogram; DROP TABLE temp.m_rss;
DROP TABLE temp.m_counters; DROP TABLE temp.m_astats;
COMMIT;
