import { listBuildRequests, type BuildRequest } from '@cellsched/api-db';
import { sqlState, withTransaction } from '@cellsched/db';
import type { Pool } from 'pg';
import { badRequest } from '../domain/errors';
import { notARegex, type NameFilter } from '../domain/name-filter';

/** SQLSTATEs of a pattern PostgreSQL refused to compile, and of a statement it cancelled on its timeout. */
const INVALID_REGULAR_EXPRESSION = '2201B';
const QUERY_CANCELED = '57014';

/**
 * The build requests of a project (or every project) whose name matches `name.pattern`, once
 * PostgreSQL has judged every value given: an invalid one is Nova's 400. The pattern is matched by
 * PostgreSQL's regex engine — the one Nova uses, and the one the cells match with — in a
 * read-only transaction bounded by `timeoutMs`, so no pattern can stall the api's event loop;
 * one PostgreSQL cannot match within `timeoutMs` is a 400 too. See the README ("name filter").
 */
export async function buildRequestsNamed(
  pool: Pool,
  projectId: string | undefined,
  name: NameFilter,
  timeoutMs: number,
): Promise<BuildRequest[]> {
  let judging = name.pattern;
  try {
    return await withTransaction(
      pool,
      async (c) => {
        await c.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
        for (const value of name.values) {
          judging = value;
          await c.query("SELECT '' ~ $1 AS compiles", [value]);
        }
        judging = name.pattern;
        return listBuildRequests(c, { projectId, displayNameRegex: name.pattern });
      },
      { readOnly: true, maxAttempts: 1 },
    );
  } catch (err) {
    const state = sqlState(err);
    if (state === INVALID_REGULAR_EXPRESSION) throw notARegex('name', judging, (err as Error).message);
    if (state === QUERY_CANCELED)
      throw badRequest(`Invalid input for query parameters name. Value: ${judging}. It could not be matched within ${timeoutMs} ms.`);
    throw err;
  }
}
