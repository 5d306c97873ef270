-- Object versions, one row per (project, object id, digest), kept as
-- versions of a ReplacingMergeTree read with FINAL. Content never changes
-- under a digest; what changes (is_latest, deleted_at, and version_index
-- and created_at when a deleted digest is published again) is written by
-- inserting the whole row again with a higher version. One write inserts
-- every row it changes in one INSERT (the new latest and the old one), so
-- readers never see two latest versions or none.
--
-- A deleted version keeps its metadata (index, classes, dates) but not its
-- value: val_dump is '' in its deleted version, since no read returns a
-- deleted value and publishing the digest again brings the value back.
--
-- Keys: ORDER BY (project_id, object_id, digest) is the identity of a
-- version, so versions of one row collapse and every read, which names the
-- project first and usually the object, is a primary-key range.
CREATE TABLE IF NOT EXISTS object_versions (
    project_id        String,
    object_id         String,
    digest            String,
    version           UInt64,
    kind              LowCardinality(String),
    base_object_class Nullable(String),
    leaf_object_class Nullable(String),
    val_dump          String CODEC(ZSTD(1)),
    size_bytes        Int64,
    version_index     Int64,
    is_latest         Bool,
    created_at        DateTime64(6, 'UTC'),
    deleted_at        Nullable(DateTime64(6, 'UTC')),
    wb_user_id        Nullable(String)
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, object_id, digest);

-- Tags label versions. Removing a tag inserts a version with deleted = 1,
-- which FINAL reads drop; deleting an object version removes its tags.
CREATE TABLE IF NOT EXISTS object_tags (
    project_id String,
    object_id  String,
    digest     String,
    tag        String,
    created_at DateTime64(6, 'UTC'),
    version    UInt64,
    deleted    UInt8
)
ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (project_id, object_id, digest, tag);

-- Each alias names one version of an object; the key leaves the digest out,
-- so setting an alias again moves it. "latest" is not stored here: it is
-- object_versions.is_latest.
CREATE TABLE IF NOT EXISTS object_aliases (
    project_id String,
    object_id  String,
    alias      String,
    digest     String,
    created_at DateTime64(6, 'UTC'),
    version    UInt64,
    deleted    UInt8
)
ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (project_id, object_id, alias);
