-- summary.weave.latency_ms kept with the call: ended_at - started_at in
-- whole milliseconds (as epoch_ms reads them), NULL until both are known.
-- The writer sets it when a call's start or end is stored; a sort or
-- filter on latency reads this one column instead of two timestamps, and
-- a page sorted by it is bounded by it (sqlgen.SortBound). Rows written
-- before get it once when the store opens (storedLatency in callsfile.go).
ALTER TABLE calls ADD COLUMN IF NOT EXISTS latency_ms BIGINT;
