// A whole compute API over real PostgreSQL (API DB, cell0, cell1, plus a cell whose DB never
// answers) and a private RabbitMQ vhost on which a fake super-conductor records every cast.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { promisify } from 'node:util';
import { SuperConductorClient } from '@cellsched/api-clients';
import { API_DB_MIGRATIONS_DIR, CATALOGUE_CHANNEL, createCellMapping, getCellMapping, type CellMapping } from '@cellsched/api-db';
import { Bus, type CastSubscription } from '@cellsched/bus';
import { CELL_DB_MIGRATIONS_DIR, getService, setServiceDisabled, setServiceForcedDown } from '@cellsched/cell-db';
import { ChangeListener, createPool, createTestDatabase, type TestDatabase } from '@cellsched/db';
import type { Pool } from 'pg';
import {
  SuperConductorServiceService,
  type DeleteInstanceRequest,
  type DeleteServiceRequest,
  type ScheduleAndBuildInstancesRequest,
  type ServerActionRequest,
  type UpdateServiceRequest,
} from '@cellsched/wire';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { CastRetrier } from '../../src/adapters/cast-retrier';
import { CatalogueCache } from '../../src/adapters/catalogue-cache';
import { PgCellDatabases } from '../../src/adapters/cell-databases';
import { CreateWriter } from '../../src/adapters/create-writer';
import { buildApp } from '../../src/adapters/http/app';
import type { ApiDeps } from '../../src/adapters/http/kit';

const run = promisify(execFile);
const AMQP_URL = process.env.CELLSCHED_TEST_AMQP_URL ?? 'amqp://cellsched:cellsched@127.0.0.1:5672/';
export const CELL0_UUID = '00000000-0000-0000-0000-000000000000';
export const IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6';
export const silent = pino({ level: process.env.API_TEST_LOG ?? 'silent' });

/** Casts the fake super-conductor received, in order. */
export interface Seen {
  schedule: ScheduleAndBuildInstancesRequest[];
  deletes: DeleteInstanceRequest[];
  services: UpdateServiceRequest[];
  serviceDeletes: DeleteServiceRequest[];
  actions: ServerActionRequest[];
}

/** A response as the tests read it. */
export interface Res {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  json(): unknown;
}

export interface Harness {
  app: FastifyInstance;
  /** `http://127.0.0.1:<port>` of the listening app. */
  base: string;
  /** One HTTP request over loopback (fastify.inject's cookie dependency is ESM-only, which jest's CommonJS runtime cannot load). */
  inject(r: { method?: string; url: string; headers?: Record<string, string>; payload?: unknown }): Promise<Res>;
  /** One HTTP request with exactly these headers and body bytes (no content type added); `chunked` sends no Content-Length. */
  raw(r: RawRequest): Promise<Res>;
  deps: ApiDeps;
  /** The fake placement's provider aggregates (provider uuid → aggregate uuids), as the api mirrored them. */
  providerAggregates: Map<string, Set<string>>;
  apiDb: TestDatabase;
  cell0: TestDatabase;
  cell1: TestDatabase;
  cells: { cell0: CellMapping; cell1: CellMapping; down: CellMapping };
  seen: Seen;
  /** Hosts whose `update_service` casts the fake super-conductor records but does not apply (a conductor that is behind). */
  stalledServiceHosts: Set<string>;
  /** Starts the fake super-conductor (already running unless `lateConductor`). */
  startConductor(): Promise<void>;
  /**
   * Resolves once every catalogue notification committed before the call has reached the api's
   * cache (a probe notification is sent and waited for: they arrive in commit order).
   */
  catalogueHeard(): Promise<void>;
  close(): Promise<void>;
}

/** A request sent byte for byte by {@link Harness.raw}. */
export interface RawRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  chunked?: boolean;
}

function rawRequest(base: string, r: RawRequest): Promise<Res> {
  return new Promise((resolve, reject) => {
    const body = r.body === undefined ? undefined : Buffer.from(r.body);
    const headers: Record<string, string> = { ...r.headers };
    if (body !== undefined && r.chunked !== true) headers['content-length'] = String(body.length);
    const req = httpRequest(base + r.url, { method: r.method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const h = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
        resolve({ statusCode: res.statusCode ?? 0, headers: h, body: text, json: () => JSON.parse(text) as unknown });
      });
      res.on('error', reject);
    });
    // NOTE: the server may answer (413) and close before the whole body is written: the answer counts, not the write.
    req.on('error', reject);
    if (body !== undefined && r.chunked === true) {
      for (let i = 0; i < body.length; i += 64 * 1024) req.write(body.subarray(i, i + 64 * 1024));
    } else if (body !== undefined) req.write(body);
    req.end();
  });
}

