import { CELL0_UUID } from '@cellsched/config';
import type { CellMapping } from './cell-mappings';

/** A cell mapping that cannot be used as it is, and why (the others go on). */
export interface RefusedCell {
  readonly mapping: CellMapping;
  readonly reason: string;
}

/** How a process's open cells must change to match `cell_mappings` (see {@link planCellChanges}). */
export interface CellChanges {
  /** Mappings not open yet: open them. */
  readonly added: readonly CellMapping[];
  /** Open cells whose database or bus URL changed: open the new, then close the old. */
  readonly moved: readonly CellMapping[];
  /** Open cells whose name or `disabled` changed, same URLs: keep the connections, take the mapping. */
  readonly updated: readonly CellMapping[];
  /** Open cells whose mapping is gone: close them. */
  readonly removed: readonly CellMapping[];
  /** Mappings that are refused (bad URL, a database or vhost shared with another cell); an open one stays as it was. */
  readonly refused: readonly RefusedCell[];
}

const DB_SCHEMES = ['postgres:', 'postgresql:'];
const BUS_SCHEMES = ['amqp:', 'amqps:'];
const DEFAULT_PORTS: Readonly<Record<string, string>> = { 'postgres:': '5432', 'postgresql:': '5432', 'amqp:': '5672', 'amqps:': '5671' };

/** Where a URL leads, credentials aside (two users of one database are one database). Pure. */
function endpoint(url: URL): string {
  const path = decodeURIComponent(url.pathname.replace(/^\//, ''));
  const family = DB_SCHEMES.includes(url.protocol) ? 'db' : 'bus';
  return `${family}://${url.hostname.toLowerCase()}:${url.port || DEFAULT_PORTS[url.protocol] || ''}/${family === 'bus' ? path || '/' : path}`;
}

/** The endpoints a mapping uses (its database; its vhost unless cell0), or why it is unusable. Pure. */
function endpointsOf(m: CellMapping): string[] | string {
  if (!URL.canParse(m.databaseConnection) || !DB_SCHEMES.includes(new URL(m.databaseConnection).protocol))
    return 'database_connection is not a postgres URL';
  const out = [endpoint(new URL(m.databaseConnection))];
  if (m.uuid === CELL0_UUID) return out; // a database only (Nova's none:///)
  if (!URL.canParse(m.transportUrl) || !BUS_SCHEMES.includes(new URL(m.transportUrl).protocol)) return 'transport_url is not an amqp URL';
  return [...out, endpoint(new URL(m.transportUrl))];
}

/**
 * The mappings that cannot be used: an unusable URL, or a database or vhost that another
 * mapping uses too (every cell has its own; both are refused, the mistake could be either's).
 * Pure.
 */
export function refusedCells(mappings: readonly CellMapping[]): RefusedCell[] {
  const refused = new Map<string, RefusedCell>();
  const owner = new Map<string, CellMapping>();
  for (const m of mappings) {
    const eps = endpointsOf(m);
    if (typeof eps === 'string') {
      refused.set(m.uuid, { mapping: m, reason: eps });
      continue;
    }
    for (const ep of eps) {
      const other = owner.get(ep);
      if (other === undefined) {
        owner.set(ep, m);
        continue;
      }
      const reason = `${ep} is used by cells ${other.uuid} and ${m.uuid}; every cell needs its own database and vhost`;
      refused.set(m.uuid, { mapping: m, reason });
      if (!refused.has(other.uuid)) refused.set(other.uuid, { mapping: other, reason });
    }
  }
  return [...refused.values()];
}

/**
 * What changes between the open cells (`current`, by uuid) and a fresh read of
 * `cell_mappings` (`next`). A refused mapping changes nothing: a cell already open under a
 * good mapping stays open under it. Pure.
 */
export function planCellChanges(current: ReadonlyMap<string, CellMapping>, next: readonly CellMapping[]): CellChanges {
  const refused = refusedCells(next);
  const refusedUuids = new Set(refused.map((r) => r.mapping.uuid));
  const added: CellMapping[] = [];
  const moved: CellMapping[] = [];
  const updated: CellMapping[] = [];
  for (const m of next) {
    if (refusedUuids.has(m.uuid)) continue;
    const before = current.get(m.uuid);
    if (before === undefined) added.push(m);
    else if (before.databaseConnection !== m.databaseConnection || before.transportUrl !== m.transportUrl) moved.push(m);
    else if (before.name !== m.name || before.disabled !== m.disabled || before.id !== m.id) updated.push(m);
  }
  const present = new Set(next.map((m) => m.uuid));
  const removed = [...current.values()].filter((m) => !present.has(m.uuid));
  return { added, moved, updated, removed, refused };
}
