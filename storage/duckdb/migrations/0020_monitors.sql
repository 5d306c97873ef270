-- Online scorers (monitors): the queue of stored calls they score, and
-- the ledger of what each scorer version made of each call. The queue is
-- filled by the writer of calls before it counts them stored, so a crash
-- replays both; a ledger row per (call, scorer ref) is what keeps a call
-- from being scored twice by the same scorer version.
CREATE TABLE IF NOT EXISTS monitor_calls (
    project_id VARCHAR   NOT NULL,
    call_id    VARCHAR   NOT NULL,
    queued_at  TIMESTAMP NOT NULL,
    attempts   INTEGER   NOT NULL DEFAULT 0,
    next_at    TIMESTAMP NOT NULL,
    PRIMARY KEY (project_id, call_id)
);

CREATE TABLE IF NOT EXISTS monitor_results (
    project_id  VARCHAR   NOT NULL,
    call_id     VARCHAR   NOT NULL,
    scorer_ref  VARCHAR   NOT NULL,
    monitor     VARCHAR   NOT NULL,
    monitor_ref VARCHAR   NOT NULL,
    status      VARCHAR   NOT NULL,
    message     VARCHAR   NOT NULL,
    cost_usd    DOUBLE    NOT NULL,
    scored_at   TIMESTAMP NOT NULL,
    PRIMARY KEY (project_id, call_id, scorer_ref)
);
