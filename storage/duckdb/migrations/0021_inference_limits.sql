-- The inference gateway's shared rate counts (one row per limit, window
-- and replica, replaced as the replica publishes) and the limits the
-- admin API set (one row, name 'limits').
CREATE TABLE IF NOT EXISTS inference_rate_counts (
    scope        VARCHAR   NOT NULL,
    window_start TIMESTAMP NOT NULL,
    replica      VARCHAR   NOT NULL,
    requests     BIGINT    NOT NULL,
    tokens       BIGINT    NOT NULL,
    PRIMARY KEY (scope, window_start, replica)
);

CREATE TABLE IF NOT EXISTS inference_settings (
    name       VARCHAR   NOT NULL PRIMARY KEY,
    doc        VARCHAR   NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    updated_by VARCHAR   NOT NULL
);
