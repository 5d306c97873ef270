-- The training service (docs/adr/0014-training-job-queue.md): models,
-- their checkpoints and /log entries, and jobs with their inputs and
-- events. Job rows are written by the job queue with a version; a write
-- whose version is not above the stored one changes nothing. Metrics and
-- log stats are JSON text.
CREATE TABLE IF NOT EXISTS training_models (
    id         VARCHAR   NOT NULL PRIMARY KEY,
    project_id VARCHAR   NOT NULL,
    entity     VARCHAR   NOT NULL,
    name       VARCHAR   NOT NULL,
    base_model VARCHAR   NOT NULL,
    created_at TIMESTAMP NOT NULL,
    UNIQUE (project_id, name)
);

CREATE TABLE IF NOT EXISTS training_checkpoints (
    model_id   VARCHAR   NOT NULL,
    step       BIGINT    NOT NULL,
    id         VARCHAR   NOT NULL,
    digest     VARCHAR   NOT NULL,
    job_id     VARCHAR   NOT NULL,
    metrics    VARCHAR   NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (model_id, step)
);

CREATE TABLE IF NOT EXISTS training_log_entries (
    model_id   VARCHAR   NOT NULL,
    id         VARCHAR   NOT NULL,
    step       BIGINT    NOT NULL,
    split      VARCHAR   NOT NULL,
    groups     VARCHAR   NOT NULL,
    stats      VARCHAR   NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (model_id, id)
);

CREATE TABLE IF NOT EXISTS training_jobs (
    id               VARCHAR   NOT NULL PRIMARY KEY,
    project_id       VARCHAR   NOT NULL,
    entity           VARCHAR   NOT NULL,
    model_id         VARCHAR   NOT NULL,
    kind             VARCHAR   NOT NULL,
    status           VARCHAR   NOT NULL,
    attempts         INTEGER   NOT NULL,
    max_attempts     INTEGER   NOT NULL,
    target_step      BIGINT    NOT NULL,
    checkpoint_step  BIGINT    NOT NULL,
    lease_id         VARCHAR   NOT NULL,
    worker           VARCHAR   NOT NULL,
    lease_until      TIMESTAMP,
    lease_ack        BIGINT    NOT NULL,
    last_seq         BIGINT    NOT NULL,
    cancel_requested BOOLEAN   NOT NULL,
    error_message    VARCHAR   NOT NULL,
    created_at       TIMESTAMP NOT NULL,
    queued_at        TIMESTAMP NOT NULL,
    training_start   TIMESTAMP,
    training_end     TIMESTAMP,
    version          BIGINT    NOT NULL
);

CREATE TABLE IF NOT EXISTS training_job_inputs (
    job_id     VARCHAR NOT NULL PRIMARY KEY,
    project_id VARCHAR NOT NULL,
    body       VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS training_job_events (
    job_id     VARCHAR   NOT NULL,
    seq        BIGINT    NOT NULL,
    id         VARCHAR   NOT NULL,
    type       VARCHAR   NOT NULL,
    data       VARCHAR   NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (job_id, seq)
);

CREATE TABLE IF NOT EXISTS training_queue_snapshots (
    position   BIGINT    NOT NULL PRIMARY KEY,
    state      BLOB      NOT NULL,
    created_at TIMESTAMP NOT NULL
);
