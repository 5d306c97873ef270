-- Files are content-addressed per project. The rows here say which project
-- has which digest; the bytes live beside the database in
-- DATA_DIR/files/<first two digest characters>/<digest>, shared by projects
-- that upload the same content. Blobs in a DuckDB table made every
-- checkpoint rewrite the stored content, so ingest slowed as files grew.
CREATE TABLE IF NOT EXISTS files (
    project_id  VARCHAR   NOT NULL,
    digest      VARCHAR   NOT NULL,
    name        VARCHAR   NOT NULL,
    size_bytes  BIGINT    NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (project_id, digest)
);
