-- summary.usage typed, written with the summary (summaryUsage in storage/duckdb):
-- token sorts, costs and the charts' usage sums read these numbers
-- instead of parsing every call's summary. usage_models is the number of
-- models in summary.usage when only those columns are needed to read it
-- (0: no usage; 1: usage_model and the counts are its one entry); NULL
-- (rows written before, or a usage the columns cannot hold) means
-- readers parse the summary, as before.
ALTER TABLE calls ADD COLUMN IF NOT EXISTS usage_models       INTEGER;
ALTER TABLE calls ADD COLUMN IF NOT EXISTS usage_model        VARCHAR;
ALTER TABLE calls ADD COLUMN IF NOT EXISTS usage_requests     DOUBLE;
ALTER TABLE calls ADD COLUMN IF NOT EXISTS usage_prompt       DOUBLE;
ALTER TABLE calls ADD COLUMN IF NOT EXISTS usage_completion   DOUBLE;
ALTER TABLE calls ADD COLUMN IF NOT EXISTS usage_total        DOUBLE;
ALTER TABLE calls ADD COLUMN IF NOT EXISTS usage_cache_read   DOUBLE;
ALTER TABLE calls ADD COLUMN IF NOT EXISTS usage_cache_create DOUBLE;
