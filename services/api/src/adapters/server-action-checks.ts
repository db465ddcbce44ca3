import {
  AZ_METADATA_KEY,
  getFlavorByFlavorId,
  getImage,
  listAggregates,
  listFlavors,
  type CellMapping,
  type Flavor,
  type Queryable,
} from '@cellsched/api-db';
import { getService, listComputeNodes, listMigrationsByFilters, type MigrationRecord } from '@cellsched/cell-db';
import type { Caller } from '../domain/auth';
import { ApiError, badRequest, conflict, notFound } from '../domain/errors';
import type { ParsedServerAction } from '../domain/server-action';
import type { ServerRecord } from '../domain/server-record';
import { isUp } from './cell-hosts';
import type { ApiDeps } from './http/kit';

// The checks of Nova's compute API that need a database: flavors and images (API DB), hosts,
// services and migrations of the server's cell (read-only). Each throws Nova's error.

/** What the checks found that the cast needs (the new flavor of a resize). */
export interface CheckedAction {
  readonly flavor?: Flavor;
}

/** Runs `fn` on one cell (`what` it is asked about, for the error); a cell that does not answer is a 503 (nothing can be judged). */
export async function inCell<T>(deps: ApiDeps, cell: CellMapping, what: string, fn: (db: Queryable) => Promise<T>): Promise<T> {
  const r = (await deps.cells.scatter([cell], fn)).get(cell.uuid);
  if (r?.ok === false && r.error instanceof ApiError) throw r.error; // NOTE: fn's own verdict (Nova's 400/409), not the cell's silence
  if (r === undefined || !r.ok) throw new ApiError(503, `The cell of ${what} did not answer; try again later.`);
  return r.value;
}

const notReady = (uuid: string): Error => conflict(`Instance ${uuid} is not ready`);
const unavailable = (): Error => conflict('Service is unavailable at this time.');

/** Nova's `check_instance_host(check_is_up=True)`: the server's compute service must be up (409 otherwise). */
async function sourceIsUp(db: Queryable, r: ServerRecord): Promise<void> {
  if (r.host === null || r.host === '') throw notReady(r.uuid);
  const svc = await getService(db, r.host, 'nova-compute');
  if (svc === undefined || !isUp(svc)) throw unavailable();
}

/** Whether `host` is a compute host of this cell (it has a live compute node). */
async function isComputeHost(db: Queryable, host: string): Promise<boolean> {
  return (await listComputeNodes(db, { host })).length > 0;
}

/** The migration a confirmResize / revertResize acts on: the server's one in status `finished` (Nova's 400 otherwise). */
export async function finishedMigration(db: Queryable, uuid: string): Promise<MigrationRecord> {
  const [m] = await listMigrationsByFilters(db, { instanceUuid: uuid, statuses: ['finished'], limit: 1 });
  if (m === undefined) throw badRequest('Instance has not been resized.');
  return m;
}

/** resize: Nova's `flavors.get_flavor_by_flavor_id` (access included), same flavor, zero disk. */
async function newFlavor(deps: ApiDeps, p: ParsedServerAction, r: ServerRecord, caller: Caller): Promise<Flavor> {
  const ref = p.flavorRef ?? '';
  const missing = badRequest(`Flavor ${ref} could not be found.`);
  const flavor = await getFlavorByFlavorId(deps.apiDb, ref);
  if (flavor === undefined) throw missing;
  if (
    !flavor.isPublic &&
    !caller.isAdmin &&
    !(await listFlavors(deps.apiDb, { projectId: caller.projectId, includeDisabled: true })).some((f) => f.id === flavor.id)
  )
    throw missing;
  const current = r.flavor;
  if (current !== undefined && flavor.rootGb === 0 && current.rootGb !== 0)
    throw badRequest('Server disk was unable to be resized because: Resize to zero disk flavor is not allowed.');
  const same = current?.flavorid === flavor.flavorid;
  if (!same && flavor.disabled) throw missing;
  if (same) throw badRequest('When resizing, instances must change flavor!');
  return flavor;
}

