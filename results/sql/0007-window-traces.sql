-- 0007-window-traces.sql — migration 6 -> 7: window traces (issue 16 item 2,
-- trace format 1.3): a recording that began while the program's heap was
-- already in use (attach, a paused start, a rotated segment).
--
-- traces: window_trace is 1 for such a trace and 0 for one that starts with its
-- process; rows written before stay NULL (not known). preexisting_blocks and
-- preexisting_bytes: the blocks allocated before the window that it freed
-- or realloced, known by their usable size at that free (SPEC 6.11), which
-- the replay allocates untimed before the window; 0 for other traces.
-- heap_at_start_bytes: the allocator's in-use bytes when the window began,
-- from the trace's WINDOW record; NULL when unknown (no record, or the
-- allocator could not tell), never a guess. The part of it the trace never
-- saw is heap_at_start_bytes - preexisting_bytes (when not negative).
ALTER TABLE traces ADD COLUMN window_trace INTEGER;
ALTER TABLE traces ADD COLUMN preexisting_blocks INTEGER;
ALTER TABLE traces ADD COLUMN preexisting_bytes INTEGER;
ALTER TABLE traces ADD COLUMN heap_at_start_bytes INTEGER;
