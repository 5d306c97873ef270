-- The inference gateway's shared rate counts (one row per limit, window
-- and replica; the latest version wins, old windows expire) and the
-- limits the admin API set (one row, name 'limits').
CREATE TABLE IF NOT EXISTS inference_rate_counts (
    scope        String,
    window_start DateTime64(6, 'UTC'),
    replica      String,
    requests     Int64,
    tokens       Int64,
    version      UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (scope, window_start, replica)
TTL toDateTime(window_start) + INTERVAL 1 HOUR;

CREATE TABLE IF NOT EXISTS inference_settings (
    name       String,
    doc        String,
    updated_at DateTime64(6, 'UTC'),
    updated_by String,
    version    UInt64,
    deleted    UInt8
)
ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY name;
