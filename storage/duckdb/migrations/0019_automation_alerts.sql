-- Alert automations (event CALL_ALERT): the condition they watch, the
-- state of each (its last evaluation and how many transitions it has
-- made), the transitions themselves, and the named leases that let one
-- process evaluate alerts. A transition, its state and its delivery are
-- written in one transaction.
ALTER TABLE automations ADD COLUMN IF NOT EXISTS condition VARCHAR DEFAULT '';

CREATE TABLE IF NOT EXISTS automation_alert_states (
    project_id    VARCHAR   NOT NULL,
    automation_id VARCHAR   NOT NULL,
    state         VARCHAR   NOT NULL,
    value         DOUBLE    NOT NULL,
    seq           BIGINT    NOT NULL,
    evaluated_at  TIMESTAMP NOT NULL,
    changed_at    TIMESTAMP NOT NULL,
    PRIMARY KEY (project_id, automation_id)
);

CREATE TABLE IF NOT EXISTS automation_alert_transitions (
    project_id    VARCHAR   NOT NULL,
    automation_id VARCHAR   NOT NULL,
    seq           BIGINT    NOT NULL,
    state         VARCHAR   NOT NULL,
    value         DOUBLE    NOT NULL,
    threshold     DOUBLE    NOT NULL,
    changed_at    TIMESTAMP NOT NULL,
    PRIMARY KEY (project_id, automation_id, seq)
);

CREATE TABLE IF NOT EXISTS automation_leases (
    name        VARCHAR   NOT NULL PRIMARY KEY,
    owner       VARCHAR   NOT NULL,
    lease_until TIMESTAMP NOT NULL
);
