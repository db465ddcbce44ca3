import {
  getBuildRequest, getInstanceMapping, listBuildRequests, listCellMappings, listInstanceMappings, type CellMapping,
} from '@cellsched/api-db';
import { getInstance, getLatestInstanceFaults, listInstances, type VmStateName } from '@cellsched/cell-db';
import type { Caller } from '../domain/auth';
import { badRequest, notFound } from '../domain/errors';
import type { NameFilter } from '../domain/name-filter';
import { compareServers, type ServerRecord } from '../domain/server-record';
import type { Queryable } from '@cellsched/api-db';
import type { ApiDeps } from './http/kit';
import { buildRequestsNamed } from './name-match';
import { fromBuildRequest, fromInstance, fromMapping } from './server-records';

const instanceNotFound = (uuid: string): Error => notFound(`Instance ${uuid} could not be found.`);

async function readFromCell(db: Queryable, uuid: string): Promise<ServerRecord | undefined> {
  const inst = await getInstance(db, uuid);
  if (inst === undefined) return undefined;
  const faults = inst.vmState === 'error' ? await getLatestInstanceFaults(db, [uuid]) : new Map();
  return fromInstance(inst, faults.get(uuid));
}

/**
 * One server for `GET /servers/{id}`: from its BuildRequest while it has no cell, else from
 * its cell (read-only). A caller of another project gets the same 404 as for a missing one.
 * A cell that does not answer in time gives the UNKNOWN minimal record.
 */
export async function readServer(deps: ApiDeps, uuid: string, caller: Caller): Promise<ServerRecord> {
  if (!/^[0-9a-f-]{36}$/i.test(uuid)) throw instanceNotFound(uuid);
  for (let attempt = 0; attempt < 3; attempt++) {
    const mapping = await getInstanceMapping(deps.apiDb, uuid);
    if (mapping === undefined || (!caller.isAdmin && mapping.projectId !== caller.projectId)) throw instanceNotFound(uuid);
    if (mapping.cell === undefined) {
      const br = await getBuildRequest(deps.apiDb, uuid);
      if (br !== undefined) return fromBuildRequest(br);
      continue; // NOTE: scheduled meanwhile: the mapping now points at a cell (or it was deleted).
    }
    const found = (await deps.cells.scatter([mapping.cell], (db) => readFromCell(db, uuid))).get(mapping.cell.uuid);
    if (found === undefined || !found.ok) return fromMapping(mapping);
    if (found.value === undefined) throw instanceNotFound(uuid);
    // NOTE: a delete was accepted and cast; the super-conductor has not applied it yet.
    return mapping.queuedForDelete ? { ...found.value, taskState: 'deleting' } : found.value;
  }
  throw instanceNotFound(uuid);
}

/** Filters of `GET /servers[/detail]`. `projectId` undefined: every project (admin all_tenants). */
export interface ListFilter {
  readonly projectId: string | undefined;
  readonly vmStates: readonly VmStateName[] | undefined;
  /** Nova's `name`: a PostgreSQL regular expression matched anywhere in the name (judged by PostgreSQL here). */
  readonly name: NameFilter | undefined;
  readonly limit: number;
  readonly marker: string | undefined;
}

/** The page of servers plus the cells that did not answer. */
export interface ServerPage { readonly servers: readonly ServerRecord[]; readonly downCells: readonly string[]; readonly more: boolean }

async function markerPosition(deps: ApiDeps, marker: string, caller: Caller): Promise<ServerRecord> {
  try {
    return await readServer(deps, marker, caller);
  } catch {
    throw badRequest(`marker [${marker}] not found`);
  }
}

// NOTE: the name is matched by PostgreSQL (build requests and cells), never here.
function matches(r: ServerRecord, f: ListFilter): boolean {
  if (f.vmStates !== undefined && (r.vmState === 'unknown' || !f.vmStates.includes(r.vmState))) return false;
  return f.name === undefined || r.vmState !== 'unknown';
}

async function scatterCells(deps: ApiDeps, cells: readonly CellMapping[], f: ListFilter, after: ServerRecord | undefined): Promise<{ records: ServerRecord[]; down: string[] }> {
  const results = await deps.cells.scatter(cells, async (db) => {
    const rows = await listInstances(db, {
      projectId: f.projectId, vmStates: f.vmStates, limit: f.limit + 1, displayNameRegex: f.name?.pattern,
      after: after === undefined ? undefined : { createdAt: after.createdAt, uuid: after.uuid },
    });
    const errored = rows.filter((r) => r.vmState === 'error').map((r) => r.uuid);
    const faults = errored.length > 0 ? await getLatestInstanceFaults(db, errored) : new Map();
    return rows.map((r) => fromInstance(r, faults.get(r.uuid)));
  });
  const records: ServerRecord[] = [];
  const down: string[] = [];
  for (const [cellUuid, result] of results) {
    if (result.ok) records.push(...result.value);
    else down.push(cellUuid);
  }
  return { records, down };
}

/**
 * `GET /servers[/detail]` across every cell: build requests (not in a cell yet) plus a
 * scatter-gather of the cells with a per-cell timeout; the servers of a cell that did not
 * answer come back as UNKNOWN minimal records from their mappings (omitted when a status or
 * name filter is given, since they cannot be evaluated). Sorted created_at desc, uuid desc.
 */
export async function listServers(deps: ApiDeps, f: ListFilter, caller: Caller): Promise<ServerPage> {
  const after = f.marker === undefined ? undefined : await markerPosition(deps, f.marker, caller);
  const isAfter = (r: ServerRecord): boolean => after === undefined || compareServers(after, r) < 0;
  const cells = await listCellMappings(deps.apiDb);
  // NOTE: with a name, the API DB judges the pattern first: an invalid one never reaches the cells.
  const buildRequests = f.name === undefined ? undefined : await buildRequestsNamed(deps.apiDb, f.projectId, f.name, deps.nameFilterTimeoutMs);
  const [listed, scattered] = await Promise.all([
    buildRequests ?? listBuildRequests(deps.apiDb, { projectId: f.projectId }), scatterCells(deps, cells, f, after),
  ]);
  const byUuid = new Map<string, ServerRecord>();
  for (const r of listed.map(fromBuildRequest)) byUuid.set(r.uuid, r);
  for (const r of scattered.records) byUuid.set(r.uuid, r); // NOTE: the cell wins over a stale build request
  if (scattered.down.length > 0 && f.vmStates === undefined && f.name === undefined) {
    const down = new Set(scattered.down);
    for (const m of await listInstanceMappings(deps.apiDb, { projectId: f.projectId })) {
      if (m.cell !== undefined && down.has(m.cell.uuid) && !byUuid.has(m.instanceUuid)) byUuid.set(m.instanceUuid, fromMapping(m));
    }
  }
  const all = [...byUuid.values()].filter((r) => matches(r, f)).filter(isAfter).sort(compareServers);
  return { servers: all.slice(0, f.limit), downCells: scattered.down, more: all.length > f.limit };
}
