-- Files are content-addressed per project. An upload streams into
-- file_chunks (storage.FileChunkSize bytes a row) under a random upload_id,
-- because the digest is known only once the last byte has been read; the
-- files row, written last, makes the content visible under its digest. An
-- upload whose content the project has already, or that fails, deletes its
-- chunks (a file of one chunk is checked before it writes anything).
--
-- files is read with FINAL: one row per (project, digest).
CREATE TABLE IF NOT EXISTS files (
    project_id String,
    digest     String,
    name       String,
    size_bytes Int64,
    n_chunks   UInt32,
    upload_id  String,
    created_at DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree
ORDER BY (project_id, digest);

CREATE TABLE IF NOT EXISTS file_chunks (
    project_id  String,
    upload_id   String,
    chunk_index UInt32,
    val_bytes   String CODEC(ZSTD(1))
)
ENGINE = ReplacingMergeTree
ORDER BY (project_id, upload_id, chunk_index);
