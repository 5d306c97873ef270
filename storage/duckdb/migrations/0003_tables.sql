-- Table rows, content-addressed per project. val_dump is the row as
-- Python's json.dumps prints it in received key order; size_bytes is its
-- length (the storage size the stats endpoints report).
CREATE TABLE IF NOT EXISTS table_rows (
    project_id VARCHAR   NOT NULL,
    digest     VARCHAR   NOT NULL,
    val_dump   VARCHAR   NOT NULL,
    size_bytes BIGINT    NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (project_id, digest)
);

-- Tables are immutable ordered lists of row digests; every update makes a
-- new table.
CREATE TABLE IF NOT EXISTS tables (
    project_id  VARCHAR   NOT NULL,
    digest      VARCHAR   NOT NULL,
    row_digests VARCHAR[] NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (project_id, digest)
);
