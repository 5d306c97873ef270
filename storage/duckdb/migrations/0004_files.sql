-- Files are content-addressed per project. Content is stored in chunks of
-- storage.FileChunkSize bytes under a content id chosen when the upload
-- starts, because the digest is only known once the last byte is read:
-- chunks are written as they arrive and the files row, written last,
-- makes them visible. Chunks whose content id no files row names are
-- leftovers of failed uploads and are swept.
CREATE TABLE IF NOT EXISTS files (
    project_id  VARCHAR   NOT NULL,
    digest      VARCHAR   NOT NULL,
    name        VARCHAR   NOT NULL,
    size_bytes  BIGINT    NOT NULL,
    n_chunks    INTEGER   NOT NULL,
    content_id  VARCHAR   NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (project_id, digest)
);

CREATE TABLE IF NOT EXISTS file_chunks (
    project_id  VARCHAR   NOT NULL,
    content_id  VARCHAR   NOT NULL,
    chunk_index INTEGER   NOT NULL,
    data        BLOB      NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (content_id, chunk_index)
);
