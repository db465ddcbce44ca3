import { listCellMappings } from '@cellsched/api-db';
import { findMigrations, listMigrationsByFilters, type MigrationFilters, type MigrationRecord } from '@cellsched/cell-db';
import { CELL0_UUID } from '@cellsched/config';
import { badRequest, notFound } from '../../domain/errors';
import {
  LIVE_MIGRATION_IN_PROGRESS,
  migrationsLinks,
  migrationView,
  parseMigrationQuery,
  serverMigrationView,
  type MigrationQuery,
} from '../../domain/migration-view';
import { inCell } from '../server-action-checks';
import { locateServer } from '../server-reader';
import type { ApiDeps, ApiReply, ApiRequest, Route } from './kit';
import { MAX_LIMIT } from './servers';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Nova's order of migration lists: created_at desc, id desc (uuid desc breaks ties between cells). Pure. */
function newestFirst(a: MigrationRecord, b: MigrationRecord): number {
  return b.createdAt.getTime() - a.createdAt.getTime() || b.id - a.id || (a.uuid < b.uuid ? 1 : a.uuid > b.uuid ? -1 : 0);
}

/** The marker migration, from whichever cell holds it (Nova's MarkerNotFound 400 otherwise). */
async function markerOf(deps: ApiDeps, marker: string, cells: Awaited<ReturnType<typeof listCellMappings>>): Promise<MigrationRecord> {
  const missing = badRequest(`Marker ${marker} could not be found.`);
  if (!UUID.test(marker)) throw missing;
  const found = await deps.cells.scatter(cells, (db) => findMigrations(db, { uuids: [marker] }));
  for (const r of found.values()) if (r.ok && r.value[0] !== undefined) return r.value[0];
  throw missing;
}

function filtersOf(q: MigrationQuery, after: MigrationRecord | undefined): MigrationFilters {
  return {
    statuses: q.status === undefined ? undefined : [q.status],
    host: q.host,
    sourceCompute: q.sourceCompute,
    migrationType: q.migrationType,
    instanceUuid: q.instanceUuid,
    userId: q.userId,
    projectId: q.projectId,
    changesSince: q.changesSince,
    changesBefore: q.changesBefore,
    after: after === undefined ? undefined : { createdAt: after.createdAt, id: after.id, uuid: after.uuid },
    limit: q.limit,
  };
}

/**
 * `GET /os-migrations` (admin): every cell's migrations, filtered as Nova's
 * `migration_get_all_by_filters`, newest first; from 2.59 paged with `limit`/`marker` (a
 * migration uuid) and `migrations_links`. A cell that does not answer is skipped (logged), as
 * Nova's scatter-gather does.
 */
async function list(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const q = parseMigrationQuery(req.query, req, MAX_LIMIT);
  const cells = (await listCellMappings(deps.apiDb)).filter((c) => c.uuid !== CELL0_UUID);
  const after = q.marker === undefined ? undefined : await markerOf(deps, q.marker, cells);
  const f = filtersOf(q, after);
  const results = q.hiddenOnly || q.limit === 0 ? new Map() : await deps.cells.scatter(cells, (db) => listMigrationsByFilters(db, f));
  const all: MigrationRecord[] = [];
  const down: string[] = [];
  for (const [cell, r] of results) {
    if (r.ok) all.push(...(r.value as MigrationRecord[]));
    else down.push(cell as string);
  }
  if (down.length > 0) deps.log.warn({ cell_uuids: down }, 'cells are not responding and hence skipped from the results');
  const page = all.sort(newestFirst).slice(0, q.limit ?? all.length);
  const body: Record<string, unknown> = { migrations: page.map((migration) => migrationView({ migration }, req)) };
  const next = q.limit === undefined ? [] : migrationsLinks(req.query, req, page, q.limit);
  if (next.length > 0) body.migrations_links = next;
  return { status: 200, body };
}

/** The server's live migrations in progress (Nova's `migration_get_in_progress_by_instance`, type live-migration), oldest first. */
async function liveInProgress(req: ApiRequest, deps: ApiDeps): Promise<{ uuid: string; migrations: MigrationRecord[] }> {
  const { record, mapping } = await locateServer(deps, req.params.id ?? '', req.caller);
  if (mapping.cell === undefined) return { uuid: record.uuid, migrations: [] };
  const rows = await inCell(deps, mapping.cell, `instance ${record.uuid}`, (db) => findMigrations(db, { instanceUuids: [record.uuid] }));
  return {
    uuid: record.uuid,
    migrations: rows.filter((m) => m.migrationType === 'live-migration' && LIVE_MIGRATION_IN_PROGRESS.includes(m.status)),
  };
}

/** `GET /servers/{id}/migrations` (2.23+, admin): the server's in-progress live migrations. */
async function serverList(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const { migrations } = await liveInProgress(req, deps);
  return { status: 200, body: { migrations: migrations.map((m) => serverMigrationView(m, req)) } };
}

/** `GET /servers/{id}/migrations/{migration_id}` (2.23+, admin): one in-progress live migration, else Nova's 404s. */
async function serverShow(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const id = req.params.migration_id ?? '';
  const { record, mapping } = await locateServer(deps, req.params.id ?? '', req.caller);
  const all =
    mapping.cell === undefined
      ? []
      : await inCell(deps, mapping.cell, `instance ${record.uuid}`, (db) => findMigrations(db, { instanceUuids: [record.uuid] }));
  const m = /^\d+$/.test(id) ? all.find((x) => x.id === Number(id)) : undefined;
  if (m === undefined) throw notFound(`In-progress live migration ${id} is not found for server ${record.uuid}.`);
  if (m.migrationType !== 'live-migration') throw notFound(`Migration ${id} for server ${record.uuid} is not live-migration.`);
  if (!LIVE_MIGRATION_IN_PROGRESS.includes(m.status)) throw notFound(`Live migration ${id} for server ${record.uuid} is not in progress.`);
  return { status: 200, body: { migration: serverMigrationView(m, req) } };
}

/** `/v2.1/os-migrations` and `/v2.1/servers/{id}/migrations[/{migration_id}]` (admin only, Nova's default policies). */
export const MIGRATION_ROUTES: readonly Route[] = [
  { method: 'GET', path: '/v2.1/os-migrations', handler: list, adminPolicy: 'os_compute_api:os-migrations:index' },
  {
    method: 'GET',
    path: '/v2.1/servers/:id/migrations',
    handler: serverList,
    minVersion: 23,
    adminPolicy: 'os_compute_api:servers:migrations:index',
  },
  {
    method: 'GET',
    path: '/v2.1/servers/:id/migrations/:migration_id',
    handler: serverShow,
    minVersion: 23,
    adminPolicy: 'os_compute_api:servers:migrations:show',
  },
];
