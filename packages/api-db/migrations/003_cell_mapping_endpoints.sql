-- cell_mappings with the user and password taken out of both URLs: where each cell's database
-- and bus are, without the cell owner's credentials. A reader that must not hold those (the
-- scheduler's read-only role, which reads the cell DBs as itself) is granted this view and
-- not the table; the view runs with its owner's rights, so it needs no grant on cell_mappings.
CREATE VIEW cell_mapping_endpoints WITH (security_barrier) AS
SELECT c.id, c.uuid, c.name,
       regexp_replace(c.transport_url, '^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@', '\1') AS transport_url,
       regexp_replace(c.database_connection, '^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@', '\1') AS database_connection,
       c.disabled, c.created_at, c.updated_at
  FROM cell_mappings c;
