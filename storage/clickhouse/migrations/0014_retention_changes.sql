-- Per-project retention set through /project/ttl_settings/update
-- (storage/ttl.go): appended, never rewritten, so a call's retention is
-- the change in force when it started; the processors stamp expire_at
-- from it. days = 0 keeps calls forever.
CREATE TABLE IF NOT EXISTS retention_changes (
    project_id String,
    days       UInt32,
    changed_at DateTime64(6, 'UTC'),
    changed_by String
)
ENGINE = MergeTree
ORDER BY (project_id, changed_at);
