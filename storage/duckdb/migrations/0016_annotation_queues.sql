-- Annotation queues: a project's queues of calls to review, the calls in
-- each (with the call fields the queue shows copied at add time), and
-- every annotator's progress on each item. Queues and items are deleted
-- softly (deleted_at); lists (scorer_refs, display_fields) are JSON text.
CREATE TABLE IF NOT EXISTS annotation_queues (
    project_id  VARCHAR   NOT NULL,
    id          VARCHAR   NOT NULL,
    name        VARCHAR   NOT NULL,
    description VARCHAR   NOT NULL,
    scorer_refs VARCHAR   NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    created_by  VARCHAR   NOT NULL,
    updated_at  TIMESTAMP NOT NULL,
    deleted_at  TIMESTAMP,
    PRIMARY KEY (project_id, id)
);

CREATE TABLE IF NOT EXISTS annotation_queue_items (
    project_id      VARCHAR   NOT NULL,
    queue_id        VARCHAR   NOT NULL,
    id              VARCHAR   NOT NULL,
    call_id         VARCHAR   NOT NULL,
    call_started_at TIMESTAMP NOT NULL,
    call_ended_at   TIMESTAMP,
    call_op_name    VARCHAR   NOT NULL,
    call_trace_id   VARCHAR   NOT NULL,
    display_fields  VARCHAR   NOT NULL,
    added_by        VARCHAR,
    created_at      TIMESTAMP NOT NULL,
    created_by      VARCHAR   NOT NULL,
    updated_at      TIMESTAMP NOT NULL,
    deleted_at      TIMESTAMP,
    PRIMARY KEY (project_id, id)
);

-- One record per annotator and item: an update rewrites it in place.
CREATE TABLE IF NOT EXISTS annotator_queue_items_progress (
    project_id       VARCHAR   NOT NULL,
    queue_id         VARCHAR   NOT NULL,
    queue_item_id    VARCHAR   NOT NULL,
    annotator_id     VARCHAR   NOT NULL,
    id               VARCHAR   NOT NULL,
    annotation_state VARCHAR   NOT NULL,
    created_at       TIMESTAMP NOT NULL,
    updated_at       TIMESTAMP NOT NULL,
    PRIMARY KEY (project_id, queue_item_id, annotator_id)
);
