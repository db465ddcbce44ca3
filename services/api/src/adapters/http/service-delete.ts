import { listCellMappings, type CellMapping } from '@cellsched/api-db';
import { getServiceById, hostUsage, listComputeNodes, type Queryable, type ServiceRecord } from '@cellsched/cell-db';
import { CELL0_UUID } from '@cellsched/config';
import { ApiError, badRequest, conflict, notFound } from '../../domain/errors';
import { atLeast } from '../../domain/microversion';
import type { ApiDeps, ApiReply, ApiRequest } from './kit';

/**
 * How long a change to os-services (PUT, DELETE) waits for the super-conductor to apply it (Nova
 * writes the cell DB synchronously); `ApiDeps.serviceWriteWaitMs` overrides it.
 */
export const SERVICE_WRITE_WAIT_MS = 10_000;

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const INSTANCES = 'Unable to delete compute service that is hosting instances. Migrate or delete the instances first.';
const MIGRATIONS =
  'Unable to delete compute service that has in-progress migrations. Complete the migrations or delete the instances first.';

interface Located {
  service: ServiceRecord;
  cell: CellMapping;
}

/** The path id as Nova reads it: a uuid from 2.53, an integer before (400 otherwise, with Nova's messages). */
function parseId(req: ApiRequest): number | string {
  const raw = req.params.id ?? '';
  if (atLeast(req.version, 53)) {
    if (!UUID.test(raw)) throw badRequest(`Invalid uuid ${raw}`);
    const hex = raw.replaceAll('-', '').toLowerCase();
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  if (!/^\s*[-+]?\d+\s*$/.test(raw) || !Number.isSafeInteger(Number(raw)))
    throw badRequest('Invalid input received: id must be an integer');
  return Number(raw);
}

/** The live service with this id in every cell that answers (an integer id may exist in several cells). */
async function locate(deps: ApiDeps, id: number | string): Promise<Located[]> {
  const cells = (await listCellMappings(deps.apiDb)).filter((c) => c.uuid !== CELL0_UUID);
  const found = await deps.cells.scatter(cells, (db) => getServiceById(db, id));
  return cells.flatMap((cell) => {
    const r = found.get(cell.uuid);
    return r?.ok === true && r.value !== undefined ? [{ service: r.value, cell }] : [];
  });
}

/** Nova's 409s: a compute service is not deleted while its host has instances or in-progress migrations. */
async function assertUnused(db: Queryable, s: ServiceRecord): Promise<void> {
  if (s.binary !== 'nova-compute') return;
  const usage = await hostUsage(
    db,
    s.host,
    (await listComputeNodes(db, { host: s.host })).map((n) => n.hypervisorHostname),
  );
  if (usage.instances > 0) throw conflict(INSTANCES);
  if (usage.migrations.length > 0) throw conflict(MIGRATIONS);
}

/**
 * Waits (bounded) for the super-conductor's outcome, polling the cell: the service row is the
 * last thing it deletes (after the aggregates, the resource providers and the host mapping), so
 * its absence means the whole delete is done (204). The host gaining an instance or a migration
 * meanwhile is the super-conductor's refusal: Nova's 409 at once. Still there at the bound: the
 * cast is queued (durable) but not applied, and the answer says so (503) instead of a 204 that
 * would claim the service is gone.
 */
async function awaitOutcome(deps: ApiDeps, at: Located): Promise<void> {
  const db = deps.cells.db(at.cell);
  await untilApplied(deps, at.service, 'delete', 'completed', async () => {
    if ((await getServiceById(db, at.service.uuid)) === undefined) return true;
    await assertUnused(db, at.service);
    return undefined;
  });
}

/**
 * Polls `probe` (every 50 ms, at most `serviceWriteWaitMs`) until it answers a value: how the api
 * waits for the super-conductor to apply an os-services change it cast. Not applied in time: a
 * 503 saying the change is queued (the cast is durable) and logged; `probe`'s own errors pass.
 */
export async function untilApplied<T>(
  deps: ApiDeps,
  service: ServiceRecord,
  what: 'update' | 'delete',
  done: string,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + (deps.serviceWriteWaitMs ?? SERVICE_WRITE_WAIT_MS);
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  deps.log.warn({ service_uuid: service.uuid, service_host: service.host }, `service ${what} queued but not applied in time`);
  throw new ApiError(
    503,
    `The ${what} of service ${service.uuid} (host ${service.host}) was accepted but not ${done} in time; it is applied when the conductor gets to it. Check the service list again later.`,
  );
}

/**
 * `DELETE /os-services/{id}` (admin: the route's `adminPolicy`): Nova's checks and errors (400 for a malformed id or an
 * integer id found in several cells, 404, 409 while the host has instances or in-progress
 * migrations), then a `delete_service` cast to the super-conductor, which does the deleting in
 * Nova's order (the api never writes a cell DB): the host's aggregates membership, its resource
 * providers, its host mapping, and last the service and its compute nodes. Answers 204 once the
 * service is gone (everything is done then), 409 if the super-conductor refused (the host got an
 * instance or a migration meanwhile), 503 if it did not finish within the bound.
 */
export async function deleteService(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const id = parseId(req);
  const found = await locate(deps, id);
  if (found.length > 1) throw badRequest(`Service id ${String(id)} refers to multiple services.`);
  const at = found[0];
  if (at === undefined) throw notFound(`Service ${String(id)} not found.`);
  await assertUnused(deps.cells.db(at.cell), at.service);
  await deps.conductor.deleteService(
    {
      cellUuid: at.cell.uuid,
      serviceUuid: at.service.uuid,
      host: at.service.host,
      binary: at.service.binary,
      requestId: req.requestId,
    },
    { timeoutMs: deps.castTimeoutMs },
  );
  await awaitOutcome(deps, at);
  return { status: 204 };
}
