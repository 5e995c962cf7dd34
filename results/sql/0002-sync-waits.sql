-- 0002-sync-waits.sql — migration 1 -> 2: SYNC ops hold a thread back where
-- the trace shows it waited for other threads (replayer/workload.h); how
-- often one had to wait.
ALTER TABLE runs ADD COLUMN sync_waits INTEGER;
