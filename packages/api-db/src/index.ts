/**
 * @cellsched/api-db: the API database's schema (migrations/) and typed repositories.
 * Every function takes a `Queryable` (a pg Pool, or a PoolClient inside `withTransaction`
 * to compose calls atomically). Only the API service (and `cellsched-manage`) runs the
 * migrations; the super-conductor reads and writes through these repositories too.
 */
export { API_DB_MIGRATIONS_DIR, ApiDbError, checkUuid, type Queryable } from './db';
export { syncApiDb } from './sync';
export * from './cell-mappings';
export * from './cell-mapping-endpoints';
export * from './cell-changes';
export * from './cell-set';
export * from './readers';
export * from './host-mappings';
export * from './instance-mappings';
export * from './build-requests';
export * from './request-specs';
export * from './flavors';
export * from './server-groups';
export * from './aggregates';
export * from './images';
export * from './discover-hosts';
export * from './server-task-intents';
