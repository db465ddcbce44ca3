-- Key-set pagination of server lists (created_at desc, uuid desc), the same order in every cell.
DROP INDEX IF EXISTS instances_created_at_idx;
CREATE INDEX instances_created_at_uuid_idx ON instances (created_at, uuid);
