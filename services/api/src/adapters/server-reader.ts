import {
  getBuildRequest,
  getInstanceMapping,
  getRequestSpec,
  getServerTaskIntent,
  listServerTaskIntents,
  listBuildRequests,
  listCellMappings,
  listInstanceMappings,
  type CellMapping,
  type InstanceMapping,
  type ServerTaskIntent,
} from '@cellsched/api-db';
import {
  getInstance,
  getLatestInstanceFaults,
  getService,
  listInstances,
  listServices,
  type InstanceRecord,
  type ServiceRecord,
} from '@cellsched/cell-db';
import { ServerActionRequest } from '@cellsched/wire';
import type { Caller } from '../domain/auth';
import { ApiError, badRequest, notFound } from '../domain/errors';
import { hostStatusOf } from '../domain/host-status';
import type { NameFilter } from '../domain/name-filter';
import { compareServers, withPendingAction, type PendingAction, type ServerRecord } from '../domain/server-record';
import { matchesStatus, type StatusFilter } from '../domain/server-status';
import type { Queryable } from '@cellsched/api-db';
import type { ApiDeps } from './http/kit';
import { buildRequestsNamed } from './name-match';
import { fromBuildRequest, fromInstance, fromMapping, fromRequestSpec } from './server-records';

const instanceNotFound = (uuid: string): Error => notFound(`Instance ${uuid} could not be found.`);

/** The nova-compute services of these hosts in one cell, by host (Nova reads them for host_status). */
async function computeServices(db: Queryable, rows: readonly InstanceRecord[]): Promise<Map<string, ServiceRecord>> {
  const hosts = [...new Set(rows.flatMap((r) => (r.host === null || r.host === '' ? [] : [r.host])))];
  if (hosts.length === 0) return new Map();
  const services =
    hosts.length === 1
      ? [await getService(db, hosts[0] as string, 'nova-compute')].filter((s) => s !== undefined)
      : await listServices(db, { binary: 'nova-compute', hosts });
  return new Map(services.map((s) => [s.host, s]));
}

/** Servers from their cell's rows: each with its latest fault (ERROR only) and its host's status. */
async function recordsOf(db: Queryable, rows: readonly InstanceRecord[]): Promise<ServerRecord[]> {
  const errored = rows.filter((r) => r.vmState === 'error').map((r) => r.uuid);
  const faults = errored.length > 0 ? await getLatestInstanceFaults(db, errored) : new Map();
  const services = await computeServices(db, rows);
  const now = Date.now();
  return rows.map((r) =>
    fromInstance(r, faults.get(r.uuid), hostStatusOf(r.host, r.host === null ? undefined : services.get(r.host), now)),
  );
}

async function readFromCell(db: Queryable, uuid: string): Promise<ServerRecord | undefined> {
  const inst = await getInstance(db, uuid);
  return inst === undefined ? undefined : (await recordsOf(db, [inst]))[0];
}

/** What the view needs of a pending server_task_intents row. Pure. */
export function pendingActionOf(i: ServerTaskIntent | undefined): PendingAction | undefined {
  if (i === undefined) return undefined;
  const req = ServerActionRequest.fromJSON(i.request);
  return { action: i.action, taskState: i.taskState, imageRef: req.imageRef, displayName: req.displayName };
}

/** A server as found, with its mapping (its cell, if it has one) and its pending action (already overlaid on the record). */
export interface LocatedServer {
  readonly record: ServerRecord;
  readonly mapping: InstanceMapping;
  readonly pending?: PendingAction;
}

/**
 * One server and its mapping: from its BuildRequest while it has no cell, else from its cell
 * (read-only) with its pending action (server_task_intents) overlaid. A caller of another
 * project gets the same 404 as for a missing one. A cell that does not answer in time gives
 * the UNKNOWN minimal record from the mapping, or what `onDownCell` makes of it.
 */
