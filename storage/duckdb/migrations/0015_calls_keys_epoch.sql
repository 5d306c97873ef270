-- The epoch of the process that last opened the calls file, written when
-- it opens, before it takes writes (storage/duckdb/callkeys.go): a snapshot
-- of the call keys saved at a clean close is loaded only while the file
-- is still in the epoch it was saved in.
CREATE TABLE IF NOT EXISTS calls_keys_epoch (
    epoch VARCHAR NOT NULL
);
