-- Server lists page by (created_at, uuid) across cells, and the marker travels through the
-- API as a JavaScript Date: milliseconds. A created_at with microseconds sorted between the
-- marker's millisecond and its own value, so a row created in that same millisecond after
-- the marker's was skipped by the next page (seen: 6 of 7 listed). Stored to the millisecond,
-- the marker is exact and the (created_at, uuid) index still serves the order.
ALTER TABLE instances ALTER COLUMN created_at SET DEFAULT date_trunc('milliseconds', now());
UPDATE instances SET created_at = date_trunc('milliseconds', created_at) WHERE created_at <> date_trunc('milliseconds', created_at);
ALTER TABLE instances ADD CONSTRAINT instances_created_at_ms CHECK (created_at = date_trunc('milliseconds', created_at));