export async function locateServer(deps: ApiDeps, uuid: string, caller: Caller, onDownCell?: DownCellRead): Promise<LocatedServer> {
  if (!/^[0-9a-f-]{36}$/i.test(uuid)) throw instanceNotFound(uuid);
  for (let attempt = 0; attempt < 3; attempt++) {
    const mapping = await getInstanceMapping(deps.apiDb, uuid);
    if (mapping === undefined || (!caller.isAdmin && mapping.projectId !== caller.projectId)) throw instanceNotFound(uuid);
    if (mapping.cell === undefined) {
      const br = await getBuildRequest(deps.apiDb, uuid);
      if (br !== undefined) return { record: fromBuildRequest(br), mapping };
      continue; // NOTE: scheduled meanwhile: the mapping now points at a cell (or it was deleted).
    }
    // NOTE: the intent first, then the cell: the super-conductor clears an intent only after the
    // cell holds its state, so this order never sees neither (read together, a view could show the
    // server at rest right after the 202).
    const intent = await getServerTaskIntent(deps.apiDb, uuid);
    const found = await deps.cells.scatter([mapping.cell], (db) => readFromCell(db, uuid)).then((m) => m.get(mapping.cell?.uuid ?? ''));
    if (found === undefined || !found.ok)
      return { record: onDownCell === undefined ? fromMapping(mapping) : await onDownCell(mapping), mapping };
    if (found.value === undefined) throw instanceNotFound(uuid);
    // NOTE: a delete was accepted and cast; the super-conductor has not applied it yet.
    const pending = pendingActionOf(intent);
    const record = mapping.queuedForDelete ? { ...found.value, taskState: 'deleting' } : withPendingAction(found.value, pending);
    return { record, mapping, pending };
  }
  throw instanceNotFound(uuid);
}

/** What a read makes of a server whose cell did not answer (the mapping is all it has). */
export type DownCellRead = (mapping: InstanceMapping) => Promise<ServerRecord>;

/**
 * Nova's `GET /servers/{id}` of a server in a cell that did not answer (`_get_instance_from_cell`):
 * from 2.69 the minimal record, its flavor, image, zone and user from the RequestSpec (404 when
 * the server is being deleted or has no RequestSpec); before 2.69 Nova's 500.
 */
export function downCellShow(deps: ApiDeps, minimal: boolean): DownCellRead {
  return async (mapping) => {
    const cell = mapping.cell?.uuid ?? '';
    if (!minimal) {
      deps.log.warn(
        { cell_uuid: cell, instance_uuid: mapping.instanceUuid },
        'cell is not responding: instance info is not available below 2.69',
      );
      throw new ApiError(500, CELL_DOWN_FAULT);
    }
    if (mapping.queuedForDelete) throw instanceNotFound(mapping.instanceUuid);
    const spec = await getRequestSpec(deps.apiDb, mapping.instanceUuid);
    if (spec === undefined) throw instanceNotFound(mapping.instanceUuid);
    deps.log.warn({ cell_uuid: cell, instance_uuid: mapping.instanceUuid }, 'cell is not responding: only partial results are available');
    return fromRequestSpec(mapping, spec);
  };
}

/** Nova's answer when a show meets a down cell below 2.69 (its NovaException, unexpected in `show`). */
export const CELL_DOWN_FAULT =
  "Unexpected API Error. Please report this at http://bugs.launchpad.net/nova/ and attach the Nova API log if possible.\n<class 'nova.exception.NovaException'>";

/** One server for `GET /servers/{id}` ({@link locateServer} without the mapping). */
export async function readServer(deps: ApiDeps, uuid: string, caller: Caller, onDownCell?: DownCellRead): Promise<ServerRecord> {
  return (await locateServer(deps, uuid, caller, onDownCell)).record;
}

/** Filters of `GET /servers[/detail]`. `projectId` undefined: every project (admin all_tenants). */
export interface ListFilter {
  readonly projectId: string | undefined;
  /** Nova's `status` filter (judged after the pending actions are overlaid). */
  readonly status: StatusFilter | undefined;
  /** Nova's `name`: a PostgreSQL regular expression matched anywhere in the name (judged by PostgreSQL here). */
  readonly name: NameFilter | undefined;
  readonly limit: number;
  readonly marker: string | undefined;
  /** Nova's changes-since / changes-before (`updated_at` bounds; deleted servers are listed too). */
  readonly changesSince?: Date;
  readonly changesBefore?: Date;
  /**
   * Nova's `cell_down_support` (2.69, no filter but all_tenants, no paging or sorting): the servers
   * of a cell that did not answer come first as minimal records from their mappings. Else they are
   * skipped (Nova's default `[api] list_records_by_skipping_down_cells`).
   */
  readonly downCellRecords: boolean;
}

/** The page of servers plus the cells that did not answer. */
export interface ServerPage {
  readonly servers: readonly ServerRecord[];
  readonly downCells: readonly string[];
  readonly more: boolean;
}

async function markerPosition(deps: ApiDeps, marker: string, caller: Caller): Promise<ServerRecord> {
  try {
    return await readServer(deps, marker, caller);
  } catch {
    throw badRequest(`marker [${marker}] not found`);
  }
}

