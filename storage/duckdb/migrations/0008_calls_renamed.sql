-- renamed marks a call whose display name a /call/update (or an end that
-- carried one) set: a start that arrives later, or again, keeps it. A row
-- with neither side yet (has_start and has_end false) is an update or a
-- delete that came before its call: readers skip it until the start lands,
-- and its started_at is when it was written, so retention ages it out.
ALTER TABLE calls ADD COLUMN IF NOT EXISTS renamed BOOLEAN DEFAULT false;
