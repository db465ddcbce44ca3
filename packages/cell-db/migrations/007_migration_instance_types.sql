-- Nova's migrations.old_instance_type_id / new_instance_type_id: the integer ids (the API DB's
-- flavors.id, not flavorid) of the flavor the instance had and the one it moves to, as
-- `GET /os-migrations` shows them. Written once, when the migration is created: a resize's
-- new flavor; the instance's flavor twice for a cold or live migration; none for an
-- evacuation (Nova's API creates that record without them). NULL for rows created before.
ALTER TABLE migrations ADD COLUMN old_instance_type_id integer;
ALTER TABLE migrations ADD COLUMN new_instance_type_id integer;
