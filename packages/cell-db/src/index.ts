/**
 * @cellsched/cell-db: a cell database's schema (migrations/, the same for cell0 and every
 * cell) and typed repositories. Every function takes a `Queryable` (a pg Pool, or a
 * PoolClient inside `withTransaction` to compose calls atomically). Only the cell's
 * conductor (and `cellsched-manage`) runs the migrations; the super-conductor, the API
 * (read-only) and the scheduler (read-only) use the repositories.
 */
export { CELL_DB_MIGRATIONS_DIR, CellDbError, checkUuid, type Queryable } from './db';
export { syncCellDb } from './sync';
export { CELL_DB_READERS, grantCellDbReads, isCellDbReader, type CellDbReader } from './readers';
export * from './vm-states';
export { toWireInstance, type InstanceRecord } from './instance-record';
export * from './instances';
export * from './instance-update';
export * from './instance-faults';
export * from './instance-actions';
export * from './server-actions';
export * from './services';
export {
  upsertComputeNode,
  updateComputeNodeStats,
  updateComputeNodesStats,
  type NodeStats,
  getComputeNode,
  listComputeNodes,
  deleteComputeNode,
  listUnmappedComputeHosts,
  markComputeNodesMapped,
  unmarkComputeNodesMapped,
  type ComputeNodeRecord,
  type ComputeNodeReport,
  type SupportedInstanceTriple,
} from './compute-nodes';
export * from './host-changes';
export * from './migration-records';
export * from './instance-tasks';
export * from './compute-processes';
export * from './host-usage';
