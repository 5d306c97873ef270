-- Online scorers (monitors): the queue of stored calls they score, and
-- the ledger of what each scorer version made of each call (see the
-- embedded store's migration of the same name). A call taken off the
-- queue is a newer row marked deleted, which merges drop. (A TTL on
-- queued_at would also drop calls that arrive with old timestamps.)
CREATE TABLE IF NOT EXISTS monitor_calls (
    project_id String,
    call_id    String,
    queued_at  DateTime64(6, 'UTC'),
    attempts   Int32,
    next_at    DateTime64(6, 'UTC'),
    version    UInt64,
    deleted    UInt8
)
ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (project_id, call_id);

CREATE TABLE IF NOT EXISTS monitor_results (
    project_id  String,
    call_id     String,
    scorer_ref  String,
    monitor     String,
    monitor_ref String,
    status      LowCardinality(String),
    message     String,
    cost_usd    Float64,
    scored_at   DateTime64(6, 'UTC'),
    version     UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, call_id, scorer_ref);
