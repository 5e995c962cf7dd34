-- 0005-recorded-baseline.sql — migration 4 -> 5: what the recorded program
-- itself ran on and measured (issue 14), so replay can be judged against it
-- and predict it. Every new column is NULL when not known, with the reason in
-- the matching *_reason column; rows written before stay NULL.
--
-- traces: the allocator that served the recorded program's malloc (the
-- recorder's proof: the object its malloc resolved to), its registry name
-- when allocrr knows it, and the process's own figures from the recorder's
-- samples: duration, CPU time, RSS when recording started and its peak (VmHWM).
ALTER TABLE traces ADD COLUMN recorded_allocator TEXT;
ALTER TABLE traces ADD COLUMN recorded_allocator_library TEXT;
ALTER TABLE traces ADD COLUMN recorded_allocator_version TEXT;
ALTER TABLE traces ADD COLUMN recorded_duration_ns INTEGER;
-- user + system CPU time of the whole recorded process (getrusage at close)
ALTER TABLE traces ADD COLUMN recorded_cpu_ns INTEGER;
ALTER TABLE traces ADD COLUMN recorded_start_rss_bytes INTEGER;
ALTER TABLE traces ADD COLUMN recorded_peak_rss_bytes INTEGER;
-- the recorder's own resident memory at the RSS peak: part of the recorded RSS
ALTER TABLE traces ADD COLUMN recorded_recorder_bytes INTEGER;
ALTER TABLE traces ADD COLUMN recorded_rss_samples INTEGER;
ALTER TABLE traces ADD COLUMN recorded_reason TEXT;
-- runs: how the run was timed (1 call in timing_every timed; 1 = every
-- call, 0 = none), the timer's resolution (latencies below it are "< N ns",
-- not 0), the prediction for the program under this run's allocator, and —
-- for runs of the recorded allocator — how far the replay is from the
-- recorded program (signed, relative: (replay - recorded) / recorded).
ALTER TABLE runs ADD COLUMN timing_every INTEGER;
ALTER TABLE runs ADD COLUMN timer_resolution_ns REAL;
ALTER TABLE runs ADD COLUMN predicted_time_ns REAL;
ALTER TABLE runs ADD COLUMN predicted_peak_rss_bytes REAL;
ALTER TABLE runs ADD COLUMN prediction_reason TEXT;
ALTER TABLE runs ADD COLUMN fidelity_time_error REAL;
ALTER TABLE runs ADD COLUMN fidelity_rss_error REAL;
ALTER TABLE runs ADD COLUMN fidelity_reason TEXT;
