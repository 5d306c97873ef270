-- Feedback rows. The calls query generator joins this table, without
-- FINAL, for feedback.[type].payload.<path> filters, so its column names are
-- fixed and a plain read must see exactly the current rows: it is a plain
-- MergeTree, and purge and replace are lightweight DELETEs. A write inserts
-- first and then deletes the older copies of the ids it replaced (version
-- below its own), so a crash in between can leave a duplicate for a retry
-- to remove, never lose a row.
--
-- Keys: ORDER BY (project_id, weave_ref, id) serves the lookups by target
-- (FeedbackForRefs, the calls generator's startsWith(weave_ref, ...)); the
-- bloom filter serves lookups by id (purge, replace).
CREATE TABLE IF NOT EXISTS feedback (
    project_id     String,
    id             String,
    weave_ref      String,
    feedback_type  LowCardinality(String),
    payload        String CODEC(ZSTD(1)),
    creator        Nullable(String),
    created_at     DateTime64(6, 'UTC'),
    wb_user_id     String,
    annotation_ref Nullable(String),
    runnable_ref   Nullable(String),
    call_ref       Nullable(String),
    trigger_ref    Nullable(String),
    queue_id       Nullable(String),
    extra          Nullable(String) CODEC(ZSTD(1)),
    version        UInt64,
    INDEX idx_id id TYPE bloom_filter(0.01) GRANULARITY 1
)
ENGINE = MergeTree
ORDER BY (project_id, weave_ref, id);
