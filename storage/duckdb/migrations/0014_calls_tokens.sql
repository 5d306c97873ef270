-- summary.weave.total_tokens kept with the call (ADR 0028): the sum over
-- summary.usage's models of total_tokens, or prompt plus completion
-- tokens where total_tokens is 0; NULL without usage. The writer sets it
-- with a call's end (callTokens in calls_write.go); a sort or filter on
-- tokens reads this one column, and a page sorted by it is bounded by it
-- (sqlgen.SortBound). Rows written before get it once when the store
-- opens (storedTokens in callsfile.go).
ALTER TABLE calls ADD COLUMN IF NOT EXISTS total_tokens DOUBLE;
-- Columns filled once for the rows written before them, by name.
CREATE TABLE IF NOT EXISTS calls_columns_filled (column_name VARCHAR NOT NULL);
