-- What a server create resolves first (its flavor with extra specs and access list, its image)
-- announced on change: every statement that writes flavors, flavor_extra_specs, flavor_projects or
-- images notifies the channel
-- `cellsched_catalogue` (payload: the table's name) when its transaction commits. The API keeps
-- the flavors and images it resolved and forgets them all on a notification, so a create does not
-- read them again each time (one round trip of the few a create costs) and still never sees a
-- change later than its commit plus the notification's delivery.
CREATE FUNCTION catalogue_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('cellsched_catalogue', TG_TABLE_NAME);
  RETURN NULL;
END $$;

CREATE TRIGGER flavors_catalogue_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON flavors
  FOR EACH STATEMENT EXECUTE FUNCTION catalogue_changed();
CREATE TRIGGER flavor_extra_specs_catalogue_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON flavor_extra_specs
  FOR EACH STATEMENT EXECUTE FUNCTION catalogue_changed();
CREATE TRIGGER flavor_projects_catalogue_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON flavor_projects
  FOR EACH STATEMENT EXECUTE FUNCTION catalogue_changed();
CREATE TRIGGER images_catalogue_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON images
  FOR EACH STATEMENT EXECUTE FUNCTION catalogue_changed();
