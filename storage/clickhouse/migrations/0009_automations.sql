-- Webhook automations (docs/adr/0011-webhook-automations.md). Every table
-- is a ReplacingMergeTree of whole rows: a change inserts the row again
-- with a higher version, a removal inserts its key with deleted = 1, and
-- reads use FINAL. Sealed values (secrets, delivery bodies) are stored as
-- base64 text. The tables stay small next to calls: one row per secret,
-- webhook and automation, and one per delivery.
CREATE TABLE IF NOT EXISTS automation_secrets (
    entity     String,
    name       String,
    sealed     String,
    created_at DateTime64(6, 'UTC'),
    updated_at DateTime64(6, 'UTC'),
    version    UInt64,
    deleted    UInt8
)
ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (entity, name);

CREATE TABLE IF NOT EXISTS automation_webhooks (
    entity              String,
    id                  String,
    name                String,
    url                 String,
    access_token_secret String,
    signing_secret      String,
    created_at          DateTime64(6, 'UTC'),
    updated_at          DateTime64(6, 'UTC'),
    failing_since       Nullable(DateTime64(6, 'UTC')),
    disabled_at         Nullable(DateTime64(6, 'UTC')),
    disabled_reason     String,
    version             UInt64,
    deleted             UInt8
)
ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (entity, id);

CREATE TABLE IF NOT EXISTS automations (
    project_id        String,
    id                String,
    name              String,
    description       String,
    scope             LowCardinality(String),
    collection        String,
    collection_filter String,
    event             LowCardinality(String),
    alias_regex       String,
    webhook_id        String,
    payload           String,
    enabled           Bool,
    created_by        String,
    created_at        DateTime64(6, 'UTC'),
    updated_at        DateTime64(6, 'UTC'),
    version           UInt64,
    deleted           UInt8
)
ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (project_id, id);

-- The outbox of a deployment without Kafka (with Kafka, events travel on
-- the events topic instead). recorded_at orders dispatch.
CREATE TABLE IF NOT EXISTS automation_events (
    id            String,
    type          LowCardinality(String),
    project_id    String,
    collection    String,
    version_index Int64,
    digest        String,
    aliases       String,
    source        String,
    author        String,
    metadata      String,
    occurred_at   DateTime64(6, 'UTC'),
    recorded_at   DateTime64(9, 'UTC'),
    version       UInt64,
    deleted       UInt8
)
ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY id;

CREATE TABLE IF NOT EXISTS automation_deliveries (
    id              String,
    project_id      String,
    automation_id   String,
    entity          String,
    webhook_id      String,
    event_id        String,
    event_type      LowCardinality(String),
    body            String,
    preview         String,
    state           LowCardinality(String),
    attempts        Int32,
    next_attempt_at DateTime64(6, 'UTC'),
    retry_from      DateTime64(6, 'UTC'),
    lease_owner     String,
    lease_until     Nullable(DateTime64(6, 'UTC')),
    last_attempt_at Nullable(DateTime64(6, 'UTC')),
    last_status     Int32,
    last_error      String,
    last_response   String,
    last_latency_ms Int64,
    created_at      DateTime64(6, 'UTC'),
    updated_at      DateTime64(6, 'UTC'),
    version         UInt64,
    deleted         UInt8
)
ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY id;
