-- Change log of the allocation-candidates snapshot (adapters/sql/candidates-snapshot.ts).
-- Every write to what the snapshot is built from leaves a row stamped with the writing
-- transaction's id, whoever the writer is (any placement process, a direct SQL writer):
--   kind 'p': provider resource_provider_id changed (its row, inventories, allocations,
--             traits or aggregates; deleted providers too);
--   kind 'n': a name table changed (resource_classes, traits, placement_aggregates);
--   kind 'f': a table was truncated: reload everything.
-- A reader that loaded its snapshot with xmin X finds every change it has not seen among
-- the rows with xid >= X (a transaction not visible to that snapshot has an xid >= X),
-- whatever order the writers committed in.

CREATE TABLE candidate_changes (
  xid                   xid8        NOT NULL DEFAULT pg_current_xact_id(),
  kind                  "char"      NOT NULL CHECK (kind IN ('p', 'n', 'f')),
  resource_provider_id  integer,
  at                    timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'p') = (resource_provider_id IS NOT NULL))
);
CREATE INDEX candidate_changes_xid_idx ON candidate_changes (xid);

-- Rows with xid < pruned_below may have been deleted (pruning): a reader whose xmin is
-- below it cannot trust the log and reloads everything.
CREATE TABLE candidate_changes_horizon (
  singleton     boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  pruned_below  xid8    NOT NULL
);
INSERT INTO candidate_changes_horizon (singleton, pruned_below) VALUES (true, '0');

-- Provider-keyed tables: one row per distinct provider touched by the statement.
CREATE FUNCTION candidate_changes_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'resource_providers' THEN
    IF TG_OP = 'INSERT' THEN
      INSERT INTO candidate_changes (kind, resource_provider_id) SELECT DISTINCT 'p', id FROM new_rows;
    ELSIF TG_OP = 'DELETE' THEN
      INSERT INTO candidate_changes (kind, resource_provider_id) SELECT DISTINCT 'p', id FROM old_rows;
    ELSE
      INSERT INTO candidate_changes (kind, resource_provider_id)
        SELECT 'p', id FROM new_rows UNION SELECT 'p', id FROM old_rows;
    END IF;
  ELSE
    IF TG_OP = 'INSERT' THEN
      INSERT INTO candidate_changes (kind, resource_provider_id) SELECT DISTINCT 'p', resource_provider_id FROM new_rows;
    ELSIF TG_OP = 'DELETE' THEN
      INSERT INTO candidate_changes (kind, resource_provider_id) SELECT DISTINCT 'p', resource_provider_id FROM old_rows;
    ELSE
      INSERT INTO candidate_changes (kind, resource_provider_id)
        SELECT 'p', resource_provider_id FROM new_rows UNION SELECT 'p', resource_provider_id FROM old_rows;
    END IF;
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION candidate_changes_mark() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO candidate_changes (kind) VALUES (TG_ARGV[0]::"char");
  RETURN NULL;
END $$;

DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['resource_providers', 'inventories', 'allocations', 'resource_provider_traits', 'resource_provider_aggregates'] LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %I REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION candidate_changes_rows()', t || '_cc_ins', t);
    EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %I REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION candidate_changes_rows()', t || '_cc_upd', t);
    EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %I REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION candidate_changes_rows()', t || '_cc_del', t);
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION candidate_changes_mark(''f'')', t || '_cc_trunc', t);
  END LOOP;
  FOREACH t IN ARRAY ARRAY['resource_classes', 'traits', 'placement_aggregates'] LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %I FOR EACH STATEMENT EXECUTE FUNCTION candidate_changes_mark(''n'')', t || '_cc_names', t);
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION candidate_changes_mark(''f'')', t || '_cc_trunc', t);
  END LOOP;
END $$;

-- The log itself emptied (by hand): its rows are gone, so every reader must reload.
CREATE TRIGGER candidate_changes_trunc AFTER TRUNCATE ON candidate_changes
  FOR EACH STATEMENT EXECUTE FUNCTION candidate_changes_mark('f');
