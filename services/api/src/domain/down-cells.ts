import { atLeast, type Microversion } from './microversion';

/** Nova's `PAGING_SORTING_PARAMS` (servers.py). */
const PAGING_SORTING = ['sort_key', 'sort_dir', 'limit', 'marker'];

/** Nova's `_get_server_search_options`: what a non-admin may filter servers on (any other key is dropped). */
function memberOptions(v: Microversion): string[] {
  const opts = ['reservation_id', 'name', 'status', 'image', 'flavor', 'ip', 'changes-since', 'all_tenants'];
  if (atLeast(v, 5)) opts.push('ip6');
  if (atLeast(v, 26)) opts.push('tags', 'tags-any', 'not-tags', 'not-tags-any');
  if (atLeast(v, 66)) opts.push('changes-before');
  return opts;
}

/**
 * Nova's `_is_cell_down_supported` for `GET /servers[/detail]`: from 2.69, a list asking for no
 * paging or sorting and no filter but `all_tenants` (after a member's unknown keys are dropped,
 * as Nova's `remove_invalid_options` does) shows the servers of a cell that did not answer as
 * minimal records; any other list skips them. Pure.
 */
export function listShowsDownCells(queryKeys: readonly string[], isAdmin: boolean, v: Microversion): boolean {
  if (!atLeast(v, 69) || queryKeys.some((k) => PAGING_SORTING.includes(k))) return false;
  const allowed = memberOptions(v);
  const filters = queryKeys.filter((k) => isAdmin || allowed.includes(k));
  return filters.every((k) => k === 'all_tenants');
}
