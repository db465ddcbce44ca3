import {
  ApiDbError,
  AZ_METADATA_KEY,
  createAggregate,
  deleteAggregate,
  getAggregateById,
  listAggregates,
  lockAggregates,
  renameAggregate,
  setAggregateMetadata,
  type Aggregate,
} from '@cellsched/api-db';
import { withTransaction } from '@cellsched/db';
import type { PoolClient } from 'pg';
import { aggregateId, parseAggregateCreate, parseAggregateUpdate } from '../../domain/aggregate-bodies';
import { invalidAggregateAction, zoneRefusal } from '../../domain/aggregate-zones';
import { badRequest, conflict, notFound } from '../../domain/errors';
import { atLeast, type Microversion } from '../../domain/microversion';
import { countInstancesOnHosts } from '../aggregate-hosts';
import type { ApiDeps, ApiReply, ApiRequest, Route } from './kit';

// Nova's os-aggregates (nova/api/openstack/compute/aggregates.py and AggregateAPI in
// nova/compute/api.py), admin-only: list, create, show, update (name, zone), delete. The
// actions (add_host, remove_host, set_metadata) are in aggregate-actions.ts.

/** Nova's timestamps: naive ISO with microseconds. */
const iso = (d: Date): string => d.toISOString().replace('Z', '000');

/**
 * Nova's aggregate view: `uuid` from 2.41; `hosts` and `metadata` but on create. `updated_at`
 * is null until the aggregate first changes, then the time of its last change.
 */
export function aggregateView(a: Aggregate, version: Microversion, opts: { created?: boolean } = {}): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: a.id,
    name: a.name,
    availability_zone: a.metadata[AZ_METADATA_KEY] ?? null,
    created_at: iso(a.createdAt),
    updated_at: a.changedAt === null ? null : iso(a.changedAt),
    deleted_at: null,
    deleted: false,
  };
  if (opts.created !== true) Object.assign(view, { hosts: [...a.hosts], metadata: { ...a.metadata } });
  if (atLeast(version, 41)) view.uuid = a.uuid;
  return view;
}

/** The aggregate named by the URL's id: Nova's 400 for a non-integer id, its 404 for an unknown one. */
export async function aggregateOf(req: ApiRequest, db: ApiDeps['apiDb'] | PoolClient): Promise<Aggregate> {
  const raw = req.params.aggregate_id ?? '';
  const a = await getAggregateById(db, aggregateId(raw));
  if (a === undefined) throw notFound(`Aggregate ${raw} could not be found.`);
  return a;
}

/** Runs `fn` holding the aggregates lock, so a zone check and the write it allows are one step. */
export function underAggregateLock<T>(deps: ApiDeps, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  return withTransaction(deps.apiDb, async (c) => {
    await lockAggregates(c);
    return fn(c);
  });
}

async function index(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  return { status: 200, body: { aggregates: (await listAggregates(deps.apiDb)).map((a) => aggregateView(a, req.version)) } };
}

/** POST: 200 (as Nova) with the aggregate, no hosts nor metadata; 409 for a name in use. */
async function create(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const c = parseAggregateCreate(req.body);
  try {
    const { aggregate } = await createAggregate(deps.apiDb, c);
    return { status: 200, body: { aggregate: aggregateView(aggregate, req.version, { created: true }) } };
  } catch (err) {
    if (err instanceof ApiDbError && err.code === 'api_db.aggregate.exists') throw conflict(`Aggregate ${c.name} already exists.`);
    throw err;
  }
}

/** PUT: the name and/or the zone (Nova's `update_aggregate`); every check before any write. */
async function update(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const u = parseAggregateUpdate(req.body);
  const id = aggregateId(req.params.aggregate_id ?? '');
  await underAggregateLock(deps, async (c) => {
    const a = await aggregateOf(req, c);
    if (u.availabilityZone !== undefined) {
      const refusal = await zoneRefusal(u.availabilityZone, a, await listAggregates(c), {
        checkInstances: true,
        instancesOnHosts: (h) => countInstancesOnHosts(deps, h),
      });
      if (refusal !== undefined) throw badRequest(invalidAggregateAction('update', a.id, refusal));
    }
    try {
      if (u.name !== undefined) await renameAggregate(c, a.uuid, u.name);
    } catch (err) {
      if (err instanceof ApiDbError && err.code === 'api_db.aggregate.exists') throw conflict(`Aggregate ${u.name ?? ''} already exists.`);
      throw err;
    }
    if (typeof u.availabilityZone === 'string') await setAggregateMetadata(c, a.uuid, { [AZ_METADATA_KEY]: u.availabilityZone });
  });
  const a = await getAggregateById(deps.apiDb, id);
  if (a === undefined) throw notFound(`Aggregate ${req.params.aggregate_id ?? ''} could not be found.`);
  return { status: 200, body: { aggregate: aggregateView(a, req.version) } };
}

/** DELETE: 200 with no body (as Nova); Nova's 400 while it still has hosts. */
async function remove(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  await underAggregateLock(deps, async (c) => {
    const a = await aggregateOf(req, c);
    if (a.hosts.length > 0) throw badRequest(invalidAggregateAction('remove', a.id, 'Host aggregate is not empty'));
    await deleteAggregate(c, a.uuid);
  });
  return { status: 200 };
}

const POLICY = 'os_compute_api:os-aggregates';

/** `/v2.1/os-aggregates[/{id}]` (the actions: AGGREGATE_ACTION_ROUTES). */
export const AGGREGATE_ROUTES: readonly Route[] = [
  { method: 'GET', path: '/v2.1/os-aggregates', handler: index, adminPolicy: `${POLICY}:index` },
  { method: 'POST', path: '/v2.1/os-aggregates', handler: create, adminPolicy: `${POLICY}:create` },
  {
    method: 'GET',
    path: '/v2.1/os-aggregates/:aggregate_id',
    handler: async (req, deps) => ({ status: 200, body: { aggregate: aggregateView(await aggregateOf(req, deps.apiDb), req.version) } }),
    adminPolicy: `${POLICY}:show`,
  },
  { method: 'PUT', path: '/v2.1/os-aggregates/:aggregate_id', handler: update, adminPolicy: `${POLICY}:update` },
  { method: 'DELETE', path: '/v2.1/os-aggregates/:aggregate_id', handler: remove, adminPolicy: `${POLICY}:delete` },
];