async function rabbitmqctl(...args: string[]): Promise<void> {
  await run('rabbitmqctl', args, { timeout: 120_000 });
}

/** A TCP server that accepts connections and never answers (a hung cell DB). */
async function blackhole(): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  return { server, port: typeof address === 'object' && address !== null ? address.port : 0, sockets };
}

/**
 * Plays the super-conductor's `update_service`: writes the change in the service's cell DB (the
 * api waits to see it there), except for the hosts in `stalled` (a conductor that is behind).
 */
async function applyServiceUpdate(
  req: UpdateServiceRequest,
  apiDb: TestDatabase,
  writers: Map<string, Pool>,
  stalled: Set<string>,
): Promise<void> {
  const mapping = await getCellMapping(apiDb.pool, req.cellUuid);
  if (mapping === undefined || stalled.has(req.host)) return;
  // NOTE: its own pool: the api's cell pools are read-only, as in a deployment
  let db = writers.get(mapping.uuid);
  if (db === undefined)
    writers.set(mapping.uuid, (db = createPool({ url: mapping.databaseConnection, max: 1, applicationName: 'fake-super-conductor' })));
  const svc = await getService(db, req.host, req.binary);
  if (svc === undefined) return;
  if (req.onlyForcedDown !== true) await setServiceDisabled(db, svc.id, req.disabled, req.disabled ? req.disabledReason || null : null);
  if (req.forcedDown !== undefined) await setServiceForcedDown(db, svc.id, req.forcedDown);
}

async function startConductor(bus: Bus, seen: Seen, applyUpdate: (req: UpdateServiceRequest) => Promise<void>): Promise<CastSubscription> {
  return bus.serve(SuperConductorServiceService, {
    scheduleAndBuildInstances: async (req) => {
      seen.schedule.push(req);
    },
    deleteInstance: async (req) => {
      seen.deletes.push(req);
    },
    updateService: async (req) => {
      seen.services.push(req);
      await applyUpdate(req);
    },
    deleteService: async (req) => {
      seen.serviceDeletes.push(req);
    },
    serverAction: async (req) => {
      seen.actions.push(req);
    },
  });
}

/** Starts everything; `prefix` names the databases and vhost. */
export async function startHarness(prefix: string, opts: { lateConductor?: boolean } = {}): Promise<Harness> {
  const undo: (() => Promise<unknown>)[] = [];
  try {
    return await start(prefix, opts, undo);
  } catch (err) {
    // NOTE: a half-started harness (e.g. a slow machine hit the hook timeout) leaves nothing behind.
    for (const u of undo.reverse()) await u().catch(() => undefined);
    throw err;
  }
}

