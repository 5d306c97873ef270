-- One row per call. Start and end parts merge into the same row by
-- (project_id, id); has_start / has_end say which sides have arrived.
-- There is no primary key: uniqueness is kept by the single writer, which
-- inserts calls its id filter has never seen and merges the rest; an ART
-- index made every insert and checkpoint several times slower.
-- JSON payloads are stored as VARCHAR text: DuckDB's JSON type would be
-- parsed into Go values by the driver on every read; the json_* functions
-- work on VARCHAR as well.
-- The large text columns are zstd-compressed (a file of storage version
-- v1.5.0, see open.go): DuckDB's own choice for them was no compression
-- at all, which stored a span in more bytes than it took on the wire.
-- A table made before keeps its declarations (DuckDB then chooses
-- dictionary and FSST for these columns).
-- input_refs and output_refs hold a JSON array of ref URIs, NULL for none:
-- DuckDB updates a list column by deleting the row and inserting it again,
-- so with list columns every merge of a call part moved its row (see
-- refsAsText in callsfile.go, which converts a table made before).
CREATE TABLE IF NOT EXISTS calls (
    project_id      VARCHAR   NOT NULL,
    id              VARCHAR   NOT NULL,
    has_start       BOOLEAN   NOT NULL DEFAULT false,
    has_end         BOOLEAN   NOT NULL DEFAULT false,
    trace_id        VARCHAR,
    parent_id       VARCHAR,
    thread_id       VARCHAR,
    turn_id         VARCHAR,
    op_name         VARCHAR,
    display_name    VARCHAR,
    started_at      TIMESTAMP,
    ended_at        TIMESTAMP,
    attributes      VARCHAR,
    inputs          VARCHAR USING COMPRESSION zstd,
    output          VARCHAR USING COMPRESSION zstd,
    summary         VARCHAR,
    otel_dump       VARCHAR USING COMPRESSION zstd,
    exception       VARCHAR,
    wb_user_id      VARCHAR,
    wb_run_id       VARCHAR,
    wb_run_step     BIGINT,
    wb_run_step_end BIGINT,
    input_refs      VARCHAR,
    output_refs     VARCHAR,
    deleted_at      TIMESTAMP,
    expire_at       TIMESTAMP
);
