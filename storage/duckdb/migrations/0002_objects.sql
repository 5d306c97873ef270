-- Object versions, one row per (project, object id, digest). A delete sets
-- deleted_at; re-publishing a deleted digest revives its row with a new
-- version_index. is_latest marks the one live version "latest" resolves to.
-- val_dump is the canonical (sorted-keys json.dumps) text that was hashed;
-- size_bytes is its length.
CREATE TABLE IF NOT EXISTS object_versions (
    project_id        VARCHAR   NOT NULL,
    object_id         VARCHAR   NOT NULL,
    digest            VARCHAR   NOT NULL,
    kind              VARCHAR   NOT NULL,
    base_object_class VARCHAR,
    leaf_object_class VARCHAR,
    val_dump          VARCHAR   NOT NULL,
    size_bytes        BIGINT    NOT NULL,
    version_index     BIGINT    NOT NULL,
    is_latest         BOOLEAN   NOT NULL,
    created_at        TIMESTAMP NOT NULL,
    deleted_at        TIMESTAMP,
    wb_user_id        VARCHAR,
    PRIMARY KEY (project_id, object_id, digest)
);

-- Tags label versions; removing a version removes its tags.
CREATE TABLE IF NOT EXISTS object_tags (
    project_id VARCHAR   NOT NULL,
    object_id  VARCHAR   NOT NULL,
    digest     VARCHAR   NOT NULL,
    tag        VARCHAR   NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (project_id, object_id, digest, tag)
);

-- Each user alias names exactly one version of an object. "latest" is not
-- stored here: it is object_versions.is_latest.
CREATE TABLE IF NOT EXISTS object_aliases (
    project_id VARCHAR   NOT NULL,
    object_id  VARCHAR   NOT NULL,
    alias      VARCHAR   NOT NULL,
    digest     VARCHAR   NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (project_id, object_id, alias)
);