async function start(prefix: string, opts: { lateConductor?: boolean }, undo: (() => Promise<unknown>)[]): Promise<Harness> {
  const vhost = `api-${prefix}-${randomBytes(4).toString('hex')}`;
  await rabbitmqctl('add_vhost', vhost);
  undo.push(() => rabbitmqctl('delete_vhost', vhost));
  await rabbitmqctl('set_permissions', '-p', vhost, decodeURIComponent(new URL(AMQP_URL).username), '.*', '.*', '.*');
  const url = new URL(AMQP_URL);
  url.pathname = `/${vhost}`;
  const db = async (o: Parameters<typeof createTestDatabase>[0]): Promise<TestDatabase> => {
    const d = await createTestDatabase(o);
    undo.push(() => d.drop());
    return d;
  };
  const apiDb = await db({ kind: 'api', migrationsDir: API_DB_MIGRATIONS_DIR, prefix: `api_${prefix}` });
  const cell0 = await db({ kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR, prefix: `c0_${prefix}` });
  const cell1 = await db({ kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR, prefix: `c1_${prefix}` });
  const hole = await blackhole();
  undo.push(() => new Promise((r) => hole.server.close(r)));
  const cells = {
    cell0: (
      await createCellMapping(apiDb.pool, { uuid: CELL0_UUID, name: 'cell0', transportUrl: 'none:///', databaseConnection: cell0.url })
    ).cell,
    cell1: (await createCellMapping(apiDb.pool, { name: 'cell1', transportUrl: 'amqp://x@127.0.0.1/cell1', databaseConnection: cell1.url }))
      .cell,
    down: (
      await createCellMapping(apiDb.pool, {
        name: 'cell2',
        transportUrl: 'amqp://x@127.0.0.1/cell2',
        databaseConnection: `postgres://u:p@127.0.0.1:${hole.port}/nope`,
      })
    ).cell,
  };
  const bus = await Bus.connect({ url: url.toString(), logger: silent, name: 'api-test' });
  undo.push(() => bus.close());
  const seen: Seen = { schedule: [], deletes: [], services: [], serviceDeletes: [], actions: [] };
  const cellDbs = new PgCellDatabases({ timeoutMs: 800, poolSize: 2 });
  const stalledServiceHosts = new Set<string>();
  const writers = new Map<string, Pool>();
  undo.push(() => Promise.all([...writers.values()].map((p) => p.end())));
  const applyUpdate = (req: UpdateServiceRequest): Promise<void> => applyServiceUpdate(req, apiDb, writers, stalledServiceHosts);
  let sub: CastSubscription | undefined = opts.lateConductor === true ? undefined : await startConductor(bus, seen, applyUpdate);
  const startLate = async (): Promise<void> => {
    sub ??= await startConductor(bus, seen, applyUpdate);
  };
  const retrier = new CastRetrier(silent, [50, 100, 200]);
  const providerAggregates = new Map<string, Set<string>>();
  const placement: ApiDeps['placement'] = {
    addProviderAggregate: async (rp, agg) => {
      providerAggregates.set(rp, (providerAggregates.get(rp) ?? new Set()).add(agg));
    },
    removeProviderAggregate: async (rp, agg) => {
      providerAggregates.get(rp)?.delete(agg);
    },
  };
  // as in main.ts: flavors and images kept between creates while the catalogue's changes are heard
  const catalogue = new CatalogueCache({ db: apiDb.pool });
  const probesHeard = new Set<string>();
  let probes = 0;
  const catalogueListener = new ChangeListener({
    url: apiDb.url,
    channel: CATALOGUE_CHANNEL,
    onNotify: (payload) => {
      if (payload.startsWith('probe-')) probesHeard.add(payload);
      catalogue.invalidate();
    },
    onState: (state) => catalogue.setListening(state === 'listening'),
  });
  catalogueListener.start();
  undo.push(() => catalogueListener.close());
  await waitFor('the catalogue listener', () => (catalogueListener.listening ? true : undefined));
  const deps: ApiDeps = {
    apiDb: apiDb.pool,
    cells: cellDbs,
    conductor: new SuperConductorClient(bus),
    retrier,
    creates: new CreateWriter(apiDb.pool),
    catalogue,
    placement,
    defaultAvailabilityZone: 'nova',
    castTimeoutMs: 5000,
    nameFilterTimeoutMs: 800,
    log: silent,
  };
  const app = buildApp(deps);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  const inject: Harness['inject'] = async (r) => {
    const headers = { ...r.headers, ...(r.payload === undefined ? {} : { 'content-type': 'application/json' }) };
    const res = await fetch(base + r.url, {
      method: r.method ?? 'GET',
      headers,
      body: r.payload === undefined ? undefined : JSON.stringify(r.payload),
    });
    const body = await res.text();
    return { statusCode: res.status, headers: Object.fromEntries(res.headers), body, json: () => JSON.parse(body) as unknown };
  };
  const catalogueHeard = async (): Promise<void> => {
    probes += 1;
    const probe = `probe-${probes}`;
    await apiDb.pool.query('SELECT pg_notify($1, $2)', [CATALOGUE_CHANNEL, probe]);
    await waitFor('the catalogue probe', () => (probesHeard.has(probe) ? true : undefined));
  };
  const close = async (): Promise<void> => {
    retrier.close();
    await app.close();
    await catalogueListener.close();
    await sub?.close();
    await bus.close();
    await cellDbs.close();
    await Promise.all([...writers.values()].map((p) => p.end()));
    for (const s of hole.sockets) s.destroy();
    await new Promise((r) => hole.server.close(r));
    await Promise.all([apiDb.drop(), cell0.drop(), cell1.drop()]);
    await rabbitmqctl('delete_vhost', vhost);
  };
  return {
    app,
    base,
    inject,
    raw: (r) => rawRequest(base, r),
    deps,
    providerAggregates,
    apiDb,
    cell0,
    cell1,
    cells,
    seen,
    stalledServiceHosts,
    startConductor: startLate,
    catalogueHeard,
    close,
  };
}

/** Polls until `probe` returns a value other than undefined. */
export async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Headers for a token and an optional microversion. */
export function as(token: string | undefined, version?: string): Record<string, string> {
  const h: Record<string, string> = {};
  if (token !== undefined) h['x-auth-token'] = token;
  if (version !== undefined) h['openstack-api-version'] = `compute ${version}`;
  return h;
}
