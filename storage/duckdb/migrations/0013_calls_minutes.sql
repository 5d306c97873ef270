-- Chart rollups (ADR 0027, storage/duckdb/minutes.go): each project's
-- calls summed per minute of their start, op and root flag, so a chart
-- over a day reads some thousand rows instead of every call.
--
-- call_minutes: calls, errors (calls with an exception) and the latency
-- histogram of the ended calls (storage/latencyhist's encoding).
CREATE TABLE IF NOT EXISTS call_minutes (
    project_id VARCHAR NOT NULL,
    minute     BIGINT  NOT NULL, -- whole minutes since the epoch
    op_name    VARCHAR,
    is_root    BOOLEAN NOT NULL,
    calls      BIGINT  NOT NULL,
    errors     BIGINT  NOT NULL,
    latency    BLOB
);
-- call_minute_usage: the same minutes' summary.usage sums per model.
CREATE TABLE IF NOT EXISTS call_minute_usage (
    project_id        VARCHAR NOT NULL,
    minute            BIGINT  NOT NULL,
    op_name           VARCHAR,
    is_root           BOOLEAN NOT NULL,
    model             VARCHAR,
    requests          BIGINT,
    prompt_tokens     BIGINT,
    completion_tokens BIGINT,
    total_tokens      BIGINT
);
-- call_minutes_dirty: minutes a write changed since their rollups were
-- computed, written in the write's transaction; reads compute these
-- minutes from the calls, and the rollup refresher recomputes and clears
-- them. Duplicates are allowed.
CREATE TABLE IF NOT EXISTS call_minutes_dirty (
    project_id VARCHAR NOT NULL,
    minute     BIGINT  NOT NULL
);
-- call_minutes_state: one row once the calls stored before the rollups
-- existed have all been marked dirty.
CREATE TABLE IF NOT EXISTS call_minutes_state (
    backfilled BOOLEAN NOT NULL
);
