/**
 * @cellsched/db: PostgreSQL pools that survive server restarts, a numbered-SQL migration
 * runner, a transaction helper that retries serialization failures and deadlocks, and
 * throwaway databases for tests.
 */
export { createPool, MAX_PREPARED_TEXTS, preparedName, type PoolOptions } from './pool';
export { DbInputError, uuidChecks, type Queryable, type UuidChecks } from './schema-layer';
export { runMigrations, type DbKind, type MigrateOptions } from './migrations';
export { readMigrationFiles, MigrationError, type MigrationFile } from './migration-files';
export { withTransaction, TransactionAbortedError, type TxOptions, type TxContext } from './transaction';
export { isRetryableTxError, isConnectionError, sqlState } from './pg-errors';
export { atStartup, withConnectionRetry, type ConnectionRetryOptions } from './connection-retry';
export { grantReadOnly, readOnlyUrl } from './read-only';
export { createTestDatabase, dropStaleTestDatabases, type TestDatabase, type TestDatabaseOptions } from './test-database';
export { GroupCommit, type GroupCommitStats } from './group-commit';
export { ChangeListener, type ChangeListenerOptions, type ListenerState } from './listener';
