-- Feedback rows. The calls query generator joins this table for
-- feedback.[type].payload.<path> filters, so the column names are fixed:
-- payload is JSON text (VARCHAR), weave_ref the wire ref of the target.
-- extra holds the newer scorer/span fields as a JSON object when set.
CREATE TABLE IF NOT EXISTS feedback (
    project_id     VARCHAR   NOT NULL,
    id             VARCHAR   NOT NULL,
    weave_ref      VARCHAR   NOT NULL,
    feedback_type  VARCHAR   NOT NULL,
    payload        VARCHAR   NOT NULL,
    creator        VARCHAR,
    created_at     TIMESTAMP NOT NULL,
    wb_user_id     VARCHAR   NOT NULL,
    annotation_ref VARCHAR,
    runnable_ref   VARCHAR,
    call_ref       VARCHAR,
    trigger_ref    VARCHAR,
    queue_id       VARCHAR,
    extra          VARCHAR,
    PRIMARY KEY (project_id, id)
);

CREATE INDEX IF NOT EXISTS feedback_by_ref ON feedback (project_id, weave_ref);
