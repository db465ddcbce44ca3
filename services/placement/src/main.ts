import { loadConfig } from '@cellsched/config';
import { atStartup, createPool, runMigrations } from '@cellsched/db';
import { createLogger, loggerOptionsFrom, runMain, stopOnSignal } from '@cellsched/telemetry';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { startGrpcServer } from '@cellsched/grpc';
import { placementServiceBinding } from './adapters/grpc/placement-service';
import { buildApp } from './adapters/http/app';
import { CandidateSnapshotCache } from './adapters/sql/candidates-snapshot';
import { placementConfigSchema } from './config';

/** Composition root: config → database (migrate) → REST app and gRPC service → listen; SIGTERM stops cleanly. */
async function main(): Promise<void> {
  const config = loadConfig(placementConfigSchema, { argv: process.argv.slice(2) });
  const log = createLogger(loggerOptionsFrom(config, { service: 'placement', host: hostname() }));
  const pool = createPool({ url: config.dbUrl, max: config.dbPoolSize, applicationName: 'placement' });
  if (config.migrate) {
    const applied = await atStartup(
      'placement database migrations',
      () => runMigrations(pool, { kind: 'placement', dir: join(__dirname, '..', 'migrations') }),
      log,
    );
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
  }
  // NOTE: one snapshot cache of the database for both the REST and the gRPC candidates queries.
  const snapshots = new CandidateSnapshotCache(pool);
  const app = buildApp({
    pool,
    snapshots,
    policyMode: config.policyMode,
    corsAllowedOrigins: config.corsAllowedOrigins,
    onError: (err, requestId) => {
      log.error({ err, request_id: requestId }, 'unexpected error');
    },
    onResponse: (r) => {
      log.info({ request_id: r.requestId, method: r.method, url: r.url, status: r.status, ms: r.ms }, 'request');
    },
  });
  await app.listen({ host: config.host, port: config.port });
  log.info({ address: config.host, port: config.port }, 'placement listening');
  const grpc = await startGrpcServer({
    host: config.host,
    port: config.grpcPort,
    services: [placementServiceBinding(pool, snapshots)],
    logger: log,
  });
  log.info({ address: config.host, port: grpc.port }, 'placement grpc listening');
  stopOnSignal(log, async () => {
    await grpc.shutdown();
    await app.close();
    await pool.end();
  });
}

runMain(main);
