-- 0008-sites.sql — migration 7 -> 8: allocation sites of traces recorded with
-- stacks (issue 15; analysis/sites.h, docs/RESULTS.md "Allocation sites").
--
-- One row per site of a trace: stack is the site's caller chain in the
-- folded-stack form (frames outermost first, joined by ';', as
-- `alloctrace stacks --folded` writes it). calls and bytes: allocations that
-- returned a block and the bytes they asked for; live_at_peak_*: the site's
-- blocks live when the trace's live bytes first reached their peak;
-- temporary_calls: blocks freed by their thread with no other allocation of
-- that thread in between (heaptrack's definition); leaked_*: blocks still live
-- at the end of the trace. Keyed by the trace's SHA-256 like traces, without a
-- foreign key: `alloctrace stacks --db` may store a trace's sites before any
-- replay wrote its traces row.
CREATE TABLE sites (
  trace_sha256 TEXT NOT NULL,
  stack TEXT NOT NULL,
  calls INTEGER,
  bytes INTEGER,
  live_at_peak_bytes INTEGER,
  live_at_peak_blocks INTEGER,
  temporary_calls INTEGER,
  leaked_bytes INTEGER,
  leaked_blocks INTEGER,
  PRIMARY KEY (trace_sha256, stack)
);