/**
 * Checks Nova's controllers make before the compute API's state check (evacuate's destination,
 * 404/400), and the `check_instance_host` of stop/start. Throws Nova's error.
 */
export async function checkBeforeState(deps: ApiDeps, cell: CellMapping, p: ParsedServerAction, r: ServerRecord): Promise<void> {
  if (p.action !== 'evacuate') return;
  if (p.host !== undefined && !(await inCell(deps, cell, `instance ${r.uuid}`, (db) => isComputeHost(db, p.host ?? ''))))
    throw notFound(`Compute host ${p.host} not found.`);
  if ((p.host ?? null) === r.host) throw badRequest("The target host can't be the same one.");
}

/** Checks Nova's compute API makes after the state check, per action. Throws Nova's error. */
export async function checkAfterState(
  deps: ApiDeps,
  cell: CellMapping,
  p: ParsedServerAction,
  r: ServerRecord,
  caller: Caller,
): Promise<CheckedAction> {
  const cellDb = <T>(fn: (db: Queryable) => Promise<T>): Promise<T> => inCell(deps, cell, `instance ${r.uuid}`, fn);
  switch (p.action) {
    case 'resize': {
      await cellDb((db) => sourceIsUp(db, r));
      return { flavor: await newFlavor(deps, p, r, caller) };
    }
    case 'migrate':
      await cellDb(async (db) => {
        await sourceIsUp(db, r);
        if (p.host === undefined) return;
        if (p.host === r.host) throw badRequest('Cannot migrate to the host where the server exists.');
        if (!(await isComputeHost(db, p.host))) throw badRequest(`Compute host ${p.host} could not be found.`);
      });
      return {};
    case 'live-migration':
      if (p.host !== undefined && !(await cellDb((db) => isComputeHost(db, p.host ?? ''))))
        throw badRequest(`Compute host ${p.host} could not be found.`);
      return {};
    case 'evacuate':
      await cellDb(async (db) => {
        const svc = r.host === null ? undefined : await getService(db, r.host, 'nova-compute');
        if (svc !== undefined && isUp(svc)) throw badRequest(`Compute service of ${r.host ?? ''} is still in use.`);
      });
      return {};
    case 'confirmResize':
      await cellDb(async (db) => {
        const m = await finishedMigration(db, r.uuid);
        const source = m.sourceCompute === null ? undefined : await getService(db, m.sourceCompute, 'nova-compute');
        if (source === undefined || !isUp(source)) throw unavailable();
      });
      return {};
    case 'revertResize':
      await cellDb((db) => finishedMigration(db, r.uuid));
      return {};
    case 'rebuild':
      if ((await getImage(deps.apiDb, p.imageRef ?? '')) === undefined) throw badRequest('Cannot find image for rebuild');
      return {};
    case 'unshelve':
      await checkUnshelve(deps, cell, p, r);
      return {};
    default:
      return {};
  }
}

/** unshelve with a zone (2.77) or a host (2.91): only from SHELVED_OFFLOADED (409), the zone must exist, the host too (400). */
async function checkUnshelve(deps: ApiDeps, cell: CellMapping, p: ParsedServerAction, r: ServerRecord): Promise<void> {
  if (p.availabilityZone === undefined && p.host === undefined) return;
  if (r.vmState !== 'shelved_offloaded') {
    throw conflict(
      `Specifying an availability zone or a host when unshelving server "${r.uuid}" with status "${r.vmState === 'shelved' ? 'SHELVED' : r.vmState}" is not supported. The server status must be SHELVED_OFFLOADED.`,
    );
  }
  if (p.availabilityZone !== undefined) {
    const zones = new Set((await listAggregates(deps.apiDb)).flatMap((a) => a.metadata[AZ_METADATA_KEY] ?? []));
    zones.add(deps.defaultAvailabilityZone);
    if (!zones.has(p.availabilityZone)) throw badRequest('The requested availability zone is not available');
  }
  if (p.host !== undefined && !(await inCell(deps, cell, `instance ${r.uuid}`, (db) => isComputeHost(db, p.host ?? ''))))
    throw badRequest(`Compute host ${p.host} could not be found.`);
}
