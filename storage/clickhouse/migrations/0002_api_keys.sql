-- API keys, shared by every weft role of a deployment. Only the SHA-256 of
-- a secret is stored. A key is a ReplacingMergeTree row per id: revoking
-- inserts a new version with revoked_at set, and reads use FINAL. The
-- table stays small (one row per key), so lookups by hash scan it; the
-- server caches it and reloads at most every Options.KeyRefresh.
CREATE TABLE IF NOT EXISTS api_keys (
    id         String,
    hash       String,
    user_id    String,
    entity     String,
    role       LowCardinality(String),
    created_at DateTime64(9, 'UTC'),
    revoked_at Nullable(DateTime64(9, 'UTC')),
    version    UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY id;
