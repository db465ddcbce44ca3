import {
  addAggregateHost,
  AZ_METADATA_KEY,
  getAggregateById,
  listAggregates,
  removeAggregateHost,
  setAggregateMetadata,
} from '@cellsched/api-db';
import { isObj, type Obj } from '../../domain/action-schema';
import { aggregateId, parseAggregateHost, parseAggregateMetadata } from '../../domain/aggregate-bodies';
import { invalidAggregateAction, zoneMoveRefusal, zoneRefusal } from '../../domain/aggregate-zones';
import { requireAdmin } from '../../domain/auth';
import { ApiError, badRequest, conflict, notFound } from '../../domain/errors';
import { countInstancesOnHosts, findComputeHost, mirrorHostAdded, mirrorHostRemoved } from '../aggregate-hosts';
import { aggregateOf, aggregateView, underAggregateLock } from './aggregates';
import { actionDispatcher, type ActionRoute, type ApiDeps, type ApiReply, type ApiRequest, type Route } from './kit';

// The os-aggregates actions, in Nova's order of checks (AggregateAPI in nova/compute/api.py):
// add_host and remove_host (mirrored on the host's compute node providers in placement) and
// set_metadata. Each answers the aggregate as it is afterwards.

async function answer(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const a = await getAggregateById(deps.apiDb, aggregateId(req.params.aggregate_id ?? ''));
  if (a === undefined) throw notFound(`Aggregate ${req.params.aggregate_id ?? ''} could not be found.`);
  return { status: 200, body: { aggregate: aggregateView(a, req.version) } };
}

/** add_host: the host (404), the aggregate (404), zones (409), instances changing zone (409), already a member (409); then placement. */
async function addHost(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const name = parseAggregateHost(req.body as Obj, 'add_host');
  aggregateId(req.params.aggregate_id ?? '');
  const host = await findComputeHost(deps, name);
  if (host === undefined) throw notFound(`Compute host ${name} could not be found.`);
  const aggregate = await underAggregateLock(deps, async (c) => {
    const a = await aggregateOf(req, c);
    const all = await listAggregates(c);
    const zone = a.metadata[AZ_METADATA_KEY];
    const refusal = zone === undefined ? undefined : await zoneRefusal(zone, a, all, { hosts: [name] });
    const move =
      refusal ??
      zoneMoveRefusal(
        'add',
        a,
        all.filter((x) => x.hosts.includes(name)),
        host.instances,
      );
    if (move !== undefined) throw conflict(invalidAggregateAction('add', a.id, move));
    if (a.hosts.includes(name)) throw conflict(`Aggregate ${a.id} already has host ${name}.`);
    await addAggregateHost(c, a.uuid, name);
    return a;
  });
  await mirrorHostAdded(deps, host, aggregate.uuid);
  deps.log.info({ aggregate: aggregate.uuid, host: name }, 'host added to aggregate');
  return answer(req, deps);
}

/** remove_host: Nova's one 404 for an unknown host, aggregate or membership; 409 if instances would change zone; placement first. */
async function removeHost(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const name = parseAggregateHost(req.body as Obj, 'remove_host');
  aggregateId(req.params.aggregate_id ?? '');
  const missing = notFound(`Cannot remove host ${name} in aggregate ${req.params.aggregate_id ?? ''}`);
  const host = await findComputeHost(deps, name);
  if (host === undefined) throw missing;
  const a = await aggregateOf(req, deps.apiDb).catch((err: unknown) => {
    throw err instanceof ApiError && err.status === 404 ? missing : err;
  });
  const all = await listAggregates(deps.apiDb);
  const move = zoneMoveRefusal(
    'remove',
    a,
    all.filter((x) => x.hosts.includes(name)),
    host.instances,
  );
  if (move !== undefined) throw conflict(invalidAggregateAction('remove', a.id, move));
  await mirrorHostRemoved(deps, host, a.uuid);
  if (!(await removeAggregateHost(deps.apiDb, a.uuid, name))) throw missing;
  deps.log.info({ aggregate: a.uuid, host: name }, 'host removed from aggregate');
  return answer(req, deps);
}

/** set_metadata: merges (null removes); a zone is checked as Nova's `is_safe_to_update_az` (400). */
async function setMetadata(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const metadata = parseAggregateMetadata(req.body as Obj);
  aggregateId(req.params.aggregate_id ?? '');
  await underAggregateLock(deps, async (c) => {
    const a = await aggregateOf(req, c);
    if (AZ_METADATA_KEY in metadata) {
      const refusal = await zoneRefusal(metadata[AZ_METADATA_KEY] ?? null, a, await listAggregates(c), {
        checkInstances: true,
        instancesOnHosts: (h) => countInstancesOnHosts(deps, h),
      });
      if (refusal !== undefined) throw badRequest(invalidAggregateAction('update_metadata', a.id, refusal));
    }
    await setAggregateMetadata(c, a.uuid, metadata);
  });
  return answer(req, deps);
}

const ACTIONS: ReadonlyMap<string, ActionRoute> = new Map([
  ['add_host', { handler: addHost, policy: 'os_compute_api:os-aggregates:add_host' }],
  ['remove_host', { handler: removeHost, policy: 'os_compute_api:os-aggregates:remove_host' }],
  ['set_metadata', { handler: setMetadata, policy: 'os_compute_api:os-aggregates:set_metadata' }],
]);

const dispatch = actionDispatcher(ACTIONS);

/** `POST /v2.1/os-aggregates/{id}/action`. */
export const AGGREGATE_ACTION_ROUTES: readonly Route[] = [
  { method: 'POST', path: '/v2.1/os-aggregates/:aggregate_id/action', handler: dispatch },
];