// NOTE: the name is matched by PostgreSQL (build requests and cells), never here.
function matches(r: ServerRecord, f: ListFilter): boolean {
  return f.status === undefined || (r.vmState !== 'unknown' && matchesStatus(f.status, r.vmState, r.taskState));
}

async function scatterCells(
  deps: ApiDeps,
  cells: readonly CellMapping[],
  f: ListFilter,
  after: ServerRecord | undefined,
): Promise<{ records: ServerRecord[]; down: string[] }> {
  const results = await deps.cells.scatter(cells, async (db) => {
    const rows = await listInstances(db, {
      projectId: f.projectId,
      vmStates: f.status?.vmStates,
      limit: f.limit + 1,
      displayNameRegex: f.name?.pattern,
      after: after === undefined ? undefined : { createdAt: after.createdAt, uuid: after.uuid },
      // NOTE: as Nova, changes-since/-before list the deleted servers too (their updated_at is the delete)
      changesSince: f.changesSince,
      changesBefore: f.changesBefore,
      includeDeleted: f.changesSince !== undefined || f.changesBefore !== undefined,
    });
    return recordsOf(db, rows);
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
 * Nova's `_generate_minimal_construct_for_down_cells`: the not-deleted mappings of the cells that
 * did not answer (of the project, unless all projects), at most `limit`, as UNKNOWN records.
 */
async function downCellRecords(
  deps: ApiDeps,
  down: readonly string[],
  projectId: string | undefined,
  limit: number,
): Promise<ServerRecord[]> {
  if (down.length === 0 || limit <= 0) return [];
  deps.log.warn({ cell_uuids: down }, 'cells are not responding: only partial results are available from them');
  const cells = new Set(down);
  const mappings = await listInstanceMappings(deps.apiDb, { projectId });
  return mappings
    .filter((m) => m.cell !== undefined && cells.has(m.cell.uuid))
    .slice(0, limit)
    .map(fromMapping);
}

/**
 * `GET /servers[/detail]` across every cell: build requests (not in a cell yet) plus a
 * scatter-gather of the cells with a per-cell timeout, sorted created_at desc, uuid desc. The
 * servers of a cell that did not answer are skipped, or (`downCellRecords`) prefixed as UNKNOWN
 * minimal records from their mappings, as Nova's `get_all` does.
 */
export async function listServers(deps: ApiDeps, f: ListFilter, caller: Caller): Promise<ServerPage> {
  const after = f.marker === undefined ? undefined : await markerPosition(deps, f.marker, caller);
  const isAfter = (r: ServerRecord): boolean => after === undefined || compareServers(after, r) < 0;
  const cells = await listCellMappings(deps.apiDb);
  // NOTE: with a name, the API DB judges the pattern first: an invalid one never reaches the cells.
  const buildRequests =
    f.name === undefined ? undefined : await buildRequestsNamed(deps.apiDb, f.projectId, f.name, deps.nameFilterTimeoutMs);
  // NOTE: pending intents before the cells (see locateServer)
  const intents = await listServerTaskIntents(deps.apiDb);
  const [listed, scattered] = await Promise.all([
    buildRequests ?? listBuildRequests(deps.apiDb, { projectId: f.projectId }),
    scatterCells(deps, cells, f, after),
  ]);
  const byUuid = new Map<string, ServerRecord>();
  for (const r of listed.map(fromBuildRequest)) byUuid.set(r.uuid, r);
  // NOTE: the cell wins over a stale build request; a pending action shows at once (as Nova's API saves it)
  for (const r of scattered.records) byUuid.set(r.uuid, withPendingAction(r, pendingActionOf(intents.get(r.uuid))));
  const all = [...byUuid.values()]
    .filter((r) => matches(r, f))
    .filter(isAfter)
    .sort(compareServers);
  const page = all.slice(0, f.limit);
  if (!f.downCellRecords) {
    if (scattered.down.length > 0)
      deps.log.warn({ cell_uuids: scattered.down }, 'cells are not responding and hence skipped from the results');
    return { servers: page, downCells: scattered.down, more: all.length > f.limit };
  }
  const listedHere = new Set(page.map((r) => r.uuid));
  const minimal = (await downCellRecords(deps, scattered.down, f.projectId, f.limit - page.length)).filter((r) => !listedHere.has(r.uuid));
  return { servers: [...minimal, ...page], downCells: scattered.down, more: all.length > f.limit };
}
