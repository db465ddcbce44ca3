import { listCellMappings, type CellMapping } from '@cellsched/api-db';
import { getServiceById, hostUsage, listComputeNodes, type Queryable, type ServiceRecord } from '@cellsched/cell-db';
import { CELL0_UUID } from '@cellsched/config';
import { badRequest, conflict, notFound } from '../../domain/errors';
import { atLeast } from '../../domain/microversion';
import type { ApiDeps, ApiReply, ApiRequest } from './kit';

/** How long DELETE waits for the super-conductor to apply the delete before answering (Nova's delete is synchronous). */
export const SERVICE_DELETE_WAIT_MS = 10_000;

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const INSTANCES = 'Unable to delete compute service that is hosting instances. Migrate or delete the instances first.';
const MIGRATIONS = 'Unable to delete compute service that has in-progress migrations. Complete the migrations or delete the instances first.';

interface Located { service: ServiceRecord; cell: CellMapping }

/** The path id as Nova reads it: a uuid from 2.53, an integer before (400 otherwise, with Nova's messages). */
function parseId(req: ApiRequest): number | string {
  const raw = req.params.id ?? '';
  if (atLeast(req.version, 53)) {
    if (!UUID.test(raw)) throw badRequest(`Invalid uuid ${raw}`);
    const hex = raw.replaceAll('-', '').toLowerCase();
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  if (!/^\s*[-+]?\d+\s*$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw badRequest('Invalid input received: id must be an integer');
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
  const usage = await hostUsage(db, s.host, (await listComputeNodes(db, { host: s.host })).map((n) => n.hypervisorHostname));
  if (usage.instances > 0) throw conflict(INSTANCES);
  if (usage.migrations.length > 0) throw conflict(MIGRATIONS);
}

/** Waits (bounded) until the service is gone; if it is still there, a refusal that raced the cast answers as Nova would. */
async function awaitDeleted(deps: ApiDeps, at: Located): Promise<void> {
  const db = deps.cells.db(at.cell);
  const deadline = Date.now() + SERVICE_DELETE_WAIT_MS;
  while (Date.now() < deadline) {
    if (await getServiceById(db, at.service.uuid) === undefined) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  await assertUnused(db, at.service);
  // NOTE: still there, nothing in the way: the cast is durable and the super-conductor applies it when it gets to it
  deps.log.warn({ service_uuid: at.service.uuid, service_host: at.service.host }, 'service delete accepted but not applied yet');
}

/**
 * `DELETE /os-services/{id}` (admin: the route's `adminPolicy`): Nova's checks and errors (400 for a malformed id or an
 * integer id found in several cells, 404, 409 while the host has instances or in-progress
 * migrations), then a `delete_service` cast to the super-conductor, which does the deleting (the
 * api never writes a cell DB): the service and its compute nodes, the host's aggregates
 * membership and host mapping, its resource providers. Answers 204 once the service is gone.
 */
export async function deleteService(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const id = parseId(req);
  const found = await locate(deps, id);
  if (found.length > 1) throw badRequest(`Service id ${String(id)} refers to multiple services.`);
  const at = found[0];
  if (at === undefined) throw notFound(`Service ${String(id)} not found.`);
  await assertUnused(deps.cells.db(at.cell), at.service);
  await deps.conductor.deleteService({
    cellUuid: at.cell.uuid, serviceUuid: at.service.uuid, host: at.service.host, binary: at.service.binary, requestId: req.requestId,
  }, { timeoutMs: deps.castTimeoutMs });
  await awaitDeleted(deps, at);
  return { status: 204 };
}
