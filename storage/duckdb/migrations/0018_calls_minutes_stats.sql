-- Call statistics (/calls/stats) from the chart rollups: per model, the
-- calls with a usage entry and the cache token sums. Rows rolled up
-- before these columns existed are recomputed once: backfillMinutes
-- (storage/duckdb/minutes.go) marks every minute dirty again when
-- calls_columns_filled lacks 'call_minute_usage.entries', and reads
-- compute dirty minutes from the calls meanwhile.
ALTER TABLE call_minute_usage ADD COLUMN IF NOT EXISTS cache_read_tokens     BIGINT;
ALTER TABLE call_minute_usage ADD COLUMN IF NOT EXISTS cache_creation_tokens BIGINT;
ALTER TABLE call_minute_usage ADD COLUMN IF NOT EXISTS entries               BIGINT;
