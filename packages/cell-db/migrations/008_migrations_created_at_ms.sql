-- os-migrations pages by (created_at, id, uuid) across cells, and the marker travels through the
-- API as a JavaScript Date: milliseconds. As for instances (005), a created_at with microseconds
-- sorted between the marker's millisecond and its own value, so a migration created in that same
-- millisecond just before the marker's was skipped by the next page (seen in CI: the page after
-- the newest of three returned the oldest). Stored to the millisecond, the marker is exact.
ALTER TABLE migrations ALTER COLUMN created_at SET DEFAULT date_trunc('milliseconds', now());
UPDATE migrations SET created_at = date_trunc('milliseconds', created_at) WHERE created_at <> date_trunc('milliseconds', created_at);
ALTER TABLE migrations ADD CONSTRAINT migrations_created_at_ms CHECK (created_at = date_trunc('milliseconds', created_at));
