import type { MigrationFilters, MigrationRecord } from '@cellsched/cell-db';
import { atLeast } from './microversion';
import { lastValue, nextLink, onlyQueryKeys, parsePaging, singleValue, type Query } from './paging';
import { links, type ViewContext } from './server-view';

type Json = Record<string, unknown>;

/** Nova's datetime in migration views: `2016-06-23T14:42:02.000000` (UTC, microseconds, no zone). Pure. */
export const migrationTime = (d: Date): string =>
  d
    .toISOString()
    .replace('Z', '')
    .replace(/(\.\d{3})$/, '$1000');

/** Live-migration statuses Nova counts as in progress (views link them; `/servers/{id}/migrations` lists them). */
export const LIVE_MIGRATION_IN_PROGRESS: readonly string[] = ['queued', 'preparing', 'running', 'post-migrating'];

/** A migration as its cell holds it. */
export interface MigrationItem {
  readonly migration: MigrationRecord;
}

/**
 * One `GET /os-migrations` item in Nova's shape for the version: the base fields (the flavors'
 * integer ids as the migration recorded them: a resize's old and new, a migration's one twice,
 * none for an evacuation); from 2.23
 * `migration_type` and, for an in-progress live migration, `links` to
 * `/servers/{id}/migrations/{id}`; from 2.59 `uuid`; from 2.80 `user_id`/`project_id`. Pure.
 */
export function migrationView(item: MigrationItem, ctx: ViewContext): Json {
  const m = item.migration;
  const v: Json = {
    created_at: migrationTime(m.createdAt),
    dest_compute: m.destCompute,
    dest_host: m.destHost,
    dest_node: m.destNode,
    id: m.id,
    instance_uuid: m.instanceUuid,
    new_instance_type_id: m.newInstanceTypeId,
    old_instance_type_id: m.oldInstanceTypeId,
    source_compute: m.sourceCompute,
    source_node: m.sourceNode,
    status: m.status,
    updated_at: migrationTime(m.updatedAt),
  };
  if (atLeast(ctx.version, 23)) {
    v.migration_type = m.migrationType;
    if (m.migrationType === 'live-migration' && LIVE_MIGRATION_IN_PROGRESS.includes(m.status)) {
      v.links = links(ctx, `servers/${m.instanceUuid}/migrations`, String(m.id));
    }
  }
  if (atLeast(ctx.version, 59)) v.uuid = m.uuid;
  if (atLeast(ctx.version, 80)) Object.assign(v, { user_id: m.userId, project_id: m.projectId });
  return v;
}

/** One `GET /servers/{id}/migrations[/{id}]` item (Nova's server_migrations `output`; uuid from 2.59). Pure. */
export function serverMigrationView(m: MigrationRecord, ctx: ViewContext): Json {
  const v: Json = {
    created_at: migrationTime(m.createdAt),
    dest_compute: m.destCompute,
    dest_host: m.destHost,
    dest_node: m.destNode,
    disk_processed_bytes: null,
    disk_remaining_bytes: null,
    disk_total_bytes: null,
    id: m.id,
    memory_processed_bytes: null,
    memory_remaining_bytes: null,
    memory_total_bytes: null,
    server_uuid: m.instanceUuid,
    source_compute: m.sourceCompute,
    source_node: m.sourceNode,
    status: m.status,
    updated_at: migrationTime(m.updatedAt),
  };
  if (atLeast(ctx.version, 59)) v.uuid = m.uuid;
  if (atLeast(ctx.version, 80)) Object.assign(v, { user_id: m.userId, project_id: m.projectId });
  return v;
}

/**
 * The `GET /os-migrations` query, validated for the version: the cell databases' filters it maps
 * onto one to one (`limit` undefined below 2.59: no paging, every migration), and the REST-only keys.
 */
export interface MigrationQuery extends Pick<
  MigrationFilters,
  'host' | 'sourceCompute' | 'migrationType' | 'instanceUuid' | 'userId' | 'projectId' | 'changesSince' | 'changesBefore' | 'limit'
> {
  readonly status?: string;
  /** `hidden` asked truthy: Nova hides none of the migrations it shows, and there are no hidden ones here. */
  readonly hiddenOnly: boolean;
  readonly marker?: string;
}

/** Keys Nova's query schema knows, by version (additional keys are a 400 from 2.59). */
function knownKeys(minor: number): string[] {
  const keys = ['hidden', 'host', 'instance_uuid', 'source_compute', 'status', 'migration_type'];
  if (minor >= 59) keys.push('limit', 'marker', 'changes-since');
  if (minor >= 66) keys.push('changes-before');
  if (minor >= 80) keys.push('user_id', 'project_id');
  return keys;
}

/** Nova's `GET /os-migrations` query schema and paging for `ctx.version` (`maxLimit`: Nova's `[api] max_limit`). Pure. */
export function parseMigrationQuery(q: Query, ctx: ViewContext, maxLimit: number): MigrationQuery {
  const minor = ctx.version.major > 2 ? 1000 : ctx.version.minor;
  const known = knownKeys(minor);
  if (minor >= 59) onlyQueryKeys(q, known);
  const hidden = lastValue(q, 'hidden');
  const base: MigrationQuery = {
    status: lastValue(q, 'status'),
    host: lastValue(q, 'host'),
    sourceCompute: lastValue(q, 'source_compute'),
    migrationType: lastValue(q, 'migration_type'),
    instanceUuid: lastValue(q, 'instance_uuid'),
    hiddenOnly: hidden !== undefined && ['1', 'true', 't', 'on', 'yes', 'y'].includes(hidden.toLowerCase()),
  };
  if (minor < 59) return base;
  const paging = parsePaging(q, maxLimit, minor >= 66);
  return {
    ...base,
    ...paging,
    userId: minor >= 80 ? singleValue(q, 'user_id') : undefined,
    projectId: minor >= 80 ? singleValue(q, 'project_id') : undefined,
  };
}

/** Nova's `migrations_links`: a `next` link when the page is full (len == limit), its marker the last uuid. Pure. */
export function migrationsLinks(q: Query, ctx: ViewContext, page: readonly { uuid: string }[], limit: number): Json[] {
  return nextLink(q, `${ctx.baseUrl}/v2.1/os-migrations`, page[page.length - 1]?.uuid, page.length, limit);
}
