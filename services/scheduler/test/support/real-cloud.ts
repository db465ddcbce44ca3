/**
 * A real cloud for the functional tests: throwaway PostgreSQL databases (placement, API, two
 * cells), the real placement gRPC service started in-process on a free port, and scheduler
 * replicas (real gRPC servers on free ports) built exactly as main.ts builds them.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { API_DB_MIGRATIONS_DIR, createCellMapping } from '@cellsched/api-db';
import { CELL_DB_MIGRATIONS_DIR } from '@cellsched/cell-db';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import { createGrpcClient, startGrpcServer, type GrpcClient, type RunningGrpcServer } from '@cellsched/grpc';
import { SchedulerServiceClient, type RequestSpec, type SelectDestinationsResponse } from '@cellsched/wire';
import pino from 'pino';
import { placementServiceBinding } from '../../../placement/src/adapters/grpc/placement-service';
import { type SchedulerApp, startSchedulerApp } from '../../src/app';
import { DEFAULT_POLICY, type SchedulerPolicy } from '../../src/domain/policy';
import { type HostSpec, type SeededHost, seedHosts } from '../../../../e2e/bench/scheduler/seed';

export type SchedulerClient = GrpcClient<typeof SchedulerServiceClient.service>;

/** How a test replica differs from the default one. */
export interface ReplicaOptions {
  readonly candidateCacheTtlMs?: number;
  readonly hostCacheRefreshMs?: number;
  /** The role the replica reads the API DB and the cells as (default: the test databases' admin role). */
  readonly as?: { readonly user: string; readonly password: string };
}

/** The whole test cloud; `close()` stops everything and drops the databases. */
export interface RealCloud {
  readonly placementDb: TestDatabase;
  readonly apiDb: TestDatabase;
  readonly cells: readonly { readonly uuid: string; readonly db: TestDatabase }[];
  readonly placement: RunningGrpcServer;
  addHosts(specs: readonly HostSpec[]): Promise<SeededHost[]>;
  /** A scheduler replica on a free port, with a client of it. */
  startReplica(policy?: Partial<SchedulerPolicy>, opts?: ReplicaOptions): Promise<{ app: SchedulerApp; client: SchedulerClient }>;
  close(): Promise<void>;
}

const silent = pino({ level: 'silent' });

/** `url` with another user and password. */
export function withCredentials(url: string, c: { readonly user: string; readonly password: string }): string {
  const u = new URL(url);
  u.username = encodeURIComponent(c.user);
  u.password = encodeURIComponent(c.password);
  return u.toString();
}

/** The user and password of a URL (the test databases' admin role stands in for the scheduler's read-only role). */
export function credentialsOf(url: string): { user: string; password: string } {
  const u = new URL(url);
  return { user: decodeURIComponent(u.username), password: decodeURIComponent(u.password) };
}

/** Creates the databases (migrated) and starts placement. `prefix` keeps database names per test file unique and readable. */
export async function startRealCloud(prefix: string, opts: { placementPoolMax?: number } = {}): Promise<RealCloud> {
  const placementDb = await createTestDatabase({
    kind: 'placement',
    migrationsDir: join(__dirname, '../../../placement/migrations'),
    prefix: `${prefix}_pl`,
    poolMax: opts.placementPoolMax ?? 20,
  });
  const apiDb = await createTestDatabase({ kind: 'api', migrationsDir: API_DB_MIGRATIONS_DIR, prefix: `${prefix}_api` });
  const cells = await Promise.all(
    [1, 2].map(async (i) => ({
      uuid: randomUUID(),
      db: await createTestDatabase({ kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR, prefix: `${prefix}_c${i}` }),
    })),
  );
  // the replicas find the cells where Nova's do: the API DB's cell mappings
  for (const [i, c] of cells.entries()) {
    await createCellMapping(apiDb.pool, {
      uuid: c.uuid,
      name: `cell${i + 1}`,
      transportUrl: `amqp://127.0.0.1:5672/${prefix}_c${i + 1}`,
      databaseConnection: c.db.url,
    });
  }
  const placement = await startGrpcServer({
    host: '127.0.0.1',
    port: 0,
    services: [placementServiceBinding(placementDb.pool)],
    logger: silent,
  });
  const replicas: { app: SchedulerApp; client: SchedulerClient }[] = [];
  return {
    placementDb,
    apiDb,
    cells,
    placement,
    addHosts: (specs) =>
      seedHosts(
        cells.map((c) => c.db.pool),
        placementDb.pool,
        specs,
        { db: apiDb.pool, cellUuids: cells.map((c) => c.uuid) },
      ),
    startReplica: async (policy = {}, opts = {}) => {
      const app = await startSchedulerApp(
        {
          apiDbUrl: opts.as === undefined ? apiDb.url : withCredentials(apiDb.url, opts.as),
          cellDbCredentials: opts.as ?? credentialsOf(apiDb.url),
          placementAddresses: [placement.address],
          placementDeadlineMs: 30_000,
          policy: { ...DEFAULT_POLICY, ...policy },
          dbPoolSize: 6,
          hostCacheRefreshMs: opts.hostCacheRefreshMs ?? 200,
          hostCacheFullResyncMs: 60_000,
          groupLockTimeoutMs: 30_000,
          candidateCacheTtlMs: opts.candidateCacheTtlMs ?? 250,
          logger: silent,
        },
        { host: '127.0.0.1', port: 0 },
      );
      const client = createGrpcClient(SchedulerServiceClient, { addresses: [app.server.address], deadlineMs: 60_000, maxAttempts: 1 });
      replicas.push({ app, client });
      return { app, client };
    },
    close: async () => {
      for (const r of replicas) {
        r.client.close();
        await r.app.close();
      }
      await placement.shutdown();
      await Promise.all([placementDb, apiDb, ...cells.map((c) => c.db)].map((d) => d.drop()));
    },
  };
}

/** A minimal RequestSpec (1 VCPU, 512 MB, 1 GB) with overrides. */
export function requestSpec(overrides: Partial<RequestSpec> = {}): RequestSpec {
  return {
    instanceUuid: '',
    projectId: 'p1',
    userId: 'u1',
    numInstances: 1,
    availabilityZone: '',
    instanceGroup: undefined,
    flavor: { id: 0, flavorid: 'f1', name: 'm1.tiny', vcpus: 1, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 0, extraSpecs: {} },
    image: { id: 'img', name: 'cirros', diskFormat: 'qcow2', sizeBytes: 0, properties: {} },
    schedulerHints: {},
    requestedDestination: undefined,
    ignoreHosts: [],
    seed: 7,
    requestId: `req-${randomUUID()}`,
    ...overrides,
  };
}

/** Calls SelectDestinations; resolves the answer or the FailureError (never throws for an expected failure). */
export async function select(
  client: SchedulerClient,
  spec: RequestSpec,
  instanceUuids: readonly string[],
  numAlternates = 0,
): Promise<
  | { ok: true; res: SelectDestinationsResponse }
  | { ok: false; err: Error & { code?: string; failure?: { code: string; diagnosis: unknown[] } } }
> {
  try {
    return {
      ok: true,
      res: await client.selectDestinations({
        requestSpec: spec,
        instanceUuids: [...instanceUuids],
        numAlternates,
        allocationRequestVersion: '1.36',
        move: undefined,
      }),
    };
  } catch (err) {
    return { ok: false, err: err as Error & { code?: string } };
  }
}
