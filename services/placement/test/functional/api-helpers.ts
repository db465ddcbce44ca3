import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import type { FastifyInstance } from 'fastify';
import { join } from 'node:path';
import { buildApp } from '../../src/adapters/http/app';

/** A Placement app on its own throwaway database, listening on a loopback port. */
export interface PlacementHarness {
  readonly app: FastifyInstance;
  readonly db: TestDatabase;
  /** One request as admin at `version` (default latest); answers status, headers and parsed JSON. */
  call(
    method: string,
    url: string,
    body?: unknown,
    opts?: { version?: string; token?: string | null; headers?: Record<string, string> },
  ): Promise<Reply>;
  close(): Promise<void>;
}

export interface Reply {
  status: number;
  headers: Record<string, unknown>;
  json: any;
}

/** Start the HTTP app on a fresh migrated placement database (`poolMax` connections). */
export async function startPlacement(prefix: string, poolMax = 10): Promise<PlacementHarness> {
  const db = await createTestDatabase({ kind: 'placement', migrationsDir: join(__dirname, '..', '..', 'migrations'), prefix, poolMax });
  const app = buildApp({ pool: db.pool });
  // NOTE: a real loopback socket (port 0) rather than fastify.inject: inject's cookie
  // dependency is ESM-only, which jest's CommonJS runtime cannot load.
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const call: PlacementHarness['call'] = async (method, url, body, opts = {}) => {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'openstack-api-version': `placement ${opts.version ?? 'latest'}`,
      ...opts.headers,
    };
    if (opts.token !== null) headers['x-auth-token'] = opts.token ?? 'admin';
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(base + url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, headers: Object.fromEntries(res.headers), json: text ? JSON.parse(text) : undefined };
  };
  return {
    app,
    db,
    call,
    close: async () => {
      await app.close();
      await db.drop();
    },
  };
}
