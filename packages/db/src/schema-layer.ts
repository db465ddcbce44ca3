import type { QueryResult, QueryResultRow } from 'pg';

/**
 * Anything that runs a query: a `pg.Pool` (each call its own implicit transaction) or a
 * `pg.PoolClient` inside `withTransaction` (the caller composes several calls atomically).
 */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
}

/** Bad input to a schema layer's repository function (api-db, cell-db): nothing was written. `code` is stable. */
export class DbInputError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'DbInputError';
  }
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The uuid guards of one schema layer: they throw `fail(message)` for anything but a canonical uuid. */
export interface UuidChecks {
  /** `value` lowercased, or throws. */
  checkUuid(value: string, what: string): string;
  /** Every value lowercased, or throws at the first bad one. */
  checkUuids(values: readonly string[], what: string): string[];
}

/** Builds a schema layer's uuid guards around its own error (`fail` gets the message). Pure. */
export function uuidChecks(fail: (message: string) => Error): UuidChecks {
  const checkUuid = (value: string, what: string): string => {
    if (!UUID_RE.test(value)) throw fail(`${what} must be a uuid, got ${JSON.stringify(value)}`);
    return value.toLowerCase();
  };
  return { checkUuid, checkUuids: (values, what) => values.map((v) => checkUuid(v, what)) };
}
