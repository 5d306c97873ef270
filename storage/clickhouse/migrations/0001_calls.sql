-- One row per call, kept as versions of a ReplacingMergeTree: every write
-- of a call (a part, a rename, a delete) inserts the whole merged row again
-- with a higher version, and reads use FINAL, so they see exactly one
-- version. Start and end parts merge in the writer, which reads the stored
-- row first; has_start / has_end say which sides have arrived.
--
-- anchor_at is the call's time that never changes: started_at of the first
-- version that had a start, else ended_at of the first (end-only) version;
-- the writer copies it into every later version. Because it is stable it
-- can lead the sorting key, so all versions of a call share one key (and
-- one monthly partition) and collapse, while a project's calls are stored
-- in time order: a page of recent calls lives in a few granules, which the
-- second, heavy phase of a calls query reads by (anchor_at, id).
--
-- Sentinels instead of Nullable for strings and JSON text: '' means absent.
-- ended_at, exception, deleted_at and the run steps stay Nullable because
-- queries test them for NULL (running, no error, live, unset).
--
-- Retention: expire_at is anchor_at plus the project's retention, NULL to
-- keep the call; the TTL drops expired rows during merges.
CREATE TABLE IF NOT EXISTS calls (
    project_id      String,
    id              String,
    version         UInt64,
    anchor_at       DateTime64(6, 'UTC'),
    has_start       Bool,
    has_end         Bool,
    trace_id        String,
    parent_id       String,
    thread_id       String,
    turn_id         String,
    op_name         LowCardinality(String),
    display_name    String,
    started_at      DateTime64(6, 'UTC'),
    ended_at        Nullable(DateTime64(6, 'UTC')),
    attributes      String CODEC(ZSTD(1)),
    inputs          String CODEC(ZSTD(1)),
    output          String CODEC(ZSTD(1)),
    summary         String CODEC(ZSTD(1)),
    otel_dump       String CODEC(ZSTD(1)),
    exception       Nullable(String) CODEC(ZSTD(1)),
    wb_user_id      LowCardinality(String),
    wb_run_id       String,
    wb_run_step     Nullable(Int64),
    wb_run_step_end Nullable(Int64),
    input_refs      Array(String),
    output_refs     Array(String),
    deleted_at      Nullable(DateTime64(3, 'UTC')),
    expire_at       Nullable(DateTime('UTC')),
    INDEX idx_id id TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_started_at started_at TYPE minmax GRANULARITY 1,
    INDEX idx_trace_id trace_id TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_parent_id parent_id TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_thread_id thread_id TYPE set(1000) GRANULARITY 1,
    INDEX idx_wb_run_id wb_run_id TYPE set(100) GRANULARITY 4
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(anchor_at)
ORDER BY (project_id, anchor_at, id)
TTL ifNull(expire_at, toDateTime('2106-01-01 00:00:00', 'UTC')) DELETE;

-- The writer's index from a call id to its anchor: before merging parts it
-- must find the stored row of a call knowing only its id. Ordered by id,
-- so that lookup is a primary-key read of a narrow table; filled by the
-- view below in the same INSERT as the calls rows.
CREATE TABLE IF NOT EXISTS call_ids (
    project_id String,
    id         String,
    anchor_at  DateTime64(6, 'UTC'),
    expire_at  Nullable(DateTime('UTC'))
)
ENGINE = ReplacingMergeTree
ORDER BY (project_id, id)
TTL ifNull(expire_at, toDateTime('2106-01-01 00:00:00', 'UTC')) DELETE;

CREATE MATERIALIZED VIEW IF NOT EXISTS call_ids_mv TO call_ids AS
SELECT project_id, id, anchor_at, expire_at FROM calls;
