-- Webhook automations (docs/adr/0011-webhook-automations.md). Secret
-- values arrive sealed (AES-GCM, by package automations/secretbox); the
-- store never sees them in the clear. Webhooks name their secrets, and
-- automations their webhook, by the entity's names and ids; the store
-- checks those references inside its write transactions.
CREATE TABLE IF NOT EXISTS automation_secrets (
    entity     VARCHAR   NOT NULL,
    name       VARCHAR   NOT NULL,
    sealed     BLOB      NOT NULL,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    PRIMARY KEY (entity, name)
);

CREATE TABLE IF NOT EXISTS automation_webhooks (
    entity              VARCHAR   NOT NULL,
    id                  VARCHAR   NOT NULL,
    name                VARCHAR   NOT NULL,
    url                 VARCHAR   NOT NULL,
    access_token_secret VARCHAR   NOT NULL,
    signing_secret      VARCHAR   NOT NULL,
    created_at          TIMESTAMP NOT NULL,
    updated_at          TIMESTAMP NOT NULL,
    failing_since       TIMESTAMP,
    disabled_at         TIMESTAMP,
    disabled_reason     VARCHAR   NOT NULL,
    PRIMARY KEY (entity, id)
);

CREATE TABLE IF NOT EXISTS automations (
    project_id        VARCHAR   NOT NULL,
    id                VARCHAR   NOT NULL,
    name              VARCHAR   NOT NULL,
    description       VARCHAR   NOT NULL,
    scope             VARCHAR   NOT NULL,
    collection        VARCHAR   NOT NULL,
    collection_filter VARCHAR   NOT NULL,
    event             VARCHAR   NOT NULL,
    alias_regex       VARCHAR   NOT NULL,
    webhook_id        VARCHAR   NOT NULL,
    payload           VARCHAR   NOT NULL,
    enabled           BOOLEAN   NOT NULL,
    created_by        VARCHAR   NOT NULL,
    created_at        TIMESTAMP NOT NULL,
    updated_at        TIMESTAMP NOT NULL,
    PRIMARY KEY (project_id, id)
);

-- The outbox: an event is written before the request that caused it is
-- answered, and removed in the transaction that adds its deliveries.
CREATE TABLE IF NOT EXISTS automation_events (
    seq           BIGINT    NOT NULL PRIMARY KEY,
    id            VARCHAR   NOT NULL,
    type          VARCHAR   NOT NULL,
    project_id    VARCHAR   NOT NULL,
    collection    VARCHAR   NOT NULL,
    version_index BIGINT    NOT NULL,
    digest        VARCHAR   NOT NULL,
    aliases       VARCHAR   NOT NULL, -- JSON array
    source        VARCHAR   NOT NULL,
    author        VARCHAR   NOT NULL,
    metadata      VARCHAR   NOT NULL,
    occurred_at   TIMESTAMP NOT NULL
);

CREATE SEQUENCE IF NOT EXISTS automation_event_seq;

CREATE TABLE IF NOT EXISTS automation_deliveries (
    id              VARCHAR   NOT NULL PRIMARY KEY,
    project_id      VARCHAR   NOT NULL,
    automation_id   VARCHAR   NOT NULL,
    entity          VARCHAR   NOT NULL,
    webhook_id      VARCHAR   NOT NULL,
    event_id        VARCHAR   NOT NULL,
    event_type      VARCHAR   NOT NULL,
    body            BLOB      NOT NULL,
    preview         VARCHAR   NOT NULL,
    state           VARCHAR   NOT NULL,
    attempts        INTEGER   NOT NULL,
    next_attempt_at TIMESTAMP NOT NULL,
    retry_from      TIMESTAMP NOT NULL,
    lease_owner     VARCHAR   NOT NULL,
    lease_until     TIMESTAMP,
    last_attempt_at TIMESTAMP,
    last_status     INTEGER   NOT NULL,
    last_error      VARCHAR   NOT NULL,
    last_response   VARCHAR   NOT NULL,
    last_latency_ms BIGINT    NOT NULL,
    created_at      TIMESTAMP NOT NULL,
    updated_at      TIMESTAMP NOT NULL
);
