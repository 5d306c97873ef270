-- Alert automations (event CALL_ALERT): the condition they watch, the
-- state of each (its last evaluation and how many transitions it has
-- made), the transitions themselves, and the named leases that let one
-- process evaluate alerts. A transition is keyed by its number, so
-- writing it again after a crash replaces it with itself.
ALTER TABLE automations ADD COLUMN IF NOT EXISTS condition String DEFAULT '';

CREATE TABLE IF NOT EXISTS automation_alert_states (
    project_id    String,
    automation_id String,
    state         LowCardinality(String),
    value         Float64,
    seq           Int64,
    evaluated_at  DateTime64(6, 'UTC'),
    changed_at    DateTime64(6, 'UTC'),
    version       UInt64,
    deleted       UInt8
)
ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (project_id, automation_id);

CREATE TABLE IF NOT EXISTS automation_alert_transitions (
    project_id    String,
    automation_id String,
    seq           Int64,
    state         LowCardinality(String),
    value         Float64,
    threshold     Float64,
    changed_at    DateTime64(6, 'UTC'),
    version       UInt64,
    deleted       UInt8
)
ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (project_id, automation_id, seq);

CREATE TABLE IF NOT EXISTS automation_leases (
    name        String,
    owner       String,
    lease_until DateTime64(6, 'UTC'),
    version     UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY name;
