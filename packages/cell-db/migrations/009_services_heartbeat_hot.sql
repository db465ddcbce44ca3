-- Heartbeats as HOT updates. Every compute reports every service's liveness every 10 s (report_count,
-- last_seen_up, updated_at): at 5,000 hosts a cell that is 500 rows a second. With updated_at
-- indexed, each of those updates wrote a new entry in every index of the table (five), so a
-- process's batched heartbeat of 5,000 rows took ~130 ms of PostgreSQL on a quiet machine and
-- ~430 ms under load (pg_stat_statements, 10,000-host e2e bench), the largest statement of the
-- cell databases. Without an index on a column the heartbeat changes, and with room left in each
-- page (fillfactor 50), PostgreSQL updates the rows in place (heap-only tuples): ~22 ms for the
-- same 5,000 rows, and no index bloat for autovacuum to clean.
-- The host cache's incremental read (`updated_at > $1 AND id > $2 ORDER BY id`) walks the primary
-- key instead: the heartbeats touch every row every 10 s, so the index never narrowed it much
-- (a cell's 5,000 rows: ~2 ms with the index, ~3 ms without, on the same machine).
DROP INDEX IF EXISTS services_updated_at_idx;
ALTER TABLE services SET (fillfactor = 50);
