-- The computes' resource tracker stats as HOT updates, as 009 did for the heartbeats. Every compute
-- reports the stats of the hosts that changed every 5 s and every host about once a minute; under
-- a 10,000-host build load that was the third costliest statement of the cell databases (44 ms for
-- a batch of ~24 changed rows, pg_stat_statements, e2e bench). With updated_at indexed every row
-- written added an entry to each of the table's five indexes. Without it (and with room in each
-- page) the rows are updated in place: a batch of 200 changed rows of a 5,000-host cell took
-- ~38 ms before and ~12 ms after (median of 12, same machine). The host cache's incremental read
-- (`updated_at > $1`) scans the cell's rows instead: ~2-3 ms either way at 5,000 hosts.
DROP INDEX IF EXISTS compute_nodes_updated_at_idx;
ALTER TABLE compute_nodes SET (fillfactor = 50);
