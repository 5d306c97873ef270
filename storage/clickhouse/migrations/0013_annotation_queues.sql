-- Annotation queues: a project's queues of calls to review, the calls in
-- each (with the call fields the queue shows copied at add time), and
-- every annotator's progress on each item. As the automations tables,
-- each is a ReplacingMergeTree of whole rows read with FINAL: a change
-- inserts the row again with a higher version, and a soft delete inserts
-- it with deleted_at set. A progress row is keyed by its item and
-- annotator, so an annotator's update replaces their record.
CREATE TABLE IF NOT EXISTS annotation_queues (
    project_id  String,
    id          String,
    name        String,
    description String,
    scorer_refs Array(String),
    created_at  DateTime64(6, 'UTC'),
    created_by  String,
    updated_at  DateTime64(6, 'UTC'),
    deleted_at  Nullable(DateTime64(6, 'UTC')),
    version     UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, id);

CREATE TABLE IF NOT EXISTS annotation_queue_items (
    project_id      String,
    queue_id        String,
    id              String,
    call_id         String,
    call_started_at DateTime64(6, 'UTC'),
    call_ended_at   Nullable(DateTime64(6, 'UTC')),
    call_op_name    String,
    call_trace_id   String,
    display_fields  Array(String),
    added_by        Nullable(String),
    created_at      DateTime64(6, 'UTC'),
    created_by      String,
    updated_at      DateTime64(6, 'UTC'),
    deleted_at      Nullable(DateTime64(6, 'UTC')),
    version         UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, queue_id, id);

CREATE TABLE IF NOT EXISTS annotator_queue_items_progress (
    project_id       String,
    queue_id         String,
    queue_item_id    String,
    annotator_id     String,
    id               String,
    annotation_state LowCardinality(String),
    created_at       DateTime64(6, 'UTC'),
    updated_at       DateTime64(6, 'UTC'),
    version          UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, queue_id, queue_item_id, annotator_id);
