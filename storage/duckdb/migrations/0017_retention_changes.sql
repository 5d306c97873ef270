-- Per-project retention set through /project/ttl_settings/update
-- (storage/ttl.go): appended, never rewritten, so a call's retention is
-- the change in force when it started. days = 0 keeps calls forever.
CREATE TABLE IF NOT EXISTS retention_changes (
    project_id VARCHAR   NOT NULL,
    days       INTEGER   NOT NULL,
    changed_at TIMESTAMP NOT NULL,
    changed_by VARCHAR   NOT NULL
);
