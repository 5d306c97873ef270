-- The training service (docs/adr/0014-training-job-queue.md). Models,
-- checkpoints and log entries are ReplacingMergeTrees of whole rows with
-- a version and a deleted flag, read with FINAL. A model's id derives
-- from its project and name, so two replicas creating the same model at
-- once write the same row. Job rows carry the job queue's version (the
-- position of the command that produced them in the queue's log), so a
-- replayed or late write of an older state never wins. Events are keyed
-- by (job_id, seq) and written the same by every writer.
CREATE TABLE IF NOT EXISTS training_models (
    id         String,
    project_id String,
    entity     String,
    name       String,
    base_model String,
    created_at DateTime64(6, 'UTC'),
    version    UInt64,
    deleted    UInt8
)
ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (project_id, name);

CREATE TABLE IF NOT EXISTS training_checkpoints (
    model_id   String,
    step       Int64,
    id         String,
    digest     String,
    job_id     String,
    metrics    String,
    created_at DateTime64(6, 'UTC'),
    version    UInt64,
    deleted    UInt8
)
ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (model_id, step);

CREATE TABLE IF NOT EXISTS training_log_entries (
    model_id   String,
    id         String,
    step       Int64,
    split      String,
    groups     String,
    stats      String,
    created_at DateTime64(6, 'UTC'),
    version    UInt64,
    deleted    UInt8
)
ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (model_id, id);

CREATE TABLE IF NOT EXISTS training_jobs (
    id               String,
    project_id       String,
    entity           String,
    model_id         String,
    kind             LowCardinality(String),
    status           LowCardinality(String),
    attempts         Int32,
    max_attempts     Int32,
    target_step      Int64,
    checkpoint_step  Int64,
    lease_id         String,
    worker           String,
    lease_until      Nullable(DateTime64(6, 'UTC')),
    lease_ack        Int64,
    last_seq         Int64,
    cancel_requested Bool,
    error_message    String,
    created_at       DateTime64(6, 'UTC'),
    queued_at        DateTime64(6, 'UTC'),
    training_start   Nullable(DateTime64(6, 'UTC')),
    training_end     Nullable(DateTime64(6, 'UTC')),
    version          Int64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY id;

CREATE TABLE IF NOT EXISTS training_job_inputs (
    job_id     String,
    project_id String,
    body       String
)
ENGINE = ReplacingMergeTree
ORDER BY job_id;

CREATE TABLE IF NOT EXISTS training_job_events (
    job_id     String,
    seq        Int64,
    id         String,
    type       LowCardinality(String),
    data       String,
    created_at DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree
ORDER BY (job_id, seq);

-- The job queue's snapshot: a replica that starts loads it and replays
-- the queue's Kafka log after it. One key for every row, versioned by
-- the log position, so merges keep only the latest.
CREATE TABLE IF NOT EXISTS training_queue_snapshots (
    slot       UInt8,
    log_pos    Int64,
    state      String,
    created_at DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(log_pos)
ORDER BY slot;
