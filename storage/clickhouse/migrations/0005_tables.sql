-- Table rows, content-addressed per project. val_dump is the row as
-- Python's json.dumps prints it in received key order; size_bytes is its
-- length. A re-sent row is inserted again and merges collapse the copies;
-- until then reads take one row per digest (LIMIT 1 BY digest), so nothing
-- ever depends on the merge having run.
CREATE TABLE IF NOT EXISTS table_rows (
    project_id String,
    digest     String,
    val_dump   String CODEC(ZSTD(1)),
    size_bytes Int64,
    created_at DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree
ORDER BY (project_id, digest);

-- Tables are immutable ordered lists of row digests; every update makes a
-- new table. Paged reads slice row_digests on the server (arraySlice) and
-- fetch only the page's rows.
CREATE TABLE IF NOT EXISTS tables (
    project_id  String,
    digest      String,
    row_digests Array(String) CODEC(ZSTD(1)),
    created_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree
ORDER BY (project_id, digest);
